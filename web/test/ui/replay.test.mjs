// Replay: the screen the replay view shows at a moment T equals what
// `termkeep capture` showed at T while the session ran, whichever way the
// moment is reached (a link, a click or a drag on the timeline, a search
// hit); playing at 16× reaches the end and shows the final screen; a shell
// with shell integration gets markers at its commands, a failed one in red;
// a live session's replay follows it; errors are said, not spun on.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server, launch, open, waitFor, sleep, trimLines, newSession, screenshot } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

// Numbered lines half a second apart, a cleared screen with a box drawn on
// it, more lines, then the end. After each step the script also waits for
// the test to say go (a file in the directory go): however slow the
// machine, nothing is printed while the test takes its sample of the step.
const script = (go) => `
step() { sleep 0.5; while [ ! -e '${go}'/"$1" ]; do sleep 0.05; done; }
for i in 1 2 3 4; do echo "line-$i"; step line-$i; done
printf '\\033[2J\\033[H\\033[6;12H\\033[1;32m+--------+\\033[7;12H|  box   |\\033[8;12H+--------+\\033[0m\\033[12;1H'
step box
for i in 5 6 7 8; do echo "after-$i"; step after-$i; done
echo the end
`;
const STEPS = ['line-1', 'line-2', 'line-3', 'line-4', 'box', 'after-5', 'after-6', 'after-7', 'after-8'];
const BOX = ['+--------+', '|  box   |', '+--------+'];

const capture = async (s, id) => trimLines((await s.cli('capture', id)).split('\n'));
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** replayScreen is the replay terminal's rows, trimmed as captures are. */
async function replayScreen(p) {
  return trimLines((await p.evaluate(() => window.__termkeep.replayScreen())) ?? []);
}

/** paused waits until the replay view rests on a moment that satisfies ok(t, offset). */
async function paused(p, ok = () => true, what = 'the replay to pause') {
  return waitFor(
    async () => {
      const d = await p.evaluate(() => {
        const r = document.getElementById('replay');
        return { state: r.dataset.state, t: Number(r.dataset.t), offset: Number(r.dataset.offset) };
      });
      return d.state === 'paused' && ok(d.t, d.offset) ? d : false;
    },
    { timeout: 15000, what },
  );
}

async function showsCapture(p, cap, what) {
  const got = await replayScreen(p);
  assert.deepEqual(got, cap, `${what}\n--- capture ---\n${cap.join('\n')}\n--- replay ---\n${got.join('\n')}`);
}

/** timelineX is where moment t is on the timeline, in page coordinates. */
async function timelineX(p, t) {
  return p.evaluate((t) => {
    const el = document.getElementById('replay-timeline');
    const r = el.getBoundingClientRect();
    const start = Number(el.dataset.start);
    const end = Number(el.dataset.end);
    return { x: r.left + ((t - start) / (end - start)) * r.width, y: r.top + r.height / 2 };
  }, t);
}

