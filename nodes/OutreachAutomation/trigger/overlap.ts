/**
 * One poll at a time per trigger in this process. n8n starts a due poll even while the previous
 * poll of the same trigger still runs (a backlog, a slow service, a wait for the rate limit), and
 * both would read from the same saved state: every new message twice.
 *
 * The later poll returns nothing rather than waiting to go on from where the running one ends:
 * n8n saves the running poll's state only after it returns, and commits it with its execution on
 * the durable scheduler, so a poll going on from a state not saved yet could move the saved state
 * past messages whose execution never ran (lost), or have its own state overwritten by the older
 * one saved later (repeated). Left alone, the running poll saves its own progress, and a failure
 * of it leaves the saved state as it was for the next poll: nothing is lost either way.
 */

/** Triggers with a poll running in this process, by workflow id and node name. */
const running = new Set<string>();

/**
 * After a poll emitted: the state it started from, until when. n8n's durable scheduler loads each
 * poll's state from its database and commits an emitting poll's new state only after the poll
 * returned; a poll starting in between would start from the same state and emit the same messages.
 */
const unsaved = new Map<string, { from: string; until: number }>();

/** How long an emitting poll's state may take to be saved; past it, the saved state is believed. */
export const SAVE_GRACE_MS = 30_000;

/** The trigger a poll belongs to: its workflow and node (names are unique within a workflow). */
export function triggerKey(workflowId: string | undefined, nodeName: string): string {
	return JSON.stringify([workflowId ?? '', nodeName]);
}

/**
 * Runs `poll` unless a poll of the same trigger is running, or the last one emitted and its state is
 * not saved yet (`state`, the state this poll starts from as JSON, is the one that poll started from):
 * then `busy(why)` is returned at once and nothing is read or changed. A fresh state ('{}') is never
 * taken for an unsaved one: a new trigger must not wait.
 */
export async function onePollAtATime<T>(
	key: string,
	state: string,
	poll: () => Promise<T>,
	busy: (why: 'running' | 'unsaved') => T,
	emitted: (result: T) => boolean,
): Promise<T> {
	if (running.has(key)) return busy('running');
	const last = unsaved.get(key);
	if (last && Date.now() >= last.until) unsaved.delete(key);
	else if (last && last.from === state && state !== '{}') return busy('unsaved');
	running.add(key);
	try {
		const result = await poll();
		if (emitted(result)) unsaved.set(key, { from: state, until: Date.now() + SAVE_GRACE_MS });
		else unsaved.delete(key);
		return result;
	} finally {
		running.delete(key);
	}
}
