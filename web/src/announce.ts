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
  /** lost says that a lost connection was said and its return is not yet. */
  lost?: boolean;
}

/**
 * announcement is what to say when a session named name went from prev to
 * next (or null), and the session as now heard. The first sight of a
 * session says nothing (a page that opens is not news); a lost connection
 * is spoken of for the active session only (every tab drops together),
 * and only a connection that was live (a restored session connecting
 * again has not lost one); its return only after its loss was said; an
 * exit and a restore for any session.
 */
export function announcement(name: string, prev: Heard | undefined, next: Heard, active: boolean): { say: string | null; heard: Heard } {
  const heard: Heard = { conn: next.conn, ended: next.ended, text: next.text, lost: !!prev?.lost && !next.ended };
  const say = (s: string | null) => ({ say: s, heard });
  if (!prev) return say(null);
  if (!prev.ended && next.ended) {
    if (next.ended === 'interrupted') return say(`${name} was interrupted.`);
    if (next.ended === 'closed') return say(`${name} ${next.text === 'paused' ? 'was paused' : 'ended'}.`);
    const m = /^exited (-?\d+)$/.exec(next.text);
    return say(m ? `${name} exited with status ${m[1]}.` : `${name} exited.`);
  }
  if (prev.ended && !next.ended) return say(`${name} restored.`);
  if (next.ended) return say(null);
  if (active && prev.conn === 'live' && next.conn === 'reconnecting') {
    heard.lost = true;
    return say(`Reconnecting to ${name}…`);
  }
  if (heard.lost && next.conn === 'live') {
    heard.lost = false;
    return say(`Reconnected to ${name}.`);
  }
  return say(null);
}