test('the replay shows at each moment what capture showed then, by link, timeline, search and play', async () => {
  const s = await Server.start();
  const ctx = await browser.newContext({ viewport: { width: 1200, height: 720 }, colorScheme: 'dark' });
  const go = mkdtempSync(join(tmpdir(), 'termkeep-replay-go-'));
  try {
    const made = await newSession(s, 'recording', { command: ['/bin/bash', '-c', script(go)], cols: 80, rows: 24 });
    const id = made.id;

    // At each step: a capture, the time T right after it returns, a second
    // capture showing the same screen; then the script may go on. T falls
    // between the step's output and the next one.
    const samples = [];
    for (const step of STEPS) {
      const shown = (cap) => (step === 'box' ? BOX.every((b) => cap.some((l) => l.trim() === b)) : cap[cap.length - 1] === step);
      await waitFor(async () => shown(await capture(s, id)), { timeout: 20000, what: `${step} on the screen` });
      const cap = await capture(s, id);
      const T = Date.now();
      assert.deepEqual(await capture(s, id), cap, `nothing is printed while ${step} is sampled`);
      samples.push({ step, T, cap });
      writeFileSync(join(go, step), '');
    }
    await s.cli('wait', id, '--exit', '--timeout', '30s');
    const final = await capture(s, id);
    assert.equal(final[final.length - 1], 'the end');
    const box = samples.find((x) => x.step === 'box');
    const afters = samples.filter((x) => x.step.startsWith('after-'));

    const p = await open(ctx, s, { tabs: 1 });
    const tl = await s.api('GET', `/api/sessions/${id}/replay`);

    // A link to each moment.
    for (const x of samples) {
      await p.evaluate((h) => (location.hash = h), `#replay=${id}&t=${x.T}`);
      await paused(p, (t) => t === x.T, `the replay at ${x.T}`);
      await showsCapture(p, x.cap, `the link to ${new Date(x.T).toISOString()} (${x.step})`);
    }
    assert.equal(await p.evaluate(() => location.hash), `#replay=${id}&t=${samples[samples.length - 1].T}`, 'the address is a link to the moment shown');

    // A click on the timeline: the box's moment.
    const first = samples[0];
    await p.evaluate((h) => (location.hash = h), `#replay=${id}&t=${first.T}`);
    await paused(p, (t) => t === first.T);
    assert.ok(!same(first.cap, box.cap));
    const at = await timelineX(p, box.T);
    await p.mouse.click(at.x, at.y);
    await paused(p, (t) => Math.abs(t - box.T) < 60, 'the replay at the clicked moment');
    await showsCapture(p, box.cap, 'a click on the timeline');

    // A drag along the timeline, let go at a later moment.
    const later = afters[afters.length - 1];
    const from = await timelineX(p, first.T);
    const to = await timelineX(p, later.T);
    await p.mouse.move(from.x, from.y);
    await p.mouse.down();
    await p.mouse.move((from.x + to.x) / 2, to.y, { steps: 5 });
    await p.mouse.move(to.x, to.y, { steps: 5 });
    await p.mouse.up();
    await paused(p, (t) => Math.abs(t - later.T) < 60, 'the replay where the drag ended');
    await showsCapture(p, later.cap, 'a drag on the timeline');

    // A search over the whole log: its hit goes to the moment the line was printed.
    const hitSample = afters[1];
    const word = hitSample.step;
    await p.fill('#replay-search', word);
    await p.press('#replay-search', 'Enter');
    await p.locator('.replay-hit').first().waitFor({ timeout: 10000 });
    assert.equal(await p.locator('.replay-hit').count(), 1, `one line holds ${word}`);
    await screenshot(p, 'replay.png');
    const hitT = Number(await p.getAttribute('.replay-hit', 'data-t'));
    assert.ok(hitT <= hitSample.T, 'the line was printed before its sample was taken');
    await p.click('.replay-hit');
    await paused(p, (t) => t === hitT, `the replay at the hit for ${word}`);
    await showsCapture(p, hitSample.cap, `the search hit for ${word}`);

    // From the start at 16×, to the end: the final screen.
    await p.focus('#replay-timeline');
    await p.keyboard.press('Home');
    await paused(p, (_, off) => off === tl.first_offset, 'the start');
    await p.selectOption('#replay-speed', '16');
    await p.evaluate(() => {
      const r = document.getElementById('replay');
      window.__replayStates = [];
      new MutationObserver(() => window.__replayStates.push(r.dataset.state)).observe(r, { attributes: true, attributeFilter: ['data-state'] });
    });
    const started = Date.now();
    await p.click('#replay-play');
    await paused(p, (_, off) => off === tl.end_offset, 'the end of the playback');
    const took = Date.now() - started;
    await showsCapture(p, final, 'the end of the playback at 16×');
    assert.ok((await p.evaluate(() => window.__replayStates)).includes('playing'), 'it played');
    // About 7 s recorded: well under that at 16×, but not at once either.
    assert.ok(took < 5000, `16× took ${took} ms`);

    // Esc: back to the live terminal (here, the ended session's last screen).
    await p.keyboard.press('Escape');
    await p.locator('#replay').waitFor({ state: 'hidden' });
    assert.equal(await p.evaluate(() => location.hash), '', 'closing the replay drops the link from the address');
  } finally {
    await ctx.close();
    await s.stop();
    rmSync(go, { recursive: true, force: true });
  }
});

test('markers at commands, a failed one in red; a live session is followed; errors are said', async () => {
  const s = await Server.start();
  try {
    await markers(s);
    await phone(s);
  } finally {
    await s.stop();
  }
});

