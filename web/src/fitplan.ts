// How a terminal at the session's size sits in this page's window. Pure
// functions (tested under node): no DOM.
//
// A viewer's terminal always has the session's size (columns and rows);
// only how it is drawn follows the window: at the page's text size when it
// fits (centred, the space around it outside the terminal), else at a
// smaller text size that fits, down to MIN_FONT, else at MIN_FONT with the
// box panning (scrollbars, a drag on a phone). Nothing ever wraps: the
// window decides the text size, never the columns.

/** The smallest text a terminal is shrunk to before it pans instead (CSS pixels). */
export const MIN_FONT = 9;

/** Font sizes are tried in quarter pixels: finer than the eye can tell apart. */
const STEP = 0.25;

/** The most columns or rows a session has (wire.MaxDim). */
export const MAX_DIM = 1000;

export interface Box {
  width: number;
  height: number;
}

export interface Grid {
  cols: number;
  rows: number;
}

/** CellAt gives a cell's size in CSS pixels at a font size (as xterm.js will draw it). */
export type CellAt = (font: number) => Box;

/** Plan is how to draw: at font, taking width×height pixels; pan: the box scrolls to show it all. */
export interface Plan {
  font: number;
  width: number;
  height: number;
  pan: boolean;
}

const good = (n: number) => Number.isFinite(n) && n > 0;

/** extent is the pixels a grid takes at font (extra: beside the cells, the scrollbar); null when unmeasurable. */
function extent(grid: Grid, font: number, cellAt: CellAt, extra: number): Box | null {
  const c = cellAt(font);
  if (!c || !good(c.width) || !good(c.height)) return null;
  return { width: Math.ceil(grid.cols * c.width + extra), height: Math.ceil(grid.rows * c.height) };
}

const fits = (e: Box, box: Box) => e.width <= box.width && e.height <= box.height;

/**
 * plan decides how a terminal of grid draws in box at the page's text size
 * pref: at pref when it fits; else the largest quarter-pixel size from
 * MIN_FONT (or pref, if smaller) up that fits; else at that least size,
 * panning. A box or cell that cannot be measured (hidden, zero, NaN) draws
 * at pref and pans, which hides nothing.
 */
export function plan(box: Box, grid: Grid, pref: number, cellAt: CellAt, extra = 0): Plan {
  const g = { cols: clampDim(grid.cols, 1), rows: clampDim(grid.rows, 1) };
  const font = good(pref) ? pref : 14;
  const at = (f: number) => extent(g, f, cellAt, good(extra) ? extra : 0);
  const natural = at(font);
  if (!natural) return { font, width: 0, height: 0, pan: true };
  if (!good(box.width) || !good(box.height)) return { font, ...natural, pan: true };
  if (fits(natural, box)) return { font, ...natural, pan: false };
  const least = Math.min(MIN_FONT, font);
  const small = at(least);
  if (!small || !fits(small, box)) return { font: least, ...(small ?? natural), pan: true };
  // The largest step in [least, font) that fits, by bisection (cell sizes
  // grow with the font, give or take a rounding).
  let lo = 0;
  let hi = Math.floor((font - least) / STEP);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    const e = at(least + mid * STEP);
    if (e && fits(e, box)) lo = mid;
    else hi = mid - 1;
  }
  const f = least + lo * STEP;
  return { font: f, ...(at(f) ?? small), pan: false };
}

/** clampDim keeps a column or row count in low..MAX_DIM (NaN: low). */
function clampDim(n: number, low: number): number {
  if (!Number.isFinite(n)) return low;
  return Math.max(low, Math.min(MAX_DIM, Math.floor(n)));
}

/**
 * windowGrid is the size this window would give the session at the page's
 * text size (cell: a cell at it; extra: pixels beside the cells): what the
 * page reports and what "fit to this window" asks for. null when the box or
 * the cell cannot be measured (a hidden terminal).
 */
export function windowGrid(box: Box, cell: Box, extra = 0): Grid | null {
  if (!good(box.width) || !good(box.height) || !good(cell.width) || !good(cell.height)) return null;
  const cols = Math.floor((box.width - (good(extra) ? extra : 0)) / cell.width);
  const rows = Math.floor(box.height / cell.height);
  if (cols < 2 || rows < 1) return null;
  return { cols: clampDim(cols, 2), rows: clampDim(rows, 1) };
}

/**
 * xtermCell is a cell's size in CSS pixels as xterm.js's renderers compute
 * it from the font's measured character (charW×charH CSS pixels): the
 * height rounded up to device pixels, then times the line height, rounded
 * down.
 */
export function xtermCell(charW: number, charH: number, dpr: number, lineHeight: number): Box {
  const d = good(dpr) ? dpr : 1;
  if (!good(charW) || !good(charH) || !good(lineHeight)) return { width: 0, height: 0 };
  return { width: charW, height: Math.floor(Math.ceil(charH * d) * lineHeight) / d };
}
