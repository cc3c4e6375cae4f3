// The predictive echo bench (go run ./bench -only predict runs it): a
// termkeep server, Debian's Chromium reaching it through a proxy that
// delays each WebSocket chunk DELAY ms each way, and a person's typing
// into bash, zsh and python3's REPL. For each printable key it times, in
// the page, the key event to the first frame that shows its character at
// its cell, predicted or echoed; with the predictor's counts (keys shown
// predicted, rolled back) and how long each rolled-back prediction showed.
//
// What a frame shows is read from the page's elements once all of the
// frame's work is done (a ResizeObserver's callback comes after the
// animation frame callbacks, style and layout, before paint): a predicted
// character is an element over its cell, an echoed one is in xterm.js's
// row (the DOM renderer's; a canvas cannot be read, and then the buffer
// xterm.js has just drawn is). The time is taken there, and the key's is
// the event's own (its timeStamp, when the browser took the key).
//
// Usage: node bench/predict.mjs KEYS [DELAY_MS] (TK_UI_BIN, CHROMIUM as
// for the browser tests; PREDICT_TRACE=file.json records a performance
// trace of Chromium while bash is typed into, for chrome://tracing or
// web/bench/predicttrace.mjs). It prints one JSON object per shell on stdout:
// {shell, typed (keys, Enter included), editing (printable keys and
// backspaces), latencies (ms), drawn (timed keys first shown predicted),
// shown, wrong, corrections (ms), rtt}, or {shell, skipped} or
// {shell, error}.

import { existsSync } from 'node:fs';
import net from 'node:net';
import { Server, launch, newSession, ready, sleep, waitFor } from '../test/ui/harness.mjs';
import { delayProxy } from '../test/ui/delayproxy.mjs';

const KEYS = Number(process.argv[2] || 200);
const DELAY = Number(process.argv[3] || 150);

/** What is typed, per shell: lines of keys, '\b' a backspace (a typo fixed). */
const SCRIPTS = {
  bash: ['echo the quick brown fox', 'ls -d /tmp', 'echo helo\b\blo world', 'printf "%s\\n" done', 'cd /tmp && pwd', 'true # jumps over the lazy dog'],
  zsh: ['echo the quick brown fox', 'ls -d /tmp', 'echo helo\b\blo world', 'print -r -- done', 'cd /tmp && pwd', 'true # jumps over the lazy dog'],
  python3: ['x = 21 * 2', 'print(x + 1)', "'hello'.upper()", 'sum(range(10))', 'y = [i*i for i in range(5)]', 'len(y)'],
};
const SHELLS = [
  { name: 'bash', command: ['/bin/bash'], setup: "PS1='$ '; clear", prompt: /^\$$/ },
  { name: 'zsh', command: ['/usr/bin/zsh'], setup: "PROMPT='$ '; clear", prompt: /^\$$/ },
  { name: 'python3', command: ['/usr/bin/python3', '-q'], setup: null, prompt: /^>>>$/ },
];
/** A typist's pace: about 7 keys a second, a pause before each line. */
const KEY_MS = 140;
/**
 * Each pause is KEY_MS give or take up to JITTER_MS, drawn at random: a
 * fixed pace drifts slowly against the display's frames (16.7 ms at 60
 * Hz), so key after key met the frame at nearly the same point, and a
 * run's median was that of a few phases, not of a frame's worth of
 * them. Wider than a frame, the next key's phase is new.
 */
const JITTER_MS = 20;
const LINE_PAUSE_MS = 600;

/** What a trace records: the main thread's tasks, input, frames, and the page's own marks. */
const TRACE_CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'disabled-by-default-devtools.timeline.frame',
  'blink.user_timing',
  'input',
  'latencyInfo',
  'benchmark',
  'cc',
  'viz',
];

const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');

