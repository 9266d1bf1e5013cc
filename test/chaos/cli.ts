/**
 * `npm run chaos`: runs test/chaos/run.ts under ts-node. The node files sit next to their codex files
 * (`X.node.json`), which Node would resolve before `X.node.ts`: TypeScript sources are tried first here.
 */
// As in the jest runs: n8n-core's config file and log out of the way.
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('../setup-env');

const extensions = require.extensions as Record<string, unknown>;
const json = extensions['.json'];
Reflect.deleteProperty(extensions, '.json');
extensions['.json'] = json;

// eslint-disable-next-line @typescript-eslint/no-require-imports
require('./run').main();
