// Where the keyboard goes: back to the terminal after Restore, a toolbar
// button, a dialog or a rename; along the tabs with the arrow keys; out of
// the terminal with Tab once Ctrl+Shift+M says so; and never to a tab's
// close button by Tab.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server, launch, openLive, gone, tabs, typeLine, waitText, waitFor, newSession, sleep } from './harness.mjs';

let browser;
let s;
before(async () => {
  browser = await launch();
  s = await Server.start();
});
after(async () => {
  await s?.stop();
  await browser?.close();
});

/** focusAt says where the keyboard is: term (the active terminal), tab:<id>, body, or the element's id or tag. */
function focusAt(p) {
  return p.evaluate(() => {
    const a = document.activeElement;
    if (!a || a === document.body) return 'body';
    if (a.closest('.term-host:not([hidden])')) return 'term';
    const tab = a.closest('.tab');
    if (tab) return `tab:${tab.dataset.id}`;
    return a.id || a.tagName.toLowerCase();
  });
}

test('typing right after Restore reaches the new process', async () => {
  const made = await newSession(s, 'restore-focus');
  const { ctx, p } = await openLive(browser, s, 1);
  try {
    await p.click('.term-host:not([hidden])');
    await typeLine(p, 'exit 3');
    await p.locator('#banner').waitFor({ state: 'visible', timeout: 15000 });
    await p.click('#banner-restore');
    // Typed at once, before the new shell has printed its prompt.
    await p.keyboard.type('echo typed-$((40+2))');
    await p.keyboard.press('Enter');
    await waitText(p, /^typed-42$/);
    assert.equal(await focusAt(p), 'term');
  } finally {
    await ctx.close();
    await gone(s, made);
  }
});

test('focus returns to the terminal after toolbar buttons, dialogs and a rename', async () => {
  const made = await newSession(s, 'chrome-focus');
  const { ctx, p } = await openLive(browser, s, 1);
  try {
    await p.click('.term-host:not([hidden])');
    const theme = await p.evaluate(() => document.documentElement.dataset.theme);
    await p.click('#btn-theme');
    assert.equal(await focusAt(p), 'term', 'after the theme button');
    // Space goes to the shell, not to the button again.
    await p.keyboard.type('echo " "sp-$((1+1))');
    await p.keyboard.press('Enter');
    await waitText(p, /^ sp-2$/);
    assert.notEqual(await p.evaluate(() => document.documentElement.dataset.theme), theme, 'the theme toggled back');
    for (const b of ['#btn-font-up', '#btn-font-down', '#btn-keys', '#btn-keys']) {
      await p.click(b);
      assert.equal(await focusAt(p), 'term', `after ${b}`);
    }
    await p.click('#btn-help');
    await p.keyboard.press('Escape');
    await waitFor(async () => (await focusAt(p)) === 'term', { timeout: 2000, what: 'the terminal focused after the help dialog' });

    await p.keyboard.press('Alt+Shift+R');
    await p.locator('.tab-rename').waitFor();
    await p.keyboard.type('renamed');
    await p.keyboard.press('Enter');
    await waitFor(async () => (await tabs(p))[0].label === 'renamed', { what: 'the rename' });
    await waitFor(async () => (await focusAt(p)) === 'term', { timeout: 2000, what: 'the terminal focused after the rename' });
  } finally {
    await ctx.close();
    await gone(s, made);
  }
});

test('arrow keys move along the tabs and keep the focus there; Tab skips close buttons', async () => {
  const a = await newSession(s, 'arrow-a');
  const b = await newSession(s, 'arrow-b');
  const { ctx, p } = await openLive(browser, s, 2);
  try {
    await p.click(`.tab[data-id="${a.id}"]`);
    await p.focus(`.tab[data-id="${a.id}"]`);
    await p.keyboard.press('ArrowRight');
    await waitFor(async () => (await p.evaluate(() => window.__termkeep.active())) === b.id, { what: 'the second tab active' });
    await sleep(100); // past the frame in which activating a tab takes the focus
    assert.equal(await focusAt(p), `tab:${b.id}`, 'the focus stays on the tabs');
    await p.keyboard.press('ArrowLeft');
    await waitFor(async () => (await p.evaluate(() => window.__termkeep.active())) === a.id, { what: 'the first tab active' });
    await sleep(100);
    assert.equal(await focusAt(p), `tab:${a.id}`);
    // Tab from the active tab goes past the close buttons.
    assert.deepEqual(await p.$$eval('.tab-close', (els) => els.map((e) => e.tabIndex)), [-1, -1]);
    await p.keyboard.press('Tab');
    assert.doesNotMatch(await p.evaluate(() => document.activeElement.className), /tab-close/);
    // Delete on a focused tab offers to end its session, as × does.
    await p.focus(`.tab[data-id="${a.id}"]`);
    await p.keyboard.press('Delete');
    await p.locator('#dialog[open]').waitFor({ timeout: 2000 });
    await p.keyboard.press('Escape');
  } finally {
    await ctx.close();
    await gone(s, a);
    await gone(s, b);
  }
});

test('Ctrl+Shift+M lets Tab move the focus out of the terminal, and back', async () => {
  const made = await newSession(s, 'tab-mode');
  const { ctx, p } = await openLive(browser, s, 1);
  try {
    await p.click('.term-host:not([hidden])');
    await p.keyboard.press('Control+Shift+M');
    await p.keyboard.press('Tab');
    assert.notEqual(await focusAt(p), 'term', 'Tab left the terminal');
    await p.click('.term-host:not([hidden])');
    await p.keyboard.press('Control+Shift+M');
    // Tab goes to the shell again: completion of a unique command name.
    await p.keyboard.type('echo tab-$((2+3)) # x');
    await p.keyboard.press('Tab');
    assert.equal(await focusAt(p), 'term', 'Tab stays in the terminal');
    await p.keyboard.press('Enter');
    await waitText(p, /^tab-5$/);
  } finally {
    await ctx.close();
    await gone(s, made);
  }
});
