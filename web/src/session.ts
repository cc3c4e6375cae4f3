// One tab: a session's terminal (termview.ts) and its viewer connection
// (viewerconn.ts), joined by the offsets, acks, typing and frames below;
// its size is viewersize.ts's, its predictive echo predictview.ts's.
//
// Offsets. `written` is the offset after the last byte handed to the
// terminal; `drawn` the offset after the last byte the terminal has parsed
// (term.write's callback). A reconnect of a terminal that is still on the
// page asks for `?from=written`: the server sends exactly the bytes from
// there (or a snapshot when it no longer has them), so nothing is shown
// twice and nothing is missed. A new page has an
// empty terminal, for which bytes from an old offset would mean nothing: it
// connects without `from` and gets a snapshot of the screen with its
// scrollback, then live output from the snapshot's offset. `written` is
// also kept in sessionStorage (termkeep.offset.<id>), so a reloaded page
// knows where it was; see README "Browser UI".
//
// Size. The terminal always has the session's columns and rows (welcome,
// resized and viewers frames), never the window's: termframe.ts draws it
// in the window, shrunk or panning. The page reports what its window
// would hold (resize frames, version 6: a report takes nothing) and takes
// the session's size only by typing, by "fit to this window", when nobody
// holds it, or on a desktop when it holds it and its window changes
// (viewersize.ts, sizeinfo.ts).
//
// Flow control. The page acks `drawn` (at most every 50 ms or 64 KiB). The
// server sends at most its viewer queue beyond the last ack and skips a
// viewer that falls further behind to the present with a snapshot, so a
// flood never piles up in the page.

import { Session } from './api';
import type { Holder } from './sizeinfo';
import { PredictView } from './predictview';
import { liveSplit, parseOsc52 } from './clipwrite';
import { sanitizePaste } from './paste';
import { SCROLLBACK, TermPrefs, TermView } from './termview';
import { ConnState, ViewerConn } from './viewerconn';
import { ViewerSize } from './viewersize';
import * as wire from './wire';

export type { ConnState } from './viewerconn';
export type { TermPrefs } from './termview';

/** What a session tells the page around it. */
export interface SessionHooks {
  changed(s: TermSession): void;
  gone(s: TermSession): void;
  /** authLost: the server refused the page's credential (code: why, when it said). */
  authLost(code?: string): void;
  clipboard(text: string, why: 'osc52' | 'select'): void;
  /** osc52 is a program's clipboard write; live: it came in live output (not caught up on or resynced), viewOnly: this page only watches. */
  osc52(s: TermSession, text: string, live: boolean, viewOnly: boolean): void;
  /** pasted says what a paste lost to the sanitizer (removed > 0). */
  pasted(removed: number): void;
  notice(text: string): void;
  /** filterInput lets the extra-keys row apply a latched Ctrl or Alt. */
  filterInput(data: string): string;
}

const ACK_BYTES = 64 << 10;
const ACK_MS = 50;
const MAX_INPUT = 1 << 20;
/** The protocol version the page speaks: 6 reports its size without taking it, 7 adds the pty's mode (docs/protocol.md). */
const VERSION = 7;
/** How often the active terminal pings for the round trip predictive echo needs. */
const RTT_PING_MS = 2000;

const encoder = new TextEncoder();
const keyDecoder = new TextDecoder();

export function offsetKey(id: string): string {
  return `termkeep.offset.${id}`;
}

/** At most this much typed input waits for a restore (a paste, a few lines typed ahead). */
const MAX_HELD = 64 << 10;

/** endedSentence says how a session ended, as the start of a sentence. */
function endedSentence(e: wire.Exit): string {
  if (e.state === 'interrupted') return 'This session was interrupted';
  if (e.state === 'closed') return 'This session was closed';
  return e.exit_code === null || e.exit_code === undefined ? 'This session has exited' : `This session has exited (status ${e.exit_code})`;
}

export class TermSession {
  readonly id: string;
  info: Session;
  /** The terminal the session is drawn in (termview.ts). */
  private readonly view: TermView;
  /** The viewer connection (viewerconn.ts). */
  private readonly conn: ViewerConn;
  active = false;

