/** Deterministic, believable demo data: the playground should look like a real outreach account. */
import type { Random } from './random';
import type { CampaignInput } from './schemas';
import type { Store } from './store';
import type { Campaign, CampaignStatus, ConnectionStatus, Lead } from './types';

const FIRST_NAMES = [
	'Olivia',
	'Liam',
	'Emma',
	'Noah',
	'Ava',
	'Lucas',
	'Sophia',
	'Mateo',
	'Isabella',
	'Ethan',
	'Mia',
	'Leo',
	'Amelia',
	'Hugo',
	'Charlotte',
	'Arjun',
	'Priya',
	'Wei',
	'Mei',
	'Kenji',
	'Yuki',
	'Omar',
	'Layla',
	'Tomás',
	'Lucía',
	'Jonas',
	'Freya',
	'Lars',
	'Ingrid',
	'Pierre',
	'Camille',
	'Marco',
	'Giulia',
	'Sven',
	'Anika',
	'Daniel',
	'Sarah',
	'David',
	'Rachel',
	'Michael',
	'Hannah',
	'Samuel',
	'Grace',
	'Kwame',
	'Amara',
	'Diego',
	'Valentina',
	'Nikolai',
	'Katya',
	'Aisha',
	'Tariq',
	'Chloe',
	'Jack',
	'Zoe',
	'Ryan',
	'Nora',
	'Felix',
	'Elena',
];
const LAST_NAMES = [
	'Smith',
	'Johnson',
	'Williams',
	'Brown',
	'Garcia',
	'Miller',
	'Davis',
	'Rodriguez',
	'Martinez',
	'Lopez',
	'Wilson',
	'Anderson',
	'Taylor',
	'Thomas',
	'Moore',
	'Martin',
	'Lee',
	'Thompson',
	'White',
	'Harris',
	'Clark',
	'Lewis',
	'Walker',
	'Young',
	'Allen',
	'King',
	'Wright',
	'Scott',
	'Nguyen',
	'Hill',
	'Patel',
	'Shah',
	'Chen',
	'Wang',
	'Kim',
	'Tanaka',
	'Sato',
	'Müller',
	'Schmidt',
	'Fischer',
	'Dubois',
	'Laurent',
	'Rossi',
	'Bianchi',
	'Novak',
	'Kowalski',
	'Jensen',
	'Larsen',
	'Andersson',
	'Okafor',
	'Mensah',
	'Haddad',
	'Fernández',
	"O'Brien",
];
const COMPANIES = [
	'Northwind Analytics',
	'Bluepeak Labs',
	'Acme Robotics',
	'Lumen Health',
	'Brightline Logistics',
	'Cobalt Security',
	'Evergreen Capital',
	'Fathom Data',
	'Granite Cloud',
	'Harbor Payments',
	'Ironclad HR',
	'Juniper Learning',
	'Keystone Insurance',
	'Lattice Bio',
	'Meridian Travel',
	'Nimbus Software',
	'Orbit Media',
	'Pioneer Energy',
	'Quartz Finance',
	'Redwood Retail',
	'Summit Legal',
	'Tidal Marketing',
	'Umbra Studios',
	'Vertex Manufacturing',
	'Willow Foods',
	'Xenon Devices',
	'Yellowstone Realty',
	'Zephyr Mobility',
	'Atlas Consulting',
	'Beacon Commerce',
	'Cascade Networks',
	'Driftwood Design',
	'Ember AI',
	'Foundry Ventures',
];
const TITLES = [
	'CEO',
	'Co-founder',
	'CTO',
	'VP of Sales',
	'Head of Growth',
	'Marketing Director',
	'Product Manager',
	'Head of Engineering',
	'Sales Manager',
	'Account Executive',
	'Chief Revenue Officer',
	'Operations Manager',
	'Talent Acquisition Lead',
	'Business Development Manager',
	'Head of Partnerships',
	'CFO',
	'Data Scientist',
	'Customer Success Manager',
	'Recruiter',
	'Founder',
	'Director of Operations',
	'Head of Product',
];
export const REPLIES = [
	'Thanks for reaching out! Happy to chat next week.',
	'Interesting, can you send more details?',
	'Not a priority for us right now, maybe next quarter.',
	'Sure, what times work for you?',
	'Thanks, I will pass this on to our ops lead.',
	'Appreciate the note. We already have a solution in place.',
	'Sounds good, let us set up a call.',
];
const MANUAL_MESSAGES = [
	'Hi {{firstName}}, quick follow-up on my last note.',
	'Great to connect, {{firstName}}! Would love to hear how your team handles this today.',
	'Hi {{firstName}}, sharing the case study I mentioned.',
];

