/**
 * The import direction drawn in docs/development.md's layout: each folder of the node package
 * imports only from the folders below it, so transport/ stays plain HTTP for this API.
 */
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../../../nodes/OutreachAutomation');

/** Folder -> the folders its files may import from (besides itself). */
const ALLOWED: Record<string, string[]> = {
	'.': ['listSearch', 'resources', 'routing', 'shared', 'trigger', 'transport'],
	routing: ['resources', 'shared', 'transport'],
	resources: ['shared'],
	trigger: ['transport'],
	listSearch: ['transport'],
	shared: [],
	transport: [],
};

/** trigger/, bottom first: each file imports only from the files before it. */
const TRIGGER = ['overlap', 'pollTimes', 'state', 'pages', 'walk', 'order', 'drain', 'newMessages'];

function sourceFiles(dir: string): string[] {
	return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const full = path.join(dir, entry.name);
		if (entry.isDirectory()) return sourceFiles(full);
		return entry.name.endsWith('.ts') ? [full] : [];
	});
}

const folderOf = (file: string) =>
	path.relative(root, path.dirname(file)).split(path.sep)[0] || '.';

describe('import direction', () => {
	const files = sourceFiles(root);

	it('every folder is in the drawing', () => {
		expect([...new Set(files.map(folderOf))].sort()).toEqual(Object.keys(ALLOWED).sort());
	});

	it.each(files.map((file) => [path.relative(root, file), file]))(
		'%s imports only downwards',
		(_name, file) => {
			const source = fs.readFileSync(file, 'utf8');
			const from = folderOf(file);
			for (const [, specifier] of source.matchAll(/from '([^']+)'/g)) {
				if (!specifier.startsWith('.')) {
					expect(['n8n-workflow', 'crypto']).toContain(specifier);
					continue;
				}
				const target = path.resolve(path.dirname(file), specifier);
				expect(target.startsWith(root)).toBe(true);
				const isFolder = fs.existsSync(target) && fs.statSync(target).isDirectory();
				const to = folderOf(isFolder ? path.join(target, 'index.ts') : `${target}.ts`);
				if (to !== from) expect([from, ...ALLOWED[from]]).toContain(to);
			}
		},
	);
});

describe('import direction inside trigger/', () => {
	const dir = path.join(root, 'trigger');

	it('every file is in the order', () => {
		const names = fs.readdirSync(dir).map((name) => name.replace(/\.ts$/, ''));
		expect(names.sort()).toEqual([...TRIGGER].sort());
	});

	it.each(TRIGGER.map((name, i) => [name, i]))('%s imports only files below it', (name, i) => {
		const source = fs.readFileSync(path.join(dir, `${name}.ts`), 'utf8');
		for (const [, specifier] of source.matchAll(/from '\.\/([^']+)'/g)) {
			expect(TRIGGER.slice(0, i as number)).toContain(specifier);
		}
	});
});
