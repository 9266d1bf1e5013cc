/** Error bodies in every errorStyle, for every kind of error, and echoSecrets (never on a success). */
import { sandboxApi, type ApiResponse } from './client';
import { useSandbox } from './helpers';
import { ERROR_STYLES } from './schemas';

const KEY = 'sk_live_errstyle_0123456789';
const t = useSandbox({ apiKeys: [KEY] });

/** One request of each error kind the sandbox emits on /api/v1, in the live config. */
async function everyError(): Promise<Record<string, ApiResponse>> {
	const api = t.api;
	const out: Record<string, ApiResponse> = {};
	out[422] = await api.post('/campaigns', {
		name: 'C',
		type: 'connection_message',
		steps: [{ type: 'message', delay_days: -1, body: 'x' }],
	});
	out[404] = await api.get('/leads/ld_missing');
	const draft = t.sandbox.store.addCampaign({
		name: 'D',
		type: 'connection_message',
		steps: [{ type: 'connection_request' }],
	});
	out[409] = await api.post(`/campaigns/${draft.id}/pause`);
	out[400] = await api.get('/leads', { per_page: 'lots' });
	t.sandbox.addFault({ status: 503 });
	out[503] = await api.get('/leads');
	out[401] = await sandboxApi(t.sandbox.url, 'sk_wrong_key').get('/leads');
	// Past the requests made above, the next one is over the limit.
	t.sandbox.config({ rateLimit: 1 });
	out[429] = await api.get('/leads');
	return out;
}

const STATUSES = ['400', '401', '404', '409', '422', '429', '503'];

