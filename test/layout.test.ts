/**
 * Rooms a reader can hold: a source file past 450 lines or a test file past 900 is to be split by role,
 * and the pacing keeps every function within 40 lines and its state written by one module only.
 *
 * The pacing (nodes/OutreachAutomation/transport/pacing/) is frozen since issue #65: it changes only for
 * a defect a test shows (failing before the change, passing after, on the virtual clock where it can be),
 * keeping what docs/rate-limits.md "Acceptance" and "Frozen" state: this structure, no mechanism without
 * a test, bench or simulator gate that fails without it, the known-violations list only shrinking, the
 * benches holding.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.join(__dirname, '..');
const pacing = path.join(root, 'nodes/OutreachAutomation/transport/pacing');

function filesUnder(dir: string, ending: string): string[] {
	return fs
		.readdirSync(dir, { recursive: true, encoding: 'utf8' })
		.filter((name) => name.endsWith(ending) && !name.split(path.sep).includes('node_modules'))
		.map((name) => path.join(dir, name));
}

const lines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').length - 1;
const relative = (file: string) => path.relative(root, file);

/** Every function, method and arrow function of `file` with a body, and how many lines it spans. */
function functionLengths(file: string): Array<{ name: string; lines: number }> {
	const text = fs.readFileSync(file, 'utf8');
	const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
	const found: Array<{ name: string; lines: number }> = [];
	const visit = (node: ts.Node) => {
		if (ts.isFunctionLike(node) && 'body' in node && node.body) {
			const line = (at: number) => source.getLineAndCharacterOfPosition(at).line;
			const name = node.name?.getText(source) ?? '(anonymous)';
			found.push({
				name: `${relative(file)}:${line(node.getStart(source)) + 1} ${name}`,
				lines: line(node.end) - line(node.getStart(source)) + 1,
			});
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return found;
}

describe('the layout', () => {
	it('no source file is over 450 lines, no test file over 900', () => {
		const sources = ['nodes', 'credentials'].flatMap((dir) =>
			filesUnder(path.join(root, dir), '.ts'),
		);
		const tests = filesUnder(path.join(root, 'test'), '.ts');
		expect(sources.length).toBeGreaterThan(20);
		expect(sources.filter((file) => lines(file) > 450).map(relative)).toEqual([]);
		expect(tests.filter((file) => lines(file) > 900).map(relative)).toEqual([]);
	});

	it('no function of the pacing is over 40 lines', () => {
		const functions = filesUnder(pacing, '.ts').flatMap(functionLengths);
		expect(functions.length).toBeGreaterThan(50);
		expect(functions.filter((f) => f.lines > 40).map((f) => `${f.name}: ${f.lines} lines`)).toEqual(
			[],
		);
	});

	it('docs/rate-limits.md says the pacing is frozen and what lets it change', () => {
		const doc = fs.readFileSync(path.join(root, 'docs/rate-limits.md'), 'utf8');
		expect(doc).toMatch(/^## Frozen$/m);
		expect(doc).toMatch(/changes only for a defect a test shows/);
	});

	it("only observe.ts and the answers it reads write a key's window; the policy reads a WindowView", () => {
		const policy = fs.readFileSync(path.join(pacing, 'policy.ts'), 'utf8');
		expect(policy).not.toMatch(/import\s*\{[^}]*\bWindow\b[^}]*\}\s*from '\.\/window'/);
		expect(policy).not.toMatch(/\b(random|now|currentTime)\s*\(/);
		const writers = filesUnder(pacing, '.ts')
			.filter((file) => /from '\.\/answers'/.test(fs.readFileSync(file, 'utf8')))
			.map((file) => path.basename(file));
		expect(writers).toEqual(['observe.ts']);
	});
});
