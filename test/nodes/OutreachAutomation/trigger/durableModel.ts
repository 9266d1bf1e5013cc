/**
 * A model of n8n 2.41.1's durable poll scheduler with durable cursors, on a virtual clock, running the
 * real trigger against the sandbox over HTTP. Each n8n process is a fresh instance of the trigger's
 * modules (what one process remembers), polling through n8n-core's own PollContext. What the model
 * does, and where n8n 2.41.1 does it (files under the n8n package's dist/ unless named):
 * - the poll at publishing runs as 'activate' with n8n-core's default budget (5 min, no fence); a null
 *   result of it is never saved, an emitting one is saved with its execution (n8n-core
 *   `execution-engine/poll-trigger-executor.js`: `commitStagedCursor` only `if (!testingTrigger)`;
 *   `workflows/triggers/trigger-execution-context.factory.js`, `getExecutePollFunctions`);
 * - it runs only when the job is new: after a restart there is none (n8n-core
 *   `execution-engine/active-workflow-triggers.js`, `activatePollTrigger`: `if (inserted)`);
 * - scheduled polls run as 'update' with the budget `ceiling - max(20%, 5 s)` of a 45-s timeout
 *   (`trigger-execution-context.factory.js`, `createPollExecutionContext`, `getExecutePollFunctions`);
 * - the cursor is read when the task starts, before the node is entered (`scheduling/poll-trigger-node/
 *   poll-trigger-task-handler.js`: `getState`, then loading the workflow and an isolate): a poll can
 *   enter the node after a later-dispatched one;
 * - a poll past the timeout is dropped, nothing of it saved (`poll-trigger-task-handler.js`,
 *   `Promise.race([poll, deadline.timedOut])`); a poll that throws saves nothing (`__emitError`);
 * - a poll that emitted nothing but changed its state is saved alone, awaited in the task
 *   (`commitStagedCursor`); one that emitted, with its execution in one transaction, after more
 *   database round trips and not awaited (`workflows/triggers/poll-cursor.service.js`,
 *   `commitWithExecution`): both can land late, in another order than the polls returned;
 * - the save checks the task's lease only, never the cursor it overwrites (`@n8n/db`
 *   `repositories/poller-state.repository.js`, `buildFenceClause`);
 * - a restart empties the process: saves still in flight are lost, the next polls load what landed.
 */
import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';
import * as n8nWorkflow from 'n8n-workflow';

import type { Credentials } from '../../../engine/harness';
import { TriggerHarness } from '../../../engine/harness';
import { Random } from '../../../sandbox/random';
import type { Sandbox } from '../../../sandbox/server';

export const SECOND = 1_000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
/** N8N_SCHEDULER_POLL_TIMEOUT's default, and the budget n8n grants with it. */
export const POLL_TIMEOUT_MS = 45 * SECOND;
export const POLL_BUDGET_MS = 36 * SECOND;

type Poller = { poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> };

/** Time as n8n and the sandbox see it: set by the model, running on `requestMs` per API request. */
export class VirtualTime {
	private base = 0;

	private mark = 0;

	requestMs = 200;

	private restore?: () => void;

	constructor(private readonly sandbox: Sandbox) {}

	now = (): number => this.base + this.requestMs * (this.sandbox.apiRequests() - this.mark);

	/** Moves the clock to `time` (never back). */
	to(time: number): void {
		this.base = Math.max(time, this.now());
		this.mark = this.sandbox.apiRequests();
	}

	start(at: number): void {
		this.base = at;
		this.mark = this.sandbox.apiRequests();
		const spy = jest.spyOn(Date, 'now').mockImplementation(this.now);
		this.restore = () => spy.mockRestore();
	}

	stop(): void {
		this.restore?.();
	}
}

/** One n8n process: the trigger's modules loaded afresh, so it remembers nothing of another. */
export class Process {
	readonly trigger: Poller;

	constructor(time: VirtualTime, seed: number) {
		let trigger: Poller | undefined;
		jest.isolateModules(() => {
			// The same n8n-workflow as n8n-core's (one n8n), the trigger's own modules new.
			jest.doMock('n8n-workflow', () => n8nWorkflow);
			/* eslint-disable @typescript-eslint/no-require-imports */
			const node = require('../../../../nodes/OutreachAutomation/OutreachAutomationTrigger.node');
			const clock = require('../../../../nodes/OutreachAutomation/transport/clock');
			/* eslint-enable @typescript-eslint/no-require-imports */
			const random = new Random(seed);
			clock.useClock({
				now: time.now,
				sleep: async (ms: number) => time.to(time.now() + ms),
				random: () => random.next(),
			});
			trigger = new node.OutreachAutomationTrigger() as Poller;
		});
		this.trigger = trigger!;
	}
}

