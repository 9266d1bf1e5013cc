/** /api/v1/leads over real HTTP. */
import { ISO, useSandbox } from './helpers';

const t = useSandbox();

const createLead = async (body: Record<string, unknown>) => {
	const res = await t.api.post('/leads', body);
	expect(res.status).toBe(201);
	return res.body.data;
};
const createCampaign = async (lead_list_id: string | null = null) =>
	(
		await t.api.post('/campaigns', {
			name: 'Test',
			type: 'connection_message',
			lead_list_id,
			steps: [{ type: 'connection_request' }],
		})
	).body.data;

describe('POST /leads', () => {
	it('creates a lead with defaults for missing fields and keeps custom fields', async () => {
		const res = await t.api.post('/leads', {
			first_name: 'Ada',
			crm_id: 'A-17',
			score: 9.5,
			vip: true,
			note: null,
		});
		expect(res.status).toBe(201);
		expect(res.body.success).toBe(true);
		const lead = res.body.data;
		expect(lead).toEqual({
			id: expect.stringMatching(/^ld_[0-9a-z]+$/),
			first_name: 'Ada',
			last_name: '',
			company: '',
			title: '',
			linkedin_url: '',
			lead_list_id: null,
			campaign_id: null,
			connection_status: 'none',
			crm_id: 'A-17',
			score: 9.5,
			vip: true,
			note: null,
			created_at: expect.stringMatching(ISO),
			updated_at: lead.created_at,
		});
		expect((await t.api.get(`/leads/${lead.id}`)).body.data).toEqual(lead);
		expect((await t.control.stats()).creates.lead).toBe(1);
	});

	it('accepts a lead known by its profile URL only, and a campaign that exists', async () => {
		const campaign = await createCampaign();
		const lead = await createLead({
			linkedin_url: 'https://www.linkedin.com/in/ada',
			campaign_id: campaign.id,
		});
		expect(lead.campaign_id).toBe(campaign.id);
	});

	it.each([
		[
			'an empty object',
			{},
			'body',
			'a lead needs at least one of first_name, last_name or linkedin_url',
		],
		[
			'only empty names',
			{ first_name: '', company: 'X' },
			'body',
			'a lead needs at least one of first_name, last_name or linkedin_url',
		],
		[
			'profile_url',
			{ first_name: 'A', profile_url: 'https://x.dev/a' },
			'profile_url',
			'unknown field profile_url: this service calls it linkedin_url',
		],
		['an id', { first_name: 'A', id: 'ld_1' }, 'id', 'is read-only'],
		[
			'created_at',
			{ first_name: 'A', created_at: '2020-01-01T00:00:00Z' },
			'created_at',
			'is read-only',
		],
		[
			'updated_at',
			{ first_name: 'A', updated_at: '2020-01-01T00:00:00Z' },
			'updated_at',
			'is read-only',
		],
		['a number as a name', { first_name: 5 }, 'first_name', 'must be a string'],
		['null as a company', { first_name: 'A', company: null }, 'company', 'must be a string'],
		[
			'a URL without scheme',
			{ linkedin_url: 'linkedin.com/in/a' },
			'linkedin_url',
			'must be an http(s) URL',
		],
		[
			'a non-http URL',
			{ linkedin_url: 'ftp://linkedin.com/in/a' },
			'linkedin_url',
			'must be an http(s) URL',
		],
		[
			'an array custom field',
			{ first_name: 'A', tags: ['x'] },
			'tags',
			'a custom field must be a string, number, boolean or null',
		],
		[
			'an object custom field',
			{ first_name: 'A', meta: { a: 1 } },
			'meta',
			'a custom field must be a string, number, boolean or null',
		],
		[
			'an unknown connection status',
			{ first_name: 'A', connection_status: 'friends' },
			'connection_status',
			'must be one of none, pending, accepted',
		],
		[
			'a numeric lead_list_id',
			{ first_name: 'A', lead_list_id: 12 },
			'lead_list_id',
			'must be a string',
		],
		[
			'a campaign that does not exist',
			{ first_name: 'A', campaign_id: 'cmp_nope' },
			'campaign_id',
			'no campaign cmp_nope',
		],
		['an array body', [], 'body', 'must be an object'],
	])('rejects %s with 422 and the field', async (_name, body, field, message) => {
		const res = await t.api.post('/leads', body);
		expect(res.status).toBe(422);
		expect(res.body.success).toBe(false);
		expect(res.body.error.code).toBe('validation_error');
		expect(res.body.error.details).toContainEqual({ field, message });
		expect(res.body.error.message).toContain(message);
		expect(t.sandbox.store.leads.size).toBe(0);
	});

	it('rejects a missing body with 422', async () => {
		const res = await t.api.request('POST', '/leads');
		expect(res.status).toBe(422);
		expect(res.body.error.details).toEqual([{ field: 'body', message: 'is required' }]);
	});
});

describe('GET /leads/:id', () => {
	it('answers 404 for an unknown id', async () => {
		const res = await t.api.get('/leads/ld_nope');
		expect(res.status).toBe(404);
		expect(res.body).toEqual({
			success: false,
			error: { code: 'not_found', message: 'Lead ld_nope not found' },
		});
	});
});

