// One tab: a session's terminal (xterm.js) and its viewer connection.
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

import { Terminal } from '@xterm/xterm';
import { SearchAddon } from '@xterm/addon-search';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { WebglAddon } from '@xterm/addon-webgl';
import { api, ApiError, Session } from './api';
import { wsProtocols } from './auth';
import { DropCause, dropCause } from './dropcause';
import type { Holder } from './sizeinfo';
import type { Setting } from './predict';
import { PredictStyle, PredictView } from './predictview';
import { liveSplit, parseOsc52 } from './clipwrite';
import { sanitizePaste } from './paste';
import { SCROLLBAR, TermFrame } from './termframe';
import { themes, ThemeName } from './theme';
import { ViewerSize } from './viewersize';
import * as wire from './wire';

export type ConnState = 'connecting' | 'live' | 'reconnecting' | 'ended' | 'gone';

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

export interface TermPrefs {
  fontSize: number;
  theme: ThemeName;
  copyOnSelect: boolean;
  /** webgl: false keeps the default (DOM) renderer. */
  webgl: boolean;
  /** screenReader keeps an accessible copy of the rows for screen readers (xterm.js screenReaderMode). */
  screenReader: boolean;
  /** minContrast is xterm.js's minimumContrastRatio: 1 changes no color. */
  minContrast: number;
  /** predict: predictive echo off, auto (above a round trip of 30 ms) or always; predictStyle: how a prediction is drawn. */
  predict: Setting;
  predictStyle: PredictStyle;
}

const ACK_BYTES = 64 << 10;
const ACK_MS = 50;
const SCROLLBACK = 10000;
const MAX_INPUT = 1 << 20;
const WRITE_SLICE = 16 << 10;
const PROBE_MS = 3000;
const IDLE_PROBE_MS = 45000; // the server pings every 30 s by default
/** The protocol version the page speaks: 6 reports its size without taking it, 7 adds the pty's mode (docs/protocol.md). */
const VERSION = 7;
/** How often the active terminal pings for the round trip predictive echo needs. */
const RTT_PING_MS = 2000;

const encoder = new TextEncoder();
const keyDecoder = new TextDecoder();

let webglProbe: boolean | null = null;

/**
 * webglFast reports whether the browser has hardware-accelerated WebGL2.
 * WebGL drawn in software (SwiftShader, llvmpipe: no GPU, or a GPU the
 * browser refuses) is slower than the DOM renderer, so it counts as none.
 */
