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

/** The trigger a poll belongs to: its workflow and node (names are unique within a workflow). */
export function triggerKey(workflowId: string | undefined, nodeName: string): string {
	return JSON.stringify([workflowId ?? '', nodeName]);
}

/**
 * Runs `poll` unless a poll of the same trigger is running: then `busy()` is returned at once
 * and nothing is read or changed.
 */
export async function onePollAtATime<T>(
	key: string,
	poll: () => Promise<T>,
	busy: () => T,
): Promise<T> {
	if (running.has(key)) return busy();
	running.add(key);
	try {
		return await poll();
	} finally {
		running.delete(key);
	}
}