describe('GET /leads', () => {
	it('searches first name, last name, company and title, case-insensitively', async () => {
		await createLead({
			first_name: 'Grace',
			last_name: 'Hopper',
			company: 'Navy',
			title: 'Rear Admiral',
		});
		await createLead({
			first_name: 'Alan',
			last_name: 'Turing',
			company: 'Bletchley Park',
			title: 'Cryptanalyst',
		});
		await createLead({
			first_name: 'Ada',
			last_name: 'Lovelace',
			company: 'Analytical Engines',
			title: 'Programmer',
		});
		const names = async (search: string) =>
			(await t.api.get('/leads', { search })).body.data
				.map((l: { first_name: string }) => l.first_name)
				.sort();
		expect(await names('HOPP')).toEqual(['Grace']);
		expect(await names('bletchley')).toEqual(['Alan']);
		expect(await names('admiral')).toEqual(['Grace']);
		expect(await names('a')).toEqual(['Ada', 'Alan', 'Grace']);
		expect(await names('zzz')).toEqual([]);
		expect((await t.api.get('/leads', { search: 'lovelace' })).body.meta.total).toBe(1);
	});

	it('filters by campaign: leads that joined it and leads on its lead list', async () => {
		const campaign = await createCampaign('ll_growth');
		const other = await createCampaign('ll_other');
		const joined = await createLead({ first_name: 'Joined', campaign_id: campaign.id });
		const listed = await createLead({ first_name: 'Listed', lead_list_id: 'll_growth' });
		await createLead({ first_name: 'Elsewhere', campaign_id: other.id, lead_list_id: 'll_other' });
		await createLead({ first_name: 'Nowhere' });
		const res = await t.api.get('/leads', { campaign_id: campaign.id });
		expect(res.body.data.map((l: { id: string }) => l.id).sort()).toEqual(
			[joined.id, listed.id].sort(),
		);
		expect(res.body.meta.total).toBe(2);
		expect((await t.api.get('/leads', { campaign_id: 'cmp_nope' })).body).toEqual({
			success: true,
			data: [],
			meta: { page: 1, per_page: 20, total: 0 },
		});
	});
});

describe('PATCH /leads/:id', () => {
	it('changes only the fields given', async () => {
		const lead = await createLead({ first_name: 'Ada', company: 'Old Co', crm_id: 'A1' });
		const campaign = await createCampaign();
		const res = await t.api.patch(`/leads/${lead.id}`, {
			company: 'New Co',
			campaign_id: campaign.id,
			connection_status: 'accepted',
			stage: 'qualified',
		});
		expect(res.status).toBe(200);
		expect(res.body.data).toEqual({
			...lead,
			company: 'New Co',
			campaign_id: campaign.id,
			connection_status: 'accepted',
			stage: 'qualified',
			updated_at: expect.stringMatching(ISO),
		});
		expect(res.body.data.updated_at >= lead.updated_at).toBe(true);
		expect((await t.api.get(`/leads/${lead.id}`)).body.data).toEqual(res.body.data);
	});

	it.each([
		['an empty body', {}, 'body', 'no fields to update'],
		['a read-only field', { id: 'ld_2' }, 'id', 'is read-only'],
		[
			'profile_url',
			{ profile_url: 'https://x.dev' },
			'profile_url',
			'unknown field profile_url: this service calls it linkedin_url',
		],
		['a bad URL', { linkedin_url: 'nope' }, 'linkedin_url', 'must be an http(s) URL'],
		['a missing campaign', { campaign_id: 'cmp_nope' }, 'campaign_id', 'no campaign cmp_nope'],
	])('rejects %s with 422', async (_name, body, field, message) => {
		const lead = await createLead({ first_name: 'Ada' });
		const res = await t.api.patch(`/leads/${lead.id}`, body);
		expect(res.status).toBe(422);
		expect(res.body.error.details).toEqual([{ field, message }]);
		expect((await t.api.get(`/leads/${lead.id}`)).body.data).toEqual(lead);
	});

	it('clears fields sent empty: text and linkedin_url to "", lead_list_id and campaign_id to null', async () => {
		const lead = await createLead({
			first_name: 'Ada',
			company: 'Acme',
			linkedin_url: 'https://www.linkedin.com/in/ada',
			lead_list_id: 'list-1',
			stage: 'won',
		});
		const res = await t.api.patch(`/leads/${lead.id}`, {
			company: '',
			linkedin_url: '',
			lead_list_id: null,
			stage: '',
		});
		expect(res.status).toBe(200);
		expect(res.body.data).toMatchObject({
			first_name: 'Ada',
			company: '',
			linkedin_url: '',
			lead_list_id: null,
			stage: '',
		});
	});

	it('answers 404 for an unknown id', async () => {
		const res = await t.api.patch('/leads/ld_nope', { first_name: 'X' });
		expect(res.status).toBe(404);
		expect(res.body.error.message).toBe('Lead ld_nope not found');
	});
});

describe('DELETE /leads/:id', () => {
	it('deletes and says so; the lead is then gone', async () => {
		const lead = await createLead({ first_name: 'Ada' });
		const res = await t.api.delete(`/leads/${lead.id}`);
		expect(res.status).toBe(200);
		expect(res.body).toEqual({ success: true, data: { id: lead.id, deleted: true } });
		expect((await t.api.get(`/leads/${lead.id}`)).status).toBe(404);
		expect((await t.api.delete(`/leads/${lead.id}`)).status).toBe(404);
	});

	it('answers data: null in deleteReturnsEmpty mode', async () => {
		const lead = await createLead({ first_name: 'Ada' });
		await t.control.config({ deleteReturnsEmpty: true });
		const res = await t.api.delete(`/leads/${lead.id}`);
		expect(res.status).toBe(200);
		expect(res.body).toEqual({ success: true, data: null });
		expect(t.sandbox.store.leads.has(lead.id)).toBe(false);
	});
});
