import { NodeApiError } from 'n8n-workflow';
import type { INode } from 'n8n-workflow';

import {
	redactError,
	redactText,
	redactValue,
	rememberSecret,
} from '../../../../nodes/OutreachAutomation/transport/redact';

const KEY = 'sk_live_4f9a8b7c6d5e4f3a2b1c';
const node = {
	id: 'n',
	name: 'Outreach Automation',
	type: 't',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
} as INode;

describe('redaction', () => {
	beforeAll(() => rememberSecret(`  ${KEY}\n`));

	it.each([
		[`debug: Authorization: Bearer ${KEY}; api_key=${KEY}`],
		[`the key ${KEY.slice(3, 11)} and ${KEY.slice(10)}`],
		[`${KEY.slice(0, 12)}...${KEY.slice(-9)}`],
		[encodeURIComponent(`${KEY}`)],
		['Authorization: Basic dXNlcjpwYXNzd29yZA=='],
		['"authorization":"Bearer some-other-token-xyz"'],
		['Could not reach https://ada:s3cret-pass@api.example.com/api/v1'],
	])('hides the secret in %j', (text) => {
		const out = redactText(text);
		expect(out).toContain('[redacted]');
		for (let i = 0; i + 8 <= KEY.length; i++) expect(out).not.toContain(KEY.slice(i, i + 8));
		expect(out).not.toMatch(/dXNlcjpw|some-other-token|s3cret-pass/);
	});

	it('keeps ordinary text readable', () => {
		const text = 'Lead "ld_42" was not found. A basic setup, Bearer of news.';
		expect(redactText(text)).toBe(text);
		expect(redactText(`Authorization: Bearer ${KEY}`)).toBe('Authorization: Bearer [redacted]');
	});

	it('copies values without prototype effects and redacts keys and values', () => {
		const input = JSON.parse(`{"__proto__": {"x": "${KEY}"}, "a": ["${KEY}", 1, null]}`) as object;
		const out = redactValue(input) as Record<string, unknown>;
		expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
		expect(JSON.stringify(out)).toBe('{"__proto__":{"x":"[redacted]"},"a":["[redacted]",1,null]}');
	});

	it('redacts an error in place: message, description, cause, context, stack', () => {
		const error = new NodeApiError(
			node,
			{ httpCode: '500', body: { debug: { api_key: KEY } } },
			{ message: `boom ${KEY}`, description: `Authorization: Bearer ${KEY}` },
		);
		expect(redactError(error)).toBe(error);
		const all = JSON.stringify({ ...error, message: error.message, stack: error.stack });
		expect(all).not.toContain(KEY.slice(0, 8));
		expect(all).toContain('[redacted]');
	});
});

describe('redaction of the service data', () => {
	it('hides only the known keys in output items: "Basic plan" and addresses stay as they are', () => {
		rememberSecret('data-key-9b8a7c6d5e');
		const item = {
			note: 'Basic Membership, https://ada:pw@x.example, Bearer tokenized',
			k: 'data-key-9b8a7c6d5e',
		};
		expect(redactValue(item, true)).toEqual({ ...item, k: '[redacted]' });
	});
});
