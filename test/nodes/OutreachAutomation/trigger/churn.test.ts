/**
 * The trigger's own walk of the message list (trigger/walk.ts) under the list reader's churn patterns:
 * removals placed before and after the poll's position between its page reads, arrivals at the front.
 * Every message that arrived after activation and stayed in the list is emitted once, by this poll or
 * the ones after it, and nothing twice.
 */
import type { IDataObject } from 'n8n-workflow';

import { TriggerHarness } from '../../../engine/harness';
import type { ChurnEventInput } from '../../../sandbox/schemas';
import { startSandbox, type Sandbox } from '../../../sandbox/server';

const KEY = 'trigger-churn-key-2b7e';

describe('Trigger: its walk while messages leave and arrive between its page reads', () => {
	let sandbox: Sandbox;

	beforeAll(async () => {
		sandbox = await startSandbox({
			apiKeys: [KEY],
			seed: { leads: 4, campaigns: 1, messages: 0 },
			rateLimit: 1e6,
		});
	});
	afterAll(async () => sandbox.stop());

	/** `backlog` messages arrive after activation; the next poll reads them with `script` churning. */
	async function pollUnder(
		backlog: number,
		maxPerPage: number,
		script: Array<Omit<ChurnEventInput, 'after'> | undefined>,
		seed = 1,
	) {
		sandbox.reset({ leads: 4, campaigns: 1, messages: 0 });
		sandbox.config({ maxPerPage, faultSeed: seed });
		sandbox.insertMessages({ count: 5, status: 'sent' });
		const h = new TriggerHarness({ baseUrl: sandbox.url, apiKey: KEY }, {});
		await h.poll();
		const arrived = sandbox.insertMessages({ count: backlog, status: 'sent' }).ids;
		script.forEach((event, k) => {
			if (event) sandbox.addChurn({ after: k + 1, resource: 'messages', ...event });
		});
		const emitted: string[] = [];
		for (let i = 0; i < 20; i++) {
			const got = (await h.poll()).map((item: IDataObject) => String(item.id));
			emitted.push(...got);
			if (!got.length && h.state().drain === undefined && !sandbox.churnLog().pending.length) break;
		}
		const left = new Set(sandbox.churnLog().events.flatMap((e) => e.left));
		return {
			missing: arrived.filter((id) => !left.has(id) && !emitted.includes(id)),
			twice: emitted.filter((id, i) => emitted.indexOf(id) !== i),
		};
	}

	it.each<[string, Array<Omit<ChurnEventInput, 'after'> | undefined>]>([
		['the reproduction', [{ removeAt: [50] }, { removeAt: [150], insert: 1 }]],
		[
			'an insert before and a delete after, then the same one page on',
			[{ insert: 1, removeAt: [250] }, { removeAt: [150] }, { removeAt: [260], insert: 1 }],
		],
		[
			'several deletes on both sides',
			[
				{ removeBefore: 2, removeAfter: 2 },
				{ insert: 2, removeAfter: 2 },
			],
		],
		[
			'a delete and an insert between every two reads',
			[
				{ removeAt: [40, 60], insert: 1 },
				{ removeAt: [160], insert: 1 },
				...Array.from({ length: 10 }, () => ({ removeAfter: 1, insert: 1 })),
			],
		],
	])('%s: every message that stayed is emitted once', async (_name, script) => {
		const r = await pollUnder(300, 100, script);
		expect(r.missing).toEqual([]);
		expect(r.twice).toEqual([]);
	});

	it.each(Array.from({ length: 8 }, (_, i) => i + 1))(
		'random placed churn after every read, small pages (seed %i): every message that stayed, once',
		async (seed) => {
			const r = await pollUnder(
				60,
				7,
				Array.from({ length: 12 }, (_, k) =>
					k % 2 === 0 ? { removeBefore: 2, insert: 1 } : { removeAfter: 1, insert: 1 },
				),
				seed,
			);
			expect(r.missing).toEqual([]);
			expect(r.twice).toEqual([]);
		},
	);
});
