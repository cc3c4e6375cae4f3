// The event stream the page follows (/api/events): sessions made, renamed,
// ended, restored or removed elsewhere, viewers coming and going. The list
// of sessions is the truth; an event says when to read it again.

import { api, Event as TkEvent } from './api';
import { writeStorage } from './dom';
import { EventStream } from './events';
import type { TermSession } from './session';

const EVENT_KEY = 'termkeep.lastEvent';

const EVENT_KINDS = [
  'session.created',
  'session.renamed',
  'session.closed',
  'process.exited',
  'session.interrupted',
  'session.restored',
  'session.paused',
  'session.quiet',
  'session.removed',
  'session.pruned',
  'viewer.attached',
  'viewer.detached',
];

/** What the feed needs of the page. */
export interface FeedHost {
  readonly sessions: ReadonlyMap<string, TermSession>;
  /** live: the page is signed in, started and not in the back/forward cache. */
  live(): boolean;
  authLost(): void;
  refreshSoon(delay?: number): void;
  removeSession(id: string): void;
  revived(ts: TermSession): void;
}

export class EventFeed {
  private es: EventStream | null = null;
  private retry = 0;

  constructor(private readonly host: FeedHost) {}

  get open(): boolean {
    return this.es !== null;
  }

  close(): void {
    this.es?.close();
    this.es = null;
  }

  start(): void {
    this.es?.close();
    const after = Number(localStorage.getItem(EVENT_KEY) ?? '0') || 0;
    const kinds = new Set(EVENT_KINDS);
    const es: EventStream = new EventStream(`/api/events?after=${after}`, {
      open: () => {
        this.retry = 0;
        this.host.refreshSoon(0);
      },
      event: (kind, data) => {
        if (!kinds.has(kind)) return;
        let e: TkEvent;
        try {
          e = JSON.parse(data) as TkEvent;
        } catch {
          return;
        }
        if (e.id > 0) writeStorage(localStorage, EVENT_KEY, String(e.id));
        this.onEvent(e);
      },
      closed: (status) => {
        if (this.es !== es) return;
        this.es = null;
        if (status === 401) {
          this.host.authLost();
          return;
        }
        // Ended (the server restarted, the network went, the sign-in was
        // revoked): start it again with a backoff; a refusal then says so.
        const delay = Math.min(30000, 1000 * 2 ** this.retry++) * (0.5 + Math.random() / 2);
        window.setTimeout(() => {
          if (!this.es && this.host.live()) this.start();
        }, delay);
      },
    });
    this.es = es;
  }

  private onEvent(e: TkEvent): void {
    // Pruned: removed by the server, past its bound on kept ended sessions.
    if (e.kind === 'session.removed' || e.kind === 'session.pruned') {
      this.host.removeSession(e.session);
      return;
    }
    if (e.kind === 'session.restored') {
      // Restored elsewhere (the CLI, another tab): follow the new process.
      const ts = this.host.sessions.get(e.session);
      if (ts?.exit) {
        void api.get(e.session).then((s) => {
          ts.revive(s);
          this.host.revived(ts);
        }, () => this.host.refreshSoon());
        return;
      }
    }
    if (e.kind === 'viewer.attached' || e.kind === 'viewer.detached') {
      // A connected tab learns its viewers from its own connection.
      const ts = this.host.sessions.get(e.session);
      if (ts && ts.state === 'live') return;
    }
    this.host.refreshSoon();
  }
}
