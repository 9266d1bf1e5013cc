import {
	defineResource,
	type ResourceTable,
} from '../../../../nodes/OutreachAutomation/resources/table';

describe('a table row that cannot make a request fails when the package loads', () => {
	const table = (operation: Record<string, unknown>): ResourceTable =>
		({
			value: 'thing',
			name: 'Thing',
			defaultOperation: 'op',
			operations: [
				{
					name: 'Op',
					value: 'op',
					action: 'Op',
					description: 'Op',
					toolDescription: 'Does the op on a thing. Returns the thing as JSON. Read-only.',
					safeToRepeat: true,
					...operation,
				},
			],
		}) as unknown as ResourceTable;

	it.each([
		[
			'a POST without a body builder',
			{ method: 'POST', path: '/things' },
			/POST and PATCH need a body builder/,
		],
		[
			'a GET with a body builder',
			{ method: 'GET', path: '/things', body: () => ({}) },
			/GET and DELETE none/,
		],
		[
			'a tool description that says nothing',
			{ method: 'GET', path: '/things', toolDescription: 'Gets things' },
			/toolDescription must tell a model/,
		],
		['a path with {id} and no id parameter', { method: 'GET', path: '/things/{id}' }, /needs `id`/],
		[
			'an id parameter and no {id}',
			{ method: 'GET', path: '/things', id: { parameter: 'p', label: 'P' } },
			/needs `id`/,
		],
		[
			'a list read with POST',
			{ method: 'POST', path: '/things', body: () => ({}), list: true },
			/a list is read with GET/,
		],
		['a path without a leading slash', { method: 'GET', path: 'things' }, /must start with "\/"/],
		[
			'a list with a run of its own (Return All and Limit would be ignored)',
			{ method: 'GET', path: '/things', list: true, run: async () => [] },
			/a list has no run of its own/,
		],
	])('%s', (_name, operation, message) => {
		expect(() => defineResource(table(operation))).toThrow(message);
	});

	it('and a default operation that does not exist', () => {
		expect(() =>
			defineResource({ ...table({ method: 'GET', path: '/things' }), defaultOperation: 'nope' }),
		).toThrow(/default "nope" is not an operation/);
	});
});