  title = '';
  oscCwd = '';
  viewers = 0;
  /** This page's viewer id in the session's list of viewers (0: not known yet). */
  you = 0;
  /** Why the session's output is not being saved right now, or null. */
  logStopped: string | null = null;
  /** The session's holder does not answer the server (as the last viewers frame said). */
  holderStuck = false;
  /** Input typed while a restore is on its way (holdInput), and its size. */
  private held: Uint8Array[] | null = null;
  private heldBytes = 0;
  bell = false;
  exit: wire.Exit | null = null;

  written: number | null = null;
  /** The offset after the last byte the terminal has parsed (behind written while it draws a backlog). */
  drawn = 0;
  private acked = 0;
  private ackTimer = 0;
  /** acksHeld: the page acks nothing (holdAcks). */
  private acksHeld = false;
  private saveTimer = 0;
  private lastPing = 0;
  /** Predictive echo (predictview.ts). */
  readonly predict: PredictView;
  /** The read-only notice was shown (once per terminal). */
  private saidReadOnly = false;
  /** What this page says of the session's size (viewersize.ts). */
  readonly size = new ViewerSize({
    send: (b) => this.send(b),
    live: () => this.conn.open() && !this.exit,
    active: () => this.active,
  });
  copyOnSelect: boolean;
  /** liveFrom is the offset where this connection's live output begins (the log's end at its welcome). */
  private liveFrom = Infinity;
  /** parsingLive says whether the bytes xterm.js is parsing now came live. */
  private parsingLive = false;

  constructor(info: Session, private readonly hooks: SessionHooks, prefs: TermPrefs, parent: HTMLElement, private readonly name = '') {
    this.id = info.id;
    this.info = info;
    this.view = new TermView(info.id, info.cols, info.rows, prefs, parent);
    this.conn = new ViewerConn(info.id, {
      query: () => this.query(),
      opening: () => {
        this.predict.setTermMode(null); // told again by the new connection
        this.acked = 0;
        this.size.connected();
      },
      frame: (f) => this.onFrame(f),
      exited: () => !!this.exit,
      left: () => {
        // This page was one of the viewers it was told of; it is not one now.
        if (this.viewers > 0) this.viewers--;
      },
      info: (s) => (this.info = s),
      changed: () => this.hooks.changed(this),
      gone: () => this.hooks.gone(this),
      authLost: (code) => this.hooks.authLost(code),
    });
    const term = this.view.term;
    term.onData((d) => this.input(encoder.encode(this.hooks.filterInput(d))));
    // A read-only viewer's terminal takes no input (disableStdin, set from
    // the viewers frame): its keys are said to do nothing, once.
    term.onKey(() => {
      if (!this.size.readOnly || this.saidReadOnly) return;
      this.saidReadOnly = true;
      this.hooks.notice('Read-only: this page watches the session; what you type is not sent.');
    });
    term.onBinary((d) => {
      const b = new Uint8Array(d.length);
      for (let i = 0; i < d.length; i++) b[i] = d.charCodeAt(i) & 0xff;
      this.input(b);
    });
    term.onTitleChange((t) => {
      this.title = t;
      this.hooks.changed(this);
    });
    term.onBell(() => {
      if (!this.active) {
        this.bell = true;
        this.hooks.changed(this);
      }
    });
    term.onSelectionChange(() => {
      if (!this.copyOnSelect) return;
      const sel = term.getSelection();
      if (sel) this.hooks.clipboard(sel, 'select');
    });
    // OSC 52: the program sets the clipboard ("c;BASE64"); the page
    // decides (clipwrite.ts). Reading it ("?") is never answered: a
    // program must not see the clipboard.
    term.parser.registerOscHandler(52, (data) => {
      const req = parseOsc52(data);
      if (req?.kind === 'write') this.hooks.osc52(this, req.text, this.parsingLive, this.size.readOnly);
      return true;
    });
    // The browser's own paste (Ctrl+V, its menu) goes through the same
    // sanitizer as Ctrl+Shift+V: xterm.js would paste it as it is.
    this.view.el.addEventListener(
      'paste',
      (e) => {
        const text = e.clipboardData?.getData('text/plain');
        e.preventDefault();
        e.stopImmediatePropagation();
        if (text) this.paste(text);
      },
      { capture: true },
    );
    // OSC 7: the shell says where it is (file://host/path).
    term.parser.registerOscHandler(7, (data) => {
      try {
        const p = decodeURIComponent(new URL(data).pathname);
        if (p && p !== this.oscCwd) {
          this.oscCwd = p;
          this.hooks.changed(this);
        }
      } catch {
        // not a URL
      }
      return false;
    });
    this.copyOnSelect = prefs.copyOnSelect;
    this.predict = new PredictView(term, prefs.predict, prefs.predictStyle);
  }

