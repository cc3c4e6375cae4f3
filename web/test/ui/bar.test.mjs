// The tab bar on a desktop: with five tabs every tab's × is where a click
// lands on it (none lies under the + beside the tabs), and a RECONNECTING
// badge gives way to the name instead of squeezing it to "b…". Who holds
// the session's size is said in the bar where there is room, and gives
// way to the tabs where there is not.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server, launch, open, waitFor, newSession, screenshot } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/** names is each tab's name, its width, and whether it is shown whole. */
const names = (p) =>
  p.evaluate(() => [...document.querySelectorAll('.tab .tab-name')].map((n) => ({ name: n.textContent, width: n.clientWidth, whole: n.scrollWidth <= n.clientWidth })));

/** wholeWhileReconnecting cuts the page's connections (the server dies) and checks every name is still whole. */
async function wholeWhileReconnecting(p, s, shot) {
  await s.kill('SIGKILL');
  // Background tabs may still be connecting for the first time (never
  // "reconnecting"): their dot says so as well.
  await waitFor(() => p.evaluate(() => window.__termkeep.tabs().find((t) => t.id === window.__termkeep.active())?.badge === 'reconnecting'), { what: 'the active tab to reconnect' });
  await screenshot(p, shot);
  for (const n of await names(p)) assert.ok(n.whole, `reconnecting, ${n.name} is shown whole (${n.width} px)`);
}

test('five tabs: each × is clickable, each name whole, reconnecting too', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 700 }, colorScheme: 'dark' });
  try {
    const want = ['backend', 'front-end', 'db-store', 'logs', 'worker'];
    for (const n of want) await newSession(s, n);
    const p = await open(ctx, s, { tabs: 5 });
    await screenshot(p, 'bar-five.png');
    const closes = await p.evaluate(() =>
      [...document.querySelectorAll('.tab')].map((t) => {
        const c = t.querySelector('.tab-close').getBoundingClientRect();
        const at = document.elementFromPoint(c.x + c.width / 2, c.y + c.height / 2);
        return { name: t.querySelector('.tab-name').textContent, hit: !!at?.closest('.tab-close') && t.contains(at) };
      }),
    );
    for (const c of closes) assert.ok(c.hit, `${c.name}'s × is not covered`);
    for (const n of await names(p)) assert.ok(n.whole, `${n.name} is shown whole (${n.width} px)`);

    await wholeWhileReconnecting(p, s, 'bar-reconnecting.png');
  } finally {
    await ctx.close();
    await s.stop();
  }
});

test('a long name stays whole while its tab reconnects', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 }, colorScheme: 'light' });
  try {
    await newSession(s, 'backend-api-server');
    await newSession(s, 'db');
    const p = await open(ctx, s, { tabs: 2 });
    for (const n of await names(p)) assert.ok(n.whole, `${n.name} is shown whole (${n.width} px)`);
    // With room, the bar says who holds the size, whole.
    await waitFor(() => p.evaluate(() => /· this tab$/.test(document.querySelector('#size-holder').textContent)), { what: 'the size holder in the bar' });
    const held = await p.evaluate(() => {
      const el = document.querySelector('#size-holder');
      return { text: el.innerText, whole: el.scrollWidth <= el.clientWidth && [...el.children].every((c) => c.scrollWidth <= c.clientWidth) };
    });
    assert.match(held.text, /^\d+×\d+ · this tab$/, 'the size holder says its size and who holds it');
    assert.ok(held.whole, `the size holder is shown whole: ${held.text}`);
    await screenshot(p, 'bar-size-holder.png');
    await wholeWhileReconnecting(p, s, 'bar-reconnecting-long.png');
  } finally {
    await ctx.close();
    await s.stop();
  }
});
