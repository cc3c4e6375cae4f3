// What the page says of a session that is not live: an ended tab counts no
// viewers, a reconnecting page does not count itself, typing into an ended
// session says so, and a holder killed by hand is named in words (not as
// a reboot, and without byte offsets).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Server, launch, openLive, gone, tabs, typeLine, waitText, text, waitFor, newSession, sleep } from './harness.mjs';

let browser;
let s;
before(async () => {
  browser = await launch();
  s = await Server.start();
});
after(async () => {
  await s?.stop();
  await browser?.close();
});

test('an ended tab shows no viewer count, and typing into it says it has ended', async () => {
  const made = await newSession(s, 'ends');
  const { ctx, p } = await openLive(browser, s, 1);
  try {
    assert.equal(await p.isVisible('.tab .viewers'), true, 'a live tab shows its viewers');
    await p.click('.term-host:not([hidden])');
    await typeLine(p, 'exit 3');
    await waitFor(async () => (await tabs(p))[0].badge === 'exited 3', { what: 'the tab to say exited 3' });
    assert.equal(await p.isVisible('.tab .viewers'), false, 'an ended tab shows "0" viewers');
    await p.click('.term-host:not([hidden])');
    await p.keyboard.type('ls');
    await p.locator('#toast').waitFor({ state: 'visible', timeout: 2000 });
    assert.match(await p.locator('#toast').textContent(), /exited.*Restore/);
  } finally {
    await ctx.close();
    await gone(s, made);
  }
});

test('a reconnecting page does not count itself as a viewer', async () => {
  const made = await newSession(s, 'counted');
  const { ctx, p } = await openLive(browser, s, 1);
  try {
    await waitFor(async () => (await tabs(p))[0].viewers === 1, { what: 'one viewer' });
    // The server cannot be reached from now on (its list neither).
    await p.route(/\/api\//, (r) => r.abort('connectionrefused'));
    await p.routeWebSocket(/\/ws\/sessions\//, (ws) => ws.close({ code: 1011, reason: 'refused by the test' }));
    await p.evaluate(() => window.__termkeep.drop());
    await waitFor(async () => (await tabs(p))[0].state === 'reconnecting', { what: 'reconnecting' });
    await sleep(300);
    const t = (await tabs(p))[0];
    assert.equal(t.state, 'reconnecting');
    assert.equal(t.viewers, 0, 'the page counts itself while it is not attached');
    assert.equal(await p.isVisible('.tab .viewers'), false);
  } finally {
    await ctx.close();
    await gone(s, made);
  }
});

test('a list the server answered before the page dropped does not count the page', async () => {
  const made = await newSession(s, 'stale');
  const { ctx, p } = await openLive(browser, s, 1);
  let other;
  try {
    await waitFor(async () => (await tabs(p))[0].viewers === 1, { what: 'one viewer' });
    // The first list that holds the session made next is answered by the
    // server now, while it counts the page, and reaches the page only once
    // the page has dropped; the server cannot be reached after it. A list
    // the page asks for before that (an event, its periodic look) passes.
    let release;
    const held = new Promise((r) => (release = r));
    let answered = false;
    let taken = false;
    let passed = 0;
    await p.route(/\/api\//, async (r) => {
      if (taken || !/\/api\/sessions(\?|$)/.test(r.request().url())) return r.abort('connectionrefused');
      const resp = await r.fetch();
      const body = await resp.text();
      if (!body.includes('"elsewhere"')) {
        passed++;
        return r.fulfill({ response: resp, body });
      }
      if (taken) return r.abort('connectionrefused');
      taken = true;
      answered = true;
      await held;
      await r.fulfill({ response: resp, body });
    });
    // A list asked for now, before the session exists, is one that passes.
    await p.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
    await waitFor(async () => passed > 0, { what: 'a list asked for before the session' });
    other = await newSession(s, 'elsewhere'); // the page asks for the list
    await waitFor(async () => answered, { what: 'the list answered' });
    await p.routeWebSocket(/\/ws\/sessions\//, (ws) => ws.close({ code: 1011, reason: 'refused by the test' }));
    await p.evaluate(() => window.__termkeep.drop());
    await waitFor(async () => (await tabs(p)).find((t) => t.id === made.id).state === 'reconnecting', { what: 'reconnecting' });
    release();
    await waitFor(async () => (await tabs(p)).length === 2, { what: 'the list to arrive' });
    await sleep(300);
    const t = (await tabs(p)).find((t) => t.id === made.id);
    assert.equal(t.state, 'reconnecting');
    assert.equal(t.viewers, 0, 'the page counts itself from a list answered while it was attached');
  } finally {
    await ctx.close();
    if (other) await gone(s, other);
    await gone(s, made);
  }
});

test('a holder killed by hand is named in words, and so is its restore', async () => {
  const made = await newSession(s, 'killed');
  const { ctx, p } = await openLive(browser, s, 1);
  try {
    // Every text the banner and the tab's tooltip show, from the first moment on.
    await p.evaluate(() => {
      window.__seen = [];
      const note = () => window.__seen.push(document.getElementById('banner-text').textContent, document.querySelector('.tab').title);
      new MutationObserver(note).observe(document.getElementById('bar'), { subtree: true, attributes: true, childList: true, characterData: true });
      new MutationObserver(note).observe(document.getElementById('banner'), { subtree: true, attributes: true, childList: true, characterData: true });
    });
    const meta = JSON.parse(readFileSync(join(s.dir, 'sessions', made.id, 'meta.json'), 'utf8'));
    process.kill(meta.holder_pid, 'SIGKILL');
    await p.locator('#banner').waitFor({ state: 'visible', timeout: 15000 });
    try {
      process.kill(meta.pid, 'SIGKILL'); // the shell, left without its holder
    } catch {}
    await waitFor(async () => /its holder was killed/.test(await p.locator('#banner-text').textContent()), { what: 'the cause in the banner' });
    const seen = new Set(await p.evaluate(() => window.__seen));
    for (const t of seen) assert.doesNotMatch(t, /\bbyte\b|\boffset\b/, `jargon in ${JSON.stringify(t)}`);
    await waitFor(async () => /its holder was killed/.test(await p.locator('#banner-text').textContent()), { what: 'the cause in the banner' });

    await p.click('#banner-restore');
    await p.locator('#banner').waitFor({ state: 'hidden', timeout: 15000 });
    const line = await waitText(p, /restored at/);
    assert.match(line, /after its holder was killed/);
    const all = (await text(p)).join('\n') + (await p.locator('#toast').textContent());
    assert.doesNotMatch(all, /reboot|machine restarted/);
  } finally {
    await ctx.close();
    await gone(s, made);
  }
});
