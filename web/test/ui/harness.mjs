// The browser tests' harness: a real termkeep server (bin/termkeep) with
// its own state directory, Debian's Chromium driven by playwright-core
// (never a downloaded browser), and small helpers to read the page.
//
// Environment: TK_UI_BIN (the directory holding termkeep and
// termkeep-holder; default ../../bin), CHROMIUM (default /usr/bin/chromium),
// TK_UI_ARTIFACTS (screenshots; default ../../test-artifacts/ui).

import { spawn, execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..', '..');
export const BIN = process.env.TK_UI_BIN || join(root, 'bin');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const ARTIFACTS = process.env.TK_UI_ARTIFACTS || join(root, 'test-artifacts', 'ui');
const run = promisify(execFile);

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** waitFor polls fn until it returns a truthy value or the time is up. */
export async function waitFor(fn, { timeout = 15000, interval = 50, what = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await sleep(interval);
  }
}

/**
 * testEnv is this process's environment without a TERMKEEP_ variable of
 * the user's (an exported TERMKEEP_LISTEN would take a port the user's
 * own server holds) nor the XDG directories, which would reach the user's
 * files: what the servers and CLI runs of the tests get.
 */
export function testEnv() {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('TERMKEEP_') || /^XDG_(CONFIG|DATA|STATE|CACHE)_HOME$/.test(k)) delete env[k];
  return env;
}

/**
 * Server is `termkeep serve` on its own state directory, listening on
 * 127.0.0.1 (a free port, or the one given, to restart on the same origin).
 */
export class Server {
  constructor(dir) {
    this.dir = dir;
    this.proc = null;
    this.log = '';
  }

  /** start starts a server; args are more flags of `termkeep serve` (kept for a restart). */
  static async start({ port = 0, dir, args = [] } = {}) {
    const s = new Server(dir ?? mkdtempSync(join(tmpdir(), 'termkeep-ui-')));
    s.args = args;
    await s.start(port);
    return s;
  }

