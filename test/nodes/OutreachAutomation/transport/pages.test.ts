import { isLastPage } from '../../../../nodes/OutreachAutomation/transport/pages';

describe('the last page (one definition for Return All, the list searches and the trigger)', () => {
	it.each([
		['an empty page', 1, 0, 100, undefined, true],
		['a short page', 3, 40, 100, undefined, true],
		['a full page without a total', 2, 100, 100, undefined, false],
		['a full page reaching the total', 13, 100, 100, 1300, true],
		['a full page below the total', 12, 100, 100, 1234, false],
		['a page clamped by the server (per_page 40) below the total', 1, 40, 40, 1234, false],
		['a page clamped by the server reaching the total', 31, 40, 40, 1234, true],
	])('%s', (_name, number, count, perPage, total, last) => {
		expect(isLastPage(number, count, perPage, total)).toBe(last);
	});
});