/** A save n8n will make: a cursor alone, or a cursor with its execution. */
export interface Save {
	state: IDataObject;
	ids: string[];
	/** When the poll returned, and when the save lands. */
	returnedAt: number;
	landsAt: number;
	poll: number;
	process: number;
}

export interface Batch extends Save {
	landedAt: number;
}

/** What happened to one poll. */
export type Outcome =
	| { kind: 'failed' | 'dropped' }
	| { kind: 'returned'; ids: string[]; state: IDataObject; changed: boolean; at: number };

const clone = (state: IDataObject) => JSON.parse(JSON.stringify(state)) as IDataObject;

/**
 * n8n's side of one trigger: its saved cursor, the saves in flight, the executions that ran, and the
 * processes polling it.
 */
export class DurableN8n {
	cursor: IDataObject = {};

	readonly pending: Save[] = [];

	readonly batches: Batch[] = [];

	/** When each poll loaded its cursor, by poll number. */
	readonly loadedAt = new Map<number, number>();

	/** Saves of states older than one already saved (a late save put an older cursor back). */
	readonly regressions: Array<{ at: number; over: number }> = [];

	readonly restarts: number[] = [];

	processes: Process[] = [];

	private polls = 0;

	private readonly harness: TriggerHarness;

	constructor(
		readonly time: VirtualTime,
		credentials: Credentials,
		parameters: IDataObject,
		private readonly seed: number,
		mains = 1,
	) {
		this.harness = new TriggerHarness(credentials, parameters as never);
		this.harness.workflow.id = `wf-durable-${seed}`;
		for (let i = 0; i < mains; i++) this.processes.push(new Process(time, seed * 31 + i));
	}

	get pollCount(): number {
		return this.polls;
	}

	/** Lands every save due by `time`, in the order they land. */
	land(time = this.time.now()): void {
		this.pending.sort((a, b) => a.landsAt - b.landsAt);
		while (this.pending.length && this.pending[0].landsAt <= time) {
			const save = this.pending.shift()!;
			const newest = this.batches.reduce((max, b) => Math.max(max, b.returnedAt), -Infinity);
			if (save.returnedAt < newest) this.regressions.push({ at: save.landsAt, over: newest });
			this.cursor = save.state;
			this.batches.push({ ...save, landedAt: save.landsAt });
		}
	}

	/** The cursor a poll's task reads when it starts. */
	load(): { poll: number; loaded: IDataObject } {
		const poll = ++this.polls;
		this.loadedAt.set(poll, this.time.now());
		return { poll, loaded: clone(this.cursor) };
	}

	/** Runs one poll of `process` from `loaded`: 'activate' at publishing, else a scheduled one. */
	async run(
		process: number,
		loaded: IDataObject,
		activation: 'activate' | 'update' = 'update',
	): Promise<Outcome> {
		const staged = clone(loaded);
		const scheduled = activation === 'update';
		const ctx = this.harness.durableContext(
			activation,
			staged,
			scheduled ? POLL_BUDGET_MS : undefined,
		);
		const started = this.time.now();
		let result: INodeExecutionData[][] | null;
		try {
			result = await this.processes[process].trigger.poll.call(ctx as unknown as IPollFunctions);
		} catch {
			return { kind: 'failed' };
		}
		if (scheduled && this.time.now() - started > POLL_TIMEOUT_MS) return { kind: 'dropped' };
		const ids = result ? result[0].map((item) => String(item.json.id)) : [];
		const changed = JSON.stringify(staged) !== JSON.stringify(loaded);
		return { kind: 'returned', ids, state: staged, changed, at: this.time.now() };
	}

	/**
	 * What n8n saves of a poll that returned: the poll at publishing only when it emitted; a scheduled
	 * one when it emitted (`saveMs` after it returned) or changed its state.
	 */
	save(
		outcome: Outcome,
		poll: number,
		process: number,
		activation: 'activate' | 'update',
		saveMs: number,
	): void {
		if (outcome.kind !== 'returned') return;
		const emitted = outcome.ids.length > 0;
		if (!emitted && (activation === 'activate' || !outcome.changed)) return;
		this.pending.push({
			state: outcome.state,
			ids: outcome.ids,
			returnedAt: outcome.at,
			landsAt: outcome.at + saveMs,
			poll,
			process,
		});
	}

