// Everyday comforts: 10,000 lines of scrollback and search in it, OSC 52
// clipboard writes and copy on select, the title from OSC 0/2, links, text
// size, theme, keyboard shortcuts, and a phone layout with its extra keys.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Server, launch, open, ready, tabs, typeLine, waitText, text, waitFor, sleep, count,
  newSession, screenshot, cellPoint, screen,
} from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('scrollback, search, clipboard, title, links, text size, theme and shortcuts', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 700 }, colorScheme: 'dark' });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write']);
  try {
    const made = await newSession(s, 'comfy');
    const p = await open(ctx, s, { tabs: 1 });
    await p.evaluate(() => {
      window.__opened = [];
      window.open = (u) => {
        window.__opened.push(u);
        return null;
      };
    });
    await p.click('.term-host:not([hidden])');

    // At least 10,000 lines of scrollback.
    await typeLine(p, 'seq 1 12000');
    await waitText(p, /^12000$/);
    const lines = await text(p);
    assert.ok(lines.length >= 10000, `the buffer holds ${lines.length} lines`);
    assert.equal(count(lines, /^2500$/), 1, 'line 2500 of 12000 is still in the scrollback');

    // Search in the scrollback (Ctrl+Shift+F).
    await p.keyboard.press('Control+Shift+F');
    await p.locator('#searchbar').waitFor({ state: 'visible' });
    await p.keyboard.type('2500');
    await waitFor(async () => /of \d+/.test(await p.locator('#search-count').textContent()), { what: 'search results' });
    assert.match(await p.locator('#search-count').textContent(), /^\d+ of \d+$/);
    await p.keyboard.press('Escape');
    await p.locator('#searchbar').waitFor({ state: 'hidden' });

    // OSC 52 sets the clipboard once allowed; OSC 2 the title.
    await typeLine(p, `clear; printf '\\e]52;c;%s\\a' "$(printf 'copied-by-osc52' | base64)"; printf '\\e]2;title-from-osc\\a'; echo see https://example.com/termkeep-link here`);
    await p.click('#clip-once');
    await waitFor(async () => (await p.evaluate(() => navigator.clipboard.readText())) === 'copied-by-osc52', { what: 'the OSC 52 clipboard write' });
    await waitFor(async () => (await p.title()).includes('title-from-osc'), { what: 'the title from OSC 2' });
    assert.match(await p.locator(`.tab[data-id="${made.id}"]`).getAttribute('title'), /title-from-osc/);

    // A link opens in a new tab when clicked.
    const rows = await screen(p);
    const row = rows.findIndex((l) => l.startsWith('see https://'));
    const at = await cellPoint(p, row, 10);
    await p.mouse.move(at.x - 5, at.y);
    await p.mouse.move(at.x, at.y, { steps: 3 });
    await sleep(200);
    await p.mouse.click(at.x, at.y);
    await waitFor(async () => (await p.evaluate(() => window.__opened)).includes('https://example.com/termkeep-link'), { what: 'the link to open' });

    // Selecting copies (double-click selects a word).
    const word = await cellPoint(p, row, 0);
    await p.mouse.dblclick(word.x, word.y);
    await waitFor(async () => (await p.evaluate(() => navigator.clipboard.readText())) === 'see', { what: 'copy on select' });

    // Ctrl+Shift+V pastes.
    await p.evaluate(() => navigator.clipboard.writeText('echo pasted-$((5*5))'));
    await p.click('.term-host:not([hidden])');
    await p.keyboard.press('Control+Shift+KeyV');
    await waitText(p, /# echo pasted-\$\(\(5\*5\)\)$/);
    await p.keyboard.press('Enter');
    await waitText(p, /^pasted-25$/);

    // Text size: Ctrl+= makes it larger (fewer columns), Ctrl+0 resets it.
    const before = await p.evaluate(() => window.__termkeep.size());
    await p.click('.term-host:not([hidden])');
    await p.keyboard.press('Control+Equal');
    await p.keyboard.press('Control+Equal');
    await waitFor(async () => (await p.evaluate(() => window.__termkeep.size())).cols < before.cols, { what: 'fewer columns' });
    await waitFor(async () => (await s.api('GET', `/api/sessions/${made.id}`)).cols < before.cols, { what: 'the session to follow the size' });
    await p.keyboard.press('Control+Digit0');
    await waitFor(async () => (await p.evaluate(() => window.__termkeep.size())).cols === before.cols, { what: 'the default size again' });
    await waitFor(async () => (await s.api('GET', `/api/sessions/${made.id}`)).cols === before.cols, { what: 'the session to follow back' });

    // Theme.
    assert.equal(await p.evaluate(() => document.documentElement.dataset.theme), 'dark');
    await p.click('#btn-theme');
    assert.equal(await p.evaluate(() => document.documentElement.dataset.theme), 'light');
    await p.click('#btn-theme');

    // Shortcuts: Alt+Shift+T makes a session, Alt+1 goes back to the first,
    // Alt+Shift+→ to the next.
    await p.click('.term-host:not([hidden])');
    await p.keyboard.press('Alt+Shift+KeyT');
    await waitFor(async () => (await tabs(p)).length === 2, { what: 'a new session' });
    const second = (await tabs(p))[1].id;
    await waitFor(async () => (await p.evaluate(() => window.__termkeep.active())) === second, { what: 'the new tab to be active' });
    await ready(p, 2);
    await p.keyboard.press('Alt+Digit1');
    await waitFor(async () => (await p.evaluate(() => window.__termkeep.active())) === made.id, { what: 'Alt+1' });
    // Typing at once after the switch reaches the new tab, and only it,
    // however late the next frame comes (a busy machine).
    await p.evaluate(() => {
      const raf = window.requestAnimationFrame.bind(window);
      window.__raf = raf;
      window.requestAnimationFrame = (cb) => raf(() => setTimeout(() => raf(cb), 1000));
    });
    await p.keyboard.press('Alt+Shift+ArrowRight');
    await typeLine(p, 'echo in-second');
    await p.evaluate(() => (window.requestAnimationFrame = window.__raf));
    await waitFor(async () => (await p.evaluate(() => window.__termkeep.active())) === second, { what: 'Alt+Shift+Right' });
    await waitText(p, /^in-second$/, { id: second });
    assert.equal(count(await text(p, made.id), /^in-second$/), 0);
    await p.keyboard.press('Alt+Shift+PageUp');
    await waitFor(async () => (await tabs(p))[0].id === second, { what: 'Alt+Shift+PageUp to move the tab' });
    await typeLine(p, 'echo still-second');
    await waitText(p, /^still-second$/, { id: second });
    assert.equal(count(await text(p, made.id), /^still-second$/), 0);
  } finally {
    await ctx.close();
    await s.stop();
  }
});

