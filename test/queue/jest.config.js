/**
 * `npm run test:queue`: the packed package in n8n's queue mode (main + two workers, Redis, PostgreSQL), against
 * the sandbox. Redis and PostgreSQL are started (and installed if missing, as root) by the test itself. The
 * e2e suite's settings, environment (Ctrl+C and a vanished parent stop every process) and timeouts.
 */
const e2e = require('../e2e/jest.config.js');

module.exports = { ...e2e, roots: ['<rootDir>/test/queue'] };
