// Accessibility: axe-core finds no serious or critical violation on the
// main page (tabs in every state the bar draws: live, quiet, exited,
// with viewers), the settings dialog and the replay view, in both themes;
// screen-reader mode and a minimum contrast are settings this browser
// keeps; a screen reader is told of a lost connection, an exit and a
// restore.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server, launch, open, ready, waitFor, waitText, newSession, checkA11y, typeLine } from './harness.mjs';

let browser;
let s;
let ids;
before(async () => {
  browser = await launch();
  s = await Server.start();
  const a = await newSession(s, 'build', { command: ['/bin/sh', '-c', 'echo built; sleep 600'] });
  const b = await newSession(s, 'failed', { command: ['/bin/sh', '-c', 'echo oops; exit 3'] });
  await newSession(s, 'idle');
  ids = { a: a.id, b: b.id };
});
after(async () => {
  await browser?.close();
  await s?.stop();
});

for (const theme of ['dark', 'light']) {
  test(`axe-core: the main page and the replay view, ${theme} theme`, async () => {
    const ctx = await browser.newContext({ viewport: { width: 1200, height: 700 }, colorScheme: theme });
    try {
      // A second viewer of the first session, so the bar shows a viewer count.
      const other = await open(ctx, s, { tabs: 3 });
      const p = await open(ctx, s, { tabs: 3 });
      await other.close();
      await waitFor(async () => (await p.evaluate(() => window.__termkeep.tabs())).some((t) => t.badge.startsWith('exited')), { what: 'the failed session to show as exited' });
      await p.locator('.tab .viewers:not([hidden])').first().waitFor();
      await checkA11y(p, `main-${theme}`);
      await p.click('#btn-settings');
      await checkA11y(p, `settings-${theme}`);
      await p.click('#settings-close');
      await p.locator(`.tab[data-id="${ids.b}"]`).click();
      await p.locator('#banner').waitFor({ state: 'visible' });
      await checkA11y(p, `ended-${theme}`);
      await p.evaluate((h) => (location.hash = h), `#replay=${ids.a}`);
      await waitFor(async () => (await p.evaluate(() => document.getElementById('replay').dataset.state)) === 'paused', { what: 'the replay to show' });
      await checkA11y(p, `replay-${theme}`);
    } finally {
      await ctx.close();
    }
  });
}

/** contrastOf is the contrast ratio of the text color of the first row span holding word against the terminal's background. */
const contrastOf = (p, word) =>
  p.evaluate((word) => {
    const lum = (css) => {
      const [r, g, b] = css.match(/\d+(\.\d+)?/g).slice(0, 3).map((v) => {
        const c = Number(v) / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const span = [...document.querySelectorAll('.term-host:not([hidden]) .xterm-rows span')].find((e) => e.textContent.includes(word));
    if (!span) return null;
    const fg = lum(getComputedStyle(span).color);
    const bg = lum(getComputedStyle(document.querySelector('.term-host:not([hidden]) .xterm-viewport')).backgroundColor === 'rgba(0, 0, 0, 0)' ? getComputedStyle(document.body).backgroundColor : getComputedStyle(document.querySelector('.term-host:not([hidden]) .xterm-viewport')).backgroundColor);
    return (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
  }, word);

test('screen-reader mode and the minimum contrast: settings this browser keeps', async () => {
  const s2 = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 650 }, colorScheme: 'dark' });
  try {
    await newSession(s2, 'colors');
    const p = await open(ctx, s2, { tabs: 1 });
    await p.click('.term-host:not([hidden])');
    // Colour 30 (black) on the dark theme: readable by default (4.5:1).
    await typeLine(p, "clear; printf '\\e[30mBLACKTEXT\\e[0m\\n'");
    await waitText(p, /^BLACKTEXT$/);
    await waitFor(async () => (await contrastOf(p, 'BLACKTEXT')) >= 4.5, { what: 'black text at 4.5:1 or more' });
    await p.click('#btn-settings');
    await p.selectOption('#set-contrast', '1');
    await waitFor(async () => (await contrastOf(p, 'BLACKTEXT')) < 2, { what: 'the colors as asked with the minimum off' });
    await p.selectOption('#set-contrast', '7');
    await waitFor(async () => (await contrastOf(p, 'BLACKTEXT')) >= 7, { what: 'black text at 7:1' });

    // Screen-reader mode: xterm.js keeps the rows in an accessibility tree.
    assert.equal(await p.locator('.term-host:not([hidden]) .xterm-accessibility-tree').count(), 0);
    await p.check('#set-sr');
    await p.click('#settings-close');
    await waitFor(async () => /BLACKTEXT/.test((await p.locator('.term-host:not([hidden]) .xterm-accessibility-tree').textContent().catch(() => '')) ?? ''), { what: 'the rows in the accessibility tree' });

    await p.reload();
    await ready(p, 1);
    await waitFor(async () => (await p.locator('.term-host:not([hidden]) .xterm-accessibility-tree').count()) === 1, { what: 'screen-reader mode after a reload' });
    await waitFor(async () => (await contrastOf(p, 'BLACKTEXT')) >= 7, { what: 'the minimum contrast after a reload' });
    await checkA11y(p, 'screen-reader-mode');
    await p.click('#btn-settings');
    assert.equal(await p.isChecked('#set-sr'), true);
    assert.equal(await p.inputValue('#set-contrast'), '7');
  } finally {
    await ctx.close();
    await s2.stop();
  }
});

test('a screen reader is told: reconnecting, an exit, a restore', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 650 } });
  try {
    const made = await newSession(s, 'spoken');
    const p = await open(ctx, s, { tabs: 4 });
    await p.click(`.tab[data-id="${made.id}"]`);
    await ready(p, 4);
    await p.evaluate(() => {
      window.__said = [];
      const r = document.getElementById('announce');
      new MutationObserver((ms) => ms.forEach((m) => m.addedNodes.forEach((n) => window.__said.push(n.textContent)))).observe(r, { childList: true });
    });
    const said = (re, what) => waitFor(async () => (await p.evaluate(() => window.__said)).some((t) => re.test(t)), { what });
    assert.equal(await p.locator('#announce').getAttribute('aria-live'), 'polite');

    await p.evaluate(() => window.__termkeep.drop());
    await said(/^Reconnecting to spoken…/, 'Reconnecting to be said');
    await said(/^Reconnected to spoken\./, 'Reconnected to be said');
    await p.click('.term-host:not([hidden])');
    await typeLine(p, 'exit 3');
    await said(/^spoken exited with status 3\./, 'the exit to be said');
    await p.click('#banner-restore');
    await said(/^spoken restored\./, 'the restore to be said');
    await ready(p, 4);
    const all = await p.evaluate(() => window.__said);
    assert.equal(all.filter((t) => /^Reconnecting/.test(t)).length, 1, `a restored session connecting is no lost connection: ${JSON.stringify(all)}`);
  } finally {
    await ctx.close();
  }
});
