// What the page draws for predictive echo (predictview.ts draws it in a
// layer over xterm.js's screen), decided without the DOM: the marks that
// cover the cells, and from the marks drawn already, which to add and
// which to remove. Pure functions, tested under node.
//
// A key typed at the end of a line changes two marks (its character and
// the predicted cursor); the others stay as they are. Drawing only that
// change, rather than every mark again, keeps the frame that shows the
// key short: each new mark is an element to create, style and lay out in
// that frame, and each removed one is an element taken out.

import type { View } from './predict';

/** One cell drawn over the terminal: the character and its classes. */
export interface Mark {
  row: number;
  col: number;
  char: string;
  cls: string;
}

/**
 * marks turns the predictor's view into the cells to draw: each predicted
 * cell; where the prediction leaves the cursor (cur is the real one), the
 * cursor drawn there and the real one hidden under its own cell, unless a
 * predicted cell covers it already. cell gives the character the screen
 * shows at a cell. A mark outside the cols columns is dropped; a cell
 * predicted twice is drawn once.
 */
export function marks(v: View, cur: { row: number; col: number }, cols: number, cell: (row: number, col: number) => string): Mark[] {
  const out = new Map<string, Mark>();
  for (const c of v.cells) out.set(`${c.row}:${c.col}`, { row: c.row, col: c.col, char: c.char, cls: 'tk-predict' });
  const vc = v.cursor;
  if (vc && (vc.row !== cur.row || vc.col !== cur.col)) {
    const at = out.get(`${vc.row}:${vc.col}`);
    if (at) at.cls += ' tk-predict-cursor';
    else out.set(`${vc.row}:${vc.col}`, { row: vc.row, col: vc.col, char: cell(vc.row, vc.col), cls: 'tk-predict-cursor' });
    if (!out.has(`${cur.row}:${cur.col}`)) out.set(`${cur.row}:${cur.col}`, { row: cur.row, col: cur.col, char: cell(cur.row, cur.col), cls: 'tk-predict-mask' });
  }
  return [...out.values()].filter((m) => Number.isInteger(m.row) && Number.isInteger(m.col) && m.col >= 0 && m.col < cols);
}

/** markKey names a mark: two marks with the same key draw the same thing. */
export function markKey(m: Mark): string {
  // The character last: it may be any text, ':' included.
  return `${m.row}:${m.col}:${m.cls}:${m.char}`;
}

/**
 * change says how to go from the marks drawn (their keys) to want: the
 * keys to remove and the marks to add; every other mark drawn stays.
 */
export function change(drawn: Iterable<string>, want: Mark[]): { remove: string[]; add: Mark[] } {
  const keep = new Set<string>();
  const add: Mark[] = [];
  const have = new Set(drawn);
  for (const m of want) {
    const k = markKey(m);
    if (keep.has(k)) continue;
    keep.add(k);
    if (!have.has(k)) add.push(m);
  }
  return { remove: [...have].filter((k) => !keep.has(k)), add };
}
