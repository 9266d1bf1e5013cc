/**
 * `npm run test:ai`: the packed package as an AI tool in a real n8n (2.41.1 by default, or
 * OUTREACH_N8N_VERSION), against the sandbox: an MCP client over n8n's MCP Server Trigger, and n8n's AI Agent
 * with a scripted OpenAI-compatible model on 127.0.0.1. The e2e suite's settings, environment (Ctrl+C and a
 * vanished parent stop every process) and timeouts.
 */
const e2e = require('../e2e/jest.config.js');

module.exports = { ...e2e, roots: ['<rootDir>/test/ai'] };
