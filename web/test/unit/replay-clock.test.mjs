// The replay's clock (web/src/replay-clock.ts): interpolating a byte's time,
// moving the playback clock with and without skip idle, saying durations.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { offsetTime, advanceClock, dueAt, fraction, span, IDLE_MAX, failed, hitTime, markerTitle } = await load('replay-clock.ts');

test('offsetTime interpolates between the index points and clamps outside them', () => {
  const pts = [
    { offset: 100, t: 1000 },
    { offset: 200, t: 2000 },
    { offset: 200, t: 2500 }, // two points at one offset: a time jump with no byte between
    { offset: 1200, t: 3500 },
  ];
  const cases = [
    ['empty index', [], 5, null],
    ['one point, before', [{ offset: 10, t: 7 }], 0, 7],
    ['one point, after', [{ offset: 10, t: 7 }], 99, 7],
    ['before the first', pts, 0, 1000],
    ['negative offset', pts, -5, 1000],
    ['at the first', pts, 100, 1000],
    ['halfway', pts, 150, 1500],
    ['past the last', pts, 1e15, 3500],
    ['at the last', pts, 1200, 3500],
    ['inside the last stretch', pts, 700, 3000],
    ['NaN offset', pts, NaN, null],
  ];
  for (const [name, p, off, want] of cases) {
    const got = offsetTime(p, off);
    if (want === null && name === 'NaN offset') {
      // A NaN offset must not loop forever; whatever it answers is a number or null.
      assert.ok(got === null || typeof got === 'number', name);
      continue;
    }
    assert.equal(got, want, name);
  }
  // Monotonic: a later byte is never logged earlier.
  let last = -Infinity;
  for (let o = 0; o <= 1300; o += 7) {
    const t = offsetTime(pts, o);
    assert.ok(t >= last, `offset ${o}: ${t} < ${last}`);
    last = t;
  }
});

test('advanceClock runs at speed and plays a long silence as IDLE_MAX with skip idle', () => {
  const cases = [
    // name, clock, elapsed, speed, lastT, nextT, skip, want
    ['plain 1x', 1000, 100, 1, 1000, 5000, false, 1100],
    ['16x', 1000, 100, 16, 1000, 5000, false, 2600],
    ['0.5x', 1000, 100, 0.5, 1000, 5000, false, 1050],
    ['no skip: silence plays whole', 1000, 2000, 1, 1000, 60000, false, 3000],
    ['skip: short of the cap', 1000, 500, 1, 1000, 60000, true, 1500],
    ['skip: past the cap jumps to the next chunk', 1000, 1000, 1, 1000, 60000, true, 60000],
    ['skip: a short silence is not shortened', 1000, 2000, 1, 1000, 1500, true, 3000],
    ['skip, next unknown: waits at the cap', 1000, 5000, 1, 1000, null, true, 1000 + IDLE_MAX],
    ['skip, next unknown, clock past the cap already: never backwards', 9000, 50, 1, 1000, null, true, 9000],
    ['no elapsed time', 1234, 0, 8, 1000, 2000, true, 1234],
    ['negative elapsed (a clock step back): no jump forward', 1000, -50, 1, 1000, 90000, true, 950],
  ];
  for (const [name, clock, elapsed, speed, lastT, nextT, skip, want] of cases) {
    assert.equal(advanceClock(clock, elapsed, speed, lastT, nextT, skip), want, name);
  }
});

test('dueAt: when the next chunk is written', () => {
  assert.equal(dueAt(5000, 1000, false), 5000);
  assert.equal(dueAt(5000, 1000, true), 1000 + IDLE_MAX);
  assert.equal(dueAt(1500, 1000, true), 1500);
  assert.equal(dueAt(900, 1000, true), 900); // out of order: as logged
});

test('fraction stays within 0..1', () => {
  assert.equal(fraction(5, 0, 10), 0.5);
  assert.equal(fraction(-5, 0, 10), 0);
  assert.equal(fraction(50, 0, 10), 1);
  assert.equal(fraction(Infinity, 0, 10), 1);
});

test('span says m:ss, h:mm:ss past an hour, never negative', () => {
  const cases = [
    [0, '0:00'],
    [999, '0:00'],
    [61000, '1:01'],
    [3599999, '59:59'],
    [3600000, '1:00:00'],
    [3661000, '1:01:01'],
    [-5000, '0:00'],
  ];
  for (const [ms, want] of cases) assert.equal(span(ms), want, String(ms));
});

test('markers and hits: failed, hitTime, markerTitle', () => {
  assert.equal(failed({ kind: 'done', offset: 0, t: 0, status: 2 }), true);
  assert.equal(failed({ kind: 'done', offset: 0, t: 0, status: 0 }), false);
  assert.equal(failed({ kind: 'done', offset: 0, t: 0 }), false);
  assert.equal(failed({ kind: 'command', offset: 0, t: 0, status: 1 }), false);
  assert.equal(hitTime({ offset: 1, line: '', t: 42 }), 42);
  assert.equal(hitTime({ offset: 1, line: '', time: '2026-01-02T03:04:05Z' }), Date.parse('2026-01-02T03:04:05Z'));
  assert.equal(hitTime({ offset: 1, line: '', time: 'not a time' }), null);
  assert.equal(hitTime({ offset: 1, line: '' }), null);
  assert.match(markerTitle({ kind: 'command', offset: 0, t: 0, label: 'make' }), / · \$ make$/);
  assert.match(markerTitle({ kind: 'done', offset: 0, t: 0, status: 3 }), /command failed \(status 3\)$/);
  assert.match(markerTitle({ kind: 'gap', offset: 0, t: 0 }), /output missing$/);
  assert.match(markerTitle({ kind: 'something new', offset: 0, t: 0 }), / · something new$/);
});
