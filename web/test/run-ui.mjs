// Runs the browser test files (test/ui/*.test.mjs), each under a node
// --test of its own, the largest first so that the last to end are short.
// Two run at a time, or one until the file TK_UI_WIDEN names exists:
// make test runs these beside the Go tests, which need the machine's
// other core, and creates that file when they end. Each file's report is
// printed whole when it ends, with its time; the exit status is 1 when any
// file failed.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const JOBS = 2;
const web = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(web, 'test', 'ui');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.test.mjs'))
  .map((f) => ({ f, size: statSync(join(dir, f)).size }))
  .sort((a, b) => b.size - a.size || a.f.localeCompare(b.f))
  .map((x) => x.f);
const widen = process.env.TK_UI_WIDEN;
const jobs = () => (!widen || existsSync(widen) ? JOBS : 1);

const began = Date.now();
const children = new Set();
const failed = [];
let next = 0;

function start(f) {
  const t0 = Date.now();
  const out = [];
  const c = spawn(process.execPath, ['--test', '--test-reporter=tap', join('test', 'ui', f)], { cwd: web, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(c);
  c.stdout.on('data', (d) => out.push(d));
  c.stderr.on('data', (d) => out.push(d));
  c.on('close', (code, signal) => {
    children.delete(c);
    const ok = code === 0;
    if (!ok) failed.push(f);
    const at = ((Date.now() - began) / 1000).toFixed(0);
    process.stdout.write(`# ${f}: ${ok ? 'passed' : `FAILED (${signal ?? `exit ${code}`})`} in ${((Date.now() - t0) / 1000).toFixed(1)} s, ended at ${at} s\n`);
    process.stdout.write(Buffer.concat(out));
    pump();
  });
}

function pump() {
  while (next < files.length && children.size < jobs()) start(files[next++]);
  if (children.size > 0 || next < files.length) return;
  clearInterval(poll);
  const wall = ((Date.now() - began) / 1000).toFixed(0);
  if (failed.length) {
    process.stdout.write(`# browser tests: ${failed.length} of ${files.length} files failed in ${wall} s: ${failed.join(', ')}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write(`# browser tests: all ${files.length} files passed in ${wall} s\n`);
  }
}

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    for (const c of children) c.kill(sig);
    process.exit(1);
  });
}
const poll = setInterval(pump, 1000);
pump();
