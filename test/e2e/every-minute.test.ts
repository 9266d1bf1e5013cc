/**
 * SLOW (about 5 minutes of real time: it waits for n8n's minute polls; part of `npm run test:e2e`).
 *
 * The trigger with Poll Times "Every Minute", as a user picks it in the editor, against the sandbox. On
 * n8n 2.x: the durable scheduler with the four settings docs/trigger.md recommends and n8n's default
 * poll timeout. n8n polls such a trigger at a second of the minute it derives from the workflow and node
 * id, so the first scheduled poll comes 0-60 s after publishing, and it never saves what the poll run at
 * publishing noted. Each scenario has its own lead, key and workflow, in one n8n:
 * - (a) 5 messages sent 4 s after publishing, the first scheduled poll about 45 s after publishing (and a
 *   second trigger whose first poll comes about 15 s after);
 * - (b) 3 messages sent after publishing, n8n stopped gracefully and started again, 3 more, all before
 *   the first scheduled poll;
 * - (c) 5 messages sent after publishing, the first scheduled poll fails (503 on every try), the next
 *   one a minute later succeeds.
 * Every message sent after publishing is emitted exactly once; none of the messages created a day before
 * publishing is. Emitted ids are counted in n8n's executions.
 *
 * On n8n 1.x (the classic poller) the same (a), (b) and (c) run without the clock: 1.x draws the second
 * of an every-minute poll at random at each activation and each start (n8n-workflow's toCronExpression),
 * keeps it nowhere to read, polls at every start, and saves the state of the poll run at activation.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { SERVER_ERROR_MAX_RETRIES } from '../../nodes/OutreachAutomation/transport/constants';
import { startSandbox, type RequestLogEntry, type Sandbox } from '../sandbox/server';
import {
	CREDENTIAL_TYPE,
	freePort,
	importCredentials,
	importWorkflows,
	N8N_MAJOR,
	N8N_VERSION,
	N8nServer,
	packAndInstall,
	provision,
	reportOrClean,
	type N8nOptions,
	type Runtime,
} from '../n8n/runtime';
import {
	credential,
	emittedIds,
	EVERY_MINUTE,
	RECOMMENDED_ENV,
	scheduledJob,
	seededSecond,
	tick,
	triggerNodeId,
	triggerWorkflow,
	waitFor,
	workflowIdPolledAt,
} from './durable-world';
import { OWNER } from './harness';

const TAG = 'every-minute';
const DAY_MS = 86_400_000;
/** n8n 2.x: the durable scheduler; 1.x: the classic poller. */
const DURABLE = N8N_MAJOR >= 2;

// The clock (n8n 2.x): (b) is published at second 10 and polled at second 0 (50 s later), which leaves
// room to restart n8n in between; (a) and (c) are published at second 50, once n8n is back, and polled
// 45 s later (the control of (a) 15 s later).
const B_PUBLISH_SECOND = 10;
const AC_PUBLISH_SECOND = 50;

interface Scenario {
	label: string;
	key: string;
	workflowId: string;
	/** The second of the minute n8n 2.x polls it at. */
	second: number;
	/** Polls to wait for after the last message was sent, before counting. */
	polls: number;
	leadId: string;
	/** Messages created a day before publishing: never emitted. */
	old: string[];
	/** Messages sent after publishing: each emitted exactly once. */
	sent: string[];
	/** When publishing returned, and when the last message was sent. */
	publishedAt: number;
	lastSentAt: number;
}

const scenario = (
	label: string,
	prefix: string,
	publishSecond: number,
	gapSeconds: number,
	polls: number,
): Scenario => {
	const second = (publishSecond + gapSeconds) % 60;
	return {
		label,
		key: `e2e-${prefix}-key`,
		workflowId: workflowIdPolledAt(prefix, second),
		second,
		polls,
		leadId: '',
		old: [],
		sent: [],
		publishedAt: 0,
		lastSentAt: 0,
	};
};

const A = scenario(
	DURABLE ? '(a) first scheduled poll 45 s after publishing' : '(a) messages after activating',
	'e2eMinuteA',
	AC_PUBLISH_SECOND,
	45,
	2,
);
const A15 = scenario(
	'(a) first scheduled poll 15 s after publishing',
	'e2eMinuteA15_',
	AC_PUBLISH_SECOND,
	15,
	2,
);
const B = scenario(
	DURABLE ? '(b) a restart before the first scheduled poll' : '(b) a restart 5 s after activating',
	'e2eMinuteB',
	B_PUBLISH_SECOND,
	50,
	2,
);
const C = scenario('(c) the first scheduled poll fails', 'e2eMinuteC', AC_PUBLISH_SECOND, 45, 3);
// The control of (a) needs the clock; n8n 1.x draws its second at random.
const SCENARIOS = DURABLE ? [A, A15, B, C] : [A, B, C];
const AC = SCENARIOS.filter((s) => s !== B);

