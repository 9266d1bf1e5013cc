/**
 * The pictures in docs/ show today's node: what the node described when each was taken (docs/pictures.json,
 * written by `npm run screenshots`, and for n8n's installer's two by
 * `OUTREACH_UI_SCREENSHOTS=docs npm run test:install`) must equal what it describes now. A stale picture
 * fails here, by name: take it again with the command that took it.
 */
import { DESCRIBED, PICTURES, readRecord } from './pictures';

describe('the pictures in docs/ show the node of today', () => {
	const record = readRecord();

	it.each(Object.entries(PICTURES))('%s', (key, shot) => {
		const entry = record[shot.file];
		const now = DESCRIBED[key as keyof typeof PICTURES]();
		// Named in the failure: which picture, what it was taken with, what the node describes now.
		expect({ picture: `docs/${shot.file}`, described: entry?.described ?? 'no record' }).toEqual({
			picture: `docs/${shot.file}`,
			described: now,
		});
		expect(entry.caption).toBe(shot.caption);
	});

	it('records no picture that is not taken any more', () => {
		const known = new Set(Object.values(PICTURES).map((shot) => shot.file));
		expect(Object.keys(record).filter((file) => !known.has(file))).toEqual([]);
	});
});
