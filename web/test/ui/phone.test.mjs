// A phone (390×844, touch): the extra-keys row's keys fit and are at least
// 44 px tall, Ctrl and Alt stay on (double tap) or apply once (tap), the
// row holds keys the user chose; the bar is a compact tab switcher whose
// list goes to any session; long-press selects and Copy copies; a pinch
// changes the terminal's text size; OSC 52 reaches the clipboard. The
// screenshots phone-bar.png and phone-keys.png are the tab bar and the
// row at the phone's size.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server, launch, open, typeLine, waitText, waitFor, sleep, newSession, screenshot, cellPoint, screen, writeArtifact, checkA11y } from './harness.mjs';

let browser;
let s;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/** phone is a phone's page on a server of its own with three sessions (closed by done). */
async function phone({ clipboard = false } = {}) {
  s = await Server.start();
  for (const n of ['front-end', 'api-server', 'logs']) await newSession(s, n);
  const ctx = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, colorScheme: 'dark' });
  if (clipboard) await ctx.grantPermissions(['clipboard-read', 'clipboard-write']);
  const p = await open(ctx, s, { tabs: 3 });
  const done = async () => {
    await ctx.close();
    // A holder still writing its exit must not hide the test's own failure.
    await s.stop().catch((e) => console.error(`cleaning up: ${e.message}`));
  };
  return { ctx, p, done };
}

/** box is an element's rectangle, and whether its text fits in it. */
const boxes = (p, sel) =>
  p.evaluate((sel) => [...document.querySelectorAll(sel)].filter((e) => e.offsetParent).map((e) => {
    const r = e.getBoundingClientRect();
    return { key: e.dataset.key ?? e.id, text: e.textContent, left: r.left, right: r.right, top: r.top, height: r.height, fits: e.scrollWidth <= e.clientWidth + 0.5 };
  }), sel);