  get term() {
    return this.view.term;
  }
  get el(): HTMLDivElement {
    return this.view.el;
  }
  get search() {
    return this.view.search;
  }
  get renderer(): 'webgl' | 'dom' {
    return this.view.renderer;
  }
  get state(): ConnState {
    return this.conn.state;
  }
  get leftLive(): number {
    return this.conn.leftLive;
  }
  get retryAt(): number {
    return this.conn.retryAt;
  }
  get lastError(): string {
    return this.conn.lastError;
  }
  get dropCause() {
    return this.conn.dropCause;
  }

  // ---- appearance and layout ------------------------------------------

  applyPrefs(p: TermPrefs): void {
    this.copyOnSelect = p.copyOnSelect;
    this.predict.setPrefs(p.predict, p.predictStyle);
    const text = this.view.applyLook(p);
    if (this.active) this.fitNow(text);
  }

  /** show makes this the visible terminal: open it if needed, fit, render with WebGL when the browser can. */
  show(): void {
    this.active = true;
    this.bell = false;
    this.view.show();
    this.fitNow();
    this.view.refresh();
  }

  /** prepare opens a hidden terminal ahead of time (termview.ts). */
  prepare(): void {
    this.view.prepare(this.active);
  }

  hide(): void {
    this.active = false;
    this.view.hide();
  }

  focus(): void {
    this.view.focus();
  }

  /**
   * fitNow lays the terminal out in its window and reports the window's
   * size: the size this page takes when it types or fits (viewersize.ts);
   * text: the page's text size changed.
   */
  fitNow(text = false): void {
    if (!this.view.laidOut()) return;
    const want = this.view.frame.windowGrid();
    if (want) this.size.window(want, window.matchMedia?.('(pointer: coarse)').matches ?? false, text);
    this.view.frame.apply();
  }

  /** fitToWindow takes the session's size at this window ("fit to this window"); false when it cannot. */
  fitToWindow(): boolean {
    if (!this.active) return false;
    this.fitNow();
    return this.size.fit();
  }

  /** sizeHolder says whose size the session has, for the indicator (null before the viewers frame). */
  sizeHolder(): Holder | null {
    return this.size.holder(this.term.cols, this.term.rows);
  }

  /** sizing is how the terminal is drawn (the tests read it). */
  sizing(): object {
    return this.view.sizing(this.sizeHolder()?.short ?? null);
  }

  /** sessionResized follows the session's size in order with the output. */
  private sessionResized(cols: number, rows: number): void {
    this.view.resizeTo(cols, rows, () => this.hooks.changed(this));
  }

  // ---- connection ------------------------------------------------------

  /** connect opens the viewer connection; a terminal with output asks for the bytes after it. */
  connect(): void {
    this.conn.connect();
  }

  /** query is what a new connection asks for. */
  private query(): URLSearchParams {
    const q = new URLSearchParams();
    if (this.written !== null) q.set('from', String(this.written));
    q.set('scrollback', String(SCROLLBACK));
    q.set('version', String(VERSION));
    if (this.name) q.set('name', this.name);
    const want = this.size.want;
    if (this.active && want) {
      q.set('cols', String(want.cols));
      q.set('rows', String(want.rows));
    }
    return q;
  }

  private send(b: Uint8Array): boolean {
    return this.conn.send(b);
  }

  private input(data: Uint8Array): void {
    if (data.length === 0) return;
    if (this.held) {
      // A restore is on its way: typed now, sent once the new process is live.
      if (this.heldBytes + data.length <= MAX_HELD) {
        this.held.push(data);
        this.heldBytes += data.length;
      }
      return;
    }
    if (this.exit) {
      this.hooks.notice(`${endedSentence(this.exit)}: what you typed was not sent. Restore starts it again.`);
      return;
    }
    if (this.state !== 'live') {
      this.hooks.notice('Not connected: what you typed was not sent.');
      return;
    }
    this.predict.key(keyDecoder.decode(data));
    for (let i = 0; i < data.length; i += MAX_INPUT) {
      this.send(wire.frame(wire.T.Input, data.subarray(i, i + MAX_INPUT)));
    }
  }