  async start(port = 0) {
    rmSync(join(this.dir, 'url'), { force: true });
    const env = { ...testEnv(), TERMKEEP_STATE_DIR: this.dir, SHELL: '/bin/bash', HOME: process.env.HOME || '/root' };
    this.proc = spawn(join(BIN, 'termkeep'), ['serve', '--state-dir', this.dir, '--listen', `127.0.0.1:${port}`, '--holder', join(BIN, 'termkeep-holder'), ...(this.args ?? [])], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.exited = exited;
    this.proc.stdout.on('data', (b) => (this.log += b));
    this.proc.stderr.on('data', (b) => (this.log += b));
    const urlFile = join(this.dir, 'url');
    await waitFor(() => existsSync(urlFile) && readFileSync(urlFile, 'utf8').trim(), { timeout: 15000, what: `the server's url file (log: ${this.log})` });
    this.url = readFileSync(urlFile, 'utf8').trim();
    this.port = Number(new URL(this.url).port);
    this.token = readFileSync(join(this.dir, 'token'), 'utf8').trim();
    return this;
  }

  /** login is the address `termkeep url` prints: the token in the fragment, which the page swaps for a credential of its own. */
  get login() {
    return `${this.url}#token=${this.token}`;
  }

  /** kill stops the server the hard way; sessions keep running. */
  async kill(signal = 'SIGKILL') {
    if (!this.proc || this.proc.exitCode !== null) return;
    this.proc.kill(signal);
    await this.exited;
  }

  /** cli runs `termkeep ARGS` against this server's state directory. */
  async cli(...args) {
    const { stdout } = await run(join(BIN, 'termkeep'), ['--state-dir', this.dir, '--no-autostart', ...args], {
      env: { ...testEnv(), TERMKEEP_STATE_DIR: this.dir },
      maxBuffer: 64 << 20,
    });
    return stdout;
  }

  async api(method, path, body) {
    const r = await fetch(this.url.replace(/\/$/, '') + path, {
      method,
      headers: { Authorization: `Bearer ${this.token}`, 'Content-Type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
    return text ? JSON.parse(text) : null;
  }

  /** stop ends every session and the server, and removes the state directory. */
  async stop() {
    // A server killed before (kill) ended no session: its holders are ended here.
    const orphans = !this.proc || this.proc.exitCode !== null;
    try {
      if (this.proc && this.proc.exitCode === null) {
        await this.cli('shutdown', '--sessions').catch(() => {});
        // A timer left pending would keep node (the test file) alive 5 s more.
        let timer;
        await Promise.race([this.exited, new Promise((r) => (timer = setTimeout(r, 5000)))]);
        clearTimeout(timer);
        await this.kill();
      }
    } finally {
      // The sessions' holders may still be recording their end in the
      // directory after the server has gone: under load, longer than
      // rmSync's retries. Their going first makes the removal final.
      await holdersGone(this.dir, { timeout: 10000, term: orphans });
      rmSync(this.dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
    }
  }
}

/** holderPids is the holder pid of each session under state directory dir (meta.json). */
function holderPids(dir) {
  const sessions = join(dir, 'sessions');
  let ids = [];
  try {
    ids = readdirSync(sessions);
  } catch {
    return [];
  }
  const pids = [];
  for (const id of ids) {
    try {
      const pid = JSON.parse(readFileSync(join(sessions, id, 'meta.json'), 'utf8')).holder_pid;
      if (Number.isInteger(pid) && pid > 1) pids.push(pid);
    } catch {
      // No meta.json (yet) or one being rewritten: nothing to wait for there.
    }
  }
  return pids;
}

/** running says whether process pid is alive; a zombie (ended, not yet reaped) is not. */
function running(pid) {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return e.code === 'EPERM';
  }
  try {
    // The state is the field after the command's closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/**
 * holdersGone waits, at most timeout ms, until no holder of a session under
 * dir runs (at once when none does); term: it sends them SIGTERM first.
 * Holders still running then are killed: none outlives its test.
 */
export async function holdersGone(dir, { timeout, term = false }) {
  const end = Date.now() + timeout;
  let pids = holderPids(dir).filter(running);
  const signal = (sig) => {
    for (const pid of pids) {
      try {
        process.kill(pid, sig);
      } catch {
        // Gone meanwhile.
      }
    }
  };
  if (term) signal('SIGTERM');
  while (pids.length && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    pids = pids.filter(running);
  }
  if (pids.length) signal('SIGKILL');
}

/**
 * launch starts headless Chromium with a fresh profile. bfcache keeps the
 * back/forward cache, which Playwright turns off by default.
 */
export async function launch({ bfcache = false } = {}) {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: apt-get install -y chromium (make test does it as root)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    ignoreDefaultArgs: bfcache ? ['--disable-back-forward-cache'] : [],
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/** open logs a page in (the token address), and waits for the UI to be up. */
export async function open(context, server, { tabs = 0 } = {}) {
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  page.on('console', (m) => {
    if ((m.type() === 'error' || m.type() === 'warning') && !/GL Driver Message|WebSocket connection to .* failed/.test(m.text())) console.error(`page ${m.type()}: ${m.text()}`);
  });
  await page.goto(server.login);
  await ready(page, tabs);
  return page;
}

/** ready waits for the UI to show at least `tabs` tabs, the active one live. */
export async function ready(page, tabs = 0) {
  await page.waitForFunction(
    (n) => {
      const tk = window.__termkeep;
      if (!tk) return false;
      const t = tk.tabs();
      if (t.length < n) return false;
      if (n === 0) return true;
      const a = t.find((x) => x.id === tk.active());
      return a && (a.state === 'live' || a.state === 'ended');
    },
    tabs,
    { timeout: 20000 },
  );
}

export async function tabs(page) {
  return page.evaluate(() => window.__termkeep.tabs());
}

/** screen is the active terminal's rows, trailing blanks cut. */
export async function screen(page, id) {
  return page.evaluate((id) => window.__termkeep.screen(id), id);
}

/** text is the active terminal's whole buffer, scrollback first. */
export async function text(page, id) {
  return page.evaluate((id) => window.__termkeep.text(id), id);
}

/** trimScreen cuts trailing blank lines (and trailing spaces) for comparisons. */
export function trimLines(lines) {
  const out = lines.map((l) => l.replace(/\s+$/, ''));
  while (out.length && out[out.length - 1] === '') out.pop();
  return out;
}

/** typeLine types a command into the active terminal. */
export async function typeLine(page, line) {
  await page.keyboard.type(line);
  await page.keyboard.press('Enter');
}

/** waitText waits until the active terminal's buffer has a line matching re. */
export async function waitText(page, re, { timeout = 15000, id } = {}) {
  return waitFor(
    async () => {
      const lines = await text(page, id);
      return lines && lines.find((l) => re.test(l));
    },
    { timeout, what: `${re} in the terminal` },
  );
}

export async function screenshot(page, name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, name);
  await page.screenshot({ path });
  return path;
}

export function writeArtifact(name, data) {
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(join(ARTIFACTS, name), data);
}

/** newSession makes a session through the API (as another device would). */
export async function newSession(server, name, extra = {}) {
  return server.api('POST', '/api/sessions', { name, command: ['/bin/bash', '--norc', '--noprofile'], cwd: tmpdir(), ...extra });
}

/** cellPoint is the page coordinates of a cell of the active terminal's screen (row and column from 0). */
export async function cellPoint(page, row, col) {
  return page.evaluate(
    ([row, col]) => {
      const el = document.querySelector('.term-host:not([hidden]) .xterm-screen');
      const r = el.getBoundingClientRect();
      const { cols, rows } = window.__termkeep.size();
      return { x: r.left + ((col + 0.5) * r.width) / cols, y: r.top + ((row + 0.5) * r.height) / rows };
    },
    [row, col],
  );
}

/** captureEquals waits until the page's screen equals `termkeep capture` of the session. */
export async function captureEquals(page, server, id, { timeout = 15000 } = {}) {
  let last = null;
  try {
    await waitFor(
      async () => {
        const cap = trimLines((await server.cli('capture', id)).split('\n'));
        const scr = trimLines(await screen(page, id));
        last = { cap, scr };
        return JSON.stringify(cap) === JSON.stringify(scr);
      },
      { timeout, interval: 200, what: 'the page to show what termkeep capture shows' },
    );
  } catch (e) {
    e.message += `\n--- capture ---\n${last?.cap.join('\n')}\n--- page ---\n${last?.scr.join('\n')}`;
    throw e;
  }
  return last.scr;
}

/** count is how many lines of lines match re. */
export function count(lines, re) {
  return lines.filter((l) => re.test(l)).length;
}

const AXE = join(here, '..', '..', 'node_modules', 'axe-core', 'axe.min.js');

/**
 * checkA11y runs axe-core on what the page shows now (WCAG 2.1 A and AA)
 * and fails on any serious or critical violation, naming each rule and the
 * elements it found; the whole report goes to TK_UI_ARTIFACTS as
 * a11y-<label>.json. It returns the violations of lesser impact. rules,
 * given, are the axe rules to run instead (best practices included).
 */
export async function checkA11y(page, label, { include, rules } = {}) {
  // Evaluated through the DevTools protocol: the page's CSP (default-src
  // 'self') refuses a script tag, rightly.
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(readFileSync(AXE, 'utf8'));
  // Colors are measured once the page is still: a view fading in has the
  // contrast of its last frame only at the end (spinners never end).
  await page.evaluate(() => Promise.all(document.getAnimations().filter((a) => a.effect?.getComputedTiming().iterations !== Infinity).map((a) => a.finished.catch(() => {}))));
  const result = await page.evaluate(async ({ include, rules }) => {
    const r = await window.axe.run(include ? { include: [include] } : document, {
      runOnly: rules ? { type: 'rule', values: rules } : { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
      resultTypes: ['violations'],
    });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target.join(' '), summary: n.failureSummary })),
    }));
  }, { include: include ?? null, rules: rules ?? null });
  writeArtifact(`a11y-${label}.json`, JSON.stringify(result, null, 2));
  const bad = result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (bad.length) {
    const lines = bad.flatMap((v) => [`${v.impact} ${v.id}: ${v.help}`, ...v.nodes.slice(0, 6).map((n) => `  ${n.target}: ${n.summary.replace(/\s+/g, ' ')}`)]);
    throw new Error(`axe-core finds ${bad.length} serious or critical violation(s) on ${label}:\n${lines.join('\n')}`);
  }
  return result;
}

/** gone ends and removes a session (kill, then rm), so that on a server shared by several tests the next one sees only its own. */
export async function gone(server, made) {
  await server.cli('kill', made.id).catch(() => {});
  await server.cli('rm', made.id).catch(() => {});
}

/** openLive opens a page in a new context on a server that has exactly n sessions, and waits until every tab is live. */
export async function openLive(browser, server, n) {
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  const p = await open(ctx, server, { tabs: n });
  const shown = (await tabs(p)).length;
  if (shown !== n) throw new Error(`the page shows ${shown} tabs, not ${n}: a session of an earlier test is left`);
  await waitFor(async () => (await tabs(p)).every((t) => t.state === 'live'), { what: 'live tabs' });
  return { ctx, p };
}