function webglFast(): boolean {
  if (webglProbe === null) {
    try {
      const gl = document.createElement('canvas').getContext('webgl2', { failIfMajorPerformanceCaveat: true });
      let renderer = '';
      if (gl) {
        const info = gl.getExtension('WEBGL_debug_renderer_info');
        renderer = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
      }
      webglProbe = !!gl && !/swiftshader|llvmpipe|softpipe|software|basic render/i.test(renderer);
      gl?.getExtension('WEBGL_lose_context')?.loseContext();
    } catch {
      webglProbe = false;
    }
  }
  return webglProbe;
}

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
  readonly term: Terminal;
  readonly el: HTMLDivElement;
  private readonly frame: TermFrame;
  readonly search = new SearchAddon({ highlightLimit: 2000 });
  private webgl: WebglAddon | null = null;
  renderer: 'webgl' | 'dom' = 'dom';
  private opened = false;
  active = false;

  state: ConnState = 'connecting';
  /** ever is true once a connection reached the Welcome: later drops say "Reconnecting". */
  private ever = false;
  title = '';
  oscCwd = '';
  viewers = 0;
  /** leftLive is when this tab last stopped being attached (performance.now()): a list asked for before then counts it. */
  leftLive = -Infinity;
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
  lastError = '';
  /** Why the connection is down, as the last try to reach the server found (dropcause.ts). */
  dropCause: DropCause = null;

  private ws: WebSocket | null = null;
  private gen = 0;
  private attempt = 0;
  private retryTimer = 0;
  retryAt = 0;
  private suspended = false;
  private disposed = false;

  written: number | null = null;
  /** The offset after the last byte the terminal has parsed (behind written while it draws a backlog). */
  drawn = 0;
  private acked = 0;
  private ackTimer = 0;
  /** acksHeld: the page acks nothing (holdAcks). */
  private acksHeld = false;
  private saveTimer = 0;
  private lastHeard = 0;
  private probeTimer = 0;
  private lastPing = 0;
  /** Predictive echo (predictview.ts). */
  readonly predict: PredictView;
  /** The read-only notice was shown (once per terminal). */
  private saidReadOnly = false;
  /** What this page says of the session's size (viewersize.ts). */
  readonly size = new ViewerSize({
    send: (b) => this.send(b),
    live: () => this.state === 'live' && !!this.ws && !this.exit,
    active: () => this.active,
  });

  constructor(info: Session, private readonly hooks: SessionHooks, prefs: TermPrefs, parent: HTMLElement, private readonly name = '') {
    this.id = info.id;
    this.info = info;
    this.el = document.createElement('div');
    this.el.className = 'term-host';
    this.el.hidden = true;
    this.el.dataset.session = info.id;
    parent.appendChild(this.el);

    this.term = new Terminal({
      scrollback: SCROLLBACK,
      allowProposedApi: true,
      cols: Math.max(2, info.cols || 80),
      rows: Math.max(1, info.rows || 24),
      fontSize: prefs.fontSize,
      fontFamily: '"JetBrains Mono", "Cascadia Mono", "Fira Code", "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace',
      lineHeight: 1.15,
      theme: themes[prefs.theme],
      screenReaderMode: prefs.screenReader,
      minimumContrastRatio: prefs.minContrast,
      cursorBlink: true,
      cursorInactiveStyle: 'outline',
      macOptionIsMeta: true,
      rescaleOverlappingGlyphs: true,
      overviewRuler: { width: SCROLLBAR },
    });
    this.frame = new TermFrame(this.el, this.term, prefs.fontSize);
    this.term.loadAddon(this.search);
    this.term.loadAddon(new Unicode11Addon());
    this.term.unicode.activeVersion = '11';
    this.term.loadAddon(
      new WebLinksAddon((ev, uri) => {
        ev.preventDefault();
        window.open(uri, '_blank', 'noopener,noreferrer');
      }),
    );

    this.term.onData((d) => this.input(encoder.encode(this.hooks.filterInput(d))));
    // A read-only viewer's terminal takes no input (disableStdin, set from
    // the viewers frame): its keys are said to do nothing, once.
    this.term.onKey(() => {
      if (!this.size.readOnly || this.saidReadOnly) return;
      this.saidReadOnly = true;
      this.hooks.notice('Read-only: this page watches the session; what you type is not sent.');
    });
    this.term.onBinary((d) => {
      const b = new Uint8Array(d.length);
      for (let i = 0; i < d.length; i++) b[i] = d.charCodeAt(i) & 0xff;
      this.input(b);
    });
    this.term.onTitleChange((t) => {
      this.title = t;
      this.hooks.changed(this);
    });
    this.term.onBell(() => {
      if (!this.active) {
        this.bell = true;
        this.hooks.changed(this);
      }
    });
    this.term.onSelectionChange(() => {
      if (!this.copyOnSelect) return;
      const sel = this.term.getSelection();
      if (sel) this.hooks.clipboard(sel, 'select');
    });
    // OSC 52: the program sets the clipboard ("c;BASE64"); the page
    // decides (clipwrite.ts). Reading it ("?") is never answered: a
    // program must not see the clipboard.
    this.term.parser.registerOscHandler(52, (data) => {
      const req = parseOsc52(data);
      if (req?.kind === 'write') this.hooks.osc52(this, req.text, this.parsingLive, this.size.readOnly);
      return true;
    });
    // The browser's own paste (Ctrl+V, its menu) goes through the same
    // sanitizer as Ctrl+Shift+V: xterm.js would paste it as it is.
    this.el.addEventListener(
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
    this.term.parser.registerOscHandler(7, (data) => {
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
    this.useWebgl = prefs.webgl;
    this.predict = new PredictView(this.term, prefs.predict, prefs.predictStyle);
  }

  copyOnSelect: boolean;
  private useWebgl: boolean;
  /** liveFrom is the offset where this connection's live output begins (the log's end at its welcome). */
  private liveFrom = Infinity;
  /** parsingLive says whether the bytes xterm.js is parsing now came live. */
  private parsingLive = false;

  // ---- appearance and layout ------------------------------------------

  applyPrefs(p: TermPrefs): void {
    this.copyOnSelect = p.copyOnSelect;
    this.predict.setPrefs(p.predict, p.predictStyle);
    const text = this.frame.pref !== p.fontSize;
    this.frame.pref = p.fontSize;
    this.term.options.theme = themes[p.theme];
    if (this.term.options.screenReaderMode !== p.screenReader) this.term.options.screenReaderMode = p.screenReader;
    if (this.term.options.minimumContrastRatio !== p.minContrast) this.term.options.minimumContrastRatio = p.minContrast;
    if (this.active) this.fitNow(text);
  }

  /** show makes this the visible terminal: open it if needed, fit, render with WebGL when the browser can. */
  show(): void {
    this.active = true;
    this.bell = false;
    this.el.hidden = false;
    if (!this.opened) {
      this.term.open(this.frame.frame);
      this.opened = true;
    }
    this.loadWebgl();
    this.fitNow();
    this.term.refresh(0, this.term.rows - 1);
  }

  /**
   * prepare opens a hidden terminal ahead of time (the page calls it when
   * idle), so switching to its tab later costs only a redraw. It is laid
   * out invisibly for the moment it opens, so xterm.js can measure its font.
   */
  prepare(): void {
    if (this.opened || this.disposed) return;
    this.el.style.visibility = 'hidden';
    this.el.hidden = false;
    this.term.open(this.frame.frame);
    this.opened = true;
    this.el.hidden = !this.active;
    this.el.style.visibility = '';
  }

  hide(): void {
    this.active = false;
    this.el.hidden = true;
    // WebGL contexts are few (a browser allows about sixteen a page): only
    // the visible terminal holds one.
    this.dropWebgl();
  }

  private loadWebgl(): void {
    if (this.webgl || !this.opened || !this.useWebgl) return;
    try {
      if (!webglFast()) throw new Error('no hardware WebGL2');
      const addon = new WebglAddon();
      addon.onContextLoss(() => {
        this.dropWebgl();
      });
      this.term.loadAddon(addon);
      this.webgl = addon;
      this.renderer = 'webgl';
    } catch {
      // The default (DOM) renderer draws everything; WebGL is only faster.
      this.webgl = null;
      this.renderer = 'dom';
    }
  }

  private dropWebgl(): void {
    if (!this.webgl) return;
    try {
      this.webgl.dispose();
    } catch {
      // already gone with its context
    }
    this.webgl = null;
    this.renderer = 'dom';
  }

  focus(): void {
    if (this.opened) this.term.focus();
  }

  /**
   * fitNow lays the terminal out in its window and reports the window's
   * size: the size this page takes when it types or fits (viewersize.ts);
   * text: the page's text size changed.
   */
  fitNow(text = false): void {
    if (!this.opened || this.el.hidden) return;
    const want = this.frame.windowGrid();
    if (want) this.size.window(want, window.matchMedia?.('(pointer: coarse)').matches ?? false, text);
    this.frame.apply();
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
    const p = this.frame.last;
    const f = this.frame.frame;
    return {
      cols: this.term.cols,
      rows: this.term.rows,
      font: p?.font ?? null,
      pan: p?.pan ?? null,
      holder: this.sizeHolder()?.short ?? null,
      box: { width: this.el.clientWidth, height: this.el.clientHeight },
      scroll: { width: this.el.scrollWidth, height: this.el.scrollHeight, left: this.el.scrollLeft, top: this.el.scrollTop },
      frame: { width: f.offsetWidth, height: f.offsetHeight },
    };
  }

  /**
   * sessionResized follows the session's size in order with the output:
   * the bytes already written were produced at the old size.
   */
  private sessionResized(cols: number, rows: number): void {
    if (cols < 1 || rows < 1) return;
    this.term.write('', () => {
      if (this.disposed) return;
      if (this.term.cols !== cols || this.term.rows !== rows) {
        this.term.resize(Math.max(2, cols), rows);
        if (this.opened && !this.el.hidden) this.frame.apply();
        this.hooks.changed(this);
      }
    });
  }

  // ---- connection ------------------------------------------------------

  /** connect opens the viewer connection; a terminal with output asks for the bytes after it. */
  connect(): void {
    if (this.disposed || this.suspended || this.exit) return;
    window.clearTimeout(this.retryTimer);
    this.retryTimer = 0;
    if (this.ws) {
      const old = this.ws;
      this.ws = null;
      old.close(1000, 'replaced');
    }
    const gen = ++this.gen;
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
    this.predict.setTermMode(null); // told again by the new connection
    this.acked = 0;
    this.size.connected();
    this.setState(this.ever ? 'reconnecting' : 'connecting');
    ws.onmessage = (ev) => {
      if (gen !== this.gen) return;
      this.lastHeard = performance.now();
      if (!(ev.data instanceof ArrayBuffer)) return;
      const f = wire.parse(ev.data);
      if (f) this.onFrame(f);
    };
    ws.onclose = (ev) => {
      if (gen !== this.gen) return;
      this.ws = null;
      if (!this.exit && ev.reason) this.lastError = ev.reason;
      this.dropped();
    };
    ws.onerror = () => {
      // onclose follows and decides
    };
  }

  private send(b: Uint8Array): boolean {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(b);
    return true;
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
        this.ever = true;
        this.attempt = 0;
        this.lastError = '';
        this.dropCause = null;
        if (w.resume === 'live') this.written = w.start;
        // What the log held when this connection began is caught up on,
        // not live: no clipboard write in it is applied.
        this.liveFrom = w.exited ? Infinity : w.end;
        this.sessionResized(w.cols, w.rows);
        this.setState('live');
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
        this.setState('ended');
        this.ws?.close(1000, 'session ended');
        break;
      }
      case wire.T.Error: {
        const e = wire.parseError(p);
        this.lastError = e.message;
        if (e.code === wire.Code.NotFound) {
          this.setState('gone');
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
    // Callbacks run in order between the pieces xterm.js parses: this one
    // says, before the parser reaches data, whether data is live.
    this.term.write('', () => (this.parsingLive = live));
    // xterm.js yields to the page between the pieces it is given, never
    // inside one: slices keep a flood from holding the page for long.
    while (data.length > WRITE_SLICE) {
      this.term.write(data.subarray(0, WRITE_SLICE));
      data = data.subarray(WRITE_SLICE);
    }
    this.term.write(data, () => {
      // Callbacks run in write order, so this only moves forward (or back
      // to a fresh snapshot's offset after a restart from scratch).
      this.drawn = end;
      this.scheduleAck();
    });
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
    if (this.disposed || !this.exit) return;
    this.exit = null;
    this.info = info;
    this.term.options.cursorBlink = true;
    this.attempt = 0;
    this.setState('connecting');
    this.connect();
  }

  private setState(s: ConnState): void {
    if (this.state === s) return;
    if (this.state === 'live') this.leftLive = performance.now();
    this.state = s;
    this.hooks.changed(this);
  }

  /** dropped handles a lost connection: retry with backoff and jitter until the session answers again. */
  private dropped(): void {
    window.clearTimeout(this.probeTimer);
    this.probeTimer = 0;
    // This page was one of the viewers it was told of; it is not one now.
    if (this.state === 'live' && this.viewers > 0) this.viewers--;
    if (this.disposed || this.suspended || this.state === 'gone') return;
    if (this.exit) {
      this.setState('ended');
      return;
    }
    this.setState(this.ever ? 'reconnecting' : 'connecting');
    const base = Math.min(10000, 250 * 2 ** Math.min(this.attempt, 8));
    const delay = base / 2 + Math.random() * (base / 2);
    this.attempt++;
    this.retryAt = Date.now() + delay;
    this.hooks.changed(this);
    window.clearTimeout(this.retryTimer);
    this.retryTimer = window.setTimeout(() => void this.retry(), delay);
  }

  /** retry checks that the session still exists (a refused WebSocket says nothing about why), then reconnects. */
  private async retry(): Promise<void> {
    this.retryTimer = 0;
    if (this.disposed || this.suspended || this.exit) return;
    const gen = this.gen;
    try {
      const s = await api.get(this.id);
      if (gen !== this.gen || this.disposed) return;
      this.info = s;
      // The server answers: if the session's connection fails again, the
      // way to it (a proxy, the network) is what drops it.
      this.dropCause = dropCause(navigator.onLine, true);
    } catch (e) {
      if (gen !== this.gen || this.disposed) return;
      this.dropCause = dropCause(navigator.onLine, false, e instanceof ApiError ? e.status : 0);
      if (e instanceof ApiError && e.status === 404) {
        this.setState('gone');
        this.hooks.gone(this);
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
    if (this.disposed || this.suspended || this.exit) return;
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
    if (this.active && performance.now() - this.lastPing >= RTT_PING_MS) this.ping();
  }

  /** ping measures the round trip (the pong's answer) for predictive echo. */
  private ping(): void {
    if (this.state !== 'live' || !this.predict.wantsRtt()) return;
    this.lastPing = performance.now();
    this.send(wire.frame(wire.T.Ping, wire.u64(Math.floor(this.lastPing))));
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
    this.saveOffset();
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
    if (this.exit) return;
    this.attempt = 0;
    this.connect();
  }

  dispose(): void {
    this.disposed = true;
    this.gen++;
    window.clearTimeout(this.retryTimer);
    window.clearTimeout(this.probeTimer);
    window.clearTimeout(this.ackTimer);
    window.clearTimeout(this.saveTimer);
    this.ws?.close(1000, 'tab closed');
    this.ws = null;
    try {
      sessionStorage.removeItem(offsetKey(this.id));
    } catch {
      // nothing to clean
    }
    this.predict.dispose();
    this.dropWebgl();
    this.term.dispose();
    this.el.remove();
  }

  /** visibleText is the terminal's screen, a line per row, trailing blanks cut (tests compare it with `termkeep capture`). */
  visibleText(): string[] {
    const b = this.term.buffer.active;
    const out: string[] = [];
    for (let y = 0; y < this.term.rows; y++) out.push(b.getLine(b.baseY + y)?.translateToString(true) ?? '');
    return out;
  }

  /** allText is every line of the buffer, scrollback first. */
  allText(): string[] {
    const b = this.term.buffer.active;
    const out: string[] = [];
    for (let y = 0; y < b.length; y++) out.push(b.getLine(y)?.translateToString(true) ?? '');
    return out;
  }
}