/** Sleeps until the wall clock next shows `second` (at least `leadMs` from now). */
async function untilSecond(second: number, leadMs = 200): Promise<void> {
	const now = Date.now();
	const minute = Math.floor(now / 60_000) * 60_000;
	let at = minute + second * 1000;
	while (at < now + leadMs) at += 60_000;
	await tick(at - now);
}

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 23);

/**
 * A trigger's polls in the request log: its list requests, a new poll starting more than 5 s after the
 * previous request, or with a read of page 1 after an answered one (the lists here fit one page: a poll
 * reads page 1 once, again only to retry a failed answer, its retries within 2.5 s of each other; n8n
 * 1.x may poll seconds after activating). The first is the one publishing runs.
 */
function pollsOf(sandbox: Sandbox, leadId: string): RequestLogEntry[][] {
	const polls: RequestLogEntry[][] = [];
	for (const entry of sandbox.requests()) {
		if (entry.path !== '/api/v1/messages' || entry.query.lead_id !== leadId) continue;
		const last = polls[polls.length - 1];
		const previous = last?.[last.length - 1];
		const pageOne = Number(entry.query.page ?? 1) === 1;
		if (previous && entry.time - previous.time <= 5_000 && !(pageOne && previous.status === 200))
			last.push(entry);
		else polls.push([entry]);
	}
	return polls;
}

