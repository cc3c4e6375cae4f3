// What the page says to a screen reader (web/src/announce.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { announcement } = await load('announce.ts');

const live = { conn: 'live', ended: '', text: 'live' };
const rec = { conn: 'reconnecting', ended: '', text: 'reconnecting' };
const connecting = { conn: 'connecting', ended: '', text: 'connecting' };
const exited = (code) => ({ conn: 'ended', ended: code === 0 ? 'exited-ok' : 'exited-bad', text: `exited ${code}` });

test('announcement: losing and finding the connection, an exit, a restore', () => {
  const cases = [
    // prev, next, active, want
    [undefined, live, true, null], // the first sight is not news
    [undefined, exited(3), true, null],
    [live, live, true, null],
    [live, rec, true, 'Reconnecting to web…'],
    [rec, rec, true, null], // said once
    [rec, live, true, 'Reconnected to web.'],
    [connecting, live, true, null], // the first connection is not a reconnection
    [live, rec, false, null], // background tabs drop with the active one: not said twice
    [live, exited(3), true, 'web exited with status 3.'],
    [live, exited(0), false, 'web exited with status 0.'], // any tab's exit
    [rec, exited(-1), true, 'web exited with status -1.'],
    [live, { conn: 'ended', ended: 'exited-bad', text: 'exited' }, true, 'web exited.'],
    [live, { conn: 'ended', ended: 'interrupted', text: 'interrupted' }, true, 'web was interrupted.'],
    [live, { conn: 'ended', ended: 'closed', text: 'closed' }, true, 'web ended.'],
    [live, { conn: 'live', ended: 'closed', text: 'paused' }, true, 'web was paused.'],
    [exited(3), exited(3), true, null],
    [exited(3), connecting, true, 'web restored.'],
    [exited(3), live, false, 'web restored.'],
    // hostile: a badge word that merely looks like a status
    [live, { conn: 'ended', ended: 'exited-bad', text: 'exited 3; rm -rf' }, true, 'web exited.'],
  ];
  for (const [prev, next, active, want] of cases) assert.equal(announcement('web', prev, next, active), want, JSON.stringify([prev, next, active]));
});
