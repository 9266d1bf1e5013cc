/**
 * `npm run test:install`: the package installed the ways users install it, from a local registry (verdaccio)
 * the release script publishes to: the README's manual route, n8n's installer (REST, the editor in Chromium,
 * N8N_COMMUNITY_PACKAGES), update and uninstall. Files share one registry each and run one at a time.
 */
const path = require('path');

module.exports = {
	rootDir: path.resolve(__dirname, '../..'),
	// The e2e environment stops every child (n8n, verdaccio, npm) on Ctrl+C and at teardown.
	testEnvironment: '<rootDir>/test/e2e/environment.js',
	roots: ['<rootDir>/test/install'],
	testMatch: ['**/*.test.ts'],
	transform: {
		'^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/e2e/tsconfig.json' }],
	},
	// The release rehearsal runs lint and the unit tests; provisioning on a fresh machine takes minutes.
	testTimeout: 900_000,
	maxWorkers: 1,
	verbose: true,
	forceExit: true,
};