interface CampaignTemplate {
	name: string;
	type: string;
	status: CampaignStatus;
	steps: CampaignInput['steps'];
}

const followUp = (delay: number, body: string) => ({
	type: 'message' as const,
	delay_days: delay,
	body,
});
const TEMPLATES: CampaignTemplate[] = [
	{
		name: 'Q4 SaaS Founders – Intro',
		type: 'connection_message',
		status: 'active',
		steps: [
			{
				type: 'connection_request',
				note: 'Hi {{firstName}}, I enjoyed your recent post on scaling sales teams.',
			},
			followUp(2, 'Thanks for connecting, {{firstName}}! Curious how you handle outbound today?'),
			followUp(5, 'Hi {{firstName}}, would a 15-minute call next week make sense?'),
		],
	},
	{
		name: 'Series A CTOs',
		type: 'connection_message',
		status: 'active',
		steps: [
			{
				type: 'connection_request',
				note: 'Hi {{firstName}}, fellow engineer here, would love to connect.',
			},
			followUp(
				3,
				'Hi {{firstName}}, we help engineering teams ship integrations faster. Worth a chat?',
			),
		],
	},
	{
		name: 'Agency Owners Follow-up',
		type: 'connection_message',
		status: 'paused',
		steps: [
			{ type: 'connection_request' },
			followUp(
				1,
				'Hi {{firstName}}, thanks for accepting! How are you finding new clients this year?',
			),
			followUp(7, 'Hi {{firstName}}, circling back in case this got buried.'),
		],
	},
	{
		name: 'Fintech Product Leads',
		type: 'connection_message',
		status: 'active',
		steps: [
			{
				type: 'connection_request',
				note: 'Hi {{firstName}}, I work with product teams in fintech.',
			},
			followUp(
				4,
				'Hi {{firstName}}, here is a two-minute demo of what we built: https://example.com/demo',
			),
		],
	},
	{
		name: 'Healthcare Ops Pilot',
		type: 'inmail',
		status: 'draft',
		steps: [
			{
				type: 'inmail',
				subject: 'A pilot for your operations team',
				body: 'Hi {{firstName}}, ...',
			},
			followUp(3, 'Hi {{firstName}}, following up on my InMail.'),
		],
	},
	{
		name: 'EU Expansion – Heads of Sales',
		type: 'connection_message',
		status: 'draft',
		steps: [
			{
				type: 'connection_request',
				note: 'Hallo {{firstName}}, we are expanding in the DACH region.',
			},
			followUp(2, 'Hi {{firstName}}, are you hiring sales reps in Europe this year?'),
		],
	},
];

const DAY = 86_400_000;
const slug = (s: string) =>
	s
		.normalize('NFD')
		.replace(/[^A-Za-z]/g, '')
		.toLowerCase();
const render = (text: string, lead: Lead) => text.replace(/\{\{firstName\}\}/g, lead.first_name);
/** n times in [from, to), ascending: the data reads as if created in id order. */
const sortedTimes = (rng: Random, n: number, from: number, to: number) =>
	Array.from({ length: n }, () => from + Math.floor(rng.next() * (to - from))).sort(
		(a, b) => a - b,
	);

const CONNECTION_WEIGHTS: Record<CampaignStatus, Record<ConnectionStatus, number>> = {
	draft: { none: 1, pending: 0, accepted: 0 },
	active: { none: 20, pending: 35, accepted: 45 },
	paused: { none: 30, pending: 30, accepted: 40 },
};
const OUTBOUND_WEIGHTS = { queued: 3, sent: 25, delivered: 30, read: 25, replied: 12, failed: 5 };

export function generateSeedData(
	store: Store,
	counts: { leads: number; campaigns: number; messages: number },
	rng: Random,
	now: number,
): void {
	const campaigns = createCampaigns(store, counts.campaigns, rng, now);
	const campaignOf = createLeads(store, counts.leads, campaigns, rng, now);
	createMessages(store, counts.messages, campaignOf, rng, now);
}

function createCampaigns(store: Store, count: number, rng: Random, now: number): Campaign[] {
	return sortedTimes(rng, count, now - 120 * DAY, now - 60 * DAY).map((created, i) => {
		const template = TEMPLATES[i % TEMPLATES.length];
		const round = Math.floor(i / TEMPLATES.length);
		const campaign = store.addCampaign(
			{
				name: round === 0 ? template.name : `${template.name} #${round + 1}`,
				type: template.type,
				// Some campaigns target a lead list, others only gather leads that joined them directly.
				lead_list_id: i % 3 === 2 ? null : `ll_${(i + 1).toString(36).padStart(6, '0')}`,
				steps: structuredClone(template.steps),
			},
			created,
		);
		if (template.status !== 'draft')
			store.setCampaignStatus(campaign, 'active', created + rng.int(1, 5) * DAY);
		if (template.status === 'paused')
			store.setCampaignStatus(campaign, 'paused', now - rng.int(2, 20) * DAY);
		return campaign;
	});
}

