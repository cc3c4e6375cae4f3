// Where a search hit's match is on the replayed screen (web/src/replay-mark.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { findMark } = await load('replay-mark.ts');

test('findMark: the match ending at the cursor, else the nearest above', () => {
  const screen = ['old replay-marker-one', 'prompt$ echo replay-marker-one', '', 'prompt$ echo replay-marker-one again'];
  const cases = [
    // cursor, query, want
    [{ line: 1, col: 30 }, 'replay-marker-one', { line: 1, start: 13, end: 30 }],
    [{ line: 1, col: 30 }, 'REPLAY-marker-ONE', { line: 1, start: 13, end: 30 }],
    // The cursor before the match on its line: the line's match anyway.
    [{ line: 1, col: 5 }, 'replay-marker-one', { line: 1, start: 13, end: 30 }],
    // On an empty line: the nearest above.
    [{ line: 2, col: 0 }, 'replay-marker-one', { line: 1, start: 13, end: 30 }],
    [{ line: 0, col: 21 }, 'replay', { line: 0, start: 4, end: 10 }],
    // Two on one line: the one ending nearest before the cursor.
    [{ line: 0, col: 12 }, 'e', { line: 0, start: 5, end: 6 }],
    [{ line: 3, col: 36 }, 'again', { line: 3, start: 31, end: 36 }],
    // Hostile: blank, missing, a cursor off the screen, no lines.
    [{ line: 1, col: 30 }, '', null],
    [{ line: 1, col: 30 }, '   ', null],
    [{ line: 1, col: 30 }, 'nowhere', null],
    [{ line: 99, col: 999 }, 'again', { line: 3, start: 31, end: 36 }],
    [{ line: -5, col: -1 }, 'old', { line: 0, start: 0, end: 3 }],
  ];
  for (const [cursor, q, want] of cases) assert.deepEqual(findMark(screen, cursor, q), want, `${JSON.stringify(cursor)} ${q}`);
  assert.equal(findMark([], { line: 0, col: 0 }, 'x'), null);
  assert.deepEqual(findMark(['aaaa'], { line: 0, col: 4 }, 'aa'), { line: 0, start: 2, end: 4 });
  assert.deepEqual(findMark(['aaaa'], { line: 0, col: 3 }, 'aa'), { line: 0, start: 1, end: 3 });
});