	/** n8n restarts: every process starts empty, saves not landed yet are lost. */
	restart(): void {
		this.land();
		this.pending.length = 0;
		this.restarts.push(this.time.now());
		this.processes = this.processes.map(
			(_, i) => new Process(this.time, this.seed * 31 + i + this.restarts.length * 7),
		);
	}

	/** Every id delivered by an execution, in order. */
	delivered(): string[] {
		return this.batches.flatMap((batch) => batch.ids);
	}
}

/** Why a message came twice: each a case n8n leaves the node no way to know (docs/trigger.md). */
export type DuplicateCause =
	| 'save later than the grace'
	| 'an older save landed after a newer one'
	| 'restart before the save was seen'
	| 'another main'
	| 'unexplained';

/**
 * The cause of the second delivery of a message: `first` delivered it, `second` again. When the
 * second poll loaded its cursor the first save had landed (then an older save must have put the
 * cursor back) or not (then only a process that did not remember the first poll could go on).
 */
export function duplicateCause(
	n8n: DurableN8n,
	first: Batch,
	second: Batch,
	graceMs: number,
): DuplicateCause {
	const loadedAt = n8n.loadedAt.get(second.poll) ?? second.returnedAt;
	if (first.landedAt <= loadedAt) {
		return n8n.regressions.some((r) => r.at > first.landedAt && r.at <= loadedAt)
			? 'an older save landed after a newer one'
			: 'unexplained';
	}
	if (first.process !== second.process) return 'another main';
	if (n8n.restarts.some((at) => at > first.returnedAt && at <= second.returnedAt))
		return 'restart before the save was seen';
	if (first.landedAt - first.returnedAt >= graceMs) return 'save later than the grace';
	return 'unexplained';
}

/** Lost and duplicate messages of a run, with each duplicate's cause. */
export function tally(
	n8n: DurableN8n,
	expected: string[],
	graceMs: number,
): { lost: string[]; causes: Record<string, number>; duplicates: number } {
	const firstBatch = new Map<string, Batch>();
	const causes: Record<string, number> = {};
	let duplicates = 0;
	for (const batch of n8n.batches) {
		for (const id of batch.ids) {
			const first = firstBatch.get(id);
			if (!first) {
				firstBatch.set(id, batch);
				continue;
			}
			duplicates++;
			const cause = duplicateCause(n8n, first, batch, graceMs);
			causes[cause] = (causes[cause] ?? 0) + 1;
		}
	}
	return { lost: expected.filter((id) => !firstBatch.has(id)), causes, duplicates };
}

/** How often each thing n8n can do happens in a seeded run (per scheduled poll). */
export interface Chances {
	/** The poll fails (503 on every try). */
	fail: number;
	/** The poll outlasts n8n's timeout and is dropped. */
	drop: number;
	/** An emitting poll's save lands 30 s to 3 min after it returned. */
	lateSave: number;
	/** A save of a poll that emitted nothing lands 30 s to 2.5 min late (after later saves). */
	lateCursor: number;
	/** The poll loads its cursor, then enters the node only after the next poll returned. */
	reorder: number;
	/** The next poll starts while this one runs in the node. */
	overlap: number;
	/** Messages arrive while the poll reads. */
	during: number;
	/** n8n restarts before the poll (the poll due during the restart is missed). */
	restart: number;
}

export interface RunOptions {
	seed: number;
	/** The Poll Times: every minute or every hour. */
	everyMs: number;
	/** Scheduled polls with faults, then quiet ones until everything is delivered. */
	polls: number;
	mains: number;
	/** Messages arriving between two polls, at most (a few polls bring a backlog of up to 30 times it). */
	arrivals: number;
	chances: Chances;
	/** Whether a restart may come before n8n saved the trigger's first cursor. */
	restartBeforeFirstSave: boolean;
}

export interface RunResult {
	n8n: DurableN8n;
	/** Messages that arrived after publishing, and the ones there before. */
	expected: string[];
	existing: Set<string>;
}

