/**
 * A short chaos run inside the unit suite (`npm run chaos` runs the long one): every operation of the
 * action node and the trigger's poll against injected faults and churn. Nothing may be sent twice, lost
 * or listed twice, and every failure must be one of the node's own clear errors.
 */
import { runChaos } from './run';

describe('chaos', () => {
	it('300 operations under faults, latency and churn: 0 duplicates, 0 lost, 0 uncaught', async () => {
		const f = await runChaos({ operations: 300, seed: 7, concurrency: 8 });
		expect(f.operations).toBe(300);
		// The faults did happen, and some operations still succeeded.
		expect(f.faultsInjected).toBeGreaterThan(10);
		expect(f.churnEvents).toBeGreaterThan(0);
		expect(f.failedClearly).toBeGreaterThan(0);
		expect(f.succeeded).toBeGreaterThan(100);
		expect(f.examples).toEqual([]);
		expect({
			duplicateCreates: f.duplicateCreates,
			duplicateProfiles: f.duplicateProfiles,
			lostItems: f.lostItems,
			duplicatedItems: f.duplicatedItems,
			triggerDuplicates: f.triggerDuplicates,
			failedUnclearly: f.failedUnclearly,
			uncaught: f.uncaught,
			typeErrors: f.typeErrors,
		}).toEqual({
			duplicateCreates: 0,
			duplicateProfiles: 0,
			lostItems: 0,
			duplicatedItems: 0,
			triggerDuplicates: 0,
			failedUnclearly: 0,
			uncaught: 0,
			typeErrors: 0,
		});
	}, 180_000);
});