describe(
	DURABLE
		? `trigger polled every minute on the durable scheduler, default poll timeout (n8n ${N8N_VERSION}; slow: about 5 minutes)`
		: `trigger polled every minute by the classic poller (n8n ${N8N_VERSION}; slow: about 4 minutes)`,
	() => {
		let runtime: Runtime;
		let sandbox: Sandbox;
		let options: N8nOptions;
		let n8n: N8nServer;
		let userFolder: string;
		let apiKey: string;
		let restart = { from: 0, to: 0 };

		const publish = async (scenarios: Scenario[]) => {
			await n8n.publish(
				apiKey,
				scenarios.map((s) => s.workflowId),
			);
			const publishedAt = Date.now();
			for (const s of scenarios) {
				s.publishedAt = publishedAt;
				if (!DURABLE) continue;
				// n8n fixed the second of its polls as this test expects: the timing above holds.
				const job = await scheduledJob(runtime, options, s.workflowId);
				expect(String(job?.cronExpression)).toBe(`${s.second} * * * * *`);
				expect(seededSecond(s.workflowId, triggerNodeId(s.workflowId))).toBe(s.second);
			}
		};
		const send = (s: Scenario, count: number) => {
			s.sent.push(
				...sandbox.insertMessages({ count, lead_id: s.leadId, direction: 'inbound' }).ids,
			);
			s.lastSentAt = Date.now();
		};
		/** Polls that began after the scenario's last message was sent. */
		const pollsAfterLast = (s: Scenario) =>
			pollsOf(sandbox, s.leadId).filter((poll) => poll[0].time > s.lastSentAt).length;

		beforeAll(async () => {
			userFolder = fs.mkdtempSync(path.join(os.tmpdir(), `outreach-${TAG}-`));
			(globalThis as { __outreachE2eUserFolder?: string }).__outreachE2eUserFolder = userFolder;
			runtime = await provision();
			sandbox = await startSandbox({
				apiKeys: SCENARIOS.map((s) => s.key),
				seed: { leads: SCENARIOS.length, campaigns: 0, messages: 0 },
				rateLimit: 100_000,
				windowMs: 2_000,
			});
			const leads = sandbox.store.findLeads({}).map((lead) => lead.id);
			const dayBefore = new Date(Date.now() - DAY_MS).toISOString();
			SCENARIOS.forEach((s, i) => {
				s.leadId = leads[i];
				s.old = sandbox.insertMessages({
					count: 3,
					lead_id: s.leadId,
					direction: 'inbound',
					created_at: dayBefore,
				}).ids;
			});
			// Debug level: n8n logs each poll it runs; nothing else differs from n8n's defaults.
			options = {
				userFolder,
				port: await freePort(),
				brokerPort: await freePort(),
				env: { ...(DURABLE ? RECOMMENDED_ENV : {}), N8N_LOG_LEVEL: 'debug' },
			};
			n8n = new N8nServer(runtime, options);
			await packAndInstall(userFolder);
			await importCredentials(
				runtime,
				options,
				SCENARIOS.map((s) => ({
					...credential(s.workflowId),
					type: CREDENTIAL_TYPE,
					data: { baseUrl: sandbox.url, apiKey: s.key },
				})),
			);
			await importWorkflows(
				runtime,
				options,
				SCENARIOS.map((s) => triggerWorkflow(s.workflowId, s.leadId, s.workflowId, EVERY_MINUTE)),
			);
			await n8n.start();
			await n8n.ensureOwner(OWNER);
			apiKey = await n8n.createApiKey(TAG);

			// (b): published, 3 messages, a graceful restart, 3 more, all before its first scheduled poll.
			if (DURABLE) await untilSecond(B_PUBLISH_SECOND);
			await publish([B]);
			await tick(4_000);
			send(B, 3);
			restart = { from: Date.now(), to: 0 };
			await n8n.stop();
			await n8n.start();
			await n8n.ensureOwner(OWNER);
			restart.to = Date.now();
			send(B, 3);

			// (a) and (c): published together once n8n is back; 5 messages each 4 s later. The first
			// scheduled poll of (c) answers 503 on every try.
			if (DURABLE) await untilSecond(AC_PUBLISH_SECOND);
			await publish(AC);
			sandbox.addFault({
				path: '/api/v1/messages',
				query: { lead_id: C.leadId },
				status: 503,
				times: SERVER_ERROR_MAX_RETRIES + 1,
			});
			await tick(4_000);
			for (const s of AC) send(s, 5);

			// Each trigger's scheduled polls, and a moment for the executions of the last ones to be saved.
			await waitFor(
				'the scheduled polls of every scenario',
				() => SCENARIOS.every((s) => pollsAfterLast(s) >= s.polls) || undefined,
				300_000,
			);
			await tick(10_000);
		}, 900_000);

		afterAll(async () => {
			await n8n?.stop();
			await sandbox?.stop();
			const failed = Boolean(
				(globalThis as { __outreachE2eFailures?: number }).__outreachE2eFailures,
			);
			if (n8n) reportOrClean(TAG, n8n, userFolder, failed);
		});

		/** Prints what a scenario shows, then asserts every message sent after publishing came once. */
		const check = async (s: Scenario) => {
			const ids = await emittedIds(n8n, apiKey, s.workflowId);
			const times = new Map<string, number>();
			for (const id of ids) times.set(id, (times.get(id) ?? 0) + 1);
			const once = s.sent.filter((id) => times.get(id) === 1).length;
			const twice = s.sent.filter((id) => (times.get(id) ?? 0) > 1).length;
			const old = s.old.filter((id) => times.has(id)).length;
			const polls = pollsOf(sandbox, s.leadId);
			const [activation, first] = polls;
			const job = DURABLE ? await scheduledJob(runtime, options, s.workflowId) : undefined;
			process.stdout.write(
				`[${TAG}] ${s.label}: published ${clock(s.publishedAt)}, ` +
					(job
						? `polled at second ${s.second} (n8n's first queued occurrence ${String(job.firstScheduledFor).slice(11)}); `
						: '') +
					`activation poll ${clock(activation[0].time)}, next poll ${clock(first[0].time)} ` +
					`(gap ${((first[0].time - activation[0].time) / 1000).toFixed(1)} s); ` +
					`polls after it: ${polls
						.slice(1)
						.map((p) => `${clock(p[0].time)} [${p.map((e) => e.status ?? 'in flight').join(',')}]`)
						.join(' ')}; ` +
					`emitted ${once} of ${s.sent.length} sent after publishing once, ${twice} more than once, ` +
					`${s.sent.length - once - twice} never; ${old} of ${s.old.length} old ones\n`,
			);
			return { ids, polls };
		};
		const exactlyOnce = (s: Scenario, ids: string[]) => {
			expect(ids.filter((id) => s.old.includes(id))).toEqual([]);
			expect([...ids].sort()).toEqual([...s.sent].sort());
		};

		test(`${A.label}: each message sent 4 s after publishing emitted exactly once`, async () => {
			const { ids, polls } = await check(A);
			// The case that matters on 2.x: more than 30 s between publishing and the first scheduled poll.
			if (DURABLE) expect(polls[1][0].time - polls[0][0].time).toBeGreaterThan(30_000);
			exactlyOnce(A, ids);
		});

		(DURABLE ? test : test.skip)(
			`${A15.label}: each message sent 4 s after publishing emitted exactly once`,
			async () => {
				const { ids } = await check(A15);
				exactlyOnce(A15, ids);
			},
		);

		test(`${B.label}: each message sent before and after the restart emitted exactly once`, async () => {
			const { ids, polls } = await check(B);
			process.stdout.write(
				`[${TAG}] ${B.label}: n8n stopped ${clock(restart.from)}, ready again ${clock(restart.to)}\n`,
			);
			// The restart came between publishing and the first scheduled poll: that poll ran in the new
			// process (n8n 1.x polls at its start, and may have polled before the restart: its second is
			// random). The messages sent once n8n was back may come in that poll or the next.
			expect(polls[0][0].time).toBeLessThan(restart.from);
			if (DURABLE) expect(polls[1][0].time).toBeGreaterThan(restart.from);
			exactlyOnce(B, ids);
		});

		test(`${C.label}: each message sent after publishing emitted exactly once by a later poll`, async () => {
			const { ids, polls } = await check(C);
			// The first scheduled poll got only 503s; the next one, a minute later, got answers.
			expect(polls[1].map((e) => e.status)).toEqual(Array(SERVER_ERROR_MAX_RETRIES + 1).fill(503));
			expect(polls[2].every((e) => e.status === 200)).toBe(true);
			exactlyOnce(C, ids);
		});
	},
);