/** inPage installs the page's timer: expect(row, col, ch) before a key; the first frame showing ch at the cell ends it. */
function inPage() {
  const pending = [];
  window.__bench = { lat: [], drawn: 0, want: 0 };
  document.addEventListener(
    'keydown',
    (e) => {
      const p = pending.find((x) => x.t === undefined);
      if (p) p.t = e.timeStamp;
    },
    true,
  );
  // A cell that shows ch already (typed again after a backspace whose
  // echo has not come yet) cannot tell when ch arrives: not timed.
  const shows = (i, lines, row, col, ch) =>
    i.view.cells.some((c) => c.row === row && c.col === col && c.char === ch) || (lines[row - i.baseY] ?? '')[col] === ch;
  window.__benchExpect = (row, col, ch) => {
    if (shows(window.__termkeep.predict(), window.__termkeep.screen(), row, col, ch)) return;
    pending.push({ row, col, ch });
    window.__bench.want++;
  };
  const host = () => document.querySelector('.term-host:not([hidden])');
  /** drawn says how the page's elements show ch at (row, col) of the buffer: 'predicted', 'echoed' or null. */
  const drawn = (row, col, ch) => {
    const screen = host()?.querySelector('.xterm-screen');
    if (!screen) return null;
    const { cols, rows } = window.__termkeep.size();
    const top = window.__termkeep.predict().baseY; // typing keeps the view at the bottom
    const box = screen.getBoundingClientRect();
    for (const e of screen.querySelectorAll('.tk-predict')) {
      if (e.textContent !== ch) continue;
      const r = e.getBoundingClientRect();
      if (r.width === 0) continue; // not displayed
      const x = r.left + r.width / 2 - box.left;
      const y = r.top + r.height / 2 - box.top;
      if (Math.floor((x * cols) / box.width) === col && Math.floor((y * rows) / box.height) + top === row) return 'predicted';
    }
    const line = window.__termkeep.renderer() === 'dom' ? screen.querySelector('.xterm-rows')?.children[row - top]?.textContent : window.__termkeep.screen()[row - top];
    return (line ?? '')[col] === ch ? 'echoed' : null;
  };
  // A probe resized in every animation frame: its observer's callback
  // comes in the same frame, after all the frame's work, before paint.
  const probe = document.createElement('div');
  probe.style.cssText = 'position: fixed; left: 0; top: 0; width: 1px; height: 1px; visibility: hidden; pointer-events: none';
  document.body.appendChild(probe);
  new ResizeObserver(() => {
    const now = performance.now();
    for (let k = pending.length - 1; k >= 0; k--) {
      const p = pending[k];
      if (p.t === undefined) continue;
      const how = drawn(p.row, p.col, p.ch);
      if (!how) continue;
      window.__bench.lat.push(now - p.t);
      if (how === 'predicted') window.__bench.drawn++;
      pending.splice(k, 1);
    }
  }).observe(probe);
  const frame = () => {
    probe.style.width = probe.style.width === '1px' ? '2px' : '1px';
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

async function run(browser, s, proxy, sh) {
  if (!existsSync(sh.command[0])) return { shell: sh.name, skipped: `${sh.command[0]} is missing` };
  const m = await newSession(s, `bench-${sh.name}`, { command: sh.command });
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  let tracing = false;
  try {
    if (sh.setup) await s.cli('send', m.id, sh.setup);
    const p = await ctx.newPage();
    await p.goto(`http://127.0.0.1:${proxy.port}/#token=${s.token}`);
    await ready(p, 1);
    const info = () => p.evaluate(() => window.__termkeep.predict());
    await waitFor(async () => (await info()).rtt > 2 * DELAY, { what: 'the round trip through the proxy', timeout: 30000 });
    await p.locator('.term-host:not([hidden]) .xterm-helper-textarea').focus();
    await p.evaluate(inPage);
    const atPrompt = async () => {
      const l = (await p.evaluate(() => window.__termkeep.screen())).map((x) => x.trimEnd()).filter((x) => x !== '');
      return sh.prompt.test(l[l.length - 1] ?? '') && (await info()).view.cells.length === 0;
    };
    if (sh.name === 'bash' && process.env.PREDICT_TRACE) {
      await browser.startTracing(p, { path: process.env.PREDICT_TRACE, categories: TRACE_CATEGORIES });
      tracing = true;
    }
    const start = (await info()).stats;
    let typed = 0;
    let editing = 0;
    for (let n = 0; typed < KEYS; n++) {
      await waitFor(atPrompt, { what: `the ${sh.name} prompt`, timeout: 30000 });
      await sleep(LINE_PAUSE_MS);
      const line = SCRIPTS[sh.name][n % SCRIPTS[sh.name].length];
      let { row, col } = (await info()).cursor;
      for (const ch of line) {
        if (ch === '\b') {
          await p.keyboard.press('Backspace');
          col--;
        } else {
          await p.evaluate(([r, c, x]) => window.__benchExpect(r, c, x), [row, col, ch]);
          await p.keyboard.type(ch);
          col++;
        }
        typed++;
        editing++;
        await sleep(KEY_MS + (Math.random() * 2 - 1) * JITTER_MS);
      }
      // Every character drawn, then the line is run.
      await waitFor(() => p.evaluate(() => window.__bench.lat.length >= window.__bench.want), { what: 'the line drawn', timeout: 30000 });
      await p.keyboard.press('Enter');
      typed++;
    }
    await waitFor(atPrompt, { what: `the ${sh.name} prompt`, timeout: 30000 });
    if (tracing) {
      tracing = false;
      await browser.stopTracing();
    }
    const end = await info();
    return {
      shell: sh.name,
      typed,
      editing,
      latencies: await p.evaluate(() => window.__bench.lat),
      drawn: await p.evaluate(() => window.__bench.drawn),
      shown: end.stats.shown - start.shown,
      wrong: end.stats.wrong - start.wrong,
      corrections: end.corrections,
      rtt: end.rtt,
    };
  } finally {
    if (tracing) await browser.stopTracing().catch(() => {});
    await ctx.close();
    await s.cli('kill', m.id).catch(() => {});
    await s.cli('rm', m.id).catch(() => {});
  }
}

const hold = net.createServer();
await new Promise((r) => hold.listen(0, '127.0.0.1', r));
const pport = hold.address().port;
await new Promise((r) => hold.close(r));
const browser = await launch();
const s = await Server.start({ args: ['--allowed-origin', `http://127.0.0.1:${pport}`] });
const proxy = await delayProxy(pport, s.port, DELAY);
try {
  for (const sh of SHELLS) {
    try {
      out(await run(browser, s, proxy, sh));
    } catch (e) {
      out({ shell: sh.name, error: String(e?.message ?? e) });
    }
  }
} finally {
  await proxy.close();
  await s.stop();
  await browser.close();
}
