// A share link that is revoked says so: the guest's page stops retrying
// and shows that its access ended, never the "Reconnecting…" card, and
// never the owner's advice about Authorization headers and token files.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server, launch, ready, waitFor, newSession, sleep, screenshot } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('a revoked share link says its access ended and stops retrying', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  try {
    await newSession(s, 'shared');
    const link = JSON.parse(await s.cli('token', 'create', '--session', 'shared', '--read-only', '--name', 'guest', '--json'));
    const page = await ctx.newPage();
    page.on('pageerror', (e) => console.error('page error:', e.message));
    await page.goto(`${s.url}#token=${link.secret}`);
    await ready(page, 1);

    let calls = 0;
    page.on('request', (r) => {
      if (/\/(api|ws)\//.test(new URL(r.url()).pathname)) calls++;
    });
    await s.cli('token', 'revoke', link.id);

    await page.waitForSelector('#fatal:not([hidden])', { timeout: 15000 });
    assert.match(await page.textContent('#fatal-title'), /This link's access ended \(revoked\)/);
    await sleep(300);
    const shown = await page.evaluate(() => {
      const visible = (el) => el && !el.hidden && el.offsetParent !== null && getComputedStyle(el).visibility !== 'hidden';
      return { overlay: visible(document.getElementById('overlay')), text: document.body.innerText };
    });
    assert.equal(shown.overlay, false, 'the Reconnecting card is still shown');
    assert.doesNotMatch(shown.text, /Reconnecting|Bearer|token file/, 'the guest is shown the owner\'s advice');
    await screenshot(page, 'revoked.png');

    // It stops: nothing more is asked of the server.
    const before = calls;
    await sleep(2500); // the page's first retries come within a second
    assert.equal(calls, before, 'the page went on retrying');
  } finally {
    await ctx.close();
    await s.stop();
  }
});
