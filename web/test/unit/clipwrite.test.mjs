// OSC 52 writes (web/src/clipwrite.ts): which are applied, asked about or
// refused, and how a page's output splits into caught-up and live bytes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { parseOsc52, decideClipWrite, liveSplit } = await load('clipwrite.ts');

test('parseOsc52: writes, reads and noise', () => {
  assert.deepEqual(parseOsc52('c;' + btoa('hi')), { kind: 'write', text: 'hi' });
  assert.deepEqual(parseOsc52(';' + btoa('x')), { kind: 'write', text: 'x' });
  assert.deepEqual(parseOsc52('c;' + btoa(String.fromCharCode(0xc3, 0xa9))), { kind: 'write', text: 'é' });
  assert.deepEqual(parseOsc52('c;?'), { kind: 'read' });
  assert.equal(parseOsc52('c;'), null);
  assert.equal(parseOsc52('c;!!!not base64'), null);
  assert.equal(parseOsc52('c;' + btoa(String.fromCharCode(0xff))), null);
});

test('decideClipWrite: guests, view-only pages and caught-up output never; the owner by the setting', () => {
  const owner = { guest: false, viewOnly: false, live: true, policy: 'ask', allowedHere: false };
  const rows = [
    ['owner, ask', owner, 'ask'],
    ['owner, ask, always for this session', { ...owner, allowedHere: true }, 'apply'],
    ['owner, allow', { ...owner, policy: 'allow' }, 'apply'],
    ['owner, deny', { ...owner, policy: 'deny' }, 'refuse'],
    ['owner, deny beats always for this session', { ...owner, policy: 'deny', allowedHere: true }, 'refuse'],
    ['owner, caught up', { ...owner, live: false, policy: 'allow' }, 'refuse'],
    ['owner, view-only page', { ...owner, viewOnly: true, policy: 'allow' }, 'refuse'],
    ['guest, allow', { ...owner, guest: true, policy: 'allow' }, 'refuse'],
    ['guest, always for this session', { ...owner, guest: true, allowedHere: true }, 'refuse'],
    ['guest, ask', { ...owner, guest: true }, 'refuse'],
  ];
  for (const [name, ctx, want] of rows) assert.equal(decideClipWrite(ctx), want, name);
});

test('liveSplit: bytes before the connect-time end are caught up', () => {
  assert.deepEqual(liveSplit(0, 100, 100), { old: 100, live: 0 });
  assert.deepEqual(liveSplit(100, 150, 100), { old: 0, live: 50 });
  assert.deepEqual(liveSplit(80, 150, 100), { old: 20, live: 50 });
  assert.deepEqual(liveSplit(200, 250, 100), { old: 0, live: 50 });
  assert.deepEqual(liveSplit(0, 50, Infinity), { old: 50, live: 0 });
});
