// What the page draws for predictive echo (web/src/predictdraw.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { marks, markKey, change } = await load('predictdraw.ts');

/** A screen row 0 showing "$ ab" and blanks after it. */
const cell = (r, c) => (r === 0 ? '$ ab'[c] ?? ' ' : ' ');
const show = (ms) => ms.map((m) => `${m.row},${m.col},${m.char},${m.cls}`).sort();

test('marks: the predicted cells, the predicted cursor and the real one hidden', () => {
  const cases = [
    // what, view, real cursor, cols, want
    ['nothing predicted', { cells: [], cursor: null }, { row: 0, col: 4 }, 80, []],
    [
      'typed at the end: the cursor after it, the real one covered by the first',
      { cells: [{ row: 0, col: 4, char: 'c' }, { row: 0, col: 5, char: 'd' }], cursor: { row: 0, col: 6 } },
      { row: 0, col: 4 },
      80,
      ['0,4,c,tk-predict', '0,5,d,tk-predict', '0,6, ,tk-predict-cursor'],
    ],
    [
      'a backspace predicted: the real cursor hidden under its own character',
      { cells: [{ row: 0, col: 3, char: ' ' }], cursor: { row: 0, col: 3 } },
      { row: 0, col: 4 },
      80,
      ['0,3, ,tk-predict tk-predict-cursor', '0,4, ,tk-predict-mask'],
    ],
    ['a left arrow predicted: the cursor over a character shown', { cells: [], cursor: { row: 0, col: 2 } }, { row: 0, col: 4 }, 80, ['0,2,a,tk-predict-cursor', '0,4, ,tk-predict-mask']],
    ['the cursor where the real one is: not drawn', { cells: [{ row: 0, col: 4, char: 'c' }], cursor: { row: 0, col: 4 } }, { row: 0, col: 4 }, 80, ['0,4,c,tk-predict']],
    ['cells only (after a key it cannot predict): no cursor', { cells: [{ row: 0, col: 4, char: 'c' }], cursor: null }, { row: 0, col: 3 }, 80, ['0,4,c,tk-predict']],
    ['a cell predicted twice: drawn once, the later', { cells: [{ row: 0, col: 4, char: 'c' }, { row: 0, col: 4, char: 'x' }], cursor: null }, { row: 0, col: 4 }, 80, ['0,4,x,tk-predict']],
    [
      'hostile: outside the columns, negative, not a number',
      {
        cells: [
          { row: 0, col: 80, char: 'z' },
          { row: 0, col: -1, char: 'y' },
          { row: NaN, col: 1, char: 'w' },
          { row: 0, col: 1.5, char: 'v' },
        ],
        cursor: { row: 0, col: 81 },
      },
      { row: 0, col: 79 },
      80,
      ['0,79, ,tk-predict-mask'],
    ],
    ['no columns at all', { cells: [{ row: 0, col: 0, char: 'a' }], cursor: { row: 0, col: 1 } }, { row: 0, col: 0 }, 0, []],
  ];
  for (const [what, view, cur, cols, want] of cases) assert.deepEqual(show(marks(view, cur, cols, cell)), want.sort(), what);
});

test('markKey: marks that draw something else have other keys', () => {
  const m = (row, col, char, cls = 'tk-predict') => ({ row, col, char, cls });
  const keys = [m(0, 1, ':'), m(0, 1, '::'), m(0, 1, ''), m(0, 11, ''), m(1, 1, ''), m(0, 1, ':', 'tk-predict tk-predict-cursor'), m(0, 1, ' ', 'tk-predict-mask'), m(0, 1, '1:'), m(0, 1, '😀')].map(markKey);
  assert.equal(new Set(keys).size, keys.length, JSON.stringify(keys));
  assert.equal(markKey(m(0, 1, ':')), markKey(m(0, 1, ':')));
});

test('change: only what differs is removed and added', () => {
  const m = (col, char, cls = 'tk-predict') => ({ row: 0, col, char, cls });
  const keys = (ms) => ms.map(markKey);
  const cases = [
    // what, drawn, want, removed, added
    ['nothing to nothing', [], [], [], []],
    ['first key', [], [m(4, 'c'), m(5, ' ', 'tk-predict-cursor')], [], [m(4, 'c'), m(5, ' ', 'tk-predict-cursor')]],
    ['the same again', [m(4, 'c'), m(5, ' ', 'tk-predict-cursor')], [m(4, 'c'), m(5, ' ', 'tk-predict-cursor')], [], []],
    ['the next key: its cell and the cursor moved', [m(4, 'c'), m(5, ' ', 'tk-predict-cursor')], [m(4, 'c'), m(5, 'd'), m(6, ' ', 'tk-predict-cursor')], [m(5, ' ', 'tk-predict-cursor')], [m(5, 'd'), m(6, ' ', 'tk-predict-cursor')]],
    ['confirmed by the echo: all removed', [m(4, 'c'), m(5, ' ', 'tk-predict-cursor')], [], [m(4, 'c'), m(5, ' ', 'tk-predict-cursor')], []],
    ['the same cell, another character: replaced', [m(4, 'c')], [m(4, 'x')], [m(4, 'c')], [m(4, 'x')]],
    ['the same cell and character, now with the cursor: replaced', [m(4, 'c')], [m(4, 'c', 'tk-predict tk-predict-cursor')], [m(4, 'c')], [m(4, 'c', 'tk-predict tk-predict-cursor')]],
    ['wanted twice: added once', [], [m(4, 'c'), m(4, 'c')], [], [m(4, 'c')]],
    ['drawn twice (a hostile list): removed once', [m(4, 'c'), m(4, 'c')], [], [m(4, 'c')], []],
  ];
  for (const [what, drawn, want, removed, added] of cases) {
    const c = change(keys(drawn), want);
    assert.deepEqual(c.remove.sort(), keys(removed).sort(), `${what}: removed`);
    assert.deepEqual(show(c.add), show(added), `${what}: added`);
  }
});

test('change: typing a line changes two marks a key, and what is drawn is what is wanted', () => {
  let drawn = new Set();
  const cells = [];
  for (let col = 2; col < 40; col++) {
    cells.push({ row: 0, col, char: String.fromCharCode(97 + (col % 26)) });
    const want = marks({ cells: [...cells], cursor: { row: 0, col: col + 1 } }, { row: 0, col: 2 }, 80, cell);
    const c = change(drawn, want);
    assert.ok(c.add.length <= 2 && c.remove.length <= 1, `key at ${col}: ${JSON.stringify(c)}`);
    for (const k of c.remove) drawn.delete(k);
    for (const m of c.add) drawn.add(markKey(m));
    assert.deepEqual([...drawn].sort(), want.map(markKey).sort(), `key at ${col}`);
  }
});
