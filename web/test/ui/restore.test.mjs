// Restore from the browser: a session whose process ended shows a banner
// with a Restore button; it starts the session again in place, below its old
// screen and the restore line, and the tab follows the new process. A
// restore made elsewhere (the CLI) is followed too.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Server, launch, open, typeLine, waitText, text, screenshot, newSession, tabs, waitFor } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('the Restore button starts an ended session again below its old screen', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  try {
    const made = await newSession(s, 'again');
    const p = await open(ctx, s, { tabs: 1 });
    await p.click('.term-host:not([hidden])');
    await typeLine(p, 'echo before-$((20+1)); exit 3');
    await p.locator('#banner').waitFor({ state: 'visible', timeout: 15000 });
    assert.match(await p.locator('#banner-text').textContent(), /status 3/);
    await screenshot(p, 'restore-banner.png');

    await p.click('#banner-restore');
    await p.locator('#banner').waitFor({ state: 'hidden', timeout: 15000 });
    await waitText(p, /restarted at \d\d:\d\d, previous process exited with status 3/);
    await p.click('.term-host:not([hidden])');
    await typeLine(p, 'echo after-$((20+2))');
    await waitText(p, /^after-22$/);
    const lines = await text(p);
    const iOld = lines.findIndex((l) => l === 'before-21');
    const iLine = lines.findIndex((l) => /restarted at/.test(l));
    const iNew = lines.findIndex((l) => l === 'after-22');
    assert.ok(iOld >= 0 && iOld < iLine && iLine < iNew, `old screen, restore line, new process in order:\n${lines.join('\n')}`);
    assert.equal((await tabs(p))[0].badge, 'live');

    // Ended again, then restored from the CLI: the tab follows by itself.
    await typeLine(p, 'exit 4');
    await p.locator('#banner').waitFor({ state: 'visible', timeout: 15000 });
    await s.cli('restore', made.id);
    await p.locator('#banner').waitFor({ state: 'hidden', timeout: 15000 });
    await waitText(p, /previous process exited with status 4/);
    await waitFor(async () => (await tabs(p))[0].badge === 'live', { what: 'the tab to be live again' });
    await screenshot(p, 'restored.png');
  } finally {
    await ctx.close();
    await s.stop();
  }
});

// An interrupted session's banner names the cause the server knows: here
// its holder was killed (SIGKILL, as an OOM kill does), not a reboot.
test('the interrupted banner names the cause', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1000, height: 600 } });
  try {
    const made = await newSession(s, 'victim');
    const p = await open(ctx, s, { tabs: 1 });
    await waitFor(async () => (await tabs(p))[0].badge === 'live', { what: 'the tab to be live' });
    const meta = JSON.parse(readFileSync(join(s.dir, 'sessions', made.id, 'meta.json'), 'utf8'));
    process.kill(meta.holder_pid, 'SIGKILL');
    await p.locator('#banner').waitFor({ state: 'visible', timeout: 15000 });
    await waitFor(async () => /^Interrupted: its holder was killed\.$/.test(await p.locator('#banner-text').textContent()), {
      what: 'the banner to name the cause',
    });
    await waitFor(async () => (await tabs(p))[0].badge === 'interrupted', { what: 'the tab to say interrupted' });
    try {
      process.kill(meta.pid, 'SIGKILL');
    } catch {}
  } finally {
    await ctx.close();
    await s.stop();
  }
});