/** Creates the leads; returns, per lead id, the campaign it belongs to (directly or through its list). */
function createLeads(
	store: Store,
	count: number,
	campaigns: Campaign[],
	rng: Random,
	now: number,
): Map<string, Campaign> {
	const campaignOf = new Map<string, Campaign>();
	for (const created of sortedTimes(rng, count, now - 90 * DAY, now - 31 * DAY)) {
		const first = rng.pick(FIRST_NAMES);
		const last = rng.pick(LAST_NAMES);
		const campaign = campaigns.length > 0 && rng.chance(0.8) ? rng.pick(campaigns) : undefined;
		const viaListOnly = campaign?.lead_list_id != null && rng.chance(0.3);
		const lead = store.addLead(
			{
				first_name: first,
				last_name: last,
				company: rng.pick(COMPANIES),
				title: rng.pick(TITLES),
				linkedin_url: `https://www.linkedin.com/in/${slug(first)}-${slug(last)}-${rng.int(4096, 65535).toString(16)}`,
				lead_list_id: campaign?.lead_list_id ?? null,
				campaign_id: campaign && !viaListOnly ? campaign.id : null,
				connection_status: rng.weighted(CONNECTION_WEIGHTS[campaign?.status ?? 'draft']),
			},
			created,
		);
		if (campaign) campaignOf.set(lead.id, campaign);
	}
	return campaignOf;
}

interface PendingMessage {
	at: number;
	lead_id: string;
	campaign_id: string | null;
	step_index: number | null;
	direction: 'outbound' | 'inbound';
	status: string;
	body: string;
}

/** Messages of running campaigns (follow-up steps to accepted connections) plus some one-off messages. */
function createMessages(
	store: Store,
	count: number,
	campaignOf: Map<string, Campaign>,
	rng: Random,
	now: number,
): void {
	const allLeads = [...store.leads.values()];
	const reached = allLeads.filter(
		(l) => l.connection_status === 'accepted' && campaignOf.get(l.id)?.status !== 'draft',
	);
	const messageSteps = new Map<Campaign | undefined, number[]>();
	for (const c of campaignOf.values()) {
		if (!messageSteps.has(c))
			messageSteps.set(
				c,
				c.steps.flatMap((s, i) => (s.type === 'message' ? [i] : [])),
			);
	}
	const pending: PendingMessage[] = [];
	const add = (
		at: number,
		lead: Lead,
		campaign: Campaign | undefined,
		step_index: number | null,
		direction: PendingMessage['direction'],
		status: string,
		body: string,
	) =>
		// One object shape for all: the sort below stays fast on large seeds.
		pending.push({
			at,
			lead_id: lead.id,
			campaign_id: campaign?.id ?? lead.campaign_id,
			step_index,
			direction,
			status,
			body,
		});
	while (pending.length < count) {
		const inCampaign = reached.length > 0 && rng.chance(0.85);
		const lead = inCampaign ? rng.pick(reached) : rng.pick(allLeads);
		const steps = (inCampaign && messageSteps.get(campaignOf.get(lead.id))) || [];
		const step_index = steps.length > 0 ? rng.pick(steps) : null;
		const campaign = step_index !== null ? campaignOf.get(lead.id) : undefined;
		const text = campaign
			? (campaign.steps[step_index!] as { body: string }).body
			: rng.pick(MANUAL_MESSAGES);
		const status = rng.weighted(OUTBOUND_WEIGHTS);
		const at = now - rng.int(60, 30 * 86_400) * 1000;
		add(at, lead, campaign, step_index, 'outbound', status, render(text, lead));
		if (status === 'replied' && pending.length < count) {
			// Replies come minutes to two days later, and never in the future.
			const replyAt = at + Math.floor(rng.next() * Math.min(2 * DAY, now - at));
			add(replyAt, lead, campaign, step_index, 'inbound', 'received', rng.pick(REPLIES));
		}
	}
	// Stable sort by time: ids then follow time, and an inbound reply always follows what it answers.
	pending.sort((a, b) => a.at - b.at);
	for (const { at, ...message } of pending) store.addMessage(message, at);
}
