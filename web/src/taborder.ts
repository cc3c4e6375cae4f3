// The order of the tabs: which tab a key goes to, how a move changes the
// order, how a saved order meets the server's list. Pure functions on
// arrays of session ids (no DOM), tested under node (test/unit).

/** cycled is the tab delta steps from active, wrapping around; null when there is none. */
export function cycled(order: readonly string[], active: string | null, delta: number): string | null {
  const n = order.length;
  if (!n) return null;
  const i = active ? order.indexOf(active) : 0;
  return order[(((i + delta) % n) + n) % n];
}

/** numbered is the tab Alt+n goes to: 1 to 8 by place, 9 the last. */
export function numbered(order: readonly string[], n: number): string | null {
  if (!Number.isInteger(n) || n < 1 || n > 9) return null;
  return (n === 9 ? order[order.length - 1] : order[n - 1]) ?? null;
}

/** moved is order with id swapped with its neighbour delta places away, or null when it cannot move. */
export function moved(order: readonly string[], id: string | null, delta: number): string[] | null {
  if (!id) return null;
  const i = order.indexOf(id);
  const j = i + delta;
  if (i < 0 || j < 0 || j >= order.length) return null;
  const out = [...order];
  [out[i], out[j]] = [out[j], out[i]];
  return out;
}

/**
 * merged keeps the saved order of the sessions that exist and puts the
 * others after them, in the order known (ids: the sessions, oldest first).
 */
export function merged(saved: readonly string[], ids: readonly string[]): string[] {
  const have = new Set(ids);
  const known = saved.filter((id, i) => have.has(id) && saved.indexOf(id) === i);
  const seen = new Set(known);
  return [...known, ...ids.filter((id) => !seen.has(id))];
}

/** savedOrder reads a stored order, dropping anything that is not a list of strings. */
export function savedOrder(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}
