// A replay search hit shows its match: a command typed long after its
// prompt was printed is found at the moment it was typed (not when the
// prompt appeared), and the matching text is highlighted on the replayed
// screen.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server, launch, open, waitFor, waitText, sleep, newSession, screenshot } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('a search hit goes to when its text was typed, and highlights it', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1100, height: 700 } });
  try {
    await newSession(s, 'typed', { set_env: ['PS1=prompt$ '] });
    const p = await open(ctx, s, { tabs: 1 });
    await waitText(p, /^prompt\$/);
    // The prompt waits; the command comes later (the log's times are a
    // second apart at most, so the two are told apart).
    await sleep(1500);
    await p.locator('.xterm-helper-textarea').first().focus();
    await p.keyboard.type('echo replay-marker-one', { delay: 15 });
    await p.keyboard.press('Enter');
    await waitText(p, /^replay-marker-one$/);
    await p.keyboard.type('clear; echo later');
    await p.keyboard.press('Enter');
    await waitText(p, /^later$/);

    await p.click('#btn-replay');
    await p.waitForSelector('#replay:not([hidden])');
    await p.fill('#replay-search', 'replay-marker-ONE');
    await p.press('#replay-search', 'Enter');
    await p.locator('.replay-hit').first().waitFor({ timeout: 10000 });
    assert.equal(await p.locator('.replay-hit').count(), 2, 'the typed line and its output');

    // The typed line's hit: the screen shows the command, and it is marked.
    await p.locator('.replay-hit').first().click();
    const shown = await waitFor(
      async () => {
        const r = await p.evaluate(() => ({
          state: document.getElementById('replay').dataset.state,
          screen: window.__termkeep.replayScreen(),
          marked: window.__termkeep.replayMarked?.(),
        }));
        return r.state === 'paused' && r.screen.some((l) => l.includes('prompt$ echo replay-marker-one')) ? r : false;
      },
      { timeout: 10000, what: 'the screen with the typed command' },
    ).catch(async (e) => {
      const screen = await p.evaluate(() => window.__termkeep.replayScreen());
      throw new Error(`${e.message}\n--- replay screen ---\n${(screen ?? []).join('\n')}`);
    });
    const marked = await waitFor(() => p.evaluate(() => window.__termkeep.replayMarked?.()), { timeout: 3000, what: 'the match highlighted' }).catch(() => shown.marked);
    assert.equal(marked, 'replay-marker-one');
    await screenshot(p, 'replay-hit.png');
  } finally {
    await ctx.close();
    await s.stop();
  }
});

test('a search hit shows a screen the terminal showed, not one cut inside a chunk', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1100, height: 700 } });
  try {
    // One write, one chunk of the log: "MARKER-ONE-alpha\r\n". A screen
    // cut at the match's end ("MARKER-ONE" alone) never was.
    await newSession(s, 'chunked', { command: ['/bin/sh', '-c', 'printf "MARKER-ONE-alpha\\n"; exec sleep 300'] });
    const p = await open(ctx, s, { tabs: 1 });
    await waitText(p, /^MARKER-ONE-alpha$/);
    await p.click('#btn-replay');
    await p.waitForSelector('#replay:not([hidden])');
    await p.fill('#replay-search', 'MARKER-ONE');
    await p.press('#replay-search', 'Enter');
    await p.locator('.replay-hit').first().waitFor({ timeout: 10000 });
    await p.locator('.replay-hit').first().click();
    const screen = await waitFor(
      async () => {
        const r = await p.evaluate(() => ({ state: document.getElementById('replay').dataset.state, screen: window.__termkeep.replayScreen() }));
        return r.state === 'paused' && r.screen.some((l) => l.includes('MARKER-ONE')) ? r.screen : false;
      },
      { timeout: 10000, what: 'the screen with the hit' },
    );
    const line = screen.find((l) => l.includes('MARKER-ONE')).trimEnd();
    assert.equal(line, 'MARKER-ONE-alpha', `the replayed screen:\n${screen.join('\n')}`);
  } finally {
    await ctx.close();
    await s.stop();
  }
});
