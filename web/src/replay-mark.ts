// Where a search hit's match is on the replayed screen, to highlight it.
// The replay shows the screen just after the match's last byte was drawn,
// so the match usually ends at the cursor; otherwise it is the nearest
// occurrence above the cursor (the newest text printed so far). A pure
// function (tested under node): no DOM, no terminal.

/** A match on the screen: its line (an index into the lines given) and where in that line's text it starts and ends. */
export interface Mark {
  line: number;
  start: number;
  end: number;
}

/**
 * findMark finds query (any case, as the server's search does) in lines
 * (the terminal's buffer, a string per line), looking first for the
 * occurrence on the cursor's line that ends nearest before the cursor's
 * position (cursor.col, an index into that line's text), then upwards;
 * null when there is none or the query is blank.
 */
export function findMark(lines: readonly string[], cursor: { line: number; col: number }, query: string): Mark | null {
  const q = query.toLowerCase();
  if (!q.trim() || lines.length === 0) return null;
  const from = Math.min(Math.max(cursor.line, 0), lines.length - 1);
  for (let y = from; y >= 0; y--) {
    const text = lines[y].toLowerCase();
    // On the cursor's line, the last occurrence ending at or before the
    // cursor; on a line above, its last one.
    const limit = y === from && cursor.line === from ? Math.max(cursor.col, 0) : text.length;
    const at = limit >= q.length ? text.lastIndexOf(q, limit - q.length) : -1;
    if (at >= 0) return { line: y, start: at, end: at + q.length };
    if (y === from && cursor.line === from) {
      // Past the cursor on its own line (a match the cursor moved back over).
      const at = text.indexOf(q);
      if (at >= 0) return { line: y, start: at, end: at + q.length };
    }
  }
  return null;
}
