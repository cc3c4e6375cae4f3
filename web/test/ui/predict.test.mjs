// Predictive echo in the page (predictview.ts): the page reaches the
// server through a proxy that delays each chunk of a WebSocket connection
// by 150 ms each way (a 300 ms round trip; plain HTTP passes at once, so
// the page loads quickly), and the setting is auto. Typing at a shell
// prompt shows before its echo; a password prompt, vim and a screen that
// contradicts the prediction never keep a predicted character; straight
// to the server (a round trip under 30 ms) nothing is predicted.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Server, launch, open, ready, typeLine, waitFor, waitText, newSession, screenshot } from './harness.mjs';

const DELAY = 150;

/** delayProxy listens on listen and forwards TCP to port; a connection that asks for a WebSocket has each chunk delayed by DELAY ms, in order, both ways. */
function delayProxy(listen, port) {
  const conns = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    conns.add(client).add(upstream);
    let delayed = null;
    const pipe = (from, to) => {
      let last = 0;
      from.on('data', (b) => {
        if (delayed === null) delayed = /^upgrade:\s*websocket/im.test(b.toString('latin1'));
        if (!delayed) return void to.write(b);
        const at = Math.max(Date.now() + DELAY, last);
        last = at;
        setTimeout(() => to.destroyed || to.write(b), at - Date.now());
      });
      from.on('close', () => setTimeout(() => to.destroy(), delayed ? DELAY : 0));
      from.on('error', () => to.destroy());
    };
    pipe(client, upstream);
    pipe(upstream, client);
  });
  return new Promise((resolve) =>
    server.listen(listen, '127.0.0.1', () =>
      resolve({
        port: server.address().port,
        close: () => {
          for (const c of conns) c.destroy();
          return new Promise((r) => server.close(r));
        },
      }),
    ),
  );
}

let browser, s, proxy, ctx, page;

/** info is the active terminal's predictive echo state (round trip, modes, counts, view). */
const info = (p = page) => p.evaluate(() => window.__termkeep.predict());
/** predicted is the text the page draws over the terminal as predicted. */
const predicted = (p = page) => p.evaluate(() => [...document.querySelectorAll('.term-host:not([hidden]) .tk-predict')].map((e) => e.textContent).join(''));
/** prompt waits for a fresh prompt "$ " on the last line, with nothing typed or predicted on it. */
const prompt = () =>
  waitFor(
    async () => {
      const lines = (await page.evaluate(() => window.__termkeep.screen())).map((l) => l.trimEnd()).filter((l) => l !== '');
      const i = await info();
      return lines[lines.length - 1] === '$' && i.shell === 'prompt' && i.view.cells.length === 0;
    },
    { what: 'a prompt' },
  ).catch(async (e) => {
    throw new Error(`${e.message}: ${JSON.stringify(await info())}\n${(await page.evaluate(() => window.__termkeep.screen())).join('\n')}`);
  });

before(async () => {
  browser = await launch();
  // The proxy's port must be known to the server (an allowed origin), and the server's to the proxy.
  const hold = net.createServer();
  await new Promise((r) => hold.listen(0, '127.0.0.1', r));
  const pport = hold.address().port;
  await new Promise((r) => hold.close(r));
  s = await Server.start({ args: ['--allowed-origin', `http://127.0.0.1:${pport}`] });
  proxy = await delayProxy(pport, s.port);
  // The server's shell with its integration (OSC 133 marks), a plain prompt.
  await newSession(s, 'pred', { command: ['/bin/bash'] });
  ctx = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  page = await ctx.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(`http://127.0.0.1:${proxy.port}/#token=${s.token}`);
  await ready(page, 1);
  await page.locator('.term-host:not([hidden]) .xterm-helper-textarea').focus();
  await typeLine(page, "PS1='$ '; clear");
  await waitFor(async () => (await info()).rtt > 2 * DELAY, { what: 'a measured round trip over 300 ms' });
  await prompt();
});

after(async () => {
  await ctx?.close();
  await proxy?.close();
  await s?.stop();
  await browser?.close();
});

test('typing at a prompt shows before its echo, underlined, and the echo confirms it', async () => {
  const before = (await info()).stats;
  await page.keyboard.type('echo abc');
  // The echo is 300 ms away: what shows now is the prediction.
  const [shown, line] = await page.evaluate(async () => {
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const shown = [...document.querySelectorAll('.term-host:not([hidden]) .tk-predict')].map((e) => e.textContent).join('');
    return [shown, window.__termkeep.screen().find((l) => l.startsWith('$'))];
  });
  assert.equal(shown.length > 0 && !line.includes('echo abc'), true, `predicted ${JSON.stringify(shown)} over ${JSON.stringify(line)}: ${JSON.stringify(await info())}`);
  assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('.tk-predict')).textDecorationLine), 'underline');
  await screenshot(page, 'predict-shown.png');
  await waitText(page, /^\$ echo abc$/);
  await waitFor(async () => (await predicted()) === '', { what: 'the predictions confirmed' });
  const st = (await info()).stats;
  assert.equal(st.wrong - before.wrong, 0, 'nothing rolled back');
  assert.ok(st.confirmed - before.confirmed >= 5, `confirmed ${st.confirmed - before.confirmed} of 8`);
  await page.keyboard.press('Control+U');
  await prompt();
});

test('a password prompt (read -s) never shows a predicted character', async () => {
  await typeLine(page, 'read -s pw; echo got-$pw');
  const shown = (await info()).stats.shown;
  await typeLine(page, 'hunter2'); // typed at once, before the pty's mode is known
  await waitText(page, /^got-hunter2$/);
  assert.equal((await info()).stats.shown, shown, 'a prediction was shown at the password prompt');
  assert.equal(await predicted(), '');
  await prompt();
});

test('vim is never predicted', async () => {
  await typeLine(page, 'vim -u NONE -N');
  await waitFor(async () => (await page.evaluate(() => window.__termkeep.screen())).some((l) => l.startsWith('~')), { what: 'vim' });
  const shown = (await info()).stats.shown;
  await page.keyboard.type('ihello');
  await waitText(page, /^hello$/);
  assert.equal((await info()).stats.shown, shown);
  assert.equal(await predicted(), '');
  await page.keyboard.press('Escape');
  await typeLine(page, ':q!');
  await prompt();
});

test('an echo that differs is rolled back', async () => {
  // readline types Y for x: the screen contradicts the prediction.
  await typeLine(page, `bind '"x":"Y"'`);
  await waitText(page, /^\$ bind/);
  await prompt();
  const before = (await info()).stats;
  await page.keyboard.type('x');
  const i = await info();
  assert.deepEqual(i.view.cells.map((c) => c.char), ['x'], JSON.stringify(i));
  await waitText(page, /^\$ Y$/);
  await waitFor(async () => (await predicted()) === '', { what: 'the prediction rolled back' });
  assert.equal((await info()).stats.wrong - before.wrong, 1);
  await page.keyboard.press('Control+U');
});

test('straight to the server (a round trip under 30 ms) nothing is predicted', async () => {
  const c = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  try {
    const p = await open(c, s, { tabs: 1 });
    // A page still busy loading answers its first ping late on a loaded machine.
    await waitFor(async () => (await info(p)).rtt < 30, { what: 'a measured round trip under 30 ms' });
    await p.locator('.term-host:not([hidden]) .xterm-helper-textarea').focus();
    await typeLine(p, 'echo direct');
    await waitText(p, /^direct$/);
    const i = await info(p);
    assert.equal(i.stats.shown, 0);
    assert.ok(i.stats.keys >= 11);
  } finally {
    await c.close();
  }
});
