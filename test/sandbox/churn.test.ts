/** List churn between page reads: deterministic, logged, and visible to a client walking the pages. */
import { useSandbox } from './helpers';

const t = useSandbox({}, { leads: 40, campaigns: 3, messages: 60 });

type Item = { id: string; status?: string };
const ids = (items: Item[]) => items.map((i) => i.id);

/** Walks every page of `path` at per_page 10, the way a naive client does. */
async function walk(path: string, query: Record<string, string | number> = {}): Promise<Item[]> {
	const seen: Item[] = [];
	for (let page = 1; ; page++) {
		const res = await t.api.get(path, { ...query, per_page: 10, page });
		expect(res.status).toBe(200);
		if (res.body.data.length === 0) return seen;
		seen.push(...res.body.data);
	}
}

describe('churn option', () => {
	it('every Nth list read removes, inserts and changes status, and logs each id', async () => {
		const before = t.sandbox.store.findLeads({}).map((l) => l.id);
		await t.control.config({
			churn: { everyNthListRequest: 2, remove: 2, insert: 1, changeStatus: 1 },
		});
		await t.api.get('/leads', { per_page: 10 });
		expect((await t.control.churnLog()).events).toEqual([]);
		await t.api.get('/leads', { per_page: 10, page: 2 });
		const { listRequests, events } = await t.control.churnLog();
		expect(listRequests).toBe(2);
		expect(events).toEqual([
			{
				id: 1,
				listRequest: 2,
				source: 'config',
				resource: 'leads',
				filter: {},
				removed: [expect.any(String), expect.any(String)],
				inserted: [expect.stringMatching(/^ld_/)],
				statusChanged: [
					{ id: expect.any(String), from: expect.any(String), to: expect.any(String) },
				],
				left: expect.any(Array),
			},
		]);
		const [event] = events;
		expect(event.left).toEqual(event.removed);
		for (const id of event.removed) expect(t.sandbox.store.leads.has(id)).toBe(false);
		const after = t.sandbox.store.findLeads({}).map((l) => l.id);
		expect(after).toHaveLength(before.length - 1);
		expect(after).toContain(event.inserted[0]);
		const changed = t.sandbox.store.leads.get(event.statusChanged[0].id)!;
		expect(changed.connection_status).toBe(event.statusChanged[0].to);
		expect(event.statusChanged[0].to).not.toBe(event.statusChanged[0].from);
	});

	it('a walk under churn shows the shift; the log gives the items that stayed the whole time', async () => {
		const start = new Set(t.sandbox.store.findLeads({}).map((l) => l.id));
		await t.control.config({
			churn: { everyNthListRequest: 1, remove: 1, insert: 1, changeStatus: 0 },
		});
		const seen = await walk('/leads');
		const { events } = await t.control.churnLog();
		expect(events.length).toBeGreaterThan(3);
		const left = new Set(events.flatMap((e) => e.left));
		const stayed = [...start].filter((id) => !left.has(id));
		// What a correct client must have returned, at least: every item that never left.
		const missed = stayed.filter((id) => !ids(seen).includes(id));
		// Offset paging under removals skips items: the sandbox really does shift the list.
		const duplicates = ids(seen).length - new Set(ids(seen)).size;
		expect(missed.length + duplicates).toBeGreaterThan(0);
		expect(stayed.length).toBe(start.size - left.size);
	});

	it('is the same for the same fault seed', async () => {
		const run = async () => {
			t.sandbox.reset({ leads: 40, campaigns: 3, messages: 60 });
			await t.control.config({
				faultSeed: 5,
				churn: { everyNthListRequest: 1, remove: 1, insert: 0, changeStatus: 1 },
			});
			await walk('/leads');
			return (await t.control.churnLog()).events.map((e) => [e.removed, e.statusChanged]);
		};
		expect(await run()).toEqual(await run());
	});

	it('messages: a status change takes a message out of a status-filtered list', async () => {
		t.sandbox.reset({ leads: 5, campaigns: 0, messages: 0 });
		await t.control.insertMessages({ count: 30, status: 'delivered' });
		await t.control.config({
			churn: { everyNthListRequest: 1, remove: 0, insert: 1, changeStatus: 1 },
		});
		await t.api.get('/messages', { status: 'delivered', per_page: 10 });
		const [event] = (await t.control.churnLog()).events;
		expect(event).toMatchObject({
			resource: 'messages',
			filter: { status: 'delivered' },
			removed: [],
		});
		expect(event.statusChanged).toEqual([
			{ id: expect.any(String), from: 'delivered', to: 'read' },
		]);
		expect(event.left).toEqual([event.statusChanged[0].id]);
		// The newcomer fits the filter: it lands in the very list being read.
		expect(t.sandbox.store.getMessage(event.inserted[0])!.status).toBe('delivered');
		const listed = ids(t.sandbox.store.findMessages({ status: 'delivered' }));
		expect(listed).not.toContain(event.statusChanged[0].id);
		expect(listed).toContain(event.inserted[0]);
		expect(listed).toHaveLength(30);
	});

	it('inserted leads fit the filter being read', async () => {
		const campaign = [...t.sandbox.store.campaigns.values()][0];
		await t.control.config({
			churn: { everyNthListRequest: 1, remove: 0, insert: 1, changeStatus: 0 },
		});
		await t.api.get('/leads', { campaign_id: campaign.id, search: 'zz' });
		const [event] = (await t.control.churnLog()).events;
		const lead = t.sandbox.store.leads.get(event.inserted[0])!;
		expect(lead).toMatchObject({ campaign_id: campaign.id, company: 'zz' });
		expect(ids(t.sandbox.store.findLeads({ campaign_id: campaign.id, search: 'zz' }))).toContain(
			lead.id,
		);
	});

	it('leaves campaigns and single reads alone, and is off by default', async () => {
		await t.api.get('/leads');
		await t.api.get('/messages');
		expect((await t.control.churnLog()).events).toEqual([]);
		await t.control.config({
			churn: { everyNthListRequest: 1, remove: 1, insert: 0, changeStatus: 0 },
		});
		const lead = [...t.sandbox.store.leads.values()][0];
		await t.api.get('/campaigns');
		await t.api.get(`/leads/${lead.id}`);
		expect(await t.control.churnLog()).toEqual({ listRequests: 2, events: [], pending: [] });
	});
});

