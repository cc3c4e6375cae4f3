// Builds the browser UI into dist/: dist/index.html and dist/assets/
// (app.js, app.css, icon.svg). The Go package in this directory embeds
// dist/ into the termkeep binary. `node build.mjs --watch` rebuilds on change.
import { build, context } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
const watch = process.argv.includes('--watch');

// Start from an empty dist/, keeping the placeholder that lets the Go
// package embed the directory before any build.
for (const name of readdirSync(dist, { withFileTypes: true })) {
  if (name.name !== '.gitkeep') rmSync(join(dist, name.name), { recursive: true, force: true });
}
mkdirSync(join(dist, 'assets'), { recursive: true });
copyFileSync(join(here, 'src', 'index.html'), join(dist, 'index.html'));
copyFileSync(join(here, 'src', 'icon.svg'), join(dist, 'assets', 'icon.svg'));

const options = {
  // main.ts imports the styles: esbuild writes them to app.css beside app.js.
  entryPoints: { app: join(here, 'src', 'main.ts') },
  outdir: join(dist, 'assets'),
  entryNames: '[name]',
  bundle: true,
  minify: !watch,
  sourcemap: watch ? 'inline' : false,
  target: ['chrome100', 'firefox100', 'safari15'],
  format: 'iife',
  legalComments: 'none',
  logLevel: 'warning',
};

if (watch) {
  const ctx = await context(options);
  await ctx.watch();
  console.log('watching web/src for changes');
} else {
  await build(options);
  console.log('built web/dist');
}