test('the extra-keys row: every key fits, 44 px tall, modifiers once or locked, keys of my own', async () => {
  const { ctx, p, done } = await phone();
  try {
    await p.locator('#keys').waitFor({ state: 'visible' });
    const keys = await boxes(p, '#keys button');
    for (const k of keys) {
      assert.ok(k.height >= 44, `${k.key} is ${k.height} px tall`);
      assert.ok(k.fits, `${k.key}'s label "${k.text}" fits in its button`);
    }
    for (let i = 1; i < keys.length; i++) assert.ok(keys[i].left >= keys[i - 1].right - 0.5, `${keys[i - 1].key} and ${keys[i].key} do not overlap`);
    for (const k of ['esc', 'tab', 'ctrl', 'alt', 'left', 'up', 'down', 'right']) {
      const b = keys.find((x) => x.key === k);
      assert.ok(b && b.left >= 0 && b.right <= 390, `${k} is on the screen without scrolling`);
    }
    await screenshot(p, 'phone-keys.png');

    await p.tap('.term-host:not([hidden])');
    await typeLine(p, 'cat -v');
    await sleep(300);
    // A tap applies Ctrl once; a double tap keeps it on until tapped again.
    await p.tap('#keys [data-key="ctrl"]');
    await p.keyboard.type('ab');
    // Two taps within 400 ms; a busy machine may space them further (the
    // second then turns it off), so the pair is tried again.
    for (let i = 0; i < 5; i++) {
      await p.tap('#keys [data-key="ctrl"]');
      await p.tap('#keys [data-key="ctrl"]');
      if (/locked/.test((await p.locator('#keys [data-key="ctrl"]').getAttribute('class')) ?? '')) break;
    }
    assert.equal(await p.locator('#keys [data-key="ctrl"]').getAttribute('aria-pressed'), 'true');
    assert.match(await p.locator('#keys [data-key="ctrl"]').getAttribute('class'), /locked/);
    await p.keyboard.type('ek'); // not ^D: the tty would take it for the end of a line
    await p.tap('#keys [data-key="ctrl"]');
    await p.keyboard.type('f');
    await p.keyboard.press('Enter');
    await screenshot(p, 'phone-keys-typed.png');
    await waitText(p, /^\^Ab\^E\^Kf$/);

    // Keys of my own, chosen in the settings, remembered by this browser.
    await p.tap('#btn-settings');
    await p.locator('#settings').waitFor({ state: 'visible' });
    await p.fill('#set-keys', 'PgUp F5 @ Bogus');
    assert.match(await p.locator('#set-keys-error').textContent(), /Bogus/);
    await p.fill('#set-keys', 'PgUp F5 @');
    // The row itself: hidden, then shown again (automatic: a touch screen).
    await p.selectOption('#set-keys-row', 'off');
    await p.locator('#keys').waitFor({ state: 'hidden' });
    await p.selectOption('#set-keys-row', 'auto');
    await p.locator('#keys').waitFor({ state: 'visible' });
    await p.tap('#settings-close');
    await p.reload();
    await waitFor(() => p.evaluate(() => window.__termkeep?.tabs().length === 3), { what: 'the page again' });
    await p.locator('#keys [data-key="pgup"]').waitFor();
    assert.deepEqual((await boxes(p, '#keys button')).slice(8).map((k) => k.key), ['pgup', 'f5', '@']);
    await p.tap('.term-host:not([hidden])');
    await typeLine(p, 'cat -v');
    await sleep(300);
    await p.tap('#keys [data-key="pgup"]');
    await p.tap('#keys [data-key="f5"]');
    await p.tap('#keys [data-key="@"]');
    await p.keyboard.press('Enter');
    await waitText(p, /^\^\[\[5~\^\[\[15~@$/);
    await p.tap('#keys [data-key="ctrl"]');
    await p.keyboard.type('c');
  } finally {
    await done();
  }
});

test('the bar on a phone: the active name readable, a list goes to any session', async () => {
  const { ctx, p, done } = await phone();
  try {
    const active = await p.evaluate(() => window.__termkeep.active());
    const name = (await p.evaluate(() => window.__termkeep.tabs())).find((t) => t.id === active).label;
    const sw = p.locator('#switcher');
    await sw.waitFor({ state: 'visible' });
    const shown = await p.evaluate(() => {
      const n = document.querySelector('#switcher .switcher-name');
      return { text: n.textContent, fits: n.scrollWidth <= n.clientWidth, width: n.clientWidth };
    });
    assert.equal(shown.text, name);
    assert.ok(shown.fits && shown.width > 40, `the name "${name}" is shown whole (${shown.width} px)`);
    const bar = await boxes(p, '#bar button');
    for (const b of bar) assert.ok(b.height >= 44 || b.key === 'tab-list-close', `${b.key} in the bar is ${b.height} px tall`);
    // Sharing stays a tap away; the row's own toggle is in the settings.
    assert.ok(bar.some((b) => b.key === 'btn-share' && b.right <= 390), 'the Share button is in the bar');
    await screenshot(p, 'phone-bar.png');
    await checkA11y(p, 'phone');
    // Every part of the page is in a landmark, the extra-keys row too
    // (axe's region rule, a best practice the WCAG tags leave out).
    await p.locator('#keys').waitFor({ state: 'visible' });
    const regions = await checkA11y(p, 'phone-region', { rules: ['region'] });
    assert.deepEqual(regions.flatMap((v) => v.nodes.map((n) => n.target)), [], 'content outside every landmark');
    await p.tap('#switcher');
    await p.locator('#tab-list').waitFor({ state: 'visible' });
    const items = await p.locator('#tab-list [role="option"]').allTextContents();
    assert.equal(items.length, 3);
    for (const n of ['front-end', 'api-server', 'logs']) assert.ok(items.some((t) => t.includes(n)), `${n} is in the list`);
    // Who holds the size, and fit to this screen: in the list, not the bar.
    assert.match(await p.locator('#tab-list-size').textContent(), /^\d+×\d+ · this tab$/);
    assert.ok(await p.isVisible('#tab-list-fit'), 'the list offers fit to this screen');
    assert.equal(await p.isVisible('#btn-fit'), false, 'fit to this window squeezes the bar');
    await screenshot(p, 'phone-tab-list.png');
    await checkA11y(p, 'phone-tab-list');
    const target = (await p.evaluate(() => window.__termkeep.tabs())).find((t) => t.id !== active);
    await p.tap(`#tab-list [data-id="${target.id}"]`);
    await p.locator('#tab-list').waitFor({ state: 'hidden' });
    await waitFor(async () => (await p.evaluate(() => window.__termkeep.active())) === target.id, { what: 'the chosen session to be active' });
    assert.equal(await p.locator('#switcher .switcher-name').textContent(), target.label);

    // A swipe to the left across the switcher goes to the next session.
    const order = (await p.evaluate(() => window.__termkeep.tabs())).map((t) => t.id);
    const next = order[(order.indexOf(target.id) + 1) % order.length];
    const cdp = await ctx.newCDPSession(p);
    const b = await sw.boundingBox();
    const y = b.y + b.height / 2;
    await touch(cdp, 'touchStart', [[b.x + b.width - 10, y]]);
    for (let x = b.x + b.width - 20; x >= b.x + 10; x -= 15) await touch(cdp, 'touchMove', [[x, y]]);
    await touch(cdp, 'touchEnd', []);
    await waitFor(async () => (await p.evaluate(() => window.__termkeep.active())) === next, { what: 'a swipe to go to the next session' });
    assert.equal(await p.locator('#tab-list').isVisible(), false, 'a swipe does not open the list');
  } finally {
    await done();
  }
});

/** touch sends raw touch events (a finger per point) through the DevTools protocol. */
async function touch(cdp, type, points) {
  await cdp.send('Input.dispatchTouchEvent', { type, touchPoints: points.map(([x, y], id) => ({ x, y, id })) });
}

/** held waits, the finger down, until the press is long enough to select (however slow the machine). */
const held = (p) => waitFor(() => p.evaluate(() => window.__termkeep.selection() !== ''), { what: 'a long press to select' });

test('touch: long-press selects a word and Copy copies it; a pinch changes the text size; OSC 52 copies', async () => {
  const { ctx, p, done } = await phone({ clipboard: true });
  try {
    const cdp = await ctx.newCDPSession(p);
    await p.tap('.term-host:not([hidden])');
    await typeLine(p, `clear; echo alpha bravo-charlie delta; printf '\\e]52;c;%s\\a' "$(printf 'from-osc52' | base64)"`);
    await p.tap('#clip-session');
    await waitFor(async () => (await p.evaluate(() => navigator.clipboard.readText())) === 'from-osc52', { what: 'the OSC 52 copy' });
    await p.evaluate(() => navigator.clipboard.writeText(''));
    const rows = await screen(p);
    const row = rows.findIndex((l) => l.startsWith('alpha bravo'));
    const at = await cellPoint(p, row, 8);
    await touch(cdp, 'touchStart', [[at.x, at.y]]);
    await held(p);
    await touch(cdp, 'touchEnd', []);
    const copyBtn = p.locator('#copy-selection');
    await copyBtn.waitFor({ state: 'visible' });
    assert.equal(await p.evaluate(() => window.__termkeep.selection()), 'bravo-charlie');
    await p.tap('#copy-selection');
    await waitFor(async () => (await p.evaluate(() => navigator.clipboard.readText())) === 'bravo-charlie', { what: 'Copy to copy the selection' });
    await copyBtn.waitFor({ state: 'hidden' });

    // Long-press, then drag on: the selection grows from the word to the finger.
    const from = await cellPoint(p, row, 2);
    const to = await cellPoint(p, row, 22);
    await touch(cdp, 'touchStart', [[from.x, from.y]]);
    await held(p);
    for (let i = 1; i <= 5; i++) await touch(cdp, 'touchMove', [[from.x + ((to.x - from.x) * i) / 5, from.y]]);
    await touch(cdp, 'touchEnd', []);
    await copyBtn.waitFor({ state: 'visible' });
    assert.equal(await p.evaluate(() => window.__termkeep.selection()), 'alpha bravo-charlie del');

    // Two fingers apart: larger text. The phone holds the session's size
    // (nobody else watches), so the session takes the columns its window
    // holds at that text, as a desktop holder's resized window does; the
    // terminal, re-planned, draws at the new text, whole, neither shrunk
    // nor panning. Together: smaller text, more columns.
    const sizing = () => p.evaluate(() => ({ ...window.__termkeep.sizing(), pref: window.__termkeep.fontSize() }));
    const before = await sizing();
    assert.match(before.holder, /· this tab$/, 'the phone holds the size');
    const mid = await cellPoint(p, 6, 20);
    await touch(cdp, 'touchStart', [[mid.x - 40, mid.y], [mid.x + 40, mid.y]]);
    for (let d = 40; d <= 100; d += 10) await touch(cdp, 'touchMove', [[mid.x - d, mid.y], [mid.x + d, mid.y]]);
    await touch(cdp, 'touchEnd', []);
    await waitFor(async () => (await sizing()).cols < before.cols, { what: 'fewer columns after a pinch out' });
    const big = await sizing();
    assert.ok(big.pref > before.pref, `the text grew from ${before.pref} to ${big.pref}`);
    await waitFor(async () => {
      const z = await sizing();
      return z.font === z.pref && z.cols < before.cols;
    }, { what: 'the terminal drawn at the new text' });
    const drawn = await sizing();
    assert.equal(drawn.pan, false, 'the terminal pans after a pinch');
    assert.ok(drawn.frame.width <= drawn.box.width, `the terminal is wider than its window: ${JSON.stringify(drawn)}`);
    assert.match(drawn.holder, /· this tab$/);
    assert.equal(await p.evaluate(() => Math.round(window.visualViewport.scale * 100)), 100, 'the page itself is not zoomed');
    await screenshot(p, 'phone-pinch.png');
    const bigger = drawn.pref;
    await touch(cdp, 'touchStart', [[mid.x - 100, mid.y], [mid.x + 100, mid.y]]);
    for (let d = 100; d >= 30; d -= 10) await touch(cdp, 'touchMove', [[mid.x - d, mid.y], [mid.x + d, mid.y]]);
    await touch(cdp, 'touchEnd', []);
    await waitFor(async () => (await p.evaluate(() => window.__termkeep.fontSize())) < bigger, { what: 'smaller text after a pinch in' });
    await waitFor(async () => (await sizing()).cols > drawn.cols, { what: 'more columns after a pinch in' });
    const end = await sizing();
    writeArtifact('phone-pinch.txt', `font ${before.pref} (${before.cols} columns) -> ${bigger} (${drawn.cols}) -> ${end.pref} (${end.cols})\n`);
  } finally {
    await done();
  }
});