describe('POST /__sandbox/churn', () => {
	it('fires once, right after the Nth next list request (of the resource given)', async () => {
		const queued = await t.control.addChurn({ after: 2, resource: 'messages', remove: 3 });
		expect(queued).toEqual({
			id: 1,
			resource: 'messages',
			remove: 3,
			insert: 0,
			changeStatus: 0,
			removeBefore: 0,
			removeAfter: 0,
			removeAt: [],
			remaining: 2,
		});
		await t.api.get('/messages');
		await t.api.get('/leads'); // not a message list: does not count
		expect((await t.control.churnLog()).events).toEqual([]);
		const page1 = (await t.api.get('/messages', { per_page: 10 })).body.data;
		const log = await t.control.churnLog();
		expect(log.pending).toEqual([]);
		expect(log.events).toHaveLength(1);
		expect(log.events[0]).toMatchObject({
			source: 1,
			resource: 'messages',
			listRequest: 3,
			inserted: [],
			statusChanged: [],
		});
		expect(log.events[0].removed).toHaveLength(3);
		// The page served was taken before the churn.
		expect(page1).toHaveLength(10);
		await t.api.get('/messages');
		expect((await t.control.churnLog()).events).toHaveLength(1);
	});

	it('removes at given positions of the list as served, and on either side of the reader', async () => {
		const served = async (query: Record<string, number> = {}) =>
			ids((await t.api.get('/leads', { per_page: 40, ...query })).body.data);
		const all = await served();
		await t.control.addChurn({ removeAt: [0, 7] });
		await served({ per_page: 10 });
		expect((await t.control.churnLog()).events[0].removed).toEqual([all[0], all[7]]);
		await t.control.addChurn({ removeBefore: 3, removeAfter: 2 });
		await served({ per_page: 10, page: 2 }); // the reader is at position 20
		const now = all.filter((id) => id !== all[0] && id !== all[7]);
		const removed = (await t.control.churnLog()).events[1].removed;
		expect(removed).toHaveLength(5);
		const at = removed.map((id) => now.indexOf(id));
		expect(at.filter((i) => i >= 0 && i < 20)).toHaveLength(3);
		expect(at.filter((i) => i >= 20)).toHaveLength(2);
	});

	it('rejects empty and malformed events; reset clears queue and log', async () => {
		await expect(t.control.addChurn({})).rejects.toThrow(
			/at least one of remove, insert, changeStatus/,
		);
		await expect(t.control.addChurn({ remove: -1 })).rejects.toThrow(/remove/);
		await expect(t.control.addChurn({ remove: 1, resource: 'campaigns' as never })).rejects.toThrow(
			/resource/,
		);
		await t.control.addChurn({ insert: 1 });
		await t.api.get('/leads');
		await t.control.addChurn({ insert: 1 });
		await t.control.reset();
		expect(await t.control.churnLog()).toEqual({ listRequests: 0, events: [], pending: [] });
	});
});
