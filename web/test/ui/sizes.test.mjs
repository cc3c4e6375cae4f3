// One size: every page's terminal has the session's size, whichever page
// set it. A desktop and a phone on one session: the one that types (or
// presses "fit to this window") takes the size, the other scales, centres
// or pans, and both show exactly what `termkeep capture` shows, with no
// line wrapped at the wrong column. A read-only link never takes the size
// and never says anything about it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server, launch, open, ready, sleep, typeLine, waitFor, captureEquals, newSession, screenshot, gone } from './harness.mjs';

const DESKTOP = { viewport: { width: 1400, height: 800 } };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
const LINE = '='.repeat(149);

let browser;
let s;
before(async () => {
  browser = await launch();
  s = await Server.start();
});
after(async () => {
  await browser?.close();
  await s?.stop();
});

/** size is the page's terminal's size and how it is drawn. */
const sizing = (p) => p.evaluate(() => window.__termkeep.sizing());

/** sessionSize is the session's size as the server has it. */
async function sessionSize(id) {
  const info = await s.api('GET', `/api/sessions/${id}`);
  return { cols: info.cols, rows: info.rows };
}

/** atSession waits until the page's terminal has the session's size, and the session is not at avoid. */
async function atSession(p, id, { avoid } = {}) {
  let last;
  await (async () => waitFor(
    async () => {
      const want = await sessionSize(id);
      const got = await sizing(p);
      last = { want, got };
      if (avoid && want.cols === avoid.cols && want.rows === avoid.rows) return false;
      return got.cols === want.cols && got.rows === want.rows;
    },
    { what: "the page's terminal at the session's size" },
  ))().catch((e) => {
    e.message += `: ${JSON.stringify(last)}, avoiding ${JSON.stringify(avoid)}`;
    throw e;
  });
  return last.want;
}

/** noWrap asserts that no row of the page's screen runs past the session's width and the page draws inside its box or pans. */
async function drawnWhole(p) {
  const d = await sizing(p);
  assert.ok(d.pan || (d.frame.width <= d.box.width + 1 && d.frame.height <= d.box.height + 1), `the terminal (${JSON.stringify(d)}) is cut off without panning`);
  if (d.pan) assert.ok(d.scroll.width > d.box.width - 1 || d.scroll.height > d.box.height - 1, `panning with nothing to pan: ${JSON.stringify(d)}`);
  return d;
}

test('a desktop and a phone: whoever types or fits has the size; both show the session exactly', async () => {
  const ctxD = await browser.newContext(DESKTOP);
  const ctxP = await browser.newContext(PHONE);
  const made = await newSession(s, 'both');
  try {
    const d = await open(ctxD, s, { tabs: 1 });
    // Nobody held the size: the desktop, the first to come, takes it.
    await waitFor(async () => /· this tab$/.test((await sizing(d)).holder), { what: 'the desktop holding the size' });
    const big = await atSession(d, made.id, { avoid: { cols: made.cols, rows: made.rows } });
    assert.ok(big.cols >= 149, `the desktop's window holds ${big.cols} columns`);
    assert.equal((await sizing(d)).holder, `${big.cols}×${big.rows} · this tab`);

    const ph = await open(ctxP, s, { tabs: 1 });
    // Opening the phone takes nothing: it pans over the desktop's size.
    await sleep(300);
    assert.deepEqual(await sessionSize(made.id), big, 'opening the phone changed the size');
    await atSession(ph, made.id);
    const pd = await drawnWhole(ph);
    assert.ok(pd.pan && pd.font === 9, `the phone pans at 9 px: ${JSON.stringify(pd)}`);
    assert.match((await sizing(ph)).holder, /· Chrome on Linux$/);
    // A one-finger drag pans it.
    const cdp = await ctxP.newCDPSession(ph);
    const touch = (type, x) => cdp.send('Input.dispatchTouchEvent', { type, touchPoints: type === 'touchEnd' ? [] : [{ x, y: 300 }] });
    await touch('touchStart', 300);
    for (const x of [250, 200, 150, 100]) await touch('touchMove', x);
    await touch('touchEnd');
    await waitFor(async () => (await sizing(ph)).scroll.left >= 150, { what: 'the drag to pan the phone' });

    // The phone types: the session takes the phone's size, the desktop follows.
    await ph.click('.term-host:not([hidden])');
    await typeLine(ph, 'tput cols; tput lines');
    const small = await atSession(d, made.id, { avoid: big });
    assert.ok(small.cols < 60, `the phone's size is ${small.cols} columns`);
    await atSession(ph, made.id);
    await waitFor(async () => (await sizing(ph)).holder === `${small.cols}×${small.rows} · this tab`, { what: 'the phone holding the size' });
    await typeLine(ph, `clear; tput cols; printf '%0149d\\n' 0 | tr 0 =; echo phone-$((40+2))`);
    await waitFor(async () => (await s.cli('capture', made.id)).includes('phone-42'), { what: 'the phone\'s line' });
    for (const p of [d, ph]) await captureEquals(p, s, made.id);
    const dd = await drawnWhole(d);
    assert.equal(dd.font, 14, 'the desktop shows the phone size at its own text size');
    assert.equal(dd.pan, false);
    await screenshot(d, 'size-desktop-at-phone.png');

    // The desktop's "fit to this window" takes the size back, and it types.
    await d.click('#btn-fit');
    await atSession(ph, made.id, { avoid: small });
    await atSession(d, made.id);
    await d.click('.term-host:not([hidden])');
    await typeLine(d, `clear; tput cols; printf '%0149d\\n' 0 | tr 0 =; echo desk-$((40+2))`);
    await waitFor(async () => (await s.cli('capture', made.id)).includes('desk-42'), { what: 'the desktop\'s line' });
    for (const p of [d, ph]) {
      const rows = await captureEquals(p, s, made.id);
      assert.ok(rows.includes(LINE), `the 149-column line is one row:\n${rows.join('\n')}`);
      assert.ok(rows.includes(String(big.cols)), `tput says the desktop size ${JSON.stringify(big)}, now ${JSON.stringify(await sessionSize(made.id))}:\n${rows.join('\n')}`);
      await drawnWhole(p);
    }
    await screenshot(d, 'size-desktop-line.png');
    await screenshot(ph, 'size-phone-line.png');

    // vim at the desktop's size: both show its screen.
    await typeLine(d, `printf 'line %s\\n' $(seq 1 60) > ${made.id}.txt; vim -u NONE -N ${made.id}.txt`);
    await waitFor(async () => (await s.cli('capture', made.id)).includes('line 1'), { what: 'vim' });
    for (const p of [d, ph]) await captureEquals(p, s, made.id);
    await screenshot(d, 'size-desktop-vim.png');
    await screenshot(ph, 'size-phone-vim.png');

    // The phone types into vim: vim redraws at the phone's size, on both.
    await ph.click('.term-host:not([hidden])');
    await ph.keyboard.type('G');
    await atSession(d, made.id, { avoid: big });
    for (const p of [d, ph]) await captureEquals(p, s, made.id);
    await ph.keyboard.type(':q!\n');
  } finally {
    await ctxD.close();
    await ctxP.close();
    await gone(s, made);
  }
});