async function markers(s) {
  const ctx = await browser.newContext({ viewport: { width: 1100, height: 650 }, colorScheme: 'light' });
  try {
    // bash with termkeep's shell integration (OSC 133 marks).
    const made = await newSession(s, 'marked', { command: ['/bin/bash'] });
    const id = made.id;
    await waitFor(async () => (await capture(s, id)).length > 0, { timeout: 30000, what: 'a prompt' });
    await s.cli('send', id, 'echo first-$((1+1))');
    await waitFor(async () => (await capture(s, id)).includes('first-2'), { what: 'the first command' });
    await s.cli('send', id, 'sh -c "exit 3"');
    await sleep(300);
    await s.cli('send', id, 'echo after-fail');
    await waitFor(async () => (await capture(s, id)).includes('after-fail'), { what: 'the last command' });
    await sleep(300);

    const p = await open(ctx, s, { tabs: 1 });
    await p.click('.term-host:not([hidden])');
    await p.keyboard.press('Control+Shift+KeyH');
    await paused(p, () => true, 'the replay to open at the end');

    const failed = p.locator('.replay-marker[data-kind="done"][data-status="3"]');
    assert.equal(await failed.count(), 1, 'a red marker for the command that failed');
    assert.equal(await failed.getAttribute('data-fail'), '1');
    const cmds = await p.locator('.replay-marker[data-kind="command"]').evaluateAll((es) => es.map((e) => e.title));
    assert.ok(cmds.some((t) => t.includes('sh -c "exit 3"')), `a command marker names the command: ${cmds.join(' | ')}`);
    const color = await failed.evaluate((e) => getComputedStyle(e).backgroundColor);
    assert.match(color, /rgb\(207, 34, 46\)/, 'the failed command is red (the light theme)');

    // ← goes back marker by marker, to where the failed command finished.
    const failOffset = Number(await failed.getAttribute('data-offset'));
    const tl = await s.api('GET', `/api/sessions/${id}/replay`);
    assert.ok(tl.markers.some((m) => m.kind === 'done' && m.status === 3 && m.offset === failOffset), 'the red marker is the failed command\'s');
    const offsets = [...new Set(tl.markers.map((m) => m.offset))].sort((a, b) => a - b);
    let here = Number(await p.getAttribute('#replay', 'data-offset'));
    for (let i = 0; i < 8 && here !== failOffset; i++) {
      await p.keyboard.press('ArrowLeft');
      const prev = offsets.filter((o) => o < here).pop();
      here = (await paused(p, (_, off) => off === prev, `the marker before ${here}`)).offset;
    }
    assert.equal(here, failOffset, 'the ← keys reached the failed command');
    const screenAtFail = await replayScreen(p);
    assert.ok(screenAtFail.some((l) => l.includes('sh -c "exit 3"')), `the failed command is on the screen:\n${screenAtFail.join('\n')}`);
    assert.ok(!screenAtFail.some((l) => l === 'after-fail'), 'what came after it is not yet');
    await p.keyboard.press('ArrowRight');
    await paused(p, (_, off) => off === offsets.find((o) => o > failOffset), 'the next marker');
    await p.hover('.replay-marker[data-kind="done"][data-status="3"]');
    await screenshot(p, 'replay-markers.png');

    // A live session: playing at the end follows what it prints.
    await p.focus('#replay-timeline');
    await p.keyboard.press('End');
    await paused(p);
    await p.click('#replay-play');
    await waitFor(async () => (await p.getAttribute('#replay', 'data-state')) === 'playing', { what: 'playing' });
    await s.cli('send', id, 'echo live-$((6*7))');
    await waitFor(async () => (await replayScreen(p)).includes('live-42'), { timeout: 15000, what: 'the replay to follow the live session' });
    await p.click('#replay-play');
    await paused(p);

    // "Back to live" closes it; the live terminal has the keyboard again.
    await p.click('#replay-close');
    await p.locator('#replay').waitFor({ state: 'hidden' });

    // A link to a session that does not exist says so, with no spinner left.
    await p.evaluate(() => (location.hash = '#replay=no-such-session&t=1'));
    await waitFor(async () => (await p.getAttribute('#replay', 'data-state')) === 'error', { what: 'an error' });
    assert.match(await p.locator('#replay-msg-text').textContent(), /gone|not|no /i);
    assert.ok(await p.locator('#replay-retry').isVisible(), 'a way to try again');
    assert.ok(!(await p.locator('#replay-wait').isVisible()), 'no spinner');
    await p.keyboard.press('Escape');
    await p.locator('#replay').waitFor({ state: 'hidden' });
  } finally {
    await ctx.close();
  }
}

/** phone: on a phone the replay fits the width, the timeline on a row of its own. */
async function phone(s) {
  const ctx = await browser.newContext({ viewport: { width: 390, height: 760 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, colorScheme: 'dark' });
  try {
    const p = await open(ctx, s, { tabs: 1 });
    await p.tap('#btn-replay');
    await paused(p);
    const fits = await p.evaluate(() => {
      const c = document.querySelector('.replay-controls');
      const top = document.querySelector('.replay-top');
      return c.scrollWidth <= c.clientWidth + 1 && top.scrollWidth <= top.clientWidth + 1;
    });
    assert.ok(fits, 'the replay controls fit a phone');
    const scr = await p.locator('#replay-term .xterm-screen').boundingBox();
    assert.ok(scr.width <= 390, `the replayed screen is scaled to the width (${scr.width} px)`);
    await screenshot(p, 'replay-phone.png');
  } finally {
    await ctx.close();
  }
}
