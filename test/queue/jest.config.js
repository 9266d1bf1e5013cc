/**
 * `npm run test:queue`: the packed package in n8n's queue mode (main + two workers, Redis, PostgreSQL), against
 * the sandbox. Redis and PostgreSQL are started (and installed if missing, as root) by the test itself.
 */
const path = require('path');

module.exports = {
	rootDir: path.resolve(__dirname, '../..'),
	// The e2e environment: Ctrl+C and a vanished parent stop every process the suite started.
	testEnvironment: '<rootDir>/test/e2e/environment.js',
	roots: ['<rootDir>/test/queue'],
	testMatch: ['**/*.test.ts'],
	transform: {
		'^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/test/e2e/tsconfig.json' }],
	},
	testTimeout: 180_000,
	maxWorkers: 1,
	verbose: true,
};
