// Reconnecting: a dropped connection shows the overlay, retries on its own
// and resumes from the page's offset, so the terminal ends up showing
// exactly what `termkeep capture` shows, with no line twice and none lost;
// a page back from the back/forward cache reconnects by itself.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  Server, launch, open, ready, tabs, typeLine, waitText, text, waitFor, sleep, count,
  captureEquals, newSession, screenshot,
} from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/** ticks checks that every "tick N" line from 1 to n is in lines exactly once. */
function assertTicks(lines, n) {
  const seen = new Map();
  for (const l of lines) {
    const m = /^tick (\d+)$/.exec(l);
    if (m) seen.set(m[1], (seen.get(m[1]) ?? 0) + 1);
  }
  for (let i = 1; i <= n; i++) assert.equal(seen.get(String(i)), 1, `tick ${i} is shown once (seen ${seen.get(String(i)) ?? 0} times)`);
}

test('the server dies while output flows: the overlay shows, and the page resumes exactly', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1100, height: 650 }, colorScheme: 'dark' });
  try {
    const made = await newSession(s, 'flow');
    await newSession(s, 'other');
    const p = await open(ctx, s, { tabs: 2 });
    await p.click('.term-host:not([hidden])');
    await typeLine(p, 'for i in $(seq 1 250); do echo "tick $i"; sleep 0.02; done; echo finished-$((6*7))');
    await waitText(p, /^tick 30$/);

    // Cut every connection by killing the server (sessions live on).
    await s.kill('SIGKILL');
    await p.locator('#overlay').waitFor({ state: 'visible', timeout: 5000 });
    assert.match(await p.locator('#overlay').textContent(), /Reconnecting/);
    assert.ok((await tabs(p)).every((t) => t.badge === 'reconnecting'), 'every tab says reconnecting');
    await sleep(1500); // output goes on into the log meanwhile
    await screenshot(p, 'reconnecting.png');

    await s.start(s.port); // the same address, so the page's origin and cookie still hold
    await p.locator('#overlay').waitFor({ state: 'hidden', timeout: 20000 });
    await waitText(p, /^finished-42$/, { timeout: 20000 });
    await captureEquals(p, s, made.id);
    assertTicks(await text(p), 250);
  } finally {
    await ctx.close();
    await s.stop();
  }
});

test('a dropped WebSocket reconnects from its offset; offline pages probe when back online', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  try {
    const made = await newSession(s, 'drops');
    const p = await open(ctx, s, { tabs: 1 });
    await p.click('.term-host:not([hidden])');
    await typeLine(p, 'for i in $(seq 1 200); do echo "tick $i"; sleep 0.015; done; echo finished-$((6*7))');
    await waitText(p, /^tick 10$/);
    // Drop the connection three times while the output flows.
    for (let k = 0; k < 3; k++) {
      await p.evaluate(() => window.__termkeep.drop());
      await sleep(300);
      await ready(p, 1);
    }
    // The browser goes offline and comes back: the page checks its
    // connection at once instead of waiting for a ping.
    await ctx.setOffline(true);
    await sleep(300);
    await ctx.setOffline(false);
    await waitText(p, /^finished-42$/, { timeout: 20000 });
    await captureEquals(p, s, made.id);
    assertTicks(await text(p), 200);
    const offsets = await p.evaluate(() => Object.keys(sessionStorage).filter((k) => k.startsWith('termkeep.offset.')));
    assert.deepEqual(offsets, [`termkeep.offset.${made.id}`], 'the page keeps its offset in sessionStorage');
  } finally {
    await ctx.close();
    await s.stop();
  }
});

test('the notice says which: this device offline, the server not answering, or the connection dropping', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  // Session connections pass through here: cut, each is closed at once
  // while the server answers every other request.
  let cut = false;
  await ctx.routeWebSocket(/\/ws\/sessions\//, (ws) => (cut ? ws.close({ code: 1006 }) : ws.connectToServer()));
  const notice = async (p, what) => {
    await p.locator('#overlay').waitFor({ state: 'visible', timeout: 10000 });
    return waitFor(
      async () => {
        const t = await p.locator('#overlay-detail').textContent();
        return what.test(t) ? t : false;
      },
      { timeout: 10000, what: `the overlay to say ${what}` },
    );
  };
  try {
    await newSession(s, 'notice');
    const p = await open(ctx, s, { tabs: 1 });
    await ready(p, 1);

    await ctx.setOffline(true);
    await p.evaluate(() => window.__termkeep.drop());
    const offline = await notice(p, /device is offline/);
    assert.doesNotMatch(offline, /server/);
    await ctx.setOffline(false);
    await ready(p, 1);

    cut = true;
    await p.evaluate(() => window.__termkeep.drop());
    const link = await notice(p, /server answers/);
    assert.doesNotMatch(link, /offline|does not answer/);
    cut = false;
    await ready(p, 1);

    await s.kill('SIGKILL');
    const dead = await notice(p, /server does not answer/);
    assert.doesNotMatch(dead, /offline|server answers/);
    await screenshot(p, 'reconnect-server-down.png');
    await s.start(s.port);
    await ready(p, 1);
  } finally {
    await ctx.close();
    await s.stop();
  }
});

test('a page back from the back/forward cache reconnects by itself', async () => {
  const s = await Server.start();
  const bf = await launch({ bfcache: true });
  const ctx = await bf.newContext({ viewport: { width: 1000, height: 600 } });
  try {
    const made = await newSession(s, 'bf');
    const p = await open(ctx, s, { tabs: 1 });
    await p.evaluate(() => {
      window.addEventListener('pageshow', (e) => {
        if (e.persisted) sessionStorage.setItem('test.restored', '1');
      });
    });
    await p.click('.term-host:not([hidden])');
    await typeLine(p, 'echo mark-one');
    await waitText(p, /^mark-one$/);
    await p.goto('about:blank');
    await s.cli('send', made.id, 'echo while-away-$((1+1))');
    await p.goBack({ waitUntil: 'commit' });
    await ready(p, 1);
    const restored = await p.evaluate(() => sessionStorage.getItem('test.restored'));
    await waitText(p, /^while-away-2$/);
    await p.click('.term-host:not([hidden])');
    await typeLine(p, 'echo back-$((3+4))');
    await waitText(p, /^back-7$/);
    const lines = await text(p);
    assert.equal(count(lines, /^mark-one$/), 1);
    assert.equal(count(lines, /^while-away-2$/), 1);
    await captureEquals(p, s, made.id);
    const why = await p.evaluate(() => JSON.stringify(performance.getEntriesByType('navigation')[0]?.notRestoredReasons ?? null));
    assert.equal(restored, '1', `the page came back from the back/forward cache (not restored because: ${why})`);
  } finally {
    await ctx.close();
    await bf.close();
    await s.stop();
  }
});
