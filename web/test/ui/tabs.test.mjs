// Tabs: a reload brings back the same tabs, processes and output (each line
// once); tab names, order and the active tab survive it; sessions made
// elsewhere appear; closing the page never ends a session, the tab's close
// button does, after a confirmation (kill, then remove: the API's two
// calls); on an ended session it removes it at once.
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

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('a reload shows the same tabs, processes and output, each line once, and continues live', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 700 }, colorScheme: 'dark' });
  try {
    const p = await open(ctx, s);
    // No sessions yet: the page offers to make one.
    await p.locator('#empty').waitFor({ state: 'visible' });
    await p.click('#empty-new');
    await ready(p, 1);
    await p.click('#new-tab');
    await waitFor(async () => (await tabs(p)).length === 2 && (await tabs(p)).every((t) => t.state === 'live'), { what: 'two live tabs' });
    const [first, second] = await tabs(p);
    assert.equal(await p.evaluate(() => window.__termkeep.active()), second.id, 'a new tab becomes the active one');

    await typeLine(p, 'echo pid=$$; sleep 300 & echo bg=$!');
    const pid = Number((await waitText(p, /^pid=\d+$/)).slice(4));
    const bg = Number((await waitText(p, /^bg=\d+$/)).slice(3));
    await typeLine(p, 'seq -f "before-%g" 1 80');
    await waitText(p, /^before-80$/);

    // Rename the first tab, then drag the second before it.
    await p.dblclick(`.tab[data-id="${first.id}"] .tab-name`);
    await p.locator('.tab-rename').fill('alpha');
    await p.keyboard.press('Enter');
    await waitFor(async () => (await tabs(p)).find((t) => t.id === first.id).label === 'alpha', { what: 'the rename' });
    // Double-clicking the name made that tab active; go back to the second.
    await p.click(`.tab[data-id="${second.id}"]`);
    const a = await p.locator(`.tab[data-id="${second.id}"]`).boundingBox();
    const b = await p.locator(`.tab[data-id="${first.id}"]`).boundingBox();
    await p.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
    await p.mouse.down();
    await p.mouse.move(a.x + a.width / 2 - 30, a.y + a.height / 2, { steps: 4 });
    await p.mouse.move(b.x + 10, b.y + b.height / 2, { steps: 6 });
    await p.mouse.up();
    await waitFor(async () => (await tabs(p))[0].id === second.id, { what: 'the dragged tab to move first' });
    assert.equal(await p.evaluate(() => window.__termkeep.active()), second.id, 'dragging does not switch tabs');
    const listed = await s.api('GET', `/api/sessions/${first.id}`);
    assert.equal(listed.name, 'alpha', 'the rename reached the server');
    await screenshot(p, 'two-tabs.png');

    const beforeTabs = (await tabs(p)).map((t) => [t.id, t.label]);
    await p.reload();
    await ready(p, 2);
    assert.deepEqual((await tabs(p)).map((t) => [t.id, t.label]), beforeTabs, 'same tabs, names and order after the reload');
    assert.equal(await p.evaluate(() => window.__termkeep.active()), second.id, 'the same tab is active after the reload');

    // The earlier output is there, each line once.
    let lines = await text(p);
    assert.equal(count(lines, /^pid=\d+$/), 1, 'the pid line is shown once');
    for (const n of [1, 40, 80]) assert.equal(count(lines, new RegExp(`^before-${n}$`)), 1, `before-${n} is shown once`);

    // The same shell, its background job still running, and new output live.
    await p.click('.term-host:not([hidden])');
    await typeLine(p, 'echo again=$$; jobs -l; echo live-$((2+3))');
    assert.equal(Number((await waitText(p, /^again=\d+$/)).slice(6)), pid, 'the same shell after the reload');
    await waitText(p, new RegExp(`${bg}\\s+Running\\s+sleep 300`));
    await waitText(p, /^live-5$/);
    lines = await text(p);
    assert.equal(count(lines, /^before-80$/), 1);
    assert.equal(count(lines, /^live-5$/), 1);
    assert.ok(alive(pid) && alive(bg));
    await captureEquals(p, s, second.id);

    // A second page (another browser tab) opens with the same order.
    const p2 = await ctx.newPage();
    await p2.goto(s.url);
    await ready(p2, 2);
    assert.deepEqual((await tabs(p2)).map((t) => [t.id, t.label]), beforeTabs);
    await p2.close();
  } finally {
    await ctx.close();
    await s.stop();
  }
});

