// Clipboard writes a program asks for (OSC 52): what the request says, and
// whether the page applies it, asks, or refuses. Pure (no DOM), tested
// under node (test/unit); session.ts and app.ts do the rest.
//
// A program can put anything on the clipboard, to be pasted later where the
// user trusts it, so a write is applied only when the page is its user's
// own (not a share link's or a read-only token's, not a view-only page),
// only from live output (never from what a page catches up on, replays or
// resyncs, which the user never saw happen), and as the owner's setting
// says: ask (the default), allow or deny. Reading the clipboard is never
// answered.

/** The owner's setting for OSC 52 writes. */
export type ClipPolicy = 'ask' | 'allow' | 'deny';
export const CLIP_POLICIES: readonly ClipPolicy[] = ['ask', 'allow', 'deny'];

/** Osc52 is an OSC 52 request: a write of text, or a read. */
export type Osc52 = { kind: 'write'; text: string } | { kind: 'read' };

/** parseOsc52 reads "Pc;Pd" (Pd base64, or ? for a read); null when it is neither. */
export function parseOsc52(data: string): Osc52 | null {
  const semi = data.indexOf(';');
  const b64 = semi >= 0 ? data.slice(semi + 1) : data;
  if (b64 === '?') return { kind: 'read' };
  if (b64 === '') return null;
  try {
    const bin = atob(b64);
    const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
    return { kind: 'write', text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return null; // not base64 or not UTF-8: ignored, as terminals do
  }
}

/** What a page knows when a write arrives. */
export interface ClipContext {
  /** guest: a share link's or a read-only token's page. */
  guest: boolean;
  /** viewOnly: this page watches the session without typing. */
  viewOnly: boolean;
  /** live: the write came in output that arrived live, not in catching up, a replay or a resync. */
  live: boolean;
  policy: ClipPolicy;
  /** allowedHere: the user chose "Always for this session" for the write's session. */
  allowedHere: boolean;
}

export type ClipDecision = 'apply' | 'ask' | 'refuse';

/** decideClipWrite is what the page does with an OSC 52 write. */
export function decideClipWrite(c: ClipContext): ClipDecision {
  if (c.guest || c.viewOnly || !c.live || c.policy === 'deny') return 'refuse';
  if (c.policy === 'allow' || c.allowedHere) return 'apply';
  return 'ask';
}

/**
 * liveSplit cuts output bytes [start, end) at liveFrom, the offset where
 * live output begins (the log's end when the page connected): how many of
 * them are caught up (before it) and how many are live.
 */
export function liveSplit(start: number, end: number, liveFrom: number): { old: number; live: number } {
  const cut = Math.min(Math.max(liveFrom, start), end);
  return { old: cut - start, live: end - cut };
}