/** A seeded run of publishing and scheduled polls with everything of `chances` mixed in. */
export async function seededRun(
	sandbox: Sandbox,
	credentials: Credentials,
	options: RunOptions,
): Promise<RunResult> {
	const rnd = new Random(options.seed * 7_919 + 17);
	const time = new VirtualTime(sandbox);
	const published = Date.parse('2026-11-29T10:00:00Z') + options.seed * HOUR;
	const everyMinute = options.everyMs === MINUTE;
	const pollTimes = { item: [everyMinute ? { mode: 'everyMinute' } : { mode: 'everyHour', minute: 0 }] };
	time.start(published - 24 * HOUR);
	try {
		sandbox.reset({ leads: 3, campaigns: 1, messages: 40 });
		const existing = new Set(sandbox.store.findMessages({}).map((message) => message.id));
		time.to(published);
		const n8n = new DurableN8n(time, credentials, { pollTimes }, options.seed, options.mains);
		const act = n8n.load();
		const activation = await n8n.run(0, act.loaded, 'activate');
		n8n.save(activation, act.poll, 0, 'activate', rnd.int(100, 2_000));
		const activatedAt = time.now();
		// n8n picks the second (and for every hour, the minute) the trigger polls at.
		const first = published + rnd.int(1, options.everyMs / SECOND - 1) * SECOND;
		const tail = Math.ceil((4 * MINUTE) / options.everyMs) + 20;
		let deferred: Array<{ poll: number; loaded: IDataObject; process: number }> = [];
		let last = activatedAt;
		const ms = (min: number, max: number) => rnd.int(min, max);
		for (let k = 0; k < options.polls + tail; k++) {
			const quiet = k >= options.polls;
			const due = first + k * options.everyMs;
			const chance = (p: number) => !quiet && rnd.chance(p);
			// Arrivals since the last poll: most polls a few, some a backlog.
			const backlog = chance(0.05) ? 30 : 1;
			for (let group = rnd.int(0, 3); group > 0; group--) {
				time.to(Math.max(time.now(), rnd.int(last + SECOND, Math.max(last + SECOND, due - SECOND))));
				if (quiet) continue;
				sandbox.insertMessages({ count: rnd.int(1, options.arrivals) * backlog });
			}
			time.to(due);
			n8n.land();
			last = due;
			const firstSaved = n8n.batches.some((batch) => batch.poll > act.poll);
			if (chance(options.chances.restart) && (firstSaved || options.restartBeforeFirstSave)) {
				n8n.restart();
				deferred = [];
				continue;
			}
			const process = rnd.int(0, options.mains - 1);
			const { poll, loaded } = n8n.load();
			if (chance(options.chances.reorder)) {
				deferred.push({ poll, loaded, process });
				continue;
			}
			if (chance(options.chances.fail))
				sandbox.addFault({ method: 'GET', path: '/api/v1/messages', status: 503, times: 4 });
			if (chance(options.chances.during))
				sandbox.addChurn({ after: 1, resource: 'messages', insert: rnd.int(1, 30) });
			if (chance(options.chances.drop)) time.requestMs = 50 * SECOND;
			const overlapping = chance(options.chances.overlap);
			const running = n8n.run(process, loaded);
			const second = overlapping ? n8n.load() : undefined;
			const beside = second ? n8n.run(process, second.loaded) : undefined;
			const saveMs = (emitted: boolean) =>
				emitted
					? chance(options.chances.lateSave)
						? ms(30 * SECOND, 3 * MINUTE)
						: ms(50, 3 * SECOND)
					: chance(options.chances.lateCursor)
						? ms(30 * SECOND, 150 * SECOND)
						: ms(10, 300);
			const outcome = await running;
			time.requestMs = 200;
			sandbox.clearFaults();
			n8n.save(outcome, poll, process, 'update', saveMs(idsOf(outcome).length > 0));
			if (beside && second) {
				const besideOutcome = await beside;
				n8n.save(besideOutcome, second.poll, process, 'update', saveMs(idsOf(besideOutcome).length > 0));
			}
			// Polls that loaded earlier enter now, after a later one returned.
			for (const late of deferred.splice(0)) {
				const lateOutcome = await n8n.run(late.process, late.loaded);
				n8n.save(lateOutcome, late.poll, late.process, 'update', saveMs(idsOf(lateOutcome).length > 0));
			}
		}
		time.to(time.now() + HOUR);
		n8n.land();
		const expected = sandbox.store
			.findMessages({})
			.filter((message) => Date.parse(message.created_at!) >= activatedAt)
			.map((message) => message.id);
		return { n8n, expected, existing };
	} finally {
		time.stop();
	}
}

const idsOf = (outcome: Outcome) => (outcome.kind === 'returned' ? outcome.ids : []);
