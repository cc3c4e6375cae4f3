// Runs the browser test files (test/ui/*.test.mjs), each under a node
// --test of its own, the largest first so that the last to end are short.
// A file takes about one core (Chromium, the page, a server). One runs at
// a time; another starts beside it only while a core has been idle (the
// machine may be running other work: a second make test, a build) and,
// when TK_UI_WIDEN names a file, once that file exists: make test runs
// these beside the Go tests and creates it when they end. Each file's
// report is printed whole when it ends, with its time; the exit status is
// 1 when any file failed.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CPUS = availableParallelism();
const JOBS = Math.max(1, Math.min(4, CPUS));
// The longest file takes about 75 s on a quiet 2-core machine, 3 min
// beside the Go tests.
const FILE_TIMEOUT_MS = 10 * 60 * 1000;
const web = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(web, 'test', 'ui');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.test.mjs'))
  .map((f) => ({ f, size: statSync(join(dir, f)).size }))
  .sort((a, b) => b.size - a.size || a.f.localeCompare(b.f))
  .map((x) => x.f);
const widen = process.env.TK_UI_WIDEN;

// The machine's idle share over the last few seconds, from /proc/stat
// (elsewhere, from the load average).
const samples = [];
function sample() {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    samples.push({ idle: f[3] + f[4], total: f.reduce((a, b) => a + b, 0) });
    if (samples.length > 6) samples.shift();
  } catch {
    samples.length = 0;
  }
}
function spareCore() {
  if (samples.length < 2) return loadavg()[0] < CPUS - 1;
  const a = samples[0];
  const b = samples[samples.length - 1];
  return b.total > a.total && ((b.idle - a.idle) / (b.total - a.total)) * CPUS >= 0.7;
}
const jobs = () => (widen && !existsSync(widen) ? 1 : spareCore() ? JOBS : 1);

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
  // A file that hangs ends here, with what it printed, not at CI's limit.
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    c.kill('SIGTERM');
    setTimeout(() => c.kill('SIGKILL'), 5000).unref();
  }, FILE_TIMEOUT_MS);
  c.on('close', (code, signal) => {
    clearTimeout(timer);
    children.delete(c);
    const ok = code === 0;
    if (!ok) failed.push(f);
    const at = ((Date.now() - began) / 1000).toFixed(0);
    const why = timedOut ? `timed out after ${FILE_TIMEOUT_MS / 1000} s` : (signal ?? `exit ${code}`);
    process.stdout.write(`# ${f}: ${ok ? 'passed' : `FAILED (${why})`} in ${((Date.now() - t0) / 1000).toFixed(1)} s, ended at ${at} s\n`);
    process.stdout.write(Buffer.concat(out));
    pump();
  });
}

// A file started less than 6 s ago has not shown yet what it takes.
let lastStart = 0;
function pump() {
  while (next < files.length && (children.size === 0 || (children.size < jobs() && Date.now() - lastStart >= 6000))) {
    lastStart = Date.now();
    start(files[next++]);
  }
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
sample();
const poll = setInterval(() => {
  sample();
  pump();
}, 1000);
pump();