test('on a phone: a compact bar and the extra-keys row', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({
    viewport: { width: 390, height: 760 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    colorScheme: 'dark',
  });
  try {
    await newSession(s, 'phone');
    await newSession(s, 'laptop');
    const p = await open(ctx, s, { tabs: 2 });
    await p.locator('#keys').waitFor({ state: 'visible' });
    // The terminal is fitted once the page has laid out (a frame or two
    // after the row shows on a busy machine).
    let size;
    await waitFor(async () => {
      size = await p.evaluate(() => window.__termkeep.size());
      return size.cols >= 30 && size.cols <= 60;
    }, { what: 'the terminal to fit the phone' }).catch(() => {});
    assert.ok(size.cols >= 30 && size.cols <= 60, `the terminal fits the phone (${size.cols} columns)`);
    await p.tap('.term-host:not([hidden])');
    await typeLine(p, 'echo ready; sleep 100');
    await waitText(p, /^ready$/);
    // Ctrl from the row, then c: the shell gets ^C.
    await p.tap('#keys [data-key="ctrl"]');
    await p.keyboard.type('c');
    await typeLine(p, 'echo interrupted-$((1+1))');
    await waitText(p, /^interrupted-2$/);
    // Up arrow from the row recalls the last command.
    await p.tap('#keys [data-key="up"]');
    await p.keyboard.press('Enter');
    await waitFor(async () => count(await text(p), /^interrupted-2$/) === 2, { what: 'the recalled command to run' });
    await screenshot(p, 'phone.png');
  } finally {
    await ctx.close();
    await s.stop();
  }
});

test('the cursor blinks for 10 s after the terminal last changed, then stays lit; a key makes it blink again', async (t) => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 900, height: 500 } });
  try {
    await newSession(s, 'blink');
    const p = await open(ctx, s, { tabs: 1 });
    if ((await p.evaluate(() => window.__termkeep.renderer())) !== 'dom') return t.skip('the DOM renderer blinks by CSS; WebGL by a timer of xterm.js');
    await p.click('.term-host:not([hidden])');
    await waitFor(async () => (await screen(p)).some((l) => /[$#]$/.test(l.trimEnd())), { what: 'the prompt' });
    // The cursor's animation, and its colour now and once the blink is over.
    const blink = (finish) =>
      p.evaluate((finish) => {
        const c = document.querySelector('.term-host:not([hidden]) .xterm-rows .xterm-cursor');
        const a = c?.getAnimations()[0];
        if (!a) return { none: true, lit: c && getComputedStyle(c).backgroundColor };
        const t = a.effect.getComputedTiming();
        const r = { iterations: t.iterations, end: t.endTime, at: a.currentTime, state: a.playState };
        if (finish) {
          a.currentTime = 0;
          r.lit = getComputedStyle(c).backgroundColor;
          a.finish();
          r.after = getComputedStyle(c).backgroundColor;
          r.left = c.getAnimations().length;
        }
        return r;
      }, finish);
    const b = await blink(true);
    assert.equal(b.iterations, 10, `the blink is not limited: ${JSON.stringify(b)}`);
    assert.equal(b.end, 10000, JSON.stringify(b));
    assert.equal(b.left, 0, `still animated once over: ${JSON.stringify(b)}`);
    assert.equal(b.after, b.lit, `not lit once the blink is over: ${JSON.stringify(b)}`);
    assert.notEqual(b.after, 'rgba(0, 0, 0, 0)', JSON.stringify(b));
    assert.ok((await blink(false)).none, 'a blink that is over starts again by itself');
    await p.keyboard.type('x');
    await waitFor(async () => (await screen(p)).some((l) => /[$#] x$/.test(l.trimEnd())), { what: 'the echo' });
    // The buffer has the echo before the frame that draws it.
    let again;
    await waitFor(async () => (again = await blink(false)).state === 'running', { what: 'the cursor blinking again', timeout: 5000 }).catch(() => {
      assert.fail(`a key did not make it blink again: ${JSON.stringify(again)}`);
    });
    assert.ok(again.at < 5000, `a blink begun before the key: ${JSON.stringify(again)}`);
  } finally {
    await ctx.close();
    await s.stop();
  }
});
