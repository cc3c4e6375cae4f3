// The page's decoding of the term-mode frame and the pong (web/src/wire.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { parseTermMode, rttFromPong, u64 } = await load('wire.ts');

const payload = (at, flags) => Uint8Array.from([...u64(at), flags]);

test('parseTermMode reads the flags and refuses what is not a term-mode payload', () => {
  const table = [
    { name: 'echo and canonical', p: payload(5, 3), want: { at: 5, echo: true, canonical: true } },
    { name: 'a password prompt', p: payload(2 ** 40, 2), want: { at: 2 ** 40, echo: false, canonical: true } },
    { name: 'a line editor', p: payload(0, 0), want: { at: 0, echo: false, canonical: false } },
    { name: 'reserved bit', p: payload(1, 4), want: null },
    { name: 'every bit', p: payload(1, 0xff), want: null },
    { name: 'short', p: new Uint8Array(8), want: null },
    { name: 'long', p: new Uint8Array(10), want: null },
    { name: 'empty', p: new Uint8Array(0), want: null },
  ];
  for (const c of table) assert.deepEqual(parseTermMode(c.p), c.want, c.name);
});

test('parseTermMode never throws on random bytes', () => {
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  for (let i = 0; i < 5000; i++) {
    const p = Uint8Array.from({ length: rnd() % 12 }, () => rnd() & 0xff);
    const m = parseTermMode(p);
    if (m) assert.ok(p.length === 9 && (p[8] & ~3) === 0 && Number.isFinite(m.at));
  }
});

test('rttFromPong is the time since the ping, and nothing for a pong that cannot be one', () => {
  assert.equal(rttFromPong(u64(1000), 1150), 150);
  assert.equal(rttFromPong(u64(1000), 1000), 0);
  assert.equal(rttFromPong(u64(2000), 1000), null, 'from the future');
  assert.equal(rttFromPong(u64(0), 10 ** 6), null, 'a minute or more');
  assert.equal(rttFromPong(new Uint8Array(7), 5), null, 'short');
  assert.equal(rttFromPong(new Uint8Array(9), 5), null, 'long');
});
