// The deciding parts of the terminal's touch gestures: the text size a
// pinch asks for, the word a long press selects, and when a press is long.
// Pure (no DOM), tested under node (test/unit).

/** LONG_PRESS_MS is how long a finger rests before it selects. */
export const LONG_PRESS_MS = 500;
/** SLOP_PX is how far a resting finger may wander (a move beyond it is a scroll). */
export const SLOP_PX = 10;

/**
 * pinchFont is the text size for fingers dist apart that started at
 * startDist with the text at startFont: the size follows the spread,
 * rounded, within [min, max]. Distances that are not positive, or not
 * numbers, keep startFont.
 */
export function pinchFont(startFont: number, startDist: number, dist: number, min: number, max: number): number {
  if (!(startDist > 0) || !(dist > 0) || !Number.isFinite(startDist) || !Number.isFinite(dist) || !Number.isFinite(startFont)) return startFont;
  return Math.max(min, Math.min(max, Math.round((startFont * dist) / startDist)));
}

/**
 * wordAt is the word of line under column col, as [start, end) columns: a
 * run of characters that are not spaces nor brackets or quotes, so a path,
 * a URL or "bravo-charlie" is one word. A blank cell or a column off the
 * line gives null. line holds one character per column (wide characters
 * are the caller's to map).
 */
export function wordAt(line: string, col: number): [number, number] | null {
  const chars = [...line];
  if (!Number.isInteger(col) || col < 0 || col >= chars.length) return null;
  const inWord = (c: string | undefined) => c !== undefined && !/[\s()[\]{}<>"'`,;|]/.test(c);
  if (!inWord(chars[col])) return null;
  let s = col;
  let e = col + 1;
  while (s > 0 && inWord(chars[s - 1])) s--;
  while (e < chars.length && inWord(chars[e])) e++;
  return [s, e];
}

/** SWIPE_PX is how far a finger must travel sideways, more than up or down, to swipe. */
export const SWIPE_PX = 40;

/**
 * swipeStep is where a swipe from (0, 0) to (dx, dy) goes among tabs: a
 * swipe to the left is the next tab (+1), to the right the previous (-1),
 * anything else (short, mostly vertical, not a number) no swipe (0).
 */
export function swipeStep(dx: number, dy: number): -1 | 0 | 1 {
  if (!Number.isFinite(dx) || !Number.isFinite(dy)) return 0;
  if (Math.abs(dx) < SWIPE_PX || Math.abs(dx) < 2 * Math.abs(dy)) return 0;
  return dx < 0 ? 1 : -1;
}

/** Press is what a finger resting on the terminal has done so far. */
export interface Press {
  x: number;
  y: number;
  /** at is when the finger came down (ms, the caller's clock). */
  at: number;
}

/** pressIs says whether a press is still a candidate (tap or long press), and whether it is long at now. */
export function pressIs(p: Press, x: number, y: number, now: number): 'moved' | 'long' | 'short' {
  if (Math.hypot(x - p.x, y - p.y) > SLOP_PX) return 'moved';
  return now - p.at >= LONG_PRESS_MS ? 'long' : 'short';
}
