import {
	fieldProblems,
	serverMessage,
} from '../../../../nodes/OutreachAutomation/transport/errors';

describe('reading error bodies (error.message, error, message, errors[] in that order)', () => {
	it.each([
		[
			{ success: false, error: { code: 'x', message: 'from error.message' }, message: 'no' },
			'from error.message',
		],
		[{ success: false, error: 'from error', message: 'no' }, 'from error'],
		[{ message: 'from message', errors: ['no'] }, 'from message'],
		[
			{ errors: [{ field: 'name', message: 'is required' }, 'second'] },
			'name: is required; second',
		],
		['<html>Bad gateway</html>', undefined],
	])('%j', (body, expected) => {
		expect(serverMessage(body)).toBe(expected);
	});

	it('finds per-field details wherever the server put them', () => {
		expect(
			fieldProblems({ error: { details: [{ field: 'steps[0].type', message: 'unknown' }] } }),
		).toEqual([{ field: 'steps[0].type', message: 'unknown' }]);
		expect(fieldProblems({ errors: [{ path: 'first_name', msg: 'too long' }] })).toEqual([
			{ field: 'first_name', message: 'too long' },
		]);
	});
});
