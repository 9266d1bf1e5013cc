/**
 * The real-n8n runtime shared by the playground (`npm run dev`), the end-to-end tests (`npm run test:e2e`)
 * and the benchmarks: provision the pinned n8n, install the packed package into a user folder the way users
 * get it, run n8n CLI commands and `n8n start` with a closed-off environment, and stop every process it
 * started on exit, on Ctrl+C and on failure.
 *
 * Runs on the project's Node (20 or later); n8n itself runs on the provisioned Node 24.
 */
export * from './config';
export * from './processes';
export * from './package';
export * from './cli';
export * from './server';
