// A read-only link's page offers nothing it cannot do: no ×, no rename, no
// End or Restore, and their shortcuts do nothing (before, each asked "End
// session?" and then failed with a toast).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server, launch, ready, tabs, waitFor, newSession, sleep } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('a read-only page hides ×, rename, End and Restore', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  try {
    const live = await newSession(s, 'watched');
    const ended = await newSession(s, 'over', { command: ['/bin/sh', '-c', 'exit 5'] });
    const link = JSON.parse(await s.cli('token', 'create', '--read-only', '--json'));
    const p = await ctx.newPage();
    p.on('pageerror', (e) => console.error('page error:', e.message));
    await p.goto(link.url);
    await ready(p, 2);
    await p.click(`.tab[data-id="${live.id}"]`);
    await waitFor(async () => (await tabs(p)).find((t) => t.id === live.id).state === 'live', { what: 'the live tab' });
    assert.equal(await p.locator('.tab-close').first().isVisible(), false, '× shows');

    await p.dblclick(`.tab[data-id="${live.id}"] .tab-name`);
    await p.keyboard.press('Alt+Shift+R');
    await p.focus(`.tab[data-id="${live.id}"]`);
    await p.keyboard.press('F2');
    await p.keyboard.press('Alt+Shift+W');
    await p.keyboard.press('Delete');
    await sleep(300);
    assert.equal(await p.locator('.tab-rename').count(), 0, 'a rename field opened');
    assert.equal(await p.locator('#dialog[open]').count(), 0, '"End session?" was asked');

    await p.click(`.tab[data-id="${ended.id}"]`);
    await p.locator('#banner').waitFor({ state: 'visible' });
    assert.equal(await p.isVisible('#banner-restore'), false, 'Restore shows');
    assert.equal(await p.isVisible('#banner-close'), false, 'Close tab shows');
    assert.equal(await p.isVisible('#banner-replay'), true, 'Replay is gone too');
  } finally {
    await ctx.close();
    await s.stop();
  }
});

// Typing into a read-only page sends nothing: the terminal takes no input
// (no input frame leaves the page, so the server has nothing to refuse),
// and the page says why the keys do nothing.
test('a read-only page sends no keys and says why', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  try {
    const live = await newSession(s, 'watched');
    const link = JSON.parse(await s.cli('token', 'create', '--read-only', '--json'));
    const p = await ctx.newPage();
    p.on('pageerror', (e) => console.error('page error:', e.message));
    const inputs = [];
    p.on('websocket', (ws) =>
      ws.on('framesent', (f) => {
        const b = typeof f.payload === 'string' ? Buffer.from(f.payload) : f.payload;
        if (b[0] === 0x02) inputs.push(b.subarray(5).toString());
      }),
    );
    await p.goto(link.url);
    await ready(p, 1);
    await waitFor(async () => (await tabs(p)).find((t) => t.id === live.id).state === 'live', { what: 'the live tab' });
    await p.click('.term-host:not([hidden])');
    await p.keyboard.type('echo typed-here');
    await p.keyboard.press('Enter');
    await waitFor(async () => /read-only/i.test((await p.locator('#toast').textContent()) ?? ''), { what: 'the read-only notice' });
    const said = await p.locator('#toast').textContent();
    await sleep(500);
    assert.deepEqual(inputs, [], 'input frames left a read-only page');
    assert.doesNotMatch(said, /refused/i, `the server's refusal shown: ${said}`);
    assert.doesNotMatch(await s.cli('capture', live.id), /typed-here/);
  } finally {
    await ctx.close();
    await s.stop();
  }
});
