// The order of the tabs (web/src/taborder.ts): going round, Alt+digit,
// moving a tab, and a saved order meeting the server's list.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { cycled, numbered, moved, merged, savedOrder } = await load('taborder.ts');

const abc = ['a', 'b', 'c'];

test('cycled goes round both ways', () => {
  const cases = [
    [abc, 'a', 1, 'b'],
    [abc, 'c', 1, 'a'],
    [abc, 'a', -1, 'c'],
    [abc, 'b', -4, 'a'],
    [abc, 'b', 300, 'b'],
    [abc, null, 1, 'b'], // none active: from the first
    [abc, 'gone', 1, 'a'], // the active one was removed: from before the first
    [['a'], 'a', 1, 'a'],
    [[], null, 1, null],
    [[], 'a', -1, null],
  ];
  for (const [order, active, delta, want] of cases) assert.equal(cycled(order, active, delta), want, `${order} ${active} ${delta}`);
});

test('numbered: Alt+1…8 by place, Alt+9 the last', () => {
  const many = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11'];
  const cases = [
    [abc, 1, 'a'],
    [abc, 3, 'c'],
    [abc, 4, null],
    [abc, 9, 'c'],
    [many, 8, '8'],
    [many, 9, '11'],
    [[], 9, null],
    [[], 1, null],
    [abc, 0, null],
    [abc, 10, null],
    [abc, -1, null],
    [abc, 1.5, null],
    [abc, NaN, null],
  ];
  for (const [order, n, want] of cases) assert.equal(numbered(order, n), want, `${order} ${n}`);
});

test('moved swaps with a neighbour, never out of the bar', () => {
  const cases = [
    [abc, 'a', 1, ['b', 'a', 'c']],
    [abc, 'c', -1, ['a', 'c', 'b']],
    [abc, 'a', -1, null],
    [abc, 'c', 1, null],
    [abc, null, 1, null],
    [abc, 'x', 1, null],
    [[], 'a', 1, null],
  ];
  for (const [order, id, delta, want] of cases) assert.deepEqual(moved(order, id, delta), want, `${order} ${id} ${delta}`);
  const order = [...abc];
  moved(order, 'a', 1);
  assert.deepEqual(order, abc, 'the order given is not changed');
});

test('merged keeps the saved order of what exists, new sessions after', () => {
  const cases = [
    [[], ['a', 'b'], ['a', 'b']],
    [['b', 'a'], ['a', 'b'], ['b', 'a']],
    [['b', 'gone', 'a'], ['a', 'b', 'c'], ['b', 'a', 'c']],
    [['x', 'y'], [], []],
    [['a', 'a', 'b', 'a'], ['a', 'b'], ['a', 'b']], // a tampered store: each once
    [['__proto__', 'a'], ['a'], ['a']],
  ];
  for (const [saved, ids, want] of cases) assert.deepEqual(merged(saved, ids), want, `${saved} + ${ids}`);
});

test('savedOrder reads only a list of strings', () => {
  assert.deepEqual(savedOrder(['a', 1, null, 'b', { x: 1 }]), ['a', 'b']);
  assert.deepEqual(savedOrder('a,b'), []);
  assert.deepEqual(savedOrder(null), []);
  assert.deepEqual(savedOrder(undefined), []);
  assert.deepEqual(savedOrder({ length: 2, 0: 'a' }), []);
});
