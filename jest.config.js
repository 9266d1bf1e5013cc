/** Jest runs in CommonJS mode: n8n-core's engine (used by the engine tests) must load the way n8n loads it. */
module.exports = {
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.ts'],
	// The real-n8n suite has its own command (npm run test:e2e): it needs the provisioned n8n.
	testPathIgnorePatterns: [
		'/node_modules/',
		'<rootDir>/test/e2e/',
		'<rootDir>/test/bench/',
		'<rootDir>/test/queue/',
		'<rootDir>/test/ui/',
		'<rootDir>/test/ai/',
		'<rootDir>/test/install/',
	],
	transform: {
		'^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }],
	},
	setupFiles: ['<rootDir>/test/setup-env.js'],
	testTimeout: 60000,
	// Engine and sandbox tests open real sockets; running files in parallel on 2 cores is fine.
	maxWorkers: 2,
	// A worker left with a large heap (the trigger model loads the trigger afresh per simulated n8n
	// process; lists of 200,000 leads) is replaced before its next file: long collections in it made
	// n8n's 250-ms regex check of node parameters time out in the files after.
	workerIdleMemoryLimit: '512MB',
};
