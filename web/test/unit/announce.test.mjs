// What the page says to a screen reader (web/src/announce.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { announcement } = await load('announce.ts');

const live = { conn: 'live', ended: '', text: 'live' };
const rec = { conn: 'reconnecting', ended: '', text: 'reconnecting' };
const connecting = { conn: 'connecting', ended: '', text: 'connecting' };
const lost = (h) => ({ ...h, lost: true });
const exited = (code) => ({ conn: 'ended', ended: code === 0 ? 'exited-ok' : 'exited-bad', text: `exited ${code}` });

test('announcement: one step, from what was heard to the session now', () => {
  const cases = [
    // prev, next, active, said
    [undefined, live, true, null], // the first sight is not news
    [undefined, exited(3), true, null],
    [undefined, rec, true, null],
    [live, live, true, null],
    [live, rec, true, 'Reconnecting to web…'],
    [lost(rec), rec, true, null], // said once
    [lost(rec), live, true, 'Reconnected to web.'],
    [rec, live, true, null], // its loss was not said (a background tab, a restore): nor its return
    [connecting, rec, true, null], // never live: nothing lost
    [connecting, live, true, null],
    [live, rec, false, null], // background tabs drop with the active one: not said twice
    [live, exited(3), true, 'web exited with status 3.'],
    [live, exited(0), false, 'web exited with status 0.'], // any tab's exit
    [lost(rec), exited(-1), true, 'web exited with status -1.'],
    [live, { conn: 'ended', ended: 'exited-bad', text: 'exited' }, true, 'web exited.'],
    [live, { conn: 'ended', ended: 'interrupted', text: 'interrupted' }, true, 'web was interrupted.'],
    [live, { conn: 'ended', ended: 'closed', text: 'closed' }, true, 'web ended.'],
    [live, { conn: 'live', ended: 'closed', text: 'paused' }, true, 'web was paused.'],
    [exited(3), exited(3), true, null],
    [exited(3), connecting, true, 'web restored.'],
    [exited(3), live, false, 'web restored.'],
    // hostile: a badge word that merely looks like a status
    [live, { conn: 'ended', ended: 'exited-bad', text: 'exited 3; rm -rf' }, true, 'web exited.'],
    [live, { conn: 'ended', ended: 'exited-bad', text: 'exited 3\nexited 4' }, true, 'web exited.'],
  ];
  for (const [prev, next, active, want] of cases) assert.equal(announcement('web', prev, next, active).say, want, JSON.stringify([prev, next, active]));
});

test('announcement: sequences as the page meets them', () => {
  const run = (steps, active = true) => {
    let heard;
    const said = [];
    for (const next of steps) {
      const r = announcement('web', heard, next, active);
      heard = r.heard;
      if (r.say) said.push(r.say);
    }
    return said;
  };
  // A dropped connection that comes back, twice.
  assert.deepEqual(run([connecting, live, rec, rec, live, rec, live]), ['Reconnecting to web…', 'Reconnected to web.', 'Reconnecting to web…', 'Reconnected to web.']);
  // Exit and restore: the restored session connects (connecting, then
  // reconnecting as a page that had a connection) without "Reconnecting".
  assert.deepEqual(run([live, exited(3), connecting, rec, live]), ['web exited with status 3.', 'web restored.']);
  // Lost, then exited while away: the return is not said after the exit.
  assert.deepEqual(run([live, rec, exited(1), connecting, live]), ['Reconnecting to web…', 'web exited with status 1.', 'web restored.']);
  // A background tab says only its exit.
  assert.deepEqual(run([live, rec, live, exited(2)], false), ['web exited with status 2.']);
});
