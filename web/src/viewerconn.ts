// A tab's viewer connection to its session: the WebSocket, its state,
// and getting it back when it is lost (backoff with jitter, a look at the
// session through the API first, a probe of a connection that went
// silent). What the frames say is TermSession's (session.ts); this only
// carries them.

import { api, ApiError, Session } from './api';
import { wsProtocols } from './auth';
import { DropCause, dropCause } from './dropcause';
import * as wire from './wire';

export type ConnState = 'connecting' | 'live' | 'reconnecting' | 'ended' | 'gone';

const PROBE_MS = 3000;
const IDLE_PROBE_MS = 45000; // the server pings every 30 s by default

/** What a connection asks of, and tells, the tab it serves. */
export interface ConnHooks {
  /** query is what a new connection asks for (from, size, version ...). */
  query(): URLSearchParams;
  /** opening: a new connection was made; what the old one said is told again. */
  opening(): void;
  frame(f: wire.Frame): void;
  /** exited says whether the session has ended: then no connection is made. */
  exited(): boolean;
  /** left: a live connection was lost, so this page is no longer one of the session's viewers. */
  left(): void;
  /** info is the session as the API said while the connection was down. */
  info(s: Session): void;
  changed(): void;
  gone(): void;
  authLost(code?: string): void;
}

export class ViewerConn {
  state: ConnState = 'connecting';
  /** ever is true once a connection reached the Welcome: later drops say "Reconnecting". */
  private ever = false;
  /** leftLive is when this tab last stopped being attached (performance.now()): a list asked for before then counts it. */
  leftLive = -Infinity;
  lastError = '';
  /** Why the connection is down, as the last try to reach the server found (dropcause.ts). */
  dropCause: DropCause = null;
  retryAt = 0;

  private ws: WebSocket | null = null;
  private gen = 0;
  private attempt = 0;
  private retryTimer = 0;
  private suspended = false;
  disposed = false;
  private lastHeard = 0;
  private probeTimer = 0;

  constructor(
    private readonly id: string,
    private readonly hooks: ConnHooks,
  ) {}

  /** open says whether a connection is up and live. */
  open(): boolean {
    return this.state === 'live' && !!this.ws;
  }

