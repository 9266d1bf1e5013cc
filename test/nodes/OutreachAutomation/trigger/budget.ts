import type { IPollFunctions } from 'n8n-workflow';

import { OutreachAutomationTrigger } from '../../../../nodes/OutreachAutomation/OutreachAutomationTrigger.node';

/** Runs `poll` with n8n's poll budget (getPollBudgetMs) set to `ms`. */
export async function withPollBudget<T>(ms: number, poll: () => Promise<T>): Promise<T> {
	const original = OutreachAutomationTrigger.prototype.poll;
	const spy = jest
		.spyOn(OutreachAutomationTrigger.prototype, 'poll')
		.mockImplementation(async function (this: IPollFunctions) {
			this.getPollBudgetMs = () => ms;
			return await original.call(this);
		});
	try {
		return await poll();
	} finally {
		spy.mockRestore();
	}
}

/** The list orders and timestamp variants every trigger test runs in. */
export const VARIANTS = [
	{ order: 'newest', timestamps: true },
	{ order: 'newest', timestamps: false },
	{ order: 'oldest', timestamps: true },
	{ order: 'oldest', timestamps: false },
] as const;
