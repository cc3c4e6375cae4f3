// Quiet: a tab whose session has printed nothing for a while (the server's
// quiet_since, announced by a session.quiet event) wears a small "quiet"
// badge, and loses it as soon as output flows again.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server, launch, open, ready, typeLine, waitFor, waitText, screen, newSession, screenshot } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

async function quietBadge(page) {
  return page.evaluate(() => {
    const b = document.querySelector('.tab .quiet');
    return b ? { shown: !b.hidden && b.offsetParent !== null, title: b.title } : null;
  });
}

test('a quiet session wears a badge until it prints again', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 }, colorScheme: 'dark' });
  try {
    await newSession(s, 'asker');
    const p = await open(ctx, s, { tabs: 1 });
    await ready(p, 1);
    // The prompt, then nothing: quiet after 2 s, shown within a few more.
    const b = await waitFor(async () => (await quietBadge(p))?.shown && quietBadge(p), { timeout: 10000, what: 'the quiet badge' }).catch(async (e) => {
      const page = await p.evaluate(() => window.__termkeep.tabs());
      throw new Error(`${e.message}\nthe page's tabs: ${JSON.stringify(page)}\nthe server's sessions: ${JSON.stringify(await s.api('GET', '/api/sessions'))}`);
    });
    assert.match(b.title, /quiet since .*waiting for input/);
    await screenshot(p, 'quiet.png');
    // Output flows: the badge goes.
    await p.locator('.xterm-helper-textarea').first().focus();
    await typeLine(p, 'while :; do echo tick; sleep 0.2; done');
    await waitFor(async () => (await quietBadge(p))?.shown === false, { timeout: 5000, what: 'the badge to go' });
    // Interrupt the loop once it runs: a Ctrl-C that reaches bash between
    // reading the line and starting the loop is not the loop's to see.
    await waitText(p, /^tick$/);
    await p.keyboard.press('Control+C');
    await waitFor(async () => (await quietBadge(p))?.shown, { timeout: 10000, what: 'the badge after Ctrl-C' }).catch(async (e) => {
      throw new Error(`${e.message}\nthe screen:\n${(await screen(p)).join('\n')}`);
    });
  } finally {
    await ctx.close();
    await s.stop();
  }
});