test('sessions made elsewhere appear live; exits show their status', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 700 } });
  try {
    await newSession(s, 'one');
    const p = await open(ctx, s, { tabs: 1 });
    await s.cli('new', '--name', 'from-cli', '--cwd', '/tmp');
    const made = await waitFor(async () => (await tabs(p)).find((t) => t.label === 'from-cli' && t.state === 'live'), { what: 'the CLI session in the page' });
    assert.equal((await tabs(p))[0].label, 'one', 'a session made elsewhere is added at the end');
    assert.notEqual(await p.evaluate(() => window.__termkeep.active()), made.id, 'and does not take the focus');
    await p.locator(`.tab[data-id="${made.id}"] .tab-cwd`).filter({ hasText: '/tmp' }).waitFor();

    // A process that exits shows its status on its tab and in the page.
    await p.click(`.tab[data-id="${made.id}"]`);
    await ready(p, 2);
    await p.click('.term-host:not([hidden])');
    await typeLine(p, 'exit 3');
    await waitFor(async () => (await tabs(p)).find((t) => t.id === made.id).badge === 'exited 3', { what: 'the exited badge' });
    await p.locator('#banner').filter({ hasText: 'exited with status 3' }).waitFor();

    // Renames and removals made elsewhere show too.
    const one = (await tabs(p))[0];
    await s.api('PATCH', `/api/sessions/${one.id}`, { name: 'renamed-elsewhere' });
    await waitFor(async () => (await tabs(p))[0].label === 'renamed-elsewhere', { what: 'the rename from elsewhere' });
    await s.cli('rm', made.id);
    await waitFor(async () => (await tabs(p)).length === 1, { what: 'the removed session to leave' });
  } finally {
    await ctx.close();
    await s.stop();
  }
});

/** changes records the calls a page makes that change a session: "METHOD /path". */
function changes(page) {
  const seen = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (r.method() !== 'GET' && u.pathname.startsWith('/api/sessions/')) seen.push(`${r.method()} ${u.pathname}${u.search}`);
  });
  return seen;
}

test('closing the page keeps the session; the close button ends it after a confirmation', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1100, height: 650 } });
  try {
    const made = await newSession(s, 'keeper');
    let p = await open(ctx, s, { tabs: 1 });
    await p.click('.term-host:not([hidden])');
    await typeLine(p, 'echo pid=$$');
    const pid = Number((await waitText(p, /^pid=\d+$/)).slice(4));
    await p.close();
    await sleep(1000);
    const listed = await s.api('GET', `/api/sessions/${made.id}`);
    assert.equal(listed.state, 'running', 'closing the page does not end the session');
    assert.ok(alive(pid));

    p = await open(ctx, s, { tabs: 1 });
    const calls = changes(p);
    await waitText(p, /^pid=\d+$/);
    await p.click(`.tab[data-id="${made.id}"] .tab-close`);
    await p.locator('#dialog').waitFor({ state: 'visible' });
    assert.match(await p.locator('#dialog-title').textContent(), /keeper/);
    await screenshot(p, 'close-confirm.png');
    await p.click('#dialog-cancel');
    await p.locator('#dialog').waitFor({ state: 'hidden' });
    assert.equal((await tabs(p)).length, 1, 'cancel keeps the tab');
    assert.equal((await s.api('GET', `/api/sessions/${made.id}`)).state, 'running', 'cancel keeps the session');

    await p.click(`.tab[data-id="${made.id}"] .tab-close`);
    await p.locator('#dialog').waitFor({ state: 'visible' });
    await p.click('#dialog-ok');
    await waitFor(async () => (await tabs(p)).length === 0, { what: 'the tab to close' });
    await p.locator('#empty').waitFor({ state: 'visible' });
    await waitFor(() => !alive(pid), { what: `pid ${pid} to end` });
    const all = await s.api('GET', '/api/sessions');
    assert.equal(all.length, 0, 'the closed session is gone');
    assert.deepEqual(calls, [`POST /api/sessions/${made.id}/kill`, `DELETE /api/sessions/${made.id}`], 'a running session is ended, then removed');

    // An ended session's close button asks nothing: it removes it.
    const ended = await newSession(s, 'ended');
    await p.locator(`.tab[data-id="${ended.id}"]`).waitFor();
    await p.click(`.tab[data-id="${ended.id}"]`);
    await ready(p, 1);
    await p.click('.term-host:not([hidden])');
    await typeLine(p, 'exit 4');
    await waitFor(async () => (await tabs(p)).find((t) => t.id === ended.id)?.badge === 'exited 4', { what: 'the exited badge' });
    calls.length = 0;
    await p.click(`.tab[data-id="${ended.id}"] .tab-close`);
    await waitFor(async () => (await tabs(p)).length === 0, { what: 'the ended tab to close' });
    assert.equal(await p.locator('#dialog').isVisible(), false, 'no confirmation for an ended session');
    assert.deepEqual(calls, [`DELETE /api/sessions/${ended.id}`], 'an ended session is only removed');
    assert.equal((await s.api('GET', '/api/sessions')).length, 0, 'the ended session is gone');
  } finally {
    await ctx.close();
    await s.stop();
  }
});
