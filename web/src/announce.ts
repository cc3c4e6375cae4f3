// What the page says to a screen reader (an aria-live region) when a
// session changes: the connection lost and back, an exit, a restore. Pure
// (no DOM), tested under node (test/unit).

/** Heard is what an announcement compares: a session as the page last told it. */
export interface Heard {
  /** conn is the connection's state (session.ts ConnState). */
  conn: string;
  /** ended is the badge's class of an ended session ('exited-ok', 'interrupted', …), or '' while it runs. */
  ended: string;
  /** text is the badge's word ("exited 3", "interrupted"). */
  text: string;
}

/**
 * announcement is what to say when a session named name went from prev to
 * next, or null. The first sight of a session says nothing (a page that
 * opens is not news); the connection is spoken of for the active session
 * only (every tab drops together), an exit and a restore for any.
 */
export function announcement(name: string, prev: Heard | undefined, next: Heard, active: boolean): string | null {
  if (!prev) return null;
  if (!prev.ended && next.ended) {
    if (next.ended === 'interrupted') return `${name} was interrupted.`;
    if (next.ended === 'closed') return `${name} ${next.text === 'paused' ? 'was paused' : 'ended'}.`;
    const m = /^exited (-?\d+)$/.exec(next.text);
    return m ? `${name} exited with status ${m[1]}.` : `${name} exited.`;
  }
  if (prev.ended && !next.ended) return `${name} restored.`;
  if (!active || next.ended) return null;
  if (prev.conn !== 'reconnecting' && next.conn === 'reconnecting') return `Reconnecting to ${name}…`;
  if (prev.conn === 'reconnecting' && next.conn === 'live') return `Reconnected to ${name}.`;
  return null;
}
