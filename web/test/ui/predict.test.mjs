// Predictive echo in the page (predictview.ts): the page reaches the
// server through a proxy that delays each chunk of a WebSocket connection
// by 150 ms each way (a 300 ms round trip; plain HTTP passes at once, so
// the page loads quickly), and the setting is auto. Typing at a shell
// prompt shows before its echo; a password prompt, vim and a screen that
// contradicts the prediction never keep a predicted character, with
// termkeep's shell integration and without it (where predictions start
// once keys have echoed as predicted); straight to the server (a round
// trip under 30 ms) nothing is predicted.
//
// Each test has a session and a page of its own, so that one failing
// leaves nothing on the next one's prompt. What must be seen before an
// echo is recorded in the page as it is drawn, not polled: on a busy
// machine typing a few keys can take longer than the round trip.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { delayProxy } from './delayproxy.mjs';
import { Server, launch, open, ready, typeLine, waitFor, waitText, newSession, gone, screenshot } from './harness.mjs';

const DELAY = 150;

let browser, s, proxy;
/** The sessions of the test under way, removed by the next one. */
const made = [];

/** info is the active terminal's predictive echo state (round trip, modes, counts, view). */
const info = (p) => p.evaluate(() => window.__termkeep.predict());
/** predicted is the text the page draws over the terminal as predicted. */
const predicted = (p) => p.evaluate(() => [...document.querySelectorAll('.term-host:not([hidden]) .tk-predict')].map((e) => e.textContent).join(''));
const lines = (p) => p.evaluate(() => window.__termkeep.screen());

/** see waits for a line matching re, and says what the screen shows when none comes. */
const see = (p, re) =>
  waitText(p, re).catch(async (e) => {
    throw new Error(`${e.message}: ${JSON.stringify(await info(p))}\n${(await lines(p)).join('\n')}`);
  });

/** until waits for fn, and says what the page shows when it does not come. */
const until = (p, fn, what) =>
  waitFor(fn, { what }).catch(async (e) => {
    throw new Error(`${e.message}: ${JSON.stringify(await info(p))}\n${(await lines(p)).join('\n')}`);
  });

/** prompt waits for a fresh prompt "$ " on the last line, with nothing typed or predicted on it. */
async function prompt(p, { integration = true } = {}) {
  await waitFor(
    async () => {
      const l = (await lines(p)).map((l) => l.trimEnd()).filter((l) => l !== '');
      const i = await info(p);
      return l[l.length - 1] === '$' && (!integration || i.shell === 'prompt') && i.view.cells.length === 0;
    },
    { what: 'a prompt', timeout: 30000 },
  ).catch(async (e) => {
    throw new Error(`${e.message}: ${JSON.stringify(await info(p))}\n${(await lines(p)).join('\n')}`);
  });
}

/**
 * fresh makes a session (bash with termkeep's shell integration, or a
 * plain bash without it), the only one on the server, at a "$ " prompt,
 * and opens a page on it through the proxy (or straight to the server),
 * its round trip measured.
 */
async function fresh({ integration = true, direct = false } = {}) {
  for (const m of made.splice(0)) await gone(s, m);
  const m = await newSession(s, `pred-${Date.now()}`, { command: integration ? ['/bin/bash'] : ['/bin/bash', '--norc', '--noprofile'] });
  made.push(m);
  // Set up through the CLI, not typed: the page's predictor starts on a clean prompt.
  await s.cli('send', m.id, "PS1='$ '; clear");
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  let p;
  if (direct) {
    p = await open(ctx, s, { tabs: 1 });
  } else {
    p = await ctx.newPage();
    p.on('pageerror', (e) => console.error('page error:', e.message));
    await p.goto(`http://127.0.0.1:${proxy.port}/#token=${s.token}`);
    await ready(p, 1);
    await waitFor(async () => (await info(p)).rtt > 2 * DELAY, { what: 'a measured round trip over 300 ms', timeout: 30000 });
  }
  await p.locator('.term-host:not([hidden]) .xterm-helper-textarea').focus();
  await prompt(p, { integration });
  return { ctx, p, id: m.id };
}

/**
 * record keeps, in the page, each predicted text drawn (after each change
 * to the terminal's decorations): the text, whether it is underlined, the
 * predicted cells (rows of the whole buffer), the cells its characters
 * are laid out on (null for one outside the terminal's screen) and the
 * buffer's lines as they were then. records returns them.
 */