describe('errorStyle', () => {
	it('envelope (default): {success: false, error: {code, message, details?}}', async () => {
		const errors = await everyError();
		for (const status of STATUSES) {
			const res = errors[status];
			expect(res.status).toBe(Number(status));
			expect(res.headers['content-type']).toMatch(/^application\/json/);
			expect(res.body).toEqual({
				success: false,
				error: expect.objectContaining({ code: expect.any(String), message: expect.any(String) }),
			});
		}
		expect(errors[422].body.error.details).toEqual([
			{ field: 'steps[0].delay_days', message: 'must be a non-negative integer' },
		]);
	});

	it('message-errors-object: {success: false, message, errors: {field: [messages]}}', async () => {
		await t.control.config({ errorStyle: 'message-errors-object' });
		const errors = await everyError();
		expect(errors[422].body).toEqual({
			success: false,
			message: 'Validation failed: steps[0].delay_days: must be a non-negative integer',
			errors: { 'steps[0].delay_days': ['must be a non-negative integer'] },
		});
		expect(errors[400].body.errors).toEqual({ per_page: ['must be an integer >= 1'] });
		expect(errors[404].body).toEqual({ success: false, message: 'Lead ld_missing not found' });
		expect(errors[401].body).toEqual({ success: false, message: 'Missing or invalid API key' });
		expect(errors[429].body.message).toMatch(/^Rate limit exceeded/);
		expect(errors[503].body).toEqual({
			success: false,
			message: 'Service temporarily unavailable',
		});
	});

	it('errors-array: {success: false, errors: [{field, message}]}, a lone message for non-field errors', async () => {
		await t.control.config({ errorStyle: 'errors-array' });
		const errors = await everyError();
		expect(errors[422].body).toEqual({
			success: false,
			errors: [{ field: 'steps[0].delay_days', message: 'must be a non-negative integer' }],
		});
		expect(errors[409].body).toEqual({
			success: false,
			errors: [{ message: expect.stringMatching(/is not active/) }],
		});
		expect(errors[401].body).toEqual({
			success: false,
			errors: [{ message: 'Missing or invalid API key' }],
		});
	});

	it('error-string: {success: false, error: "..."}', async () => {
		await t.control.config({ errorStyle: 'error-string' });
		const errors = await everyError();
		expect(errors[422].body).toEqual({
			success: false,
			error: 'Validation failed: steps[0].delay_days: must be a non-negative integer',
		});
		expect(errors[404].body).toEqual({ success: false, error: 'Lead ld_missing not found' });
		for (const status of STATUSES) expect(typeof errors[status].body.error).toBe('string');
	});

	it('problem-json: application/problem+json with type, title, status, detail and errors', async () => {
		await t.control.config({ errorStyle: 'problem-json' });
		const errors = await everyError();
		for (const status of STATUSES) {
			expect(errors[status].headers['content-type']).toMatch(/^application\/problem\+json/);
			expect(errors[status].body).toMatchObject({
				type: 'about:blank',
				title: expect.any(String),
				status: Number(status),
				detail: expect.any(String),
			});
			expect(errors[status].body.success).toBeUndefined();
		}
		expect(errors[422].body).toMatchObject({
			title: 'Unprocessable Entity',
			errors: [{ detail: 'must be a non-negative integer', pointer: '#/steps/0/delay_days' }],
		});
		expect(errors[400].body.errors).toEqual([
			{ detail: 'must be an integer >= 1', parameter: 'per_page' },
		]);
		expect(errors[429].body.title).toBe('Too Many Requests');
		// The rate-limit headers stay: only the body changes.
		expect(errors[429].headers['retry-after']).toMatch(/^\d+$/);
		expect(errors[401].headers['x-ratelimit-remaining']).toBeDefined();
	});

	it('text: a text/plain line per problem', async () => {
		await t.control.config({ errorStyle: 'text' });
		const errors = await everyError();
		for (const status of STATUSES) {
			expect(errors[status].headers['content-type']).toMatch(/^text\/plain/);
			expect(errors[status].body).toBeUndefined(); // not JSON
		}
		expect(errors[422].text).toBe(
			'422 Unprocessable Entity: Validation failed: steps[0].delay_days: must be a non-negative integer\n- steps[0].delay_days: must be a non-negative integer\n',
		);
		expect(errors[404].text).toBe('404 Not Found: Lead ld_missing not found\n');
	});

	it('html: a proxy-like HTML page', async () => {
		await t.control.config({ errorStyle: 'html' });
		const errors = await everyError();
		for (const status of STATUSES) {
			expect(errors[status].headers['content-type']).toBe('text/html');
			expect(errors[status].text).toMatch(
				new RegExp(`^<html>[\\s\\S]*<h1>${status} [^<]+</h1>[\\s\\S]*nginx[\\s\\S]*</html>`),
			);
		}
		expect(errors[503].text).toContain('<title>503 Service Unavailable</title>');
		expect(errors[422].text).toContain(
			'<li>steps[0].delay_days: must be a non-negative integer</li>',
		);
	});

	it('keeps successes, control answers and 405 Allow headers as they were', async () => {
		await t.control.config({ errorStyle: 'problem-json' });
		expect((await t.api.get('/leads')).body).toMatchObject({ success: true, data: [] });
		const notAllowed = await t.api.request('PUT', '/leads');
		expect(notAllowed.status).toBe(405);
		expect(notAllowed.headers.allow).toBe('GET, POST');
		expect(notAllowed.body).toMatchObject({ status: 405, title: 'Method Not Allowed' });
		await expect(t.control.config({ rateLimit: 0 })).rejects.toThrow(
			/rateLimit: must be an integer >= 1/,
		);
	});

	it('false-success stays a 200 {success: false} body, in the JSON styles that have one', async () => {
		for (const [errorStyle, check] of [
			[
				'error-string',
				(b: any) =>
					expect(b).toEqual({ success: false, error: 'The operation could not be completed' }),
			],
			[
				'problem-json',
				(b: any) => expect(b).toMatchObject({ success: false, error: { code: 'internal_error' } }),
			],
			[
				'html',
				(b: any) => expect(b).toMatchObject({ success: false, error: { code: 'internal_error' } }),
			],
		] as const) {
			await t.control.config({ errorStyle });
			await t.control.addFault({ kind: 'false-success' });
			const res = await t.api.get('/leads');
			expect(res.status).toBe(200);
			check(res.body);
		}
	});
});

describe('echoSecrets', () => {
	it.each(ERROR_STYLES)(
		'%s: every error body carries the key and the whole Authorization header',
		async (errorStyle) => {
			await t.control.config({ errorStyle, echoSecrets: true });
			const errors = await everyError();
			for (const status of STATUSES) {
				const text = errors[status].text;
				const presented = status === '401' ? 'sk_wrong_key' : KEY;
				expect(text).toContain(`Authorization: Bearer ${presented}`);
				expect(text).toContain(`api_key=${presented}`);
				if (errors[status].body)
					expect(errors[status].body.debug).toEqual({
						authorization: `Bearer ${presented}`,
						api_key: presented,
					});
			}
		},
	);

	it('echoes in the message text too, and nothing in success bodies', async () => {
		await t.control.config({ echoSecrets: true });
		const missing = await t.api.get('/leads/ld_x');
		expect(missing.body.error.message).toBe(
			`Lead ld_x not found [debug: Authorization: Bearer ${KEY}; api_key=${KEY}]`,
		);
		const created = await t.api.post('/leads', { first_name: 'Ada' });
		const list = await t.api.get('/leads');
		for (const res of [created, list]) {
			expect(res.status).toBeLessThan(300);
			expect(res.text).not.toContain(KEY);
		}
		const anonymous = await sandboxApi(t.sandbox.url).get('/leads');
		expect(anonymous.body.debug).toEqual({ authorization: null, api_key: null });
	});
});
