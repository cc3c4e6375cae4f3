// The terminal a tab draws its session in: xterm.js with its addons, the
// element and frame it sits in (termframe.ts), its renderer, and the
// writing of output into it. It knows nothing of the connection
// (viewerconn.ts) or of offsets; TermSession (session.ts) composes them.

import { Terminal } from '@xterm/xterm';
import { SearchAddon } from '@xterm/addon-search';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { WebglAddon } from '@xterm/addon-webgl';
import type { Setting } from './predict';
import type { PredictStyle } from './predictview';
import { SCROLLBAR, TermFrame } from './termframe';
import { themes, ThemeName } from './theme';

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

/** The lines of history the terminal keeps, and asks a snapshot for. */
export const SCROLLBACK = 10000;
const WRITE_SLICE = 16 << 10;

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

export class TermView {
  readonly term: Terminal;
  readonly el: HTMLDivElement;
  readonly frame: TermFrame;
  readonly search = new SearchAddon({ highlightLimit: 2000 });
  private webgl: WebglAddon | null = null;
  renderer: 'webgl' | 'dom' = 'dom';
  /** opened: the terminal is in the page (xterm.js's open), hidden or not. */
  opened = false;
  private useWebgl: boolean;
  private disposed = false;

  constructor(id: string, cols: number, rows: number, prefs: TermPrefs, parent: HTMLElement) {
    this.el = document.createElement('div');
    this.el.className = 'term-host';
    this.el.hidden = true;
    this.el.dataset.session = id;
    parent.appendChild(this.el);

    this.term = new Terminal({
      scrollback: SCROLLBACK,
      allowProposedApi: true,
      cols: Math.max(2, cols || 80),
      rows: Math.max(1, rows || 24),
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
    this.useWebgl = prefs.webgl;
  }

  /** applyLook takes the prefs' look of the terminal; it reports whether the text size changed. */
  applyLook(p: TermPrefs): boolean {
    const text = this.frame.pref !== p.fontSize;
    this.frame.pref = p.fontSize;
    this.term.options.theme = themes[p.theme];
    if (this.term.options.screenReaderMode !== p.screenReader) this.term.options.screenReaderMode = p.screenReader;
    if (this.term.options.minimumContrastRatio !== p.minContrast) this.term.options.minimumContrastRatio = p.minContrast;
    return text;
  }

  /** show makes this the visible terminal: open it if needed, render with WebGL when the browser can. */
  show(): void {
    this.el.hidden = false;
    if (!this.opened) {
      this.term.open(this.frame.frame);
      this.opened = true;
    }
    this.loadWebgl();
  }

  /** refresh redraws every row. */
  refresh(): void {
    this.term.refresh(0, this.term.rows - 1);
  }

  /**
   * prepare opens a hidden terminal ahead of time (the page calls it when
   * idle), so switching to its tab later costs only a redraw. It is laid
   * out invisibly for the moment it opens, so xterm.js can measure its font.
   */
  prepare(active: boolean): void {
    if (this.opened || this.disposed) return;
    this.el.style.visibility = 'hidden';
    this.el.hidden = false;
    this.term.open(this.frame.frame);
    this.opened = true;
    this.el.hidden = !active;
    this.el.style.visibility = '';
  }

  hide(): void {
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

  /** laidOut says whether the terminal is open and showing, so that its layout means something. */
  laidOut(): boolean {
    return this.opened && !this.el.hidden;
  }

  /**
   * resizeTo gives the terminal the session's size in order with the
   * output (the bytes already written were produced at the old size);
   * changed runs when it did change.
   */
  resizeTo(cols: number, rows: number, changed: () => void): void {
    if (cols < 1 || rows < 1) return;
    this.term.write('', () => {
      if (this.disposed) return;
      if (this.term.cols !== cols || this.term.rows !== rows) {
        this.term.resize(Math.max(2, cols), rows);
        if (this.laidOut()) this.frame.apply();
        changed();
      }
    });
  }

  /**
   * write hands data to the terminal: parsing runs just before the parser
   * reaches data, drawn once it has parsed all of it.
   */
  write(data: Uint8Array, parsing: () => void, drawn: () => void): void {
    // Callbacks run in order between the pieces xterm.js parses.
    this.term.write('', parsing);
    // xterm.js yields to the page between the pieces it is given, never
    // inside one: slices keep a flood from holding the page for long.
    while (data.length > WRITE_SLICE) {
      this.term.write(data.subarray(0, WRITE_SLICE));
      data = data.subarray(WRITE_SLICE);
    }
    this.term.write(data, drawn);
  }

  /** sizing is how the terminal is drawn (the tests read it); holder is the size indicator's short text. */
  sizing(holder: string | null): object {
    const p = this.frame.last;
    const f = this.frame.frame;
    return {
      cols: this.term.cols,
      rows: this.term.rows,
      font: p?.font ?? null,
      pan: p?.pan ?? null,
      holder,
      box: { width: this.el.clientWidth, height: this.el.clientHeight },
      scroll: { width: this.el.scrollWidth, height: this.el.scrollHeight, left: this.el.scrollLeft, top: this.el.scrollTop },
      frame: { width: f.offsetWidth, height: f.offsetHeight },
    };
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

  dispose(): void {
    this.disposed = true;
    this.dropWebgl();
    this.term.dispose();
    this.el.remove();
  }
}
