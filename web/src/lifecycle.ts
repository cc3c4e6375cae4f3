// The page's lifecycle: the back/forward cache (connections closed on
// pagehide, reopened on pageshow), waking from sleep or a hidden tab
// (probe the connections, read the list again), the network coming back;
// and window.__termkeep, the view the browser tests read.

import { credentialId } from './auth';
import type { EventFeed } from './feed';
import type { ReplayView } from './replay';
import type { TermSession } from './session';
import { badge, label } from './tabinfo';

/** What the lifecycle needs of the page. */
export interface LifecycleHost {
  readonly sessions: ReadonlyMap<string, TermSession>;
  readonly feed: EventFeed;
  booted(): boolean;
  suspended(): boolean;
  /** suspend marks the page as in the back/forward cache (or back from it). */
  suspend(on: boolean): void;
  refreshSoon(delay?: number): void;
  offline(): void;
  pointerChanged(): void;
  /** hidden: the page was hidden (what the user saw of the active tab counts as seen). */
  hidden(): void;
}

export function bindLifecycle(host: LifecycleHost): void {
  window.addEventListener('pagehide', () => {
    // Closing the connections lets the browser keep the page in its
    // back/forward cache; pageshow reconnects them.
    host.suspend(true);
    for (const ts of host.sessions.values()) ts.suspend();
    host.feed.close();
  });
  window.addEventListener('pageshow', (e) => {
    if (!e.persisted && !host.suspended()) return;
    host.suspend(false);
    for (const ts of host.sessions.values()) ts.resume();
    host.feed.start();
    host.refreshSoon(0);
  });
  const wake = () => {
    if (host.suspended()) return;
    for (const ts of host.sessions.values()) ts.probe();
    if (!host.feed.open && host.booted()) host.feed.start();
    host.refreshSoon(0);
  };
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') wake();
    else host.hidden();
  });
  document.addEventListener('resume', wake);
  window.addEventListener('focus', wake);
  window.addEventListener('online', () => {
    for (const ts of host.sessions.values()) {
      ts.retryNow();
      ts.probe(true);
    }
    if (!host.feed.open && host.booted()) host.feed.start();
  });
  window.addEventListener('offline', () => host.offline());
  window.matchMedia?.('(pointer: coarse)').addEventListener?.('change', () => host.pointerChanged());
}

/** What the tests' view reads of the page. */
export interface Inspectable {
  readonly sessions: ReadonlyMap<string, TermSession>;
  readonly activeId: string | null;
  readonly fontSize: number;
  order(): readonly string[];
  active(): TermSession | undefined;
}

/** testHook is window.__termkeep: what the browser tests read. */
export function testHook(app: Inspectable, replay: ReplayView): object {
  const pick = (id?: string) => app.sessions.get(id ?? app.activeId ?? '');
  return {
    active: () => app.activeId,
    credential: () => credentialId(),
    tabs: () =>
      app.order().filter((id) => app.sessions.has(id)).map((id) => {
        const ts = app.sessions.get(id)!;
        return { id, label: label(ts), state: ts.state, badge: badge(ts).text, viewers: ts.viewers, written: ts.written };
      }),
    screen: (id?: string) => pick(id)?.visibleText() ?? null,
    text: (id?: string) => pick(id)?.allText() ?? null,
    size: (id?: string) => {
      const ts = pick(id);
      return ts ? { cols: ts.term.cols, rows: ts.term.rows } : null;
    },
    renderer: (id?: string) => pick(id)?.renderer ?? null,
    sizing: (id?: string) => pick(id)?.sizing() ?? null,
    /** scrollTop scrolls the terminal to the top of its history and returns the rows it shows. */
    scrollTop: (id?: string) => {
      const ts = pick(id);
      if (!ts) return null;
      ts.term.scrollToTop();
      const b = ts.term.buffer.active;
      const rows: string[] = [];
      for (let y = 0; y < ts.term.rows; y++) rows.push(b.getLine(b.viewportY + y)?.translateToString(true) ?? '');
      return rows;
    },
    drop: (id?: string) => pick(id)?.drop(),
    /** holdAcks stops (true) or resumes acking what the terminal draws, so that the page falls behind. */
    holdAcks: (on: boolean, id?: string) => pick(id)?.holdAcks(on),
    replayScreen: () => replay.visibleText(),
    replayMarked: () => replay.markedText(),
    replaySize: () => (replay.isOpen ? replay.size() : null),
    selection: () => app.active()?.term.getSelection() ?? '',
    fontSize: () => app.fontSize,
    /** predict is predictive echo's state: round trip, setting, modes, counts, what it shows. */
    predict: (id?: string) => pick(id)?.predict.info() ?? null,
  };
}