const record = (p) =>
  p.evaluate(() => {
    const host = document.querySelector('.term-host:not([hidden])');
    window.__drawn = [];
    // The cell under the middle of an element, from the screen's box and the terminal's size.
    const cellOf = (e) => {
      const scr = host.querySelector('.xterm-screen').getBoundingClientRect();
      const { cols, rows } = window.__termkeep.size();
      const r = e.getBoundingClientRect();
      const x = r.left + r.width / 2 - scr.left;
      const y = r.top + r.height / 2 - scr.top;
      if (x < 0 || y < 0 || x >= scr.width || y >= scr.height) return null;
      const row = Math.floor((y * rows) / scr.height) + window.__termkeep.predict().baseY;
      return { row, col: Math.floor((x * cols) / scr.width), char: e.textContent };
    };
    new MutationObserver(() => {
      const els = [...host.querySelectorAll('.tk-predict')];
      if (els.length === 0) return;
      window.__drawn.push({
        text: els.map((e) => e.textContent).join(''),
        underline: els.every((e) => getComputedStyle(e).textDecorationLine === 'underline'),
        cells: window.__termkeep.predict().view.cells,
        at: els.map(cellOf),
        lines: window.__termkeep.text(),
      });
    }).observe(host, { childList: true, subtree: true, characterData: true });
  });
const records = (p) => p.evaluate(() => window.__drawn);

before(async () => {
  browser = await launch();
  // The proxy's port must be known to the server (an allowed origin), and the server's to the proxy.
  const hold = net.createServer();
  await new Promise((r) => hold.listen(0, '127.0.0.1', r));
  const pport = hold.address().port;
  await new Promise((r) => hold.close(r));
  s = await Server.start({ args: ['--allowed-origin', `http://127.0.0.1:${pport}`] });
  proxy = await delayProxy(pport, s.port, DELAY);
});

after(async () => {
  await proxy?.close();
  await s?.stop();
  await browser?.close();
});

test('typing at a prompt shows before its echo, underlined, and the echo confirms it', async () => {
  const { ctx, p } = await fresh();
  try {
    await record(p);
    await p.keyboard.type('echo abc');
    await see(p, /^\$ echo abc$/);
    await waitFor(async () => (await info(p)).view.cells.length === 0, { what: 'the predictions confirmed' });
    // Drawn where the screen did not show it yet, and where its echo came.
    const final = await p.evaluate(() => window.__termkeep.text());
    const early = (await records(p)).filter(
      (r) => r.cells.length > 0 && r.cells.every((c) => (r.lines[c.row] ?? '').padEnd(c.col + 1)[c.col] !== c.char && final[c.row].padEnd(c.col + 1)[c.col] === c.char),
    );
    assert.ok(early.length > 0, `no prediction drawn before its echo: ${JSON.stringify(await records(p))}`);
    assert.ok(early.every((r) => r.underline), 'drawn underlined');
    // Each on its own cell of the screen, not merely somewhere in the page.
    const key = (c) => (c ? `${c.row},${c.col},${c.char}` : 'outside the screen');
    for (const r of early) assert.deepEqual(r.at.map(key).sort(), r.cells.map(key).sort(), `drawn away from the predicted cells: ${JSON.stringify(r)}`);
    const st = (await info(p)).stats;
    // None contradicted by the screen. Each confirmed by its echo, but for
    // those taken back because the echo was overdue (a busy machine).
    assert.equal(st.wrong, 0, `nothing rolled back as wrong: ${JSON.stringify(st)}`);
    assert.equal(st.confirmed + st.late, st.shown, `every prediction confirmed or late: ${JSON.stringify(st)}`);
    assert.ok(st.confirmed >= 1, `none confirmed: ${JSON.stringify(st)}`);
    await screenshot(p, 'predict-shown.png');
  } finally {
    await ctx.close();
  }
});

