// Accessibility: axe-core finds no serious or critical violation on the
// main page (tabs in every state the bar draws: live, quiet, exited,
// with viewers) and on the replay view, in both themes.
import { after, before, test } from 'node:test';
import { Server, launch, open, waitFor, newSession, checkA11y } from './harness.mjs';

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
