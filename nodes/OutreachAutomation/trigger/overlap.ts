/**
 * One poll at a time per trigger in this process, and never from a state a poll of it has moved on
 * from. n8n starts a due poll even while the previous poll of the same trigger still runs (a backlog, a
 * slow service, a wait for the rate limit), and both would read from the same saved state: every new
 * message twice. The later poll returns nothing rather than waiting: left alone, the running poll saves
 * its own progress, and a failure of it leaves the saved state as it was for the next poll.
 *
 * n8n 2.41's durable scheduler also loads each poll's state when it dispatches the poll and saves what
 * a poll left only afterwards, without checking that the state it overwrites is the one the poll
 * started from: a poll that emitted nothing but changed its state is saved by itself, one that emitted
 * is saved with its execution (both or neither), the poll run at publishing is never saved unless it
 * emitted, and one that outlasts n8n's poll timeout is dropped. So a poll can load a state another
 * poll of this process has moved on from, and a late save can put an older state back. What each poll
 * left is remembered here as a chain of states, and a poll goes on from the newest one it safely can:
 * - a state n8n was seen to save (a poll loaded it or a state after it);
 * - the state the poll at publishing left when it emitted nothing (n8n never saves it; it only notes
 *   where the list stood, so going on from it marks nothing unemitted as seen);
 * - any other state only once its save can no longer land over a newer one (SAVE_GRACE_MS): before
 *   that, a poll emits nothing and leaves the messages to the next one. Past it, a state whose poll
 *   emitted nothing is gone on from; one whose poll emitted is taken as not saved (its execution never
 *   ran) and its messages are read again: twice only if n8n saved it later still.
 * Nothing here is needed for safety across a restart: a new process knows no chain and goes on from
 * what n8n loaded, which is what n8n saved.
 */
import { createHash } from 'crypto';
import type { IDataObject } from 'n8n-workflow';

import { now } from '../transport/clock';

/** Triggers with a poll running in this process, by workflow id and node name. */
const running = new Set<string>();

/** A state a poll of this trigger left (or loaded), in the order the polls left them. */
interface Step {
	/** Its digest, whatever order a database gave its keys in. */
	digest: string;
	/** A copy of it, kept for the newest steps only: the ones a poll may go on from. */
	state?: IDataObject;
	/** Whether the poll that left it emitted: then n8n saves it with that poll's execution, or not at all. */
	emitted: boolean;
	/** Whether n8n was seen to have saved it (a poll loaded it or a state after it), or never saves it. */
	saved: boolean;
	/** When its poll returned (or, for a loaded state, when it was loaded). */
	at: number;
}
const chains = new Map<string, Step[]>();

/**
 * How long a poll's save may take to land: n8n saves it a few database round trips after the poll
 * returned (with the execution it starts, when it emitted). Past this it is taken to have failed.
 */
export const SAVE_GRACE_MS = 120_000;

/** Steps remembered per trigger (a poll that loaded a state this far back is still recognised). */
const MAX_STEPS = 64;

/** Steps whose state is kept: a poll goes on from one of the newest few. */
const MAX_STATES = 8;

/** The trigger a poll belongs to: its workflow and node (names are unique within a workflow). */
export function triggerKey(workflowId: string | undefined, nodeName: string): string {
	return JSON.stringify([workflowId ?? '', nodeName]);
}

/** A digest of a state, whatever order a database gave its keys in. */
function digestOf(state: IDataObject): string {
	const json = JSON.stringify(state, (_key, value: unknown) =>
		value !== null && typeof value === 'object' && !Array.isArray(value)
			? Object.fromEntries(
					Object.entries(value as IDataObject).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
				)
			: value,
	);
	return createHash('sha256').update(json).digest('hex');
}

const copy = (state: IDataObject) => JSON.parse(JSON.stringify(state)) as IDataObject;

/**
 * Where a poll that loaded `steps[at]` goes on from: the newest step reached through steps it may go
 * on from, or 'unsaved' while a save may still land. An emitting poll's save taken to have failed
 * drops that step and those after it.
 */
function startFrom(steps: Step[], at: number, time: number): number | 'unsaved' {
	let start = at;
	for (let next = at + 1; next < steps.length; next++) {
		const step = steps[next];
		if (!step.saved) {
			if (time - step.at < SAVE_GRACE_MS) return 'unsaved';
			if (step.emitted) break;
		}
		start = next;
	}
	return start;
}

/**
 * Whether n8n may have dropped a poll that took `elapsed`: past its timeout, which n8n 2.41 sets at
 * least `min(budget, 5 s)` beyond the budget it grants.
 */
function mayBeDropped(elapsed: number, budgetMs: number | undefined): boolean {
	return budgetMs !== undefined && elapsed > budgetMs + Math.min(budgetMs, 5_000);
}

/** The chain kept for a trigger: bounded, with states for the newest steps only. */
function kept(steps: Step[]): Step[] {
	const recent = steps.slice(-MAX_STEPS);
	recent.slice(0, -MAX_STATES).forEach((step) => delete step.state);
	return recent;
}

/** What a poll is told of where it starts. */
export interface Start {
	/** A newer state to go on from instead of the one n8n loaded. */
	newer?: IDataObject;
	/** Whether this process knows the loaded state (a poll of it left or loaded it). */
	known: boolean;
}

/**
 * Runs `poll` unless a poll of the same trigger is running (`busy('running')`) or the last poll's
 * save may still land (`busy('unsaved')`): then nothing is read or changed. `loaded` is the state n8n
 * gave this poll; `budgetMs` the time n8n grants it, when it says: a poll that outlasts it may have
 * been dropped by n8n, so the state it left is not remembered. `publishing`: the poll n8n runs when
 * a workflow is published, which starts the chain anew from what n8n loaded (a workflow published
 * again may have been reset). `outcome` tells what a poll emitted and the state it left.
 */
export async function onePollAtATime<T>(
	entry: { key: string; loaded: IDataObject; budgetMs?: number; publishing?: boolean },
	poll: (start: Start) => Promise<T>,
	busy: (why: 'running' | 'unsaved') => T,
	outcome: (result: T) => { emitted: boolean; state: IDataObject },
): Promise<T> {
	const { key, loaded, budgetMs, publishing } = entry;
	if (running.has(key)) return busy('running');
	const entered = now();
	const digest = digestOf(loaded);
	let steps = (!publishing && chains.get(key)) || [];
	let at = steps.map((step) => step.digest).lastIndexOf(digest);
	const known = at >= 0;
	if (!known) {
		steps = [{ digest, emitted: false, saved: true, at: entered }];
		at = 0;
	}
	steps.slice(0, at + 1).forEach((step) => (step.saved = true));
	const start = startFrom(steps, at, entered);
	if (start === 'unsaved' || (start !== at && !steps[start].state)) {
		chains.set(key, steps);
		return busy('unsaved');
	}
	steps = steps.slice(0, start + 1);
	chains.set(key, kept(steps));
	running.add(key);
	try {
		const result = await poll({
			newer: start === at ? undefined : copy(steps[start].state!),
			known,
		});
		const { emitted, state } = outcome(result);
		const left = digestOf(state);
		if (!mayBeDropped(now() - entered, budgetMs) && (emitted || left !== steps[start].digest)) {
			// n8n never saves what the poll at publishing left when it emitted nothing.
			const saved = publishing === true && !emitted;
			steps.push({ digest: left, state: copy(state), emitted, saved, at: now() });
			chains.set(key, kept(steps));
		}
		return result;
	} finally {
		running.delete(key);
	}
}
