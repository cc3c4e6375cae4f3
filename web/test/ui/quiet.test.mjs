// Quiet: a tab wears a small badge only when it has news: a command that
// finished while the user was on another tab (shell integration's marks),
// not a blank new session, not an idle shell the user has seen, not the
// tab being watched; a phone's list of sessions shows it too. Looking at
// the tab takes the badge away.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server, launch, open, typeLine, waitFor, waitText, sleep, newSession, screenshot, tabs } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/** badges is each tab's quiet badge as shown: its word, or null when hidden. */
async function badges(page) {
  return page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll('.tab')].map((t) => {
        const b = t.querySelector('.quiet');
        const shown = b && !b.hidden && b.offsetParent !== null;
        return [t.querySelector('.tab-name').textContent, shown ? { text: b.textContent, title: b.title } : null];
      }),
    ),
  );
}

test('the quiet badge shows a command finished while away, and nothing else', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 }, colorScheme: 'dark' });
  try {
    await newSession(s, 'blank', { command: ['sleep', '120'] });
    // The server's shell, with its shell integration (OSC 133 marks).
    await newSession(s, 'work', { command: undefined });
    const p = await open(ctx, s, { tabs: 2 });
    await waitFor(async () => (await tabs(p)).every((t) => t.state === 'live'), { what: 'both tabs live' });
    // Past the server's quiet threshold (2 s): a blank screen and an idle
    // prompt the page has shown are no news.
    await sleep(2800);
    assert.deepEqual(await badges(p), { blank: null, work: null }, 'a quiet badge without news');

    // A command in work, then the user goes to another tab before it ends.
    await p.click('.tab[data-id] >> text=work');
    await waitText(p, /\S/);
    await p.locator('.term-host:not([hidden]) .xterm-helper-textarea').focus();
    await typeLine(p, 'sleep 1; echo finished-now');
    await p.click('.tab[data-id] >> text=blank');
    const b = await waitFor(async () => (await badges(p)).work, { timeout: 15000, what: 'work\'s badge' }).catch(async (e) => {
      throw new Error(`${e.message}\nsessions: ${JSON.stringify(await s.api('GET', '/api/sessions'))}`);
    });
    assert.equal(b.text, 'done');
    assert.match(b.title, /finished \(status 0\) while you were away/);
    assert.equal((await badges(p)).blank, null);
    await screenshot(p, 'quiet.png');

    // A phone has no tabs: its list of sessions wears the same badge.
    await p.setViewportSize({ width: 390, height: 700 });
    await p.click('#switcher');
    const row = p.locator('#tab-list [role="option"]', { hasText: 'work' });
    await row.waitFor();
    assert.equal(await row.locator('.quiet').textContent(), 'done');
    assert.match(await row.locator('.quiet').getAttribute('title'), /finished \(status 0\) while you were away/);
    assert.equal(await p.locator('#tab-list [role="option"]', { hasText: 'blank' }).locator('.quiet').count(), 0);
    await p.keyboard.press('Escape');
    await p.locator('#tab-list').waitFor({ state: 'hidden' });
    await p.setViewportSize({ width: 1000, height: 600 });

    // Looking at it is seeing it: the badge goes, and stays gone.
    await p.click('.tab[data-id] >> text=work');
    await waitFor(async () => (await badges(p)).work === null, { timeout: 3000, what: 'the badge to go' });
    await p.click('.tab[data-id] >> text=blank');
    await sleep(1200);
    assert.equal((await badges(p)).work, null, 'the badge came back for a command already seen');
  } finally {
    await ctx.close();
    await s.stop();
  }
});
