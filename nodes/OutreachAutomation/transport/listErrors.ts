/** The list reader's errors: a list that cannot be read whole fails with one of these, never short. */
import type { INode } from 'n8n-workflow';

import type { RequestTarget } from './errors';
import { apiError } from './errors';
import { declaredFailure } from './failure';
import type { NodeApiError } from './redact';

/** A page after the first repeated only items already read: the server seems to ignore `page`. */
export function pagingIgnoredError(
	node: INode,
	page: number,
	distinct: number,
	total: number | undefined,
	target: RequestTarget,
	advice = '',
): NodeApiError {
	const of = total !== undefined ? ` of ${total}` : '';
	return apiError(
		node,
		{ page, total: total ?? null },
		{
			message:
				'The service returned the same items again for another page: it seems to ignore paging',
			description:
				`Page ${page} repeated items already received (${distinct} distinct so far${of}). ${advice}`.trim(),
			itemIndex: target.itemIndex,
			failure: declaredFailure({ kind: 'notTheApi' }),
		},
	);
}

/** Return All reached its bound on requests: failing beats returning part of the list as if it were all. */
export function listTooLongError(
	node: INode,
	requests: number,
	items: number,
	target: RequestTarget,
): NodeApiError {
	return apiError(
		node,
		{ requests, items },
		{
			message: `Return All stopped after ${requests} page requests without reaching the end of the list`,
			description: `${items} items were read; the list kept changing or never ended. Narrow the request with filters, or use Limit.`,
			itemIndex: target.itemIndex,
			failure: declaredFailure({ kind: 'tooLong' }),
		},
	);
}

/**
 * A list moved under its read more often than the reader re-reads: failing beats a list that may miss
 * items that were there all along.
 */
export function listChangingError(
	node: INode,
	rereads: number,
	items: number,
	target: RequestTarget,
): NodeApiError {
	return apiError(
		node,
		{ rereads, items },
		{
			message: 'The list kept changing while it was read, so it could not be read whole',
			description: `Items were added or removed between page reads; after ${rereads} extra page reads to find the items that moved, some could still have been missed (${items} read so far), so the node stopped rather than return a list that may be short. Run it again when fewer changes are being made at the same time (another workflow or person adding or deleting), or narrow the request with filters.`,
			itemIndex: target.itemIndex,
			failure: declaredFailure({ kind: 'changing' }),
		},
	);
}
