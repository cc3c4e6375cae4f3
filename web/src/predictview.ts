// Predictive echo on the page: feeds the predictor (predict.ts) the keys
// the session sends, the screen after each output xterm.js has parsed, the
// session's modes (the term-mode frame, the alternate screen, mouse
// tracking, the shell's OSC 133 marks) and the round trip the ping
// measures, and draws what it predicts over the cells, in a layer of its
// own inside xterm.js's screen element: it moves with the terminal's
// scaling, and follows its scrolling and cell size.
//
// Not as xterm.js decorations: registering or removing one makes xterm.js
// redraw every row of the screen in the next frame, and creates its
// element only then. The layer's elements change in the key's own handler,
// and the frame after it has nothing to do but lay them out and paint.

import type { IDisposable, Terminal } from '@xterm/xterm';
import { Modes, Predictor, Screen, Setting } from './predict';
import { Mark, change, markKey, marks } from './predictdraw';

/** How a prediction is drawn until its echo confirms it. */
export type PredictStyle = 'underline' | 'dim' | 'plain';

export const PREDICT_STYLES: PredictStyle[] = ['underline', 'dim', 'plain'];

/** How many round trips the estimate looks back on (a ping every 2 s). */
const RTT_SAMPLES = 5;

export class PredictView {
  private readonly p: Predictor;
  private termMode: Modes['termMode'] = null;
  private shell: Modes['shell'] = 'unknown';
  /** The marks drawn, by markKey, each with its element in layer. */
  private readonly shown = new Map<string, { m: Mark; el: HTMLElement }>();
  private layer: HTMLElement | null = null;
  /** Where the marks were laid out: the cell's size and the first row shown. */
  private grid = { w: 0, h: 0, top: 0, rows: 0 };
  private timer = 0;
  private readonly subs: IDisposable[] = [];
  private setting: Setting;
  rtt: number | null = null;
  private readonly samples: number[] = [];

  constructor(
    private readonly term: Terminal,
    setting: Setting,
    private style: PredictStyle,
  ) {
    this.setting = setting;
    this.p = new Predictor({ setting });
    // OSC 133 (shell integration): A and B the prompt, C a command's
    // output, D its end (a prompt follows, with A).
    this.subs.push(
      term.parser.registerOscHandler(133, (data) => {
        const k = data[0];
        if (k === 'A' || k === 'B') this.shell = 'prompt';
        else if (k === 'C' || k === 'D') this.shell = 'running';
        if (k === 'B') this.p.prompt();
        this.modes();
        return false;
      }),
    );
    this.subs.push(term.onWriteParsed(() => this.drawn()));
    this.subs.push(
      term.buffer.onBufferChange(() => {
        this.modes();
        this.draw();
      }),
    );
    // The cells move: scrolled, resized, the font changed (xterm.js sets
    // the screen's size before it renders).
    for (const on of [term.onScroll, term.onResize, term.onRender]) this.subs.push(on(() => this.place()));
  }

  /** setPrefs applies the setting and the style. */
  setPrefs(setting: Setting, style: PredictStyle): void {
    this.style = style;
    // Drawn again from nothing: a mark is styled when it is made, and
    // the style or the theme may have changed.
    this.clear();
    if (setting !== this.setting) {
      this.setting = setting;
      this.p.setSetting(setting);
    }
    this.draw();
  }

  /** wantsRtt says whether the round trip matters (the page pings for it). */
  wantsRtt(): boolean {
    return this.setting !== 'off';
  }

  setRtt(ms: number): void {
    // The least of the last few: a page busy drawing (a load, a flood)
    // answers late, and that is not the network's round trip.
    this.samples.push(ms);
    if (this.samples.length > RTT_SAMPLES) this.samples.shift();
    this.rtt = Math.min(...this.samples);
    this.p.setRtt(this.rtt);
  }

  /** setTermMode takes the pty's mode (null: unknown, as under an older holder or a new connection). */
  setTermMode(m: { echo: boolean; canonical: boolean } | null): void {
    this.termMode = m ? { echo: m.echo, canonical: m.canonical } : null;
    this.modes();
    this.draw();
  }

  /** key takes what is about to be sent to the session. */
  key(data: string): void {
    this.modes();
    this.p.key(data, performance.now(), this.screen());
    this.draw();
  }

  /** info is what the browser tests read. */
  info(): object {
    const t = this.term;
    return {
      rtt: this.rtt,
      setting: this.setting,
      termMode: this.termMode,
      shell: this.shell,
      altScreen: t.buffer.active.type === 'alternate',
      mouse: t.modes.mouseTrackingMode,
      stats: { ...this.p.stats },
      corrections: [...this.p.corrections],
      cursor: { row: t.buffer.active.baseY + t.buffer.active.cursorY, col: t.buffer.active.cursorX },
      baseY: t.buffer.active.baseY,
      view: this.p.view(),
    };
  }