  /**
   * paste types text as a paste (bracketed when the program asked for
   * it), sanitized (paste.ts) so that nothing in it ends the paste or runs
   * as keys; raw, which the user asks for, pastes it as it is.
   */
  paste(text: string, raw = false): void {
    const clean = raw ? text : sanitizePaste(text);
    if (clean.length !== text.length) this.hooks.pasted(text.length - clean.length);
    if (clean) this.term.paste(clean);
  }

  /** sendKeys types raw keys (the extra-keys row). */
  sendKeys(data: string): void {
    this.input(encoder.encode(data));
  }

  private onFrame(f: wire.Frame): void {
    const p = f.payload;
    switch (f.type) {
      case wire.T.Welcome: {
        const w = wire.json<wire.Welcome>(p);
        if (w.resume === 'live') this.written = w.start;
        // What the log held when this connection began is caught up on,
        // not live: no clipboard write in it is applied.
        this.liveFrom = w.exited ? Infinity : w.end;
        this.sessionResized(w.cols, w.rows);
        this.conn.welcomed();
        this.size.report();
        this.scheduleAck();
        this.sendHeld();
        this.ping();
        break;
      }
      case wire.T.Snapshot: {
        // A fresh terminal's snapshot starts with a reset and redraws the
        // screen and scrollback; a resync's (this page fell behind) keeps
        // the history drawn and adds the lines it missed. Output continues
        // from its offset.
        const off = wire.readU64(p);
        this.writeData(p.subarray(8), off, false);
        break;
      }
      case wire.T.Output: {
        const off = wire.readU64(p);
        let data = p.subarray(8);
        const end = off + data.length;
        if (this.written !== null) {
          if (end <= this.written) break; // already have it
          if (off < this.written) data = data.subarray(this.written - off);
        }
        const { old } = liveSplit(end - data.length, end, this.liveFrom);
        if (old > 0) this.writeData(data.subarray(0, old), end - data.length + old, false);
        if (old < data.length) this.writeData(data.subarray(old), end, true);
        break;
      }
      case wire.T.Gap: {
        this.written = wire.readU64(p, 8);
        break;
      }
      case wire.T.Resized: {
        const dv = new DataView(p.buffer, p.byteOffset, p.byteLength);
        if (p.length >= 12) this.sessionResized(dv.getUint16(8), dv.getUint16(10));
        break;
      }
      case wire.T.Viewers: {
        const v = wire.json<wire.Viewers>(p);
        this.viewers = v.viewers.length;
        this.you = v.you;
        this.holderStuck = !!v.holder_unresponsive;
        this.sessionResized(v.cols, v.rows);
        this.size.viewers(v);
        this.term.options.disableStdin = this.size.readOnly;
        this.hooks.changed(this);
        break;
      }
      case wire.T.Log: {
        const st = wire.json<wire.LogState>(p);
        this.logStopped = st.stopped ? st.reason || 'an error' : null;
        this.hooks.changed(this);
        break;
      }
      case wire.T.Exit: {
        this.exit = wire.json<wire.Exit>(p);
        this.info = { ...this.info, state: this.exit.state, exit_code: this.exit.exit_code, pid: null };
        this.dropHeld();
        this.viewers = 0;
        this.logStopped = null;
        this.holderStuck = false;
        this.term.options.cursorBlink = false;
        this.conn.ended();
        break;
      }
      case wire.T.Error: {
        const e = wire.parseError(p);
        this.conn.lastError = e.message;
        if (e.code === wire.Code.NotFound) {
          this.conn.setState('gone');
          this.hooks.gone(this);
        } else if (e.code === wire.Code.Unavailable && /beyond the session's end/.test(e.message)) {
          // The session's log is shorter than this page's terminal (a
          // different server or state directory): start over from a snapshot.
          this.written = null;
        } else if (e.code === wire.Code.Forbidden) {
          this.hooks.notice(e.message);
        } else {
          console.warn(`termkeep: session ${this.id}: ${e.message}`);
        }
        break;
      }
      case wire.T.ServerPing:
        this.send(wire.frame(wire.T.Answer, p.slice()));
        break;
      case wire.T.Pong: {
        const ms = wire.rttFromPong(p, performance.now());
        if (ms !== null) this.predict.setRtt(ms);
        break;
      }
      case wire.T.TermMode: {
        const m = wire.parseTermMode(p);
        if (m) this.predict.setTermMode(m);
        break;
      }
    }
  }

