import { OutreachAutomationApi } from '../../../../credentials/OutreachAutomationApi.credentials';
import {
	checkedBaseUrl,
	CREDENTIAL_TEST_BASE_URL,
	normalizeBaseUrl,
} from '../../../../nodes/OutreachAutomation/transport/baseUrl';
import { evaluateCredentialExpression } from '../../../engine/harness';

const forms: Array<[string, string, string]> = [
	['as it should be', 'https://api.example.com', 'https://api.example.com'],
	['a trailing slash', 'https://api.example.com/', 'https://api.example.com'],
	['several trailing slashes', 'https://api.example.com///', 'https://api.example.com'],
	['the /api/v1 suffix', 'https://api.example.com/api/v1', 'https://api.example.com'],
	['the /api/v1/ suffix', 'https://api.example.com/api/v1/', 'https://api.example.com'],
	['the suffix in capitals', 'https://api.example.com/API/V1', 'https://api.example.com'],
	['surrounding spaces', '  https://api.example.com/api/v1/ \t', 'https://api.example.com'],
	['a path prefix', 'http://127.0.0.1:4010/outreach/', 'http://127.0.0.1:4010/outreach'],
	[
		'a path prefix and the suffix',
		'http://127.0.0.1:4010/outreach/api/v1',
		'http://127.0.0.1:4010/outreach',
	],
];

describe('Base URL: one normalisation for the nodes and the credential test', () => {
	it('the credential test request uses the shared expression', () => {
		expect(new OutreachAutomationApi().test.request.baseURL).toBe(CREDENTIAL_TEST_BASE_URL);
	});

	it.each(forms)('%s: the nodes and the credential test agree', (_form, given, expected) => {
		expect(normalizeBaseUrl(given)).toBe(expected);
		expect(checkedBaseUrl(given)).toBe(expected);
		const tested = evaluateCredentialExpression(CREDENTIAL_TEST_BASE_URL, {
			baseUrl: given,
			apiKey: 'k',
		});
		expect(tested).toBe(`${expected}/api/v1`);
	});

	it('refuses what is not an http(s) address', () => {
		expect(checkedBaseUrl('ftp://example.com')).toBeUndefined();
		expect(checkedBaseUrl('sandbox.local:4010')).toBeUndefined();
		expect(checkedBaseUrl('')).toBeUndefined();
		expect(checkedBaseUrl(undefined)).toBeUndefined();
	});
});