test('a predicted key redraws none of the terminal\'s rows', async (t) => {
  // A machine so busy that an echo is overdue takes the predictions back
  // (late) and pauses: such a try says nothing, and is made again.
  for (let attempt = 1; ; attempt++) {
    const { ctx, p } = await fresh();
    try {
      if ((await p.evaluate(() => window.__termkeep.renderer())) !== 'dom') return t.skip('the rows are drawn as DOM elements only by the DOM renderer');
      // Each change to the rows' elements before the echo: with nothing on
      // the screen changed, a redraw is work in the frame that is to show
      // the key, and the page waits for it.
      await p.evaluate(() => {
        window.__redrawn = [];
        const rows = document.querySelector('.term-host:not([hidden]) .xterm-rows');
        new MutationObserver((ms) => {
          const line = window.__termkeep.screen()[0].trimEnd();
          if (line !== '$') return;
          const what = (n) => (n.nodeType === 1 ? `${n.tagName.toLowerCase()}.${[...n.classList].join('.')}` : n.nodeName);
          for (const m of ms) window.__redrawn.push(`${m.type} ${m.attributeName ?? ''} on ${what(m.target)} at ${Math.round(performance.now())} ms`);
        }).observe(rows, { childList: true, subtree: true, characterData: true, attributes: true });
      });
      const frames = (n) => p.evaluate((n) => new Promise((r) => { const f = () => (--n > 0 ? requestAnimationFrame(f) : r()); requestAnimationFrame(f); }), n);
      const t0 = await p.evaluate(() => Math.round(performance.now()));
      for (const ch of 'ech') {
        await p.keyboard.type(ch);
        await frames(3);
      }
      const i = await info(p);
      if (i.stats.late > 0 && attempt < 3) {
        console.log(`# try ${attempt}: an echo was overdue (${JSON.stringify(i.stats)}); again`);
        continue;
      }
      assert.ok(i.stats.shown >= 3, `not predicted: ${JSON.stringify(i)}`);
      assert.deepEqual(await p.evaluate(() => window.__redrawn), [], `rows redrawn before the echo (typing began at ${t0} ms): ${JSON.stringify(i.stats)}`);
      await see(p, /^\$ ech$/);
      return;
    } finally {
      await ctx.close();
    }
  }
});

test('a password prompt (read -s) never shows a predicted character', async () => {
  const { ctx, p, id } = await fresh();
  try {
    await record(p);
    await command(p, 'read -s pw; echo got-$pw');
    const shown = (await info(p)).stats.shown;
    // Typed as soon as the password is read, before the page can know it
    // (its mode and the shell's marks are 150 ms away); not sooner: keys
    // that come with the Enter are read by bash's line editor, not by read.
    await waitFor(async () => JSON.stringify((await s.api('GET', `/api/sessions/${id}`)).input_mode) === '{"echo":false,"canonical":true}', { interval: 5, what: 'read -s' });
    await typeLine(p, 'hunter2');
    await see(p, /^got-hunter2$/);
    assert.equal((await info(p)).stats.shown, shown, 'a prediction was shown at the password prompt');
    // Below the command's line (row 0): the command's own predictions may still be drawn as the password is typed.
    assert.deepEqual((await records(p)).filter((r) => r.cells.some((c) => c.row > 0)), []);
  } finally {
    await ctx.close();
  }
});

/**
 * command types line and Enter once the line's echo is drawn: nothing is
 * pending then, so what keeps what is typed next from being predicted is
 * what the test is about, not a key still waiting for its echo.
 */
async function command(p, line) {
  await p.keyboard.type(line);
  await until(p, async () => (await info(p)).view.cells.length === 0 && (await p.evaluate(() => window.__termkeep.text())).some((l) => l.trimEnd().endsWith(line)), `the echo of ${line}`);
  await p.keyboard.press('Enter');
}

/** earn types a command whose echo earns the predictor's confidence (no shell integration), and checks it did. */
async function earn(p) {
  // Typed in two goes: keys typed before any echo came earn nothing yet.
  await p.keyboard.type('echo');
  await see(p, /^\$ echo$/);
  await typeLine(p, ' earned');
  await see(p, /^earned$/);
  await prompt(p, { integration: false });
  assert.ok((await info(p)).stats.shown > 0, `no prediction was shown: confidence not earned: ${JSON.stringify(await info(p))}`);
}

test('without shell integration, a password prompt never shows a predicted character', async () => {
  const { ctx, p } = await fresh({ integration: false });
  try {
    await earn(p);
    // A key that echoes (confidence for this line), then a password: only
    // the pty's mode (echo off, line editing on) says not to predict.
    await command(p, "read -n1 -p 'Go? ' a; sleep 0.3; read -s -p 'Password: ' pw; echo; echo got-$pw");
    await see(p, /^Go\? ?$/);
    await p.keyboard.type('y');
    await see(p, /^Go\? yPassword: ?$/);
    await waitFor(async () => JSON.stringify((await info(p)).termMode) === '{"echo":false,"canonical":true}', { what: 'the password mode' });
    const before = (await info(p)).stats;
    await record(p);
    await typeLine(p, 'hunter2');
    await see(p, /^got-hunter2$/);
    const st = (await info(p)).stats;
    assert.equal(st.shown, before.shown, `a prediction was shown at the password prompt: ${JSON.stringify(st)}`);
    assert.deepEqual(await records(p), []);
  } finally {
    await ctx.close();
  }
});

