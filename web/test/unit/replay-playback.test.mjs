// The replay's playback decisions (web/src/replay-playback.ts): the queue
// fetched ahead, the clock, what is due, how long to sleep, where a pause
// lands, and when playback ends.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { Playback, TICK_MS, AHEAD_MS } = await load('replay-playback.ts');

const world = (over = {}) => ({ blocked: false, outDone: false, fetching: false, live: false, now: 1e13, ...over });
const chunk = (offset, t, data = 'x') => ({ offset, t, data });

function takeAll(pb) {
  const out = [];
  for (let it; (it = pb.take()); ) out.push(it);
  return out;
}

test('items are written when the clock reaches them, in order, each once', () => {
  const pb = new Playback();
  pb.skipIdle = false;
  pb.start(1000);
  pb.add([chunk(0, 1000, 'ab'), chunk(2, 1050, 'c'), chunk(3, 1200, 'de')]);
  assert.equal(pb.queuedBytes, 5);
  assert.deepEqual(takeAll(pb).map((i) => i.offset), [0], 'at the start: what was logged then');
  pb.advance(60, world());
  assert.deepEqual(takeAll(pb).map((i) => i.offset), [2]);
  assert.equal(pb.lastT, 1050);
  pb.advance(100, world());
  assert.deepEqual(takeAll(pb), [], 'not yet due');
  pb.advance(50, world());
  assert.deepEqual(takeAll(pb).map((i) => i.offset), [3]);
  assert.equal(pb.queuedBytes, 0);
});

test('an item without a time takes the time before it; a hostile time does too', () => {
  const pb = new Playback();
  pb.start(500);
  pb.add([{ offset: 0, data: 'a' }, chunk(1, 700), { offset: 2, cols: 100, rows: 30 }, { offset: 2, t: NaN, data: 'b' }, { offset: 3, t: Infinity, data: 'c' }]);
  pb.clock = 700;
  assert.deepEqual(takeAll(pb).map((i) => i.t), [500, 700, 700, 700, 700]);
});

test('speed and skip idle move the clock; a blocked terminal stops it', () => {
  const cases = [
    // name, speed, skipIdle, head t, elapsed, world, clock after
    ['1x', 1, false, 5000, 100, {}, 1100],
    ['16x', 16, false, 50000, 100, {}, 2600],
    ['blocked', 16, false, 50000, 100, { blocked: true }, 1000],
    ['skip idle: a long silence jumps', 1, true, 60000, 1000, {}, 60000],
    ['no skip: it plays whole', 1, false, 60000, 1000, {}, 2000],
  ];
  for (const [name, speed, skip, headT, elapsed, w, want] of cases) {
    const pb = new Playback();
    pb.speed = speed;
    pb.skipIdle = skip;
    pb.start(1000);
    pb.add([chunk(0, headT)]);
    assert.equal(pb.advance(elapsed, world(w)), 'playing', name);
    assert.equal(pb.clock, want, name);
  }
});

test('with nothing queued: the end of an ended session, a live present, or a wait', () => {
  const ended = new Playback();
  ended.start(1000);
  assert.equal(ended.advance(100, world({ outDone: true })), 'ended');
  assert.equal(ended.advance(100, world({ outDone: true, fetching: true })), 'playing', 'a request on its way: not the end yet');

  const live = new Playback();
  live.skipIdle = false;
  live.start(1000);
  assert.equal(live.advance(5000, world({ outDone: true, live: true, now: 3000 })), 'playing');
  assert.equal(live.clock, 3000, 'a live session\'s clock never passes now');

  const waiting = new Playback();
  waiting.start(1000);
  waiting.advance(5000, world());
  assert.equal(waiting.clock, 1000, 'waiting for the answer, the clock stands');
});

test('delay sleeps until the next item is due, at most a tick', () => {
  const pb = new Playback();
  pb.skipIdle = false;
  pb.start(1000);
  assert.equal(pb.delay(false), TICK_MS, 'nothing queued');
  pb.add([chunk(0, 1040)]);
  assert.equal(pb.delay(false), 40);
  assert.equal(pb.delay(true), TICK_MS, 'blocked: a tick');
  pb.speed = 4;
  assert.equal(pb.delay(false), 10);
  pb.clock = 2000;
  assert.equal(pb.delay(false), 0, 'overdue');
  pb.speed = 1;
  pb.clock = 1000;
  pb.clear();
  pb.add([chunk(0, 90000)]);
  pb.skipIdle = true;
  assert.equal(pb.delay(false), TICK_MS, 'a silence skipped to 1 s is still slept a tick at a time');
});

test('enoughAhead asks for more until seconds and bytes are buffered', () => {
  const pb = new Playback();
  pb.start(0);
  assert.equal(pb.enoughAhead(1000), false, 'empty');
  pb.add([chunk(0, 1, 'x'.repeat(600)), chunk(600, AHEAD_MS + 10, 'y')]);
  assert.equal(pb.enoughAhead(1000), true);
  assert.equal(pb.enoughAhead(4000), false, 'too few bytes for the batch');
  pb.speed = 2;
  assert.equal(pb.enoughAhead(1000), false, 'at 2x, 8 s of recording is 4 s of playing');
});

test('pausedAt is the clock, or the last written when a due item waits', () => {
  const pb = new Playback();
  pb.skipIdle = false;
  pb.start(1000);
  pb.add([chunk(0, 1000), chunk(1, 1500)]);
  pb.take();
  pb.clock = 1200;
  assert.equal(pb.pausedAt(), 1200);
  pb.clock = 1600; // due, but the terminal is behind: not written
  assert.equal(pb.pausedAt(), 1000);
});

test('a long playback keeps its queue short', () => {
  const pb = new Playback();
  pb.start(0);
  const n = 5000;
  pb.add(Array.from({ length: n }, (_, i) => chunk(i, i)));
  pb.clock = n;
  assert.equal(takeAll(pb).length, n);
  assert.equal(pb.head, undefined);
  assert.equal(pb.queuedBytes, 0);
});
