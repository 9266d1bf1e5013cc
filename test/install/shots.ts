/**
 * The two pictures of n8n's installer in docs/installing.md, taken by test/install/editor.test.ts under
 * `OUTREACH_UI_SCREENSHOTS=docs npm run test:install`. What the package described when they were taken is
 * recorded in docs/pictures.json beside the editor's pictures (test/ui/pictures.ts) and compared by
 * test/ui/pictures.test.ts.
 */
import type { Shot } from '../ui/shots';

export const INSTALL_SHOTS = {
	communityInstall: {
		file: 'community-nodes-install.png',
		caption:
			'Settings → Community nodes → Install: the package name, here with a version (name@version), and the risk box.',
	},
	communityInstalled: {
		file: 'community-nodes-installed.png',
		caption:
			'Installed without a restart: the package, its version, its two nodes, and Update once a newer version is published.',
	},
} satisfies Record<string, Shot>;
