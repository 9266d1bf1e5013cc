/**
 * One separate Node process running the action node in n8n's engine, for the multi-process pacing tests
 * and the bench: started with `fork` (see processes.ts), it waits for `{ run }` messages, creates the
 * leads asked for with Lead > Create (Continue On Fail, so every item is accounted for) and answers with
 * what came out. Its pacing state lives in this process only, as in a queue-mode worker.
 */
import { runNode } from './harness';

export interface WorkerRun {
	baseUrl: string;
	apiKey: string;
	/** First names of the leads to create (unique: the sandbox counts a body created twice), one item each. */
	names: string[];
	/** Throws this instead of running, outside any handler: how the pool's test crashes a worker. */
	crashWith?: string;
}

/** Sent when the worker dies of an error: the parent fails the run with it at once. */
export interface WorkerCrash {
	crashed: string;
}

// An error nothing caught ends the worker, after telling the parent what it was.
function crash(error: unknown): void {
	const crashed = error instanceof Error ? (error.stack ?? error.message) : String(error);
	if (!process.send) process.exit(1);
	process.send({ crashed } satisfies WorkerCrash, () => process.exit(1));
}
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);

export interface WorkerResult {
	created: number;
	failed: string[];
	/** When the run started and ended, epoch ms. */
	startedAt: number;
	endedAt: number;
}

process.on('message', (message: { run?: WorkerRun; exit?: boolean }) => {
	if (message.exit) process.exit(0);
	const run = message.run;
	if (!run) return;
	void (async () => {
		if (run.crashWith !== undefined) throw new Error(run.crashWith);
		const startedAt = Date.now();
		const { items, error } = await runNode(
			{ baseUrl: run.baseUrl, apiKey: run.apiKey },
			{
				resource: 'lead',
				operation: 'create',
				firstName: '={{ $json.name }}',
				company: 'Shared Key Inc',
			},
			run.names.map((name) => ({ name })),
			{ continueOnFail: true },
		);
		const failed = items
			.filter((item) => item.json.error !== undefined)
			.map((item) => String(item.json.error));
		if (error) failed.push(String(error.message));
		const result: WorkerResult = {
			created: items.length - failed.length,
			failed,
			startedAt,
			endedAt: Date.now(),
		};
		process.send?.({ result });
	})();
});
process.send?.({ ready: true });
