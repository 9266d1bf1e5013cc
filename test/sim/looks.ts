/**
 * Counts the pacing policy's looks per key, from outside the production code: the policy's `decide` is
 * wrapped once (its module's export, which the pacing calls through), and each look is counted against
 * the window it looked at (a decision to draw a lot first and the one after it are one look). Nothing is kept for a window once it is gone.
 */
import * as policy from '../../nodes/OutreachAutomation/transport/pacing/policy';

const counts = new WeakMap<object, number>();
let installed = false;

export function countLooks(): void {
	if (installed) return;
	installed = true;
	const decide = policy.decide;
	Object.assign(policy, {
		decide: (...args: Parameters<typeof decide>) => {
			const decision = decide(...args);
			// A lot to draw first is half of one look: the pump draws it and asks again.
			if (!('draw' in decision)) counts.set(args[0], (counts.get(args[0]) ?? 0) + 1);
			return decision;
		},
	});
}

/** Looks of the policy at `window` since counting began. */
export function looksOf(window: object | undefined): number {
	return window ? (counts.get(window) ?? 0) : 0;
}