  dispose(): void {
    window.clearTimeout(this.timer);
    this.clear();
    this.layer?.remove();
    for (const s of this.subs) s.dispose();
  }

  private drawn(): void {
    this.modes();
    this.p.screen(performance.now(), this.screen());
    this.draw();
  }

  private modes(): void {
    const t = this.term;
    this.p.setModes({
      altScreen: t.buffer.active.type === 'alternate',
      mouse: t.modes.mouseTrackingMode !== 'none',
      termMode: this.termMode,
      shell: this.shell,
    });
  }

  private screen(): Screen {
    const b = this.term.buffer.active;
    return {
      row: b.baseY + b.cursorY,
      col: b.cursorX,
      cols: this.term.cols,
      cell: (r, c) => b.getLine(r)?.getCell(c)?.getChars() || ' ',
    };
  }

  private clear(): void {
    for (const { el } of this.shown.values()) el.remove();
    this.shown.clear();
  }

  /** host is the layer, made inside xterm.js's screen element once the terminal is open; null before. */
  private host(): HTMLElement | null {
    if (this.layer?.isConnected) return this.layer;
    const screen = this.term.element?.querySelector('.xterm-screen');
    if (!screen) return null;
    // A layer of an earlier screen took its marks with it.
    this.shown.clear();
    this.layer = document.createElement('div');
    this.layer.className = 'tk-predict-layer';
    // What is typed is told by xterm.js's own screen reader support, once.
    this.layer.setAttribute('aria-hidden', 'true');
    screen.appendChild(this.layer);
    return this.layer;
  }

  /**
   * place lays marks out on their cells: only those given, unless the
   * cells have moved since (then all). The cell's size is read from the
   * screen element's size, which xterm.js sets: no layout is forced.
   */
  private place(marks?: Mark[]): void {
    if (this.shown.size === 0 || !this.layer) return;
    const screen = this.layer.parentElement;
    const t = this.term;
    const g = {
      w: parseFloat(screen?.style.width ?? '') / t.cols,
      h: parseFloat(screen?.style.height ?? '') / t.rows,
      top: t.buffer.active.viewportY,
      rows: t.rows,
    };
    if (!(g.w > 0 && g.h > 0)) return;
    const moved = g.w !== this.grid.w || g.h !== this.grid.h || g.top !== this.grid.top || g.rows !== this.grid.rows;
    this.grid = g;
    if (!moved && !marks) return;
    const todo = moved || !marks ? [...this.shown.values()] : marks.map((m) => this.shown.get(markKey(m))!).filter(Boolean);
    for (const { m, el } of todo) {
      const row = m.row - g.top;
      const st = el.style;
      st.display = row < 0 || row >= g.rows ? 'none' : '';
      st.left = `${m.col * g.w}px`;
      st.top = `${row * g.h}px`;
      st.width = `${g.w}px`;
      st.height = st.lineHeight = `${g.h}px`;
    }
  }

  /**
   * draw brings the layer to the predictor's view, changing only the
   * marks that differ (predictdraw.ts), and arms its deadline.
   */
  private draw(): void {
    const b = this.term.buffer.active;
    const cur = { row: b.baseY + b.cursorY, col: b.cursorX };
    const layer = this.host();
    // Nothing over the alternate screen (as xterm.js hides decorations there).
    const want = layer && b.type === 'normal' ? marks(this.p.view(), cur, this.term.cols, (r, c) => b.getLine(r)?.getCell(c)?.getChars() || ' ') : [];
    const { remove, add } = change(this.shown.keys(), want);
    for (const k of remove) {
      this.shown.get(k)?.el.remove();
      this.shown.delete(k);
    }
    if (layer && add.length > 0) {
      const theme = this.term.options.theme ?? {};
      for (const m of add) {
        const el = document.createElement('div');
        el.className = `${m.cls} tk-predict-${this.style}`;
        el.textContent = m.char;
        el.style.display = 'none'; // until placed on its cell
        const cursor = m.cls.includes('tk-predict-cursor');
        el.style.background = (cursor ? theme.cursor : theme.background) ?? '#000';
        el.style.color = (cursor ? theme.cursorAccent : theme.foreground) ?? '#fff';
        this.shown.set(markKey(m), { m, el });
        layer.appendChild(el);
      }
      // The layer's font, as the terminal's (the frame changes its size);
      // written only when it differs: a style written is one to recompute.
      const family = this.term.options.fontFamily ?? 'monospace';
      const size = `${this.term.options.fontSize ?? 14}px`;
      if (layer.style.fontFamily !== family) layer.style.fontFamily = family;
      if (layer.style.fontSize !== size) layer.style.fontSize = size;
      this.place(add);
    }
    window.clearTimeout(this.timer);
    const due = this.p.nextDeadline();
    if (due !== null) {
      this.timer = window.setTimeout(() => {
        this.p.tick(performance.now());
        this.draw();
      }, Math.max(0, due - performance.now()) + 1);
    }
  }
}
