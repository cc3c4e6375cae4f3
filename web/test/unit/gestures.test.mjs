// The terminal's touch gestures (web/src/gestures.ts): the text size a
// pinch asks for, the word a long press selects, when a press is long.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { pinchFont, wordAt, pressIs, LONG_PRESS_MS, SLOP_PX } = await load('gestures.ts');

test('pinchFont follows the spread of the fingers, within bounds', () => {
  const cases = [
    // font, start distance, distance, min, max, want
    [14, 100, 100, 8, 32, 14],
    [14, 100, 200, 8, 32, 28],
    [14, 100, 250, 8, 32, 32], // capped
    [14, 100, 50, 8, 32, 8], // 7 floored to the minimum
    [14, 80, 100, 8, 32, 18], // 17.5 rounds up
    [14, 0, 100, 8, 32, 14], // fingers on one point: no scale
    [14, -5, 100, 8, 32, 14],
    [14, 100, 0, 8, 32, 14],
    [14, 100, NaN, 8, 32, 14],
    [14, NaN, 100, 8, 32, 14],
    [14, Infinity, 100, 8, 32, 14],
    [14, 100, Infinity, 8, 32, 14],
    [NaN, 100, 200, 8, 32, NaN],
    [14, 1e-300, 1e300, 8, 32, 32], // the ratio overflows to Infinity: capped
  ];
  for (const [f, d0, d, min, max, want] of cases) assert.deepEqual(pinchFont(f, d0, d, min, max), want, JSON.stringify([f, d0, d]));
});

test('wordAt: the run of non-blank characters under a column', () => {
  const line = 'alpha bravo-charlie (delta) /usr/lib/x.so "q"';
  const cases = [
    [0, [0, 5]],
    [4, [0, 5]],
    [5, null], // a space
    [8, [6, 19]], // bravo-charlie is one word
    [19, null],
    [20, null], // a bracket
    [22, [21, 26]],
    [30, [28, 41]], // a path
    [43, [43, 44]],
    [-1, null],
    [line.length, null],
    [1.5, null],
    [NaN, null],
  ];
  for (const [col, want] of cases) assert.deepEqual(wordAt(line, col), want, `column ${col}`);
  assert.equal(wordAt('', 0), null);
  assert.deepEqual(wordAt('日本語 x', 1), [0, 3], 'one character per column, not per UTF-16 unit');
  assert.deepEqual(wordAt('😀😀 a', 1), [0, 2]);
  assert.deepEqual(wordAt('x'.repeat(100000), 50000), [0, 100000]);
});

test('pressIs: still and long, still and short, or moved', () => {
  const p = { x: 100, y: 100, at: 1000 };
  const cases = [
    [100, 100, 1000, 'short'],
    [100, 100, 1000 + LONG_PRESS_MS - 1, 'short'],
    [100, 100, 1000 + LONG_PRESS_MS, 'long'],
    [100 + SLOP_PX, 100, 5000, 'long'],
    [100 + SLOP_PX + 1, 100, 1100, 'moved'],
    [107.1, 107.1, 1100, 'moved'], // diagonal: the distance, not each axis
    [100, 100, 0, 'short'], // a clock that went back is not long
    [NaN, 100, 5000, 'long'], // hypot(NaN) is NaN: never "moved", judged by time
  ];
  for (const [x, y, now, want] of cases) assert.equal(pressIs(p, x, y, now), want, JSON.stringify([x, y, now]));
});

test('swipeStep: sideways and far enough, or no swipe', async () => {
  const { swipeStep, SWIPE_PX } = await load('gestures.ts');
  const cases = [
    [-SWIPE_PX, 0, 1], // to the left: the next tab
    [SWIPE_PX, 0, -1],
    [-(SWIPE_PX - 1), 0, 0], // too short: a tap
    [-100, 50, 1],
    [-100, 51, 0], // as much down as across: a scroll, not a swipe
    [0, -200, 0],
    [0, 0, 0],
    [NaN, 0, 0],
    [-Infinity, 0, 0],
    [-100, NaN, 0],
  ];
  for (const [dx, dy, want] of cases) assert.equal(swipeStep(dx, dy), want, JSON.stringify([dx, dy]));
});
