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
