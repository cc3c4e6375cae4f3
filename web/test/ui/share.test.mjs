// Sharing from the page: the owner's Share dialog makes a read-only link
// with a name and an expiry, shows it once with a QR code, warns plainly
// that a writable one gives full shell access, lists who watches (the
// owner, the named link, each one's size and who sets the size) and
// revokes the link, which ends the guest's page. A guest is offered no
// links. Screenshots at phone size (390×844) for a person to read; axe-core
// checks the owner's dialog in both themes and the guest's.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server, launch, open, ready, waitFor, newSession, screenshot, checkA11y } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

/** viewers is the dialog's presence list, a line per viewer. */
async function viewers(page) {
  return page.$$eval('#share .share-viewers li', (lis) => lis.map((li) => li.textContent));
}

test('the owner shares a session from the page; the guest watches until revoked', async () => {
  const s = await Server.start();
  const ownerCtx = await browser.newContext(PHONE);
  const guestCtx = await browser.newContext({ viewport: { width: 800, height: 500 } });
  try {
    await newSession(s, 'work');
    const p = await open(ownerCtx, s, { tabs: 1 });
    await p.click('#btn-share');
    await p.waitForSelector('#share[open]');
    await waitFor(async () => (await viewers(p)).some((l) => /^Owner.*this page/.test(l)), { what: 'the owner in the list' });

    // A writable link is warned about before it is made.
    assert.equal(await p.isVisible('#share-warning'), false);
    await p.check('#share-writable');
    assert.match(await p.textContent('#share-warning'), /full shell access/);
    assert.equal(await p.isVisible('#share-warning'), true);
    await screenshot(p, 'share-writable-phone.png');
    await p.uncheck('#share-writable');

    // A read-only link named phone, for a day (the default).
    await p.fill('#share-name', 'phone');
    await p.click('#share-create');
    await p.waitForSelector('#share-made:not([hidden]) svg.share-qr');
    const url = await p.inputValue('#share-url');
    assert.match(url, /#token=[A-Za-z0-9_-]{43}$/);
    assert.match(await p.textContent('#share-made'), /read-only/);
    await p.waitForSelector('#share .share-links li[data-id]');
    assert.match(await p.textContent('#share .share-links'), /“phone”.*read-only.*expires in 24 h/);
    await screenshot(p, 'share-phone.png');

    // The guest opens it: a read-only page of that one session, offered
    // no links.
    const g = await guestCtx.newPage();
    await g.goto(url);
    await ready(g, 1);
    assert.deepEqual((await g.evaluate(() => window.__termkeep.tabs())).map((t) => t.label), ['work']);
    await g.click('#btn-share');
    await g.waitForSelector('#share[open]');
    assert.equal(await g.isVisible('#share-name'), false, 'a guest is offered a new link');
    assert.equal(await g.isVisible('#share .share-links'), false, 'a guest sees the links');
    await waitFor(async () => (await viewers(g)).some((l) => /A share link — this page/.test(l)), { what: 'the guest in its own list' });
    const refused = await g.evaluate(async () => {
      const cred = JSON.parse(localStorage.getItem('termkeep.credential')).credential;
      const id = window.__termkeep.active();
      const r = await fetch(`/api/sessions/${id}/links`, { headers: { Authorization: `Bearer ${cred}` } });
      return r.status;
    });
    assert.equal(refused, 403);

    // The owner sees the guest, by its link's name, watching at its size.
    const line = await waitFor(async () => (await viewers(p)).find((l) => /Link “phone”/.test(l)), { what: 'the link in the owner\'s list' });
    assert.match(line, /watching · \d+×\d+/);
    assert.match(await p.textContent('#share .hint'), /the size of this page/);
    await screenshot(p, 'share-presence-phone.png');
    // The dialog at its fullest (presence, a link, its QR code) in each
    // theme: the page's colors follow data-theme.
    for (const theme of ['dark', 'light']) {
      await p.evaluate((t) => (document.documentElement.dataset.theme = t), theme);
      await checkA11y(p, `share-${theme}`);
    }
    await checkA11y(g, 'share-guest');

    // Revoked from the list: the guest's page says so.
    await p.click('#share .share-links li[data-id] button');
    await p.waitForSelector('#share .share-links li[data-id]', { state: 'detached' });
    await g.waitForSelector('#fatal:not([hidden])', { timeout: 15000 });
    assert.match(await g.textContent('#fatal-title'), /This link's access ended \(revoked\)/);
    await waitFor(async () => !(await viewers(p)).some((l) => /Link/.test(l)), { what: 'the guest to leave the list' });
  } finally {
    await ownerCtx.close();
    await guestCtx.close();
    await s.stop();
  }
});
