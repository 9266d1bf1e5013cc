import { OutreachAutomationApi } from '../../../../credentials/OutreachAutomationApi.credentials';
import {
	BASE_URL_NOTICES,
	checkedBaseUrl,
	CREDENTIAL_TEST_BASE_URL,
	credentialProblem,
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

	it('refuses every space, control character and DEL inside the host or the path; the credential test too', () => {
		const invisible = [...Array(0x21).keys(), 0x7f].map((code) => String.fromCharCode(code));
		for (const ch of invisible) {
			for (const given of [`https://api${ch}x.example.com`, `https://api.example.com/a${ch}b`]) {
				expect([JSON.stringify(given), checkedBaseUrl(given)]).toEqual([
					JSON.stringify(given),
					undefined,
				]);
				const tested = evaluateCredentialExpression(CREDENTIAL_TEST_BASE_URL, {
					baseUrl: given,
					apiKey: 'k',
				});
				expect(tested).toBe('base-url-refused/api/v1');
			}
		}
	});

	it('accepts every other character that is not a delimiter: printable ASCII and beyond ASCII', () => {
		const visible = [
			...'!"$%&\'()*+,-.0123456789:;<=>ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmnopqrstuvwxyz{|}~',
			'\u0080',
			'é',
			'\uffff',
			'😀',
		];
		for (const ch of visible) {
			const given = `https://api${ch}x.example.com/a${ch}@b`;
			expect(checkedBaseUrl(given)).toBe(given);
		}
	});
});

describe("the credential dialog's Base URL notices", () => {
	// As n8n's editor decides: shown when `when` matches, hidden for expressions and `unless`.
	const shown = (value: string) =>
		BASE_URL_NOTICES.filter(
			(notice) =>
				!value.startsWith('=') &&
				new RegExp(notice.when).test(value) &&
				!(notice.unless ?? []).some((pattern) => new RegExp(pattern).test(value)),
		).map((notice) => notice.name);

	it.each([
		'https://api.example.com',
		' https://api.example.com/api/v1/ ',
		'HTTP://API.EXAMPLE.COM:8080/base',
		'https://api.example.com/a@b',
		'api.example.com',
		'ftp://api.example.com',
		'https://ada:secret@api.example.com',
		'https://api.example.com/?key=1',
		'https://api.example.com/#top',
		'https://api .example.com',
		'https://api.example.com\\v1',
	])('a notice shows for %j exactly when the nodes refuse it', (value) => {
		const refused = credentialProblem(value, 'key-1')?.message.startsWith('The Base URL') ?? false;
		expect(shown(value).length > 0).toBe(refused);
	});

	it('no notice while the field is empty, while "https://" is being typed, or for an expression', () => {
		for (const value of ['', 'h', 'htt', 'https', 'https:/', '={{ $env.OUTREACH_URL }}'])
			expect(shown(value)).toEqual([]);
	});

	it('names the problem: user name and password, query, scheme', () => {
		expect(shown('https://ada:secret@api.example.com')).toEqual(['baseUrlUserinfoNotice']);
		expect(shown('https://api.example.com?x=1')).toEqual(['baseUrlQueryNotice']);
		expect(shown('api.example.com')).toEqual(['baseUrlSchemeNotice']);
	});
});