test('vim is never predicted', async () => {
  const { ctx, p, id } = await fresh();
  try {
    await command(p, 'vim -u NONE -N');
    const shown = (await info(p)).stats.shown;
    await record(p);
    // Typed as soon as vim runs, before the page can know it (150 ms away).
    await waitFor(async () => /^~/m.test(await s.cli('capture', id)), { interval: 5, what: 'vim' });
    await p.keyboard.type('ihello');
    // Keys typed before vim turns echo off are echoed by the tty; vim
    // then blanks the echo it overwrites, which leaves a space after.
    await see(p, /^hello ?$/);
    assert.equal((await info(p)).stats.shown, shown);
    assert.deepEqual(await records(p), []);
  } finally {
    await ctx.close();
  }
});

test('without shell integration, vim is never predicted', async () => {
  const { ctx, p } = await fresh({ integration: false });
  try {
    await earn(p);
    // Straight into insert mode: each key typed echoes where it was typed,
    // as at a prompt; only the alternate screen says not to predict.
    await command(p, 'vim -u NONE -N -c startinsert');
    await waitFor(async () => (await lines(p)).some((l) => /-- INSERT --/.test(l)), { what: 'vim in insert mode' });
    // vim asks the terminal questions as it starts; each answer the page
    // sends is a key to the predictor (one that takes confidence away).
    // Typing starts once they have stopped for a while.
    let keys = -1;
    let since = Date.now();
    await waitFor(async () => {
      const k = (await info(p)).stats.keys;
      if (k !== keys) [keys, since] = [k, Date.now()];
      return Date.now() - since > 800;
    }, { what: 'vim done asking the terminal' });
    const shown = (await info(p)).stats.shown;
    await record(p);
    // One key echoed first: it earns the confidence the Enter took away.
    await p.keyboard.type('h');
    await see(p, /^h$/);
    await p.keyboard.type('ello world');
    await see(p, /^hello world$/);
    assert.equal((await info(p)).stats.shown, shown, JSON.stringify(await info(p)));
    assert.deepEqual(await records(p), []);
  } finally {
    await ctx.close();
  }
});

test('an echo that differs is rolled back', async () => {
  const { ctx, p, id } = await fresh();
  try {
    // readline types Y for x: the screen contradicts the prediction.
    await s.cli('send', id, `bind '"x":"Y"'; echo bound`);
    await see(p, /^bound$/);
    await prompt(p);
    await record(p);
    await p.keyboard.type('x');
    await see(p, /^\$ Y$/);
    await until(p, async () => {
      const i = await info(p);
      return i.stats.wrong + i.stats.late > 0 && i.view.cells.length === 0;
    }, 'the prediction rolled back');
    const drawn = await records(p);
    assert.ok(drawn.some((r) => r.text === 'x'), `x was predicted: ${JSON.stringify(drawn)}`);
    // Rolled back by the echo that contradicts it, not later by its deadline.
    assert.deepEqual(drawn.filter((r) => r.lines.some((l) => l.startsWith('$ Y'))), [], 'x still predicted over the echo Y');
    const st = (await info(p)).stats;
    // Wrong, unless a busy machine held the echo past its deadline.
    assert.equal(st.wrong + st.late, 1, JSON.stringify(st));
    assert.equal(st.confirmed, 0, JSON.stringify(st));
  } finally {
    await ctx.close();
  }
});

test('straight to the server (a round trip under 30 ms) nothing is predicted', async () => {
  // On a loaded machine even a local round trip can measure over 30 ms
  // for a while: the keys typed then may be predicted, rightly. Every
  // round trip the page took while typing is read (it keeps one for 2 s
  // at least); only a run where all were under 30 ms counts.
  for (let attempt = 1; ; attempt++) {
    const { ctx, p } = await fresh({ direct: true });
    try {
      await waitFor(async () => (await info(p)).rtt < 30, { what: 'a measured round trip under 30 ms', timeout: 30000 });
      let most = 0;
      let typing = true;
      const watch = (async () => {
        while (typing) {
          most = Math.max(most, (await info(p)).rtt);
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      await typeLine(p, 'echo direct');
      await see(p, /^direct$/);
      typing = false;
      await watch;
      most = Math.max(most, (await info(p)).rtt);
      const i = await info(p);
      assert.ok(i.stats.keys >= 11, JSON.stringify(i));
      if (most >= 30 && attempt < 3) continue;
      assert.ok(most < 30, `a round trip of ${most} ms while typing, in 3 tries`);
      assert.equal(i.stats.shown, 0, JSON.stringify(i));
      return;
    } finally {
      await ctx.close();
    }
  }
});
