// Two pages on one session: what one types shows in both, and each tab
// counts the viewers attached.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server, launch, open, ready, sleep, tabs, typeLine, waitText, waitFor, captureEquals, newSession } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('two pages on one session: typing in one shows in both', async () => {
  const s = await Server.start();
  // Two contexts: two devices, each with its own storage (and so its own sign-in).
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

test('a share link shows its session and offers no New session', async () => {
  const s = await Server.start();
  const ctxLink = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  const ctxOwner = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  try {
    const made = await newSession(s, 'shared');
    await newSession(s, 'private');
    // A link that may type, but reaches one session: creating one is 403.
    const link = JSON.parse(await s.cli('token', 'create', '--session', 'shared', '--json'));
    const page = await ctxLink.newPage();
    page.on('pageerror', (e) => console.error('page error:', e.message));
    await page.goto(link.url);
    await ready(page, 1);
    assert.deepEqual((await tabs(page)).map((t) => t.id), [made.id]);
    assert.equal(await page.isVisible('#new-tab'), false, 'the New session button shows on a share link');
    assert.equal(await page.$eval('#empty-new', (el) => el.hidden), true);
    // Its shortcut goes to the terminal instead.
    await page.click('.term-host:not([hidden])');
    await page.keyboard.press('Alt+Shift+T');
    await sleep(500);
    assert.equal((await tabs(page)).length, 1);
    assert.equal((await s.api('GET', '/api/sessions')).length, 2);

    const owner = await open(ctxOwner, s, { tabs: 2 });
    assert.equal(await owner.isVisible('#new-tab'), true, 'the owner has no New session button');
  } finally {
    await ctxLink.close();
    await ctxOwner.close();
    await s.stop();
  }
});
