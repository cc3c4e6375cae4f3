// The page's aria-live region (#announce): what a screen reader is told of
// the sessions (the decisions are announce.ts's) and of the page's notices.

import { announcement, Heard } from './announce';
import { $, el } from './dom';
import type { TermSession } from './session';
import { badge, label } from './tabinfo';

export class Speaker {
  /** heard is each session as the screen reader was last told of it. */
  private readonly heard = new Map<string, Heard>();
  private readonly region = $('announce');

  /** changed tells what changed in ts, if it is news; active: its tab is the active one. */
  changed(ts: TermSession, active: boolean): void {
    const b = badge(ts);
    const ended = ts.exit || ts.info.state !== 'running' || ts.state === 'ended' || ts.state === 'gone';
    const now: Heard = { conn: ts.state, ended: ended ? b.cls : '', text: b.text };
    const { say, heard } = announcement(label(ts), this.heard.get(ts.id), now, active);
    this.heard.set(ts.id, heard);
    if (say) this.say(say);
  }

  forget(id: string): void {
    this.heard.delete(id);
  }

  /** notice replaces all that was said (of sessions now gone) by text: the page's own notice. */
  notice(text: string): void {
    this.heard.clear();
    this.region.replaceChildren();
    this.say(text);
  }

  private say(text: string): void {
    // A line of its own each, so that two in one moment are both read
    // (a replaced text is read once, the last); the last few are kept.
    this.region.append(el('div', undefined, text));
    while (this.region.childElementCount > 3) this.region.firstElementChild?.remove();
  }
}
