// Hostile clipboards, both ways. A clipboard holding the bracketed-paste
// end mark (ESC [201~) and a command after it, pasted into bash 5.2 with
// bracketed paste on, runs nothing: the page pastes it sanitized. And a
// program's OSC 52 clipboard write never reaches a share link's page, and
// the owner's page asks before applying one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, launch, open, ready, newSession, sleep, text, typeLine, waitFor, waitText } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/**
 * promptAfter waits for the prompt below the last line matching re, which
 * bash draws once it has turned bracketed paste on again: pasted before
 * that, a line runs, as in any terminal.
 */
async function promptAfter(p, re) {
  await waitFor(async () => {
    const l = await text(p);
    const i = l.findLastIndex((x) => re.test(x));
    return i >= 0 && l.slice(i + 1).some((x) => /[#$] ?$/.test(x));
  }, { what: `the prompt after ${re}` });
}

test('a pasted ESC [201~ ends no paste: the command after it never runs', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write']);
  const marks = [join(tmpdir(), `tk-paste-a-${process.pid}`), join(tmpdir(), `tk-paste-b-${process.pid}`)];
  for (const m of marks) rmSync(m, { force: true });
  try {
    await newSession(s, 'pasted');
    const p = await open(ctx, s, { tabs: 1 });
    await p.click('.term-host:not([hidden])');
    // bash 5.2 turns bracketed paste on at its prompt.
    await typeLine(p, `echo "$BASH_VERSION" "$(bind -v | grep bracketed)"`);
    await waitText(p, /^5\.[2-9].*enable-bracketed-paste on$/);
    await promptAfter(p, /enable-bracketed-paste on$/);

    // Ctrl+Shift+V, the page's own paste.
    await p.evaluate((m) => navigator.clipboard.writeText(`echo one\x1b[201~; touch ${m}\r`), marks[0]);
    await p.keyboard.press('Control+Shift+KeyV');
    await waitText(p, new RegExp(`echo one; touch ${marks[0]}$`));
    // Ctrl+C, and back at a prompt that takes bracketed pastes again (bash
    // turns them off between lines, where a newline would run a line).
    await p.keyboard.press('Control+KeyC');
    await typeLine(p, 'echo ready-$((3*4))');
    await waitText(p, /^ready-12$/);
    // The prompt after it, which bash draws once it has turned bracketed
    // paste on again: pasted before that, the line runs, as in any
    // terminal.
    await promptAfter(p, /^ready-12$/);
    // The browser's paste (Ctrl+V, its menu): a paste event on the
    // terminal's text area, as the browser sends it.
    await p.evaluate((m) => {
      const dt = new DataTransfer();
      dt.setData('text/plain', `echo two\x1b[201~; touch ${m}\r`);
      document.querySelector('.term-host:not([hidden]) textarea').dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    }, marks[1]);
    await waitText(p, new RegExp(`echo two; touch ${marks[1]}$`));
    await p.keyboard.press('Control+KeyC');
    // Let bash act on whatever it was given before looking.
    await typeLine(p, 'echo settled-$((6*7))');
    await waitText(p, /^settled-42$/);
    for (const m of marks) assert.equal(existsSync(m), false, `the pasted command ran: ${m} exists`);
  } finally {
    for (const m of marks) rmSync(m, { force: true });
    await ctx.close();
    await s.stop();
  }
});

test('OSC 52: a share link\'s page keeps its clipboard; the owner\'s page asks', async () => {
  const s = await Server.start();
  const owner = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  const guest = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  await owner.grantPermissions(['clipboard-read', 'clipboard-write']);
  await guest.grantPermissions(['clipboard-read', 'clipboard-write']);
  try {
    const made = await newSession(s, 'shared');
    const link = JSON.parse(await s.cli('token', 'create', '--read-only', '--session', made.id, '--json'));
    const g = await guest.newPage();
    g.on('pageerror', (e) => console.error('guest page error:', e.message));
    await g.goto(link.url);
    await ready(g, 1);
    const p = await open(owner, s, { tabs: 1 });
    await p.click('.term-host:not([hidden])');
    await g.evaluate(() => navigator.clipboard.writeText('guest-kept'));
    const ownerBefore = await p.evaluate(() => navigator.clipboard.readText());

    await typeLine(p, `printf '\\e]52;c;%s\\a' "$(printf 'set-by-osc52' | base64)"; echo osc-$((2*21))-done`);
    await waitText(p, /^osc-42-done$/);
    await waitText(g, /^osc-42-done$/);
    await p.locator('#clip-ask[open]').waitFor();
    await sleep(300);
    assert.equal(await g.evaluate(() => navigator.clipboard.readText()), 'guest-kept', 'the guest page\'s clipboard changed');
    assert.equal(await g.locator('#clip-ask[open]').count(), 0, 'the guest page asked');
    assert.match(await p.locator('#clip-ask-text').textContent(), /12 characters/);
    assert.equal(await p.evaluate(() => navigator.clipboard.readText()), ownerBefore, 'the owner\'s clipboard changed before the answer');

    // Allow once applies it, and the next write asks again.
    await p.click('#clip-once');
    await waitFor(async () => (await p.evaluate(() => navigator.clipboard.readText())) === 'set-by-osc52', { what: 'the allowed write' });
    await p.click('.term-host:not([hidden])');
    await typeLine(p, `printf '\\e]52;c;%s\\a' "$(printf 'second' | base64)"`);
    await p.locator('#clip-ask[open]').waitFor();
    await p.click('#clip-deny');
    await sleep(300);
    assert.equal(await p.evaluate(() => navigator.clipboard.readText()), 'set-by-osc52', 'a denied write was applied');

    // A page that opens later sees the writes in what it catches up on:
    // it applies none and asks nothing.
    const late = await open(owner, s, { tabs: 1 });
    await waitText(late, /^osc-42-done$/);
    await sleep(500);
    assert.equal(await late.locator('#clip-ask[open]').count(), 0, 'a caught-up write asked');
  } finally {
    await owner.close();
    await guest.close();
    await s.stop();
  }
});
