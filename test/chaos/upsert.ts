/**
 * Lead > Create or Update in the chaos run: each execution upserts profiles from a small pool, written in
 * varying ways, so later executions run again over profiles that earlier (half-failed) ones created. Each
 * concurrency slot has its own part of the pool: two executions at the same time can both create a lead
 * (check-then-write is not atomic, see docs/re-runs.md), one after the other must not.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import type { Random } from '../sandbox/random';
import type { Sandbox } from '../sandbox/server';

const PER_SLOT = 6;

/** The ways one profile may be written, all naming the same profile. */
const VARIANTS = [
	(slug: string) => `https://www.linkedin.com/in/${slug}`,
	(slug: string) => `http://linkedin.com/in/${slug}/`,
	(slug: string) => `https://WWW.LinkedIn.com/in/${slug.toUpperCase()}?trk=chaos`,
	(slug: string) => `https://linkedin.com/in/${slug}#about`,
];

export function upsertOp(seed: number, random: Random, tag: () => string) {
	const slug = (slot: number, k: number) => `chaos-${seed}-${slot}-${k}-profile`;
	return {
		name: 'lead.upsert',
		build: (n: number, slot: number): { parameters: INodeParameters; inputs: IDataObject[] } => ({
			parameters: {
				resource: 'lead',
				operation: 'upsert',
				linkedinUrl: '={{ $json.url }}',
				firstName: '={{ $json.first }}',
				title: '={{ $json.title }}',
			},
			inputs: Array.from({ length: n }, () => {
				const k = Math.floor(random.next() * PER_SLOT);
				const variant = VARIANTS[Math.floor(random.next() * VARIANTS.length)];
				// A title of this execution: a re-run updates the lead, and no two creates send one body.
				return { url: variant(slug(slot, k)), first: `Upsert ${k}`, title: `Title ${tag()}` };
			}),
		}),
	};
}

/** Profiles of the pool held by more than one lead at the end of the run, each with its leads. */
export function duplicateProfiles(sandbox: Sandbox, seed: number): string[] {
	const leads = new Map<string, string[]>();
	const pool = new RegExp(`/in/(chaos-${seed}-\\d+-\\d+-profile)`, 'i');
	for (const lead of sandbox.store.leads.values()) {
		const match = pool.exec(lead.linkedin_url ?? '');
		if (!match) continue;
		const key = match[1].toLowerCase();
		leads.set(key, [...(leads.get(key) ?? []), `${lead.id} (${lead.title}, ${lead.created_at})`]);
	}
	return [...leads]
		.filter(([, held]) => held.length > 1)
		.map(([key, held]) => `${key}: ${held.join('; ')}`);
}
