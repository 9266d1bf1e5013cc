/**
 * A limit the service changes while a run is under way: the pacing follows what the service says now.
 * The nodes run in n8n's engine against the sandbox over HTTP; the sandbox's limit is changed mid-run
 * (its current window takes the new limit at once, as a service's would). Smoke tests: the gates (429s
 * only where the change met requests already sent, the raised limit used) are on the virtual clock,
 * quiet and loaded (test/sim/realTime.test.ts, issue #65); here bounds a loaded machine meets.
 */
import { resetRateLimitState } from '../../../../../nodes/OutreachAutomation/transport/pacing';
import { runNode } from '../../../../engine/harness';
import { startSandbox, type Sandbox } from '../../../../sandbox/server';

const KEY = 'changes-secret-key-9d4c2a';
const CREATE = {
	resource: 'lead',
	operation: 'create',
	firstName: '={{ "Lead " + $json.i }}',
	additionalFields: {},
};
const items = (n: number) => Array.from({ length: n }, (_, i) => ({ i }));

/** The most requests answered 2xx within any span of `windowMs` (the log's arrival times). */
function mostPassedInAnyWindow(
	log: Array<{ time: number; status: number | null }>,
	windowMs: number,
) {
	const times = log.filter((entry) => entry.status === 201).map((entry) => entry.time);
	let most = 0;
	for (let i = 0, j = 0; i < times.length; i++) {
		while (times[i] - times[j] >= windowMs) j++;
		most = Math.max(most, i - j + 1);
	}
	return most;
}

describe('a limit the service changes mid-run', () => {
	let sandbox: Sandbox;
	beforeAll(async () => {
		sandbox = await startSandbox({ apiKeys: [KEY], seed: { leads: 0, campaigns: 0, messages: 0 } });
	});
	afterAll(async () => sandbox.stop());
	beforeEach(() => {
		resetRateLimitState();
		sandbox.reset({ leads: 0, campaigns: 0, messages: 0 });
	});

	const run = async (n: number, change: () => void, afterAnswered: number) => {
		const running = runNode({ baseUrl: sandbox.url, apiKey: KEY }, CREATE, items(n), {
			continueOnFail: true,
		});
		for (let i = 0; i < 400 && sandbox.stats().creates.lead < afterAnswered; i++)
			await new Promise((resolve) => setTimeout(resolve, 25));
		change();
		const changedAt = Date.now();
		const { items: output } = await running;
		return { output, changedAt };
	};

	it.each([
		['epoch-ms', 'all'],
		['epoch-s', 'all'],
		// Without X-RateLimit-Limit the limit is read from `remaining` alone.
		['epoch-ms', 'spec'],
	] as const)(
		'lowered from 100 to 20 a 1-s window (%s resets, %s rate headers): every lead created once, 429s only where the change met requests already sent',
		async (resetFormat, rateHeaders) => {
			sandbox.config({ rateLimit: 100, windowMs: 1000, resetFormat, rateHeaders });
			const { output, changedAt } = await run(300, () => sandbox.config({ rateLimit: 20 }), 150);
			expect(output.filter((item) => item.error)).toEqual([]);
			const stats = sandbox.stats();
			expect(stats.creates.lead).toBe(300);
			expect(stats.duplicateCreates).toBe(0);
			// The window the change fell in refuses what was already on its way (up to a window's worth);
			// from the next window on, the pacing goes by the new limit.
			const log = sandbox.requests();
			const later = log.filter((entry) => entry.time > changedAt + 1000 + 250);
			const refusedLater = later.filter((entry) => entry.status === 429).length;
			console.log(
				`lowered (${resetFormat}, ${rateHeaders}): ${stats.rateLimited} 429s of ${stats.requests}; ` +
					`from the window after the change: ${refusedLater} of ${later.length}`,
			);
			// Enough of the run left after that window to judge it (recorded 100-124 of the 150 or so left,
			// depending on how many the change window took): at least four windows at the new limit.
			expect(later.length).toBeGreaterThanOrEqual(80);
			expect(refusedLater).toBeLessThanOrEqual(Math.ceil(0.15 * later.length));
		},
		180_000,
	);

	it('raised from 50 to 200 a 1-s window: the pacing uses the new limit (a window passes more than 50), 0 429s', async () => {
		sandbox.config({ rateLimit: 50, windowMs: 1000, resetFormat: 'epoch-ms' });
		const { output } = await run(1000, () => sandbox.config({ rateLimit: 200 }), 100);
		expect(output.filter((item) => item.error)).toEqual([]);
		const stats = sandbox.stats();
		expect(stats.creates.lead).toBe(1000);
		expect(stats.rateLimited).toBeLessThanOrEqual(20);
		expect(mostPassedInAnyWindow(sandbox.requests(), 1000)).toBeGreaterThan(50);
	}, 180_000);
});
