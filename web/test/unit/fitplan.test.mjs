// How a terminal at the session's size sits in the window (web/src/fitplan.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { plan, windowGrid, xtermCell, MIN_FONT } = await load('fitplan.ts');

// A monospace font: 0.6 em wide, 1.2 em tall, lines 1.15 apart.
const cellAt = (f) => xtermCell(f * 0.6, f * 1.2, 1, 1.15);

test('plan: at the page size when it fits, smaller down to 9 px, then pans', () => {
  const cases = [
    // what, box, grid, pref, want font, want pan
    ['fits: centred at its size', { width: 1400, height: 900 }, { cols: 80, rows: 24 }, 14, 14, false],
    ['exactly fits', { width: 8 * 100, height: Math.floor(Math.ceil(12 * 1.2) * 1.15) * 20 }, { cols: 100, rows: 20 }, 12, 12, false],
    ['desktop at a phone session: centred', { width: 1200, height: 700 }, { cols: 44, rows: 30 }, 14, 14, false],
    ['a bit too wide: shrinks', { width: 1000, height: 700 }, { cols: 149, rows: 41 }, 14, null, false],
    ['phone at a desktop session: pans at 9 px', { width: 386, height: 700 }, { cols: 149, rows: 41 }, 14, MIN_FONT, true],
    ['page text smaller than 9: never enlarged, pans', { width: 100, height: 100 }, { cols: 80, rows: 24 }, 8, 8, true],
    ['1000x1000 in a small box', { width: 800, height: 600 }, { cols: 1000, rows: 1000 }, 14, MIN_FONT, true],
    ['hidden box (0x0): pans at the page size', { width: 0, height: 0 }, { cols: 80, rows: 24 }, 14, 14, true],
    ['NaN box', { width: NaN, height: 500 }, { cols: 80, rows: 24 }, 14, 14, true],
    ['hostile grid: clamped, no throw', { width: 500, height: 500 }, { cols: -5, rows: Infinity }, 14, null, null],
    ['NaN page font: 14', { width: 2000, height: 2000 }, { cols: 80, rows: 24 }, NaN, 14, false],
  ];
  for (const [what, box, grid, pref, font, pan] of cases) {
    const p = plan(box, grid, pref, cellAt, 8);
    if (font !== null) assert.equal(p.font, font, `${what}: font ${JSON.stringify(p)}`);
    if (pan !== null) assert.equal(p.pan, pan, `${what}: pan ${JSON.stringify(p)}`);
    if (!p.pan) {
      assert.ok(p.width <= box.width && p.height <= box.height, `${what}: ${p.width}x${p.height} is outside ${box.width}x${box.height}`);
      assert.ok(p.font >= Math.min(MIN_FONT, pref || 14), `${what}: below the least font`);
    }
    assert.ok(Number.isFinite(p.font) && Number.isFinite(p.width) && Number.isFinite(p.height), `${what}: ${JSON.stringify(p)}`);
  }
});

test('plan: a shrunk terminal takes the largest quarter pixel that fits', () => {
  const box = { width: 1000, height: 700 };
  const p = plan(box, { cols: 149, rows: 41 }, 14, cellAt, 8);
  assert.equal(p.font % 0.25, 0);
  const bigger = plan({ width: 1e6, height: 1e6 }, { cols: 149, rows: 41 }, p.font + 0.25, cellAt, 8);
  assert.ok(bigger.width > box.width || bigger.height > box.height, `${p.font + 0.25} would fit too`);
});

test('plan: a cell that cannot be measured pans at the page size', () => {
  for (const bad of [() => ({ width: 0, height: 10 }), () => ({ width: NaN, height: NaN }), () => null]) {
    const p = plan({ width: 500, height: 500 }, { cols: 80, rows: 24 }, 14, bad, 8);
    assert.deepEqual([p.font, p.pan], [14, true]);
  }
  // Measurable at the page size only: pans there.
  const p = plan({ width: 100, height: 100 }, { cols: 80, rows: 24 }, 14, (f) => (f === 14 ? cellAt(f) : { width: 0, height: 0 }), 8);
  assert.equal(p.pan, true);
});

test('windowGrid: what the window holds at the page size', () => {
  const cases = [
    [{ width: 1200, height: 700 }, { width: 8.4, height: 19 }, 8, { cols: 141, rows: 36 }],
    [{ width: 386, height: 700 }, { width: 8.4, height: 19 }, 8, { cols: 45, rows: 36 }],
    [{ width: 1e9, height: 1e9 }, { width: 1, height: 1 }, 0, { cols: 1000, rows: 1000 }],
    [{ width: 10, height: 700 }, { width: 8.4, height: 19 }, 8, null],
    [{ width: 0, height: 0 }, { width: 8.4, height: 19 }, 8, null],
    [{ width: 500, height: 500 }, { width: 0, height: 19 }, 8, null],
    [{ width: 500, height: 500 }, { width: NaN, height: 19 }, 8, null],
    [{ width: 500, height: 10 }, { width: 8, height: 19 }, 8, null],
    [{ width: 500, height: 500 }, { width: 8, height: 19 }, NaN, { cols: 62, rows: 26 }],
  ];
  for (const [box, cell, extra, want] of cases) assert.deepEqual(windowGrid(box, cell, extra), want, JSON.stringify([box, cell, extra]));
});

test('xtermCell: rounded as xterm.js rounds', () => {
  assert.deepEqual(xtermCell(8.4, 16.5, 1, 1.15), { width: 8.4, height: Math.floor(17 * 1.15) });
  assert.deepEqual(xtermCell(8.4, 16.5, 2, 1.15), { width: 8.4, height: Math.floor(33 * 1.15) / 2 });
  assert.deepEqual(xtermCell(NaN, 16, 1, 1.15), { width: 0, height: 0 });
  assert.deepEqual(xtermCell(8, 16, 0, 1), { width: 8, height: 16 });
});
