/** /api/v1/messages over real HTTP: sending, filters, list order, ties and timestamps. */
import { ISO_SECONDS, useSandbox } from './helpers';

const t = useSandbox();

const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((m) => m.id);
async function leadInCampaign() {
	const campaign = (
		await t.api.post('/campaigns', {
			name: 'C',
			type: 'connection_message',
			steps: [{ type: 'connection_request' }],
		})
	).body.data;
	const lead = (await t.api.post('/leads', { first_name: 'Ada', campaign_id: campaign.id })).body
		.data;
	return { campaign, lead };
}

describe('POST /messages', () => {
	it("sends: 201, status sent, the lead's campaign, second-precision timestamp", async () => {
		const { campaign, lead } = await leadInCampaign();
		const res = await t.api.post('/messages', { lead_id: lead.id, body: 'Hello {{firstName}}' });
		expect(res.status).toBe(201);
		expect(res.body).toEqual({
			success: true,
			data: {
				id: expect.stringMatching(/^msg_[0-9a-z]+$/),
				lead_id: lead.id,
				campaign_id: campaign.id,
				step_index: null,
				direction: 'outbound',
				status: 'sent',
				body: 'Hello {{firstName}}',
				created_at: expect.stringMatching(ISO_SECONDS),
			},
		});
		expect((await t.api.get(`/messages/${res.body.data.id}`)).body.data).toEqual(res.body.data);
		expect((await t.control.stats()).creates.message).toBe(1);
	});

	it.each([
		['an unknown lead', { lead_id: 'ld_nope', body: 'Hi' }, 'lead_id', 'no lead ld_nope'],
		['no lead_id', { body: 'Hi' }, 'lead_id', 'is required'],
		['no body', { lead_id: 'ld_x' }, 'body', 'is required'],
		['an empty body', { lead_id: 'ld_x', body: '' }, 'body', 'must not be empty'],
		['a numeric body', { lead_id: 'ld_x', body: 42 }, 'body', 'must be a string'],
		['an unknown field', { lead_id: 'ld_x', body: 'Hi', subject: 'x' }, 'subject', 'unknown field'],
	])('rejects %s with 422', async (_name, body, field, message) => {
		const res = await t.api.post('/messages', body);
		expect(res.status).toBe(422);
		expect(res.body.error.details).toEqual([{ field, message }]);
		expect((await t.control.stats()).creates.message).toBe(0);
	});
});

describe('GET /messages/:id', () => {
	it('answers 404 for an unknown id', async () => {
		const res = await t.api.get('/messages/msg_nope');
		expect(res.status).toBe(404);
		expect(res.body.error).toEqual({ code: 'not_found', message: 'Message msg_nope not found' });
	});
});

describe('GET /messages', () => {
	it('filters by lead, campaign and (free-text) status', async () => {
		const { campaign, lead } = await leadInCampaign();
		const other = (await t.api.post('/leads', { first_name: 'Bob' })).body.data;
		const sent = (await t.api.post('/messages', { lead_id: lead.id, body: 'one' })).body.data.id;
		const read = (await t.control.insertMessages({ count: 2, lead_id: lead.id, status: 'read' }))
			.ids;
		const bob = (await t.api.post('/messages', { lead_id: other.id, body: 'two' })).body.data.id;

		expect(ids(await t.api.get('/messages', { lead_id: lead.id }))).toEqual(
			[...read].reverse().concat(sent),
		);
		expect(ids(await t.api.get('/messages', { lead_id: other.id }))).toEqual([bob]);
		expect(ids(await t.api.get('/messages', { campaign_id: campaign.id })).sort()).toEqual(
			[sent, ...read].sort(),
		);
		expect(ids(await t.api.get('/messages', { status: 'read' })).sort()).toEqual([...read].sort());
		expect(ids(await t.api.get('/messages', { status: 'sent', lead_id: lead.id }))).toEqual([sent]);
		expect((await t.api.get('/messages', { status: 'no-such-status' })).body.meta.total).toBe(0);
	});

	it('pages with meta like every list', async () => {
		await t.control.insertMessages({ count: 45 });
		const res = await t.api.get('/messages', { page: 3, per_page: 20 });
		expect(res.body.meta).toEqual({ page: 3, per_page: 20, total: 45 });
		expect(res.body.data).toHaveLength(5);
	});

	it('has sortable ids and lists newest first, or oldest first when configured', async () => {
		const inserted = (await t.control.insertMessages({ count: 40 })).ids;
		expect([...inserted].sort()).toEqual(inserted);
		expect(ids(await t.api.get('/messages', { per_page: 100 }))).toEqual([...inserted].reverse());
		await t.control.config({ order: 'oldest' });
		expect(ids(await t.api.get('/messages', { per_page: 100 }))).toEqual(inserted);
	});

	it('orders messages sharing a timestamp by insertion, in both orders', async () => {
		const early = (await t.control.insertMessages({ count: 3, created_at: '2026-01-01T10:00:00Z' }))
			.ids;
		const tied = (
			await t.control.insertMessages({ count: 6, created_at: '2026-01-01T10:15:30.600Z' })
		).ids;
		const newest = await t.api.get('/messages', { per_page: 100 });
		const reversed = (list: string[]) => [...list].reverse();
		expect(ids(newest)).toEqual([...reversed(tied), ...reversed(early)]);
		expect(newest.body.data[0].created_at).toBe('2026-01-01T10:15:30Z');
		expect(
			new Set(newest.body.data.slice(0, 6).map((m: { created_at: string }) => m.created_at)).size,
		).toBe(1);
		await t.control.config({ order: 'oldest' });
		expect(ids(await t.api.get('/messages', { per_page: 100 }))).toEqual([...early, ...tied]);
	});

	it('omits created_at everywhere when timestamps are off', async () => {
		const { lead } = await leadInCampaign();
		await t.control.config({ timestamps: false });
		const sent = await t.api.post('/messages', { lead_id: lead.id, body: 'Hi' });
		expect(sent.body.data).not.toHaveProperty('created_at');
		expect((await t.api.get(`/messages/${sent.body.data.id}`)).body.data).not.toHaveProperty(
			'created_at',
		);
		const list = await t.api.get('/messages');
		expect(list.body.data).toHaveLength(1);
		expect(list.body.data[0]).not.toHaveProperty('created_at');
	});

	it('serves seeded messages in several statuses, inbound replies included', async () => {
		t.sandbox.reset();
		const all = t.sandbox.store.findMessages({});
		const statuses = new Set(all.map((m) => m.status));
		for (const s of ['sent', 'delivered', 'read', 'replied', 'received'])
			expect(statuses).toContain(s);
		expect(
			all.every((m) => ISO_SECONDS.test(m.created_at!) && Date.parse(m.created_at!) <= Date.now()),
		).toBe(true);
		// Seeded ids follow time, so "newest first" is newest by timestamp too.
		const page = (await t.api.get('/messages', { per_page: 100 })).body.data as {
			created_at: string;
		}[];
		const times = page.map((m) => m.created_at);
		expect(times).toEqual([...times].sort().reverse());
	});
});
