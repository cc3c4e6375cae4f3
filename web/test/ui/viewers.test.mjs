// Two pages on one session: what one types shows in both, and each tab
// counts the viewers attached.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server, launch, open, tabs, typeLine, waitText, waitFor, captureEquals, newSession } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('two pages on one session: typing in one shows in both', async () => {
  const s = await Server.start();
  // Two contexts: two devices, each with its own cookie and storage.
  const ctxA = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  const ctxB = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  try {
    const made = await newSession(s, 'shared');
    const a = await open(ctxA, s, { tabs: 1 });
    const b = await open(ctxB, s, { tabs: 1 });
    for (const p of [a, b]) {
      await waitFor(async () => (await tabs(p))[0].viewers === 2, { what: 'two viewers on the tab' });
    }
    await a.click('.term-host:not([hidden])');
    await typeLine(a, 'echo from-a-$((20+1))');
    for (const p of [a, b]) await waitText(p, /^from-a-21$/);
    await b.click('.term-host:not([hidden])');
    await typeLine(b, 'echo from-b-$((20+2))');
    for (const p of [a, b]) await waitText(p, /^from-b-22$/);
    await captureEquals(a, s, made.id);
    await captureEquals(b, s, made.id);

    await b.close();
    await waitFor(async () => (await tabs(a))[0].viewers === 1, { what: 'the count to drop when a page leaves' });
    assert.equal((await s.api('GET', `/api/sessions/${made.id}`)).state, 'running');
  } finally {
    await ctxA.close();
    await ctxB.close();
    await s.stop();
  }
});