test('a read-only link draws at the session size and never takes it or complains', async () => {
  const made = await newSession(s, 'watched', { cols: 149, rows: 41 });
  const ctx = await browser.newContext({ viewport: { width: 800, height: 500 } });
  try {
    const link = JSON.parse(await s.cli('token', 'create', '--session', 'watched', '--read-only', '--json'));
    const p = await ctx.newPage();
    p.on('pageerror', (e) => console.error('page error:', e.message));
    await p.goto(link.url);
    await ready(p, 1);
    await atSession(p, made.id);
    assert.equal(await p.isVisible('#btn-fit'), false, 'a read-only page offers "fit to this window"');
    for (const vp of [{ width: 700, height: 450 }, { width: 1300, height: 900 }, { width: 600, height: 400 }]) {
      await p.setViewportSize(vp);
      await sleep(150);
    }
    await p.keyboard.press('Alt+Shift+F');
    await sleep(400);
    assert.deepEqual(await sessionSize(made.id), { cols: 149, rows: 41 }, 'the read-only page changed the size');
    assert.deepEqual((await sizing(p)).cols, 149);
    assert.equal(await p.isVisible('#toast'), false, `a toast: ${await p.textContent('#toast')}`);
    await drawnWhole(p);
    // A window a little too small shows the whole session at a smaller text size.
    await p.setViewportSize({ width: 1000, height: 700 });
    await waitFor(async () => {
      const d = await sizing(p);
      return !d.pan && d.font > 9 && d.font < 14 && d.cols === 149;
    }, { what: 'the session scaled down to fit' });
    await drawnWhole(p);
    await screenshot(p, 'size-readonly-scaled.png');
  } finally {
    await ctx.close();
    await gone(s, made);
  }
});

test('the tab holding the size follows its window on a desktop; a phone rotating takes nothing', async () => {
  const made = await newSession(s, 'resized');
  const ctxD = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  const ctxP = await browser.newContext(PHONE);
  try {
    const d = await open(ctxD, s, { tabs: 1 });
    await waitFor(async () => /· this tab$/.test((await sizing(d)).holder), { what: 'the desktop holding the size' });
    const before = await atSession(d, made.id, { avoid: { cols: made.cols, rows: made.rows } });
    await d.setViewportSize({ width: 800, height: 500 });
    const after = await atSession(d, made.id, { avoid: before });
    assert.ok(after.cols < before.cols && after.rows < before.rows, `${JSON.stringify(before)} then ${JSON.stringify(after)}`);
    assert.equal((await sizing(d)).font, 14, 'the holder draws at its own text size');

    const ph = await open(ctxP, s, { tabs: 1 });
    await ph.click('.term-host:not([hidden])');
    await typeLine(ph, 'true');
    const upright = await atSession(d, made.id, { avoid: after });
    await atSession(ph, made.id);
    await ph.setViewportSize({ width: 844, height: 390 });
    await sleep(500);
    assert.deepEqual(await sessionSize(made.id), upright, 'the phone took the size by rotating');
    await atSession(ph, made.id);
    await drawnWhole(ph);
  } finally {
    await ctxD.close();
    await ctxP.close();
    await gone(s, made);
  }
});
