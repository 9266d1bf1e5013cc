/** The searchScope knob: what `search` on GET /leads looks in (names, the whole record, nothing). */
import { parseCliArgs } from './cli';
import { useSandbox } from './helpers';

const t = useSandbox();

async function seedLeads() {
	for (const body of [
		{ first_name: 'Ada', company: 'Engines', linkedin_url: 'https://www.linkedin.com/in/Ada-L' },
		{ first_name: 'Grace', company: 'Navy', linkedin_url: 'https://linkedin.com/in/grace' },
		{ first_name: 'Alan', company: 'Bletchley', crm_id: 'CRM-77' },
	]) {
		expect((await t.api.post('/leads', body)).status).toBe(201);
	}
}

const found = async (search: string) => {
	const { body } = await t.api.get('/leads', { search });
	return {
		names: (body.data as Array<{ first_name: string }>).map((l) => l.first_name).sort(),
		total: body.meta.total as number,
	};
};

describe('searchScope', () => {
	it('names (the default): first/last name, company and title only, never the profile URL', async () => {
		expect((await t.control.config()).searchScope).toBe('names');
		await seedLeads();
		expect(await found('navy')).toEqual({ names: ['Grace'], total: 1 });
		expect(await found('linkedin.com/in/ada-l')).toEqual({ names: [], total: 0 });
		expect(await found('crm-77')).toEqual({ names: [], total: 0 });
	});

	it('record: every field, profile URL and custom fields included, case-insensitively', async () => {
		await t.control.config({ searchScope: 'record' });
		await seedLeads();
		expect(await found('LINKEDIN.COM/IN/ADA-L')).toEqual({ names: ['Ada'], total: 1 });
		expect(await found('linkedin.com/in/')).toEqual({ names: ['Ada', 'Grace'], total: 2 });
		expect(await found('crm-77')).toEqual({ names: ['Alan'], total: 1 });
		expect(await found('navy')).toEqual({ names: ['Grace'], total: 1 });
		expect(await found('nobody')).toEqual({ names: [], total: 0 });
	});

	it('ignored: every search answers the whole list', async () => {
		await t.control.config({ searchScope: 'ignored' });
		await seedLeads();
		expect(await found('nobody')).toEqual({ names: ['Ada', 'Alan', 'Grace'], total: 3 });
		expect(await found('linkedin.com/in/ada-l')).toEqual({
			names: ['Ada', 'Alan', 'Grace'],
			total: 3,
		});
	});

	it('is refused when unknown, reset to names, and set by flag and environment', async () => {
		await expect(t.control.config({ searchScope: 'everything' } as never)).rejects.toThrow(
			/searchScope/,
		);
		await t.control.config({ searchScope: 'record' });
		await t.control.reset();
		expect((await t.control.config()).searchScope).toBe('names');
		expect(parseCliArgs(['--search-scope', 'record']).options).toEqual({ searchScope: 'record' });
		expect(parseCliArgs([], { SANDBOX_SEARCH_SCOPE: 'ignored' }).options).toEqual({
			searchScope: 'ignored',
		});
	});
});
