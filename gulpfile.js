// Copies what tsc does not: node icons, codex files (*.node.json) and the output schemas n8n's editor
// previews (__schema__/) next to the compiled nodes.
const { src, dest } = require('gulp');

function copyAssets() {
	return src(
		[
			'nodes/**/*.{png,svg}',
			'nodes/**/*.node.json',
			'nodes/**/__schema__/**/*.json',
			'credentials/**/*.{png,svg}',
		],
		{
			base: '.',
			encoding: false,
		},
	).pipe(dest('dist'));
}

exports['build:assets'] = copyAssets;
