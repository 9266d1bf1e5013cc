/**
 * `npm run test:ui`: the editor in a real browser (Debian's Chromium driven by playwright-core) against the
 * pinned n8n with the packed package and the sandbox API. One n8n and one browser serve the whole run.
 */
const path = require('path');

module.exports = {
	rootDir: path.resolve(__dirname, '../..'),
	// The e2e environment stops n8n on Ctrl+C and counts failures (the log tail is printed on failure).
	testEnvironment: '<rootDir>/test/e2e/environment.js',
	roots: ['<rootDir>/test/ui'],
	testMatch: ['**/*.test.ts'],
	transform: {
		'^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/e2e/tsconfig.json' }],
	},
	// Installing Chromium or provisioning n8n on a fresh machine takes minutes; each flow a few seconds.
	testTimeout: 600_000,
	maxWorkers: 1,
	verbose: true,
	// The environment kills every process the suite started at teardown; a handle left open after a failed
	// test (a socket, a poll loop) must end the run, not keep CI waiting until its time limit.
	forceExit: true,
};
