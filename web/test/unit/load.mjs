// load bundles one of web/src's pure modules with esbuild into a temporary
// file and imports it, so that node --test runs the page's deciding logic
// without a browser. A pure module imports nothing but types: its bundle
// holds that one file, and nothing of it touches the DOM when imported.

import { build } from 'esbuild';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

export async function load(name) {
  const entry = join(src, name);
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    target: 'es2021',
    metafile: true,
    logLevel: 'silent',
  });
  const inputs = Object.keys(out.metafile.inputs);
  if (inputs.length !== 1) throw new Error(`${name} is not pure: it imports ${inputs.filter((p) => !entry.endsWith(p)).join(', ')} (a pure module imports only types)`);
  const dir = mkdtempSync(join(tmpdir(), 'termkeep-unit-'));
  try {
    const file = join(dir, name.replace(/\.ts$/, '.mjs'));
    writeFileSync(file, out.outputFiles[0].contents);
    return await import(pathToFileURL(file).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
