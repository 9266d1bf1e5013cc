/**
 * jest's node environment, plus what the suite cannot do from inside jest's sandbox (where `process` is a
 * copy whose signal and exit handlers never fire):
 * - counts failures, so afterAll prints the tail of n8n's log and keeps the n8n user folder;
 * - on Ctrl+C / SIGTERM / SIGHUP, or when its parent (npm) goes away, stops the process groups the suite
 *   started (n8n, n8n CLI commands; registered by test/n8n/processes.ts in __outreachChildGroups) and exits;
 * - at teardown, kills any group still registered.
 */
const { TestEnvironment } = require('jest-environment-node');

function killGroups(groups, signal) {
	for (const pgid of groups || []) {
		try {
			process.kill(-pgid, signal);
		} catch {
			// already gone
		}
	}
}

class E2eEnvironment extends TestEnvironment {
	async setup() {
		await super.setup();
		const env = this;
		let stopping = false;
		this.onSignal = (signal) => {
			if (stopping) return;
			stopping = true;
			const groups = [...(env.global.__outreachChildGroups || [])];
			const folder = env.global.__outreachE2eUserFolder;
			process.stderr.write(
				`\n[e2e] ${signal}: stopping n8n and its commands${folder ? ` (n8n user folder kept: ${folder})` : ''}\n`,
			);
			killGroups(groups, 'SIGTERM');
			setTimeout(() => {
				killGroups(groups, 'SIGKILL');
				process.exit(signal === 'SIGINT' ? 130 : 143);
			}, 3000).unref();
		};
		for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, this.onSignal);
		const parent = process.ppid;
		this.orphanTimer = setInterval(() => {
			if (process.ppid !== parent) this.onSignal('parent process gone');
		}, 1000);
		this.orphanTimer.unref();
	}

	async teardown() {
		for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.off(signal, this.onSignal);
		clearInterval(this.orphanTimer);
		killGroups(this.global.__outreachChildGroups, 'SIGKILL');
		await super.teardown();
	}

	async handleTestEvent(event) {
		if (event.name === 'test_fn_failure' || event.name === 'hook_failure') {
			this.global.__outreachE2eFailures = (this.global.__outreachE2eFailures || 0) + 1;
		}
	}
}

module.exports = E2eEnvironment;
