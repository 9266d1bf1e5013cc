/** The other readings of paging: meta shapes, a hidden clamp, per_page refused over the max, very large pages. */
import { useSandbox } from './helpers';

const t = useSandbox({}, { leads: 30, campaigns: 0, messages: 0 });

describe('meta variants', () => {
	const meta = async (query: Record<string, number> = { per_page: 10 }) =>
		(await t.api.get('/leads', query)).body.meta;

	it('full and exact by default', async () => {
		expect(await meta()).toEqual({ page: 1, per_page: 10, total: 30 });
	});

	it('metaStyle absent: no meta at all, data unchanged', async () => {
		await t.control.config({ metaStyle: 'absent' });
		const res = await t.api.get('/leads', { per_page: 10, page: 3 });
		expect(Object.keys(res.body)).toEqual(['success', 'data']);
		expect(res.body.data).toHaveLength(10);
	});

	it.each([
		['absent', { page: 1, per_page: 10 }],
		['string', { page: 1, per_page: 10, total: '30' }],
		['negative', { page: 1, per_page: 10, total: -1 }],
		['low', { page: 1, per_page: 10, total: 15 }],
		['high', { page: 1, per_page: 10, total: 61 }],
	] as const)('metaTotal %s', async (metaTotal, expected) => {
		await t.control.config({ metaTotal });
		expect(await meta()).toEqual(expected);
	});

	it.each([
		['absent', { page: 1, total: 30 }],
		['string', { page: 1, per_page: '10', total: 30 }],
		['requested', { page: 1, per_page: 10, total: 30 }],
	] as const)('metaPerPage %s', async (metaPerPage, expected) => {
		await t.control.config({ metaPerPage });
		expect(await meta()).toEqual(expected);
	});

	it('the data past a wrong total is still there, and the end is still an empty page', async () => {
		await t.control.config({ metaTotal: 'low' });
		expect((await t.api.get('/leads', { per_page: 10, page: 3 })).body.data).toHaveLength(10);
		await t.control.config({ metaTotal: 'high' });
		expect((await t.api.get('/leads', { per_page: 10, page: 4 })).body.data).toEqual([]);
	});

	it('applies to messages and campaigns too', async () => {
		await t.control.config({ metaStyle: 'absent' });
		expect((await t.api.get('/messages')).body.meta).toBeUndefined();
		expect((await t.api.get('/campaigns')).body.meta).toBeUndefined();
	});
});

describe('per_page above the maximum', () => {
	it('clamp (default): meta.per_page says what was used', async () => {
		await t.control.config({ maxPerPage: 7 });
		const res = await t.api.get('/leads', { per_page: 100 });
		expect(res.body.data).toHaveLength(7);
		expect(res.body.meta.per_page).toBe(7);
	});

	it('hidden clamp: 7 items while meta.per_page echoes the 100 asked for (or is absent)', async () => {
		await t.control.config({ maxPerPage: 7, metaPerPage: 'requested' });
		const res = await t.api.get('/leads', { per_page: 100 });
		expect(res.body.data).toHaveLength(7);
		expect(res.body.meta).toEqual({ page: 1, per_page: 100, total: 30 });
		// Page 2 continues after the 7 actually served, not after 100.
		const page2 = await t.api.get('/leads', { per_page: 100, page: 2 });
		expect(page2.body.data[0].id).not.toBe(res.body.data[0].id);
		expect(page2.body.data).toHaveLength(7);
		await t.control.config({ metaPerPage: 'absent' });
		expect((await t.api.get('/leads', { per_page: 100 })).body.meta).toEqual({
			page: 1,
			total: 30,
		});
	});

	it.each([
		['reject-422', 422, 'Validation failed: per_page: must be at most 7'],
		['reject-400', 400, 'Invalid query: per_page: must be at most 7'],
	] as const)(
		'%s: refused, naming the field and the maximum',
		async (perPageOverMax, status, message) => {
			await t.control.config({ maxPerPage: 7, perPageOverMax });
			const res = await t.api.get('/leads', { per_page: 8 });
			expect(res.status).toBe(status);
			expect(res.body.error).toEqual({
				code: expect.any(String),
				message,
				details: [{ field: 'per_page', message: 'must be at most 7' }],
			});
			expect((await t.api.get('/leads', { per_page: 7 })).status).toBe(200);
			expect((await t.api.get('/messages', { per_page: 8 })).status).toBe(status);
		},
	);
});

describe('big pages', () => {
	it('seeds 50,000 leads and serves them in one page of 50,000', async () => {
		t.sandbox.reset({ leads: 50_000, campaigns: 6, messages: 0 });
		await t.control.config({ maxPerPage: 50_000 });
		const res = await t.api.get('/leads', { per_page: 50_000 });
		expect(res.status).toBe(200);
		expect(res.body.data).toHaveLength(50_000);
		expect(res.body.meta).toEqual({ page: 1, per_page: 50_000, total: 50_000 });
		expect(new Set(res.body.data.map((l: { id: string }) => l.id)).size).toBe(50_000);
	});
});