  /** connect opens the viewer connection, replacing any. */
  connect(): void {
    if (this.disposed || this.suspended || this.hooks.exited()) return;
    window.clearTimeout(this.retryTimer);
    this.retryTimer = 0;
    if (this.ws) {
      const old = this.ws;
      this.ws = null;
      old.close(1000, 'replaced');
    }
    const gen = ++this.gen;
    const q = this.hooks.query();
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    let ws: WebSocket;
    try {
      ws = new WebSocket(`${proto}//${location.host}/ws/sessions/${encodeURIComponent(this.id)}?${q}`, wsProtocols());
    } catch (e) {
      this.lastError = String(e);
      this.dropped();
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    this.hooks.opening();
    this.setState(this.ever ? 'reconnecting' : 'connecting');
    ws.onmessage = (ev) => {
      if (gen !== this.gen) return;
      this.lastHeard = performance.now();
      if (!(ev.data instanceof ArrayBuffer)) return;
      const f = wire.parse(ev.data);
      if (f) this.hooks.frame(f);
    };
    ws.onclose = (ev) => {
      if (gen !== this.gen) return;
      this.ws = null;
      if (!this.hooks.exited() && ev.reason) this.lastError = ev.reason;
      this.dropped();
    };
    ws.onerror = () => {
      // onclose follows and decides
    };
  }

  send(b: Uint8Array): boolean {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(b);
    return true;
  }

  /** welcomed: the connection reached the session. */
  welcomed(): void {
    this.ever = true;
    this.attempt = 0;
    this.lastError = '';
    this.dropCause = null;
    this.setState('live');
  }

  /** ended: the session ended; its connection closes and none is made again. */
  ended(): void {
    this.setState('ended');
    this.ws?.close(1000, 'session ended');
  }

  /** revive connects again to a session that was restored after it ended. */
  revive(): void {
    this.attempt = 0;
    this.setState('connecting');
    this.connect();
  }

  setState(s: ConnState): void {
    if (this.state === s) return;
    if (this.state === 'live') this.leftLive = performance.now();
    this.state = s;
    this.hooks.changed();
  }

  /** dropped handles a lost connection: retry with backoff and jitter until the session answers again. */
  private dropped(): void {
    window.clearTimeout(this.probeTimer);
    this.probeTimer = 0;
    if (this.state === 'live') this.hooks.left();
    if (this.disposed || this.suspended || this.state === 'gone') return;
    if (this.hooks.exited()) {
      this.setState('ended');
      return;
    }
    this.setState(this.ever ? 'reconnecting' : 'connecting');
    const base = Math.min(10000, 250 * 2 ** Math.min(this.attempt, 8));
    const delay = base / 2 + Math.random() * (base / 2);
    this.attempt++;
    this.retryAt = Date.now() + delay;
    this.hooks.changed();
    window.clearTimeout(this.retryTimer);
    this.retryTimer = window.setTimeout(() => void this.retry(), delay);
  }

  /** retry checks that the session still exists (a refused WebSocket says nothing about why), then reconnects. */
  private async retry(): Promise<void> {
    this.retryTimer = 0;
    if (this.disposed || this.suspended || this.hooks.exited()) return;
    const gen = this.gen;
    try {
      const s = await api.get(this.id);
      if (gen !== this.gen || this.disposed) return;
      this.hooks.info(s);
      // The server answers: if the session's connection fails again, the
      // way to it (a proxy, the network) is what drops it.
      this.dropCause = dropCause(navigator.onLine, true);
    } catch (e) {
      if (gen !== this.gen || this.disposed) return;
      this.dropCause = dropCause(navigator.onLine, false, e instanceof ApiError ? e.status : 0);
      if (e instanceof ApiError && e.status === 404) {
        this.setState('gone');
        this.hooks.gone();
        return;
      }
      if (e instanceof ApiError && e.status === 401) {
        // Refused: retrying would only be refused again.
        this.hooks.authLost(e.code);
        return;
      }
      this.lastError = e instanceof ApiError ? e.message : 'the termkeep server is not reachable';
      this.dropped();
      return;
    }
    this.connect();
  }

  /** retryNow skips the backoff (the network came back, the user asked). */
  retryNow(): void {
    if (this.state !== 'reconnecting' && this.state !== 'connecting') return;
    if (this.ws) return; // an attempt is under way
    this.attempt = 0;
    window.clearTimeout(this.retryTimer);
    void this.retry();
  }

  /**
   * probe checks that an open connection still carries anything (after a
   * sleep, a network change): a ping must be answered within 3 s, or the
   * connection is abandoned and a new one made.
   */
  probe(force = false): void {
    if (this.disposed || this.suspended || this.hooks.exited()) return;
    const ws = this.ws;
    if (!ws) {
      this.retryNow();
      return;
    }
    if (ws.readyState !== WebSocket.OPEN || this.probeTimer) return;
    const sent = performance.now();
    if (!force && sent - this.lastHeard < 1000) return;
    this.send(wire.frame(wire.T.Ping, wire.u64(Math.floor(sent))));
    const gen = this.gen;
    this.probeTimer = window.setTimeout(() => {
      this.probeTimer = 0;
      if (gen !== this.gen || this.lastHeard >= sent) return;
      this.abandon('no answer from the server');
    }, PROBE_MS);
  }

  /** watchdog: a connection silent past the server's ping interval is probed. */
  tick(): void {
    if (this.ws && this.state === 'live' && performance.now() - this.lastHeard > IDLE_PROBE_MS) this.probe(true);
  }

  private abandon(why: string): void {
    const ws = this.ws;
    this.gen++;
    this.ws = null;
    this.lastError = why;
    try {
      ws?.close(4000, why);
    } catch {
      // closing a dead socket
    }
    this.dropped();
  }

  /** drop closes the connection as a network failure would (tests use it). */
  drop(): void {
    this.abandon('connection dropped');
  }

  /** suspend closes the connection while the page is hidden in the back/forward cache. */
  suspend(): void {
    this.suspended = true;
    window.clearTimeout(this.retryTimer);
    window.clearTimeout(this.probeTimer);
    this.probeTimer = 0;
    const ws = this.ws;
    this.gen++;
    this.ws = null;
    ws?.close(1000, 'page hidden');
  }

  resume(): void {
    if (!this.suspended) return;
    this.suspended = false;
    if (this.hooks.exited()) return;
    this.attempt = 0;
    this.connect();
  }

  dispose(): void {
    this.disposed = true;
    this.gen++;
    window.clearTimeout(this.retryTimer);
    window.clearTimeout(this.probeTimer);
    this.ws?.close(1000, 'tab closed');
    this.ws = null;
  }
}
