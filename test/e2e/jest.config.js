/**
 * `npm run test:e2e`: the packed package in a real n8n 2.41.1 (provisioned on first use into a cache
 * outside the clone), against the sandbox API. One n8n serves the whole run, so files run one at a time.
 */
const path = require('path');

module.exports = {
	rootDir: path.resolve(__dirname, '../..'),
	testEnvironment: '<rootDir>/test/e2e/environment.js',
	roots: ['<rootDir>/test/e2e'],
	testMatch: ['**/*.test.ts'],
	transform: {
		'^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/e2e/tsconfig.json' }],
	},
	// Provisioning n8n the first time takes minutes; starting it about ten seconds.
	testTimeout: 180_000,
	maxWorkers: 1,
	// The request log and n8n's log are the useful output; keep console output unadorned.
	verbose: true,
	// The environment kills every process the suite started at teardown; a handle left open after a failed
	// test (a socket, a poll loop) must end the run, not keep CI waiting until its time limit.
	forceExit: true,
};
