// A page that falls behind a burst is skipped to the present with a
// snapshot that keeps what it drew and adds the lines it missed: after
// `seq 1 150000` it scrolls back through them, up to its scrollback limit
// (before, it had the screen and no history at all).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server, launch, open, text, typeLine, waitFor, waitText, newSession } from './harness.mjs';

const SCROLLBACK = 10000; // session.ts

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('a page open through seq 1 150000 keeps the history the resync replaced', async () => {
  // A small viewer queue: the burst is many queues long.
  const s = await Server.start({ args: ['--viewer-queue', '65536'] });
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  try {
    const made = await newSession(s, 'burst');
    const p = await open(ctx, s, { tabs: 1 });
    await p.click('.term-host:not([hidden])');
    // The page stops acking what it draws while the burst runs, as a page
    // far slower than the burst would: the server sends it a queue beyond
    // its last ack, judges it slow, and resyncs it (however fast the
    // machine draws).
    await p.evaluate(() => window.__termkeep.holdAcks(true));
    await typeLine(p, 'seq 1 150000; echo burst-$((2+3))');
    try {
      await waitFor(async () => (await s.cli('capture', made.id)).includes('burst-5'), { timeout: 30000, what: 'the burst to end' });
      await waitFor(async () => (await s.api('GET', `/api/sessions/${made.id}`)).resyncs >= 1, { timeout: 15000, what: 'the page to be resynced' });
    } finally {
      await p.evaluate(() => window.__termkeep.holdAcks(false));
    }
    await waitText(p, /^burst-5$/, { timeout: 30000 });
    const info = await s.api('GET', `/api/sessions/${made.id}`);

    // The lines above the last one are the burst's, one after another, as
    // far back as the page's scrollback goes.
    const lines = await text(p);
    const last = lines.lastIndexOf('150000');
    assert.ok(last > 0, "the burst's last line is in the buffer");
    let n = 0;
    while (last - n - 1 >= 0 && lines[last - n - 1] === String(150000 - n - 1)) n++;
    console.log(`history after the resync: ${lines.length} lines, the burst's last ${n + 1} in order; resyncs ${info.resyncs}`);
    assert.ok(n + 1 >= SCROLLBACK - 50, `only ${n + 1} of the burst's lines in order above its end (buffer ${lines.length}); line ${last - n - 1}: ${JSON.stringify(lines[last - n - 1])}`);

    // Scrolled to the top, the page shows the oldest of them.
    const top = await p.evaluate(() => window.__termkeep.scrollTop());
    assert.ok(Number(top[0]) > 0 && Number(top[0]) <= 150000 - SCROLLBACK + 100, `the top of the history: ${JSON.stringify(top.slice(0, 3))}`);
  } finally {
    await ctx.close();
    await s.stop();
  }
});
