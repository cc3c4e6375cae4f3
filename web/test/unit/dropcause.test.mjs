// Why a connection is down (web/src/dropcause.ts): offline, the server
// not answering, or the server answering while the connection drops.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { dropCause, dropNotice } = await load('dropcause.ts');

test('what a retry learned', () => {
  for (const [online, answered, status, want] of [
    [false, false, 0, 'offline'], // the browser says so, whatever failed
    [false, true, 0, 'offline'],
    [true, false, 0, 'server'], // online, and the server could not be reached
    [true, false, 503, null], // it answered with an error: its sentence says why
    [true, true, 0, 'link'], // it answers, the session's connection is what drops
  ]) {
    assert.equal(dropCause(online, answered, status), want, `online ${online}, answered ${answered}, status ${status}`);
  }
});

test('the notice tells a dropped network from a dead server', () => {
  const offline = dropNotice(false, null, 'x');
  const server = dropNotice(true, 'server', 'the termkeep server is not reachable');
  const link = dropNotice(true, 'link', '');
  assert.match(offline, /device is offline/);
  assert.match(server, /server does not answer/);
  assert.match(link, /server answers/);
  assert.equal(new Set([offline, server, link]).size, 3);
  assert.equal(dropNotice(true, 'offline', ''), offline, 'offline when the last try was, though the browser says online now');
  assert.equal(dropNotice(true, null, 'too many viewers'), 'too many viewers', 'the error, when the page cannot tell');
});
