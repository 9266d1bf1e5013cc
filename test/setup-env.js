// n8n-core writes a config file into its user folder and logs by default: keep both out of the way.
const fs = require('fs');
const os = require('os');
const path = require('path');
process.env.N8N_LOG_LEVEL = 'silent';
if (!process.env.N8N_USER_FOLDER) {
	process.env.N8N_USER_FOLDER = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-n8n-engine-'));
}