  private writeData(data: Uint8Array, end: number, live: boolean): void {
    this.written = end;
    this.saveOffsetSoon();
    this.view.write(
      data,
      () => (this.parsingLive = live),
      () => {
        // Callbacks run in write order, so this only moves forward (or
        // back to a fresh snapshot's offset after a restart from scratch).
        this.drawn = end;
        this.scheduleAck();
      },
    );
  }

  private scheduleAck(): void {
    if (this.drawn <= this.acked || this.state !== 'live') return;
    if (this.drawn - this.acked >= ACK_BYTES) {
      this.sendAck();
    } else if (!this.ackTimer) {
      this.ackTimer = window.setTimeout(() => {
        this.ackTimer = 0;
        this.sendAck();
      }, ACK_MS);
    }
  }

  /**
   * holdAcks stops (on) or resumes acking what the terminal draws: the
   * browser tests make a page fall behind by it, whatever the machine's
   * speed (window.__termkeep).
   */
  holdAcks(on: boolean): void {
    this.acksHeld = on;
    if (!on) this.scheduleAck();
  }

  private sendAck(): void {
    if (this.acksHeld) return;
    if (this.drawn > this.acked && this.send(wire.frame(wire.T.Ack, wire.u64(this.drawn)))) this.acked = this.drawn;
  }

  private saveOffsetSoon(): void {
    if (this.saveTimer) return;
    this.saveTimer = window.setTimeout(() => {
      this.saveTimer = 0;
      this.saveOffset();
    }, 500);
  }

  saveOffset(): void {
    try {
      if (this.written !== null) sessionStorage.setItem(offsetKey(this.id), String(this.written));
    } catch {
      // storage full or denied: only a reload's bookkeeping is lost
    }
  }

  /**
   * holdInput keeps what is typed from now on (a restore was asked for)
   * until the session is live again, then sends it; dropHeld gives up.
   */
  holdInput(): void {
    if (!this.held) {
      this.held = [];
      this.heldBytes = 0;
    }
  }

  dropHeld(): void {
    const had = this.heldBytes > 0;
    this.held = null;
    this.heldBytes = 0;
    if (had) this.hooks.notice('The session did not start again: what you typed was not sent.');
  }

  private sendHeld(): void {
    const held = this.held;
    if (!held) return;
    this.held = null;
    this.heldBytes = 0;
    for (const d of held) this.input(d);
  }

  /**
   * revive follows a session that was restored after it ended: the output
   * goes on from where this terminal stopped (the restore line, then the new
   * process).
   */
  revive(info: Session): void {
    if (this.conn.disposed || !this.exit) return;
    this.exit = null;
    this.info = info;
    this.term.options.cursorBlink = true;
    this.conn.revive();
  }

  /** retryNow skips the backoff (the network came back, the user asked). */
  retryNow(): void {
    this.conn.retryNow();
  }

  /** probe checks that an open connection still carries anything (viewerconn.ts). */
  probe(force = false): void {
    this.conn.probe(force);
  }

  /** watchdog: a silent connection is probed, and the active terminal measures its round trip. */
  tick(): void {
    this.conn.tick();
    if (this.active && performance.now() - this.lastPing >= RTT_PING_MS) this.ping();
  }

  /** ping measures the round trip (the pong's answer) for predictive echo. */
  private ping(): void {
    if (this.state !== 'live' || !this.predict.wantsRtt()) return;
    this.lastPing = performance.now();
    this.send(wire.frame(wire.T.Ping, wire.u64(Math.floor(this.lastPing))));
  }

  /** drop closes the connection as a network failure would (tests use it). */
  drop(): void {
    this.conn.drop();
  }

  /** suspend closes the connection while the page is hidden in the back/forward cache. */
  suspend(): void {
    this.saveOffset();
    this.conn.suspend();
  }

  resume(): void {
    this.conn.resume();
  }

  dispose(): void {
    this.conn.dispose();
    window.clearTimeout(this.ackTimer);
    window.clearTimeout(this.saveTimer);
    try {
      sessionStorage.removeItem(offsetKey(this.id));
    } catch {
      // nothing to clean
    }
    this.predict.dispose();
    this.view.dispose();
  }

  /** visibleText is the terminal's screen, a line per row, trailing blanks cut (tests compare it with `termkeep capture`). */
  visibleText(): string[] {
    return this.view.visibleText();
  }

  /** allText is every line of the buffer, scrollback first. */
  allText(): string[] {
    return this.view.allText();
  }
}
