// load bundles one of web/src's pure modules with esbuild into a temporary
// file and imports it, so that node --test runs the page's deciding logic
// without a browser. A pure module imports nothing but types and other
// pure modules (PURE): nothing of it touches the DOM.

import { build } from 'esbuild';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

/** The modules of web/src that hold no DOM, no storage and no network. */
const PURE = new Set(['keys.ts', 'paste.ts', 'clipwrite.ts', 'taborder.ts', 'tabinfo.ts', 'replay-clock.ts', 'replay-playback.ts', 'ended.ts', 'presence.ts', 'quiet.ts', 'replay-mark.ts', 'gestures.ts', 'announce.ts', 'fitplan.ts', 'sizeinfo.ts', 'predict.ts', 'predictdraw.ts', 'wire.ts', 'dropcause.ts']);

/** Data files a pure module may import: tables shared with the Go code. */
const DATA = new Set(['../internal/keys/paste.json']);

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
    absWorkingDir: resolve(src, '..'),
    logLevel: 'silent',
  });
  const impure = Object.keys(out.metafile.inputs).filter((p) => !(p.startsWith('src/') && PURE.has(p.slice(4))) && !DATA.has(p));
  if (!PURE.has(name) || impure.length) throw new Error(`${name} is not pure: it bundles ${impure.join(', ') || 'itself'} (a pure module imports only types and modules of PURE)`);
  const dir = mkdtempSync(join(tmpdir(), 'termkeep-unit-'));
  try {
    const file = join(dir, name.replace(/\.ts$/, '.mjs'));
    writeFileSync(file, out.outputFiles[0].contents);
    return await import(pathToFileURL(file).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
