/**
 * One poll at a time per trigger in this process, and never from a state a poll of it has moved on
 * from. n8n starts a due poll even while the previous poll of the same trigger still runs (a backlog, a
 * slow service, a wait for the rate limit), and both would read from the same saved state: every new
 * message twice.
 *
 * The later poll returns nothing rather than waiting to go on from where the running one ends:
 * n8n saves the running poll's state only after it returns, and commits it with its execution on
 * the durable scheduler, so a poll going on from a state not saved yet could move the saved state
 * past messages whose execution never ran (lost), or have its own state overwritten by the older
 * one saved later (repeated). Left alone, the running poll saves its own progress, and a failure
 * of it leaves the saved state as it was for the next poll: nothing is lost either way.
 */
import { createHash } from 'crypto';
import type { IDataObject } from 'n8n-workflow';

/** Triggers with a poll running in this process, by workflow id and node name. */
const running = new Set<string>();

/**
 * n8n's durable scheduler loads each poll's state from its database when the poll is dispatched, and
 * commits the state a poll left only after the poll returned: with its execution when it emitted,
 * alone when it emitted nothing but changed it. A poll can therefore start from a state the last poll
 * has already moved on from. Per trigger, the state the last poll left, until it can be believed saved.
 */
interface Left {
	/** Digests of the states it supersedes: those the polls that led to it loaded or started from. */
	behind: string[];
	/** Its digest, and the state itself (a copy). */
	digest: string;
	state: IDataObject;
	/** Whether its poll emitted: then it is saved with that poll's execution, or not at all. */
	emitted: boolean;
	until: number;
}
const left = new Map<string, Left>();

/** How long a poll's state may take to be saved; past it, the saved state is believed. */
export const SAVE_GRACE_MS = 30_000;

/** States a chain of unsaved polls supersedes that are remembered (a commit lands within a poll or two). */
const MAX_BEHIND = 20;

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

/**
 * Runs `poll` unless a poll of the same trigger is running: then `busy('running')` is returned at once
 * and nothing is read or changed. `loaded` is the state n8n gave this poll. When the last poll of this
 * trigger left a newer state that is not saved yet:
 * - it emitted: `busy('unsaved')`, nothing read or changed (going on could repeat or lose its batch);
 * - it emitted nothing: `poll(newer)` goes on from that state. Its changes only note messages as
 *   known without emitting them (where the list stood, a drain's place), so going on from it marks
 *   nothing unemitted as seen, whether or not n8n ever saves it (it never saves a null result of the
 *   poll it runs at activation), and starting from the older state instead would take messages that
 *   arrived meanwhile for ones that were there before.
 * `outcome` tells what a poll emitted and the state it left.
 */
export async function onePollAtATime<T>(
	key: string,
	loaded: IDataObject,
	poll: (newer?: IDataObject) => Promise<T>,
	busy: (why: 'running' | 'unsaved') => T,
	outcome: (result: T) => { emitted: boolean; state: IDataObject },
): Promise<T> {
	if (running.has(key)) return busy('running');
	const loadedDigest = digestOf(loaded);
	let last = left.get(key);
	if (last && (Date.now() >= last.until || last.digest === loadedDigest)) {
		left.delete(key);
		last = undefined;
	}
	const stale = last !== undefined && last.behind.includes(loadedDigest) ? last : undefined;
	if (stale?.emitted) return busy('unsaved');
	running.add(key);
	try {
		const result = await poll(
			stale ? (JSON.parse(JSON.stringify(stale.state)) as IDataObject) : undefined,
		);
		const { emitted, state } = outcome(result);
		const digest = digestOf(state);
		const startDigest = stale ? stale.digest : loadedDigest;
		if (emitted || digest !== startDigest) {
			left.set(key, {
				behind: [...new Set([startDigest, loadedDigest, ...(stale?.behind ?? [])])].slice(
					0,
					MAX_BEHIND,
				),
				digest,
				state: JSON.parse(JSON.stringify(state)) as IDataObject,
				emitted,
				until: Date.now() + SAVE_GRACE_MS,
			});
		} else if (!stale) {
			left.delete(key);
		}
		return result;
	} finally {
		running.delete(key);
	}
}
