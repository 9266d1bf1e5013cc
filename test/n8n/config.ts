/**
 * What the real-n8n harness runs and where: the pinned n8n (OUTREACH_N8N_VERSION or versions.json), the fixed
 * names n8n knows the package by, and provision(). Everything else in test/n8n/ builds on these.
 */
import path from 'node:path';

import { provisionRuntime, selectedN8nVersion, type Provisioned } from './provision';

export { NODE_VERSION } from './provision';
export const PROJECT_ROOT = path.resolve(__dirname, '..', '..');
export const PACKAGE_NAME = 'n8n-nodes-outreach-automation';
/** The n8n this process runs: OUTREACH_N8N_VERSION, or the default pinned in versions.json. */
export const N8N_VERSION = selectedN8nVersion();
/** The n8n major line (1 or 2): the REST and CLI calls that differ between them branch on it. */
export const N8N_MAJOR = Number(N8N_VERSION.split('.')[0]);
export const HOST = '127.0.0.1';
/**
 * Fixed, so credentials imported with plain data stay readable across restarts of the same user folder.
 * Local only: it protects nothing but test and playground data.
 */
export const ENCRYPTION_KEY = 'outreach-automation-local-playground-key';

/** Node types as n8n knows them once the package is installed. */
export const NODE_TYPES = {
	action: `${PACKAGE_NAME}.outreachAutomation`,
	tool: `${PACKAGE_NAME}.outreachAutomationTool`,
	trigger: `${PACKAGE_NAME}.outreachAutomationTrigger`,
} as const;
export const CREDENTIAL_TYPE = 'outreachAutomationApi';

// ---------------------------------------------------------------------------------------------------------
// Provisioning

export type Runtime = Provisioned;

/**
 * Provisions Node 24 and the chosen n8n (minutes the first time, about a second afterwards) and verifies
 * them. Its progress goes to this process's stderr unless `quiet`.
 */
export async function provision(options: { quiet?: boolean } = {}): Promise<Runtime> {
	return provisionRuntime({
		n8nVersion: N8N_VERSION,
		log: options.quiet ? () => undefined : undefined,
	});
}
