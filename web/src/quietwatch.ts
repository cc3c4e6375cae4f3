// What the user has seen of each session, for the tabs' quiet badge
// (quiet.ts decides; this gathers its input). The user has seen a
// session's output up to what its terminal had received when they last
// looked at its tab; what it printed before the page first listed it is
// no news either.

import { quietNote, QuietNote } from './quiet';
import type { TermSession } from './session';

export class QuietWatch {
  /** The output offset the user had seen of each session when they last looked. */
  private readonly seen = new Map<string, number>();

  /** watched says whether the user is looking at a session: its tab is active and the page visible. */
  constructor(private readonly watched: (ts: TermSession) => boolean) {}

  /** listed: the page learnt of the session, which had printed up to end. */
  listed(id: string, end: number): void {
    if (!this.seen.has(id)) this.seen.set(id, end);
  }

  forget(id: string): void {
    this.seen.delete(id);
  }

  /** look records that the user has seen what ts's terminal has received. */
  look(ts: TermSession): void {
    this.seen.set(ts.id, Math.max(ts.written ?? 0, this.seen.get(ts.id) ?? 0));
  }

  /** note is ts's tab's quiet badge: a command finished, or output stopped, while the user was away. */
  note(ts: TermSession): QuietNote | null {
    const i = ts.info;
    return quietNote({
      running: i.state === 'running' && !ts.exit,
      watched: this.watched(ts),
      // Output this page drew after the list was read: the list's quiet is over.
      quietSince: ts.written !== null && ts.written > i.end_offset ? null : (i.quiet_since ?? null),
      endOffset: i.end_offset,
      written: ts.written,
      drawn: ts.drawn,
      seen: this.seen.get(ts.id) ?? i.end_offset,
      shell: i.shell ?? null,
      readiness: i.activity?.state,
    });
  }
}
