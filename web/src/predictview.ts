// Predictive echo on the page: feeds the predictor (predict.ts) the keys
// the session sends, the screen after each output xterm.js has parsed, the
// session's modes (the term-mode frame, the alternate screen, mouse
// tracking, the shell's OSC 133 marks) and the round trip the ping
// measures, and draws what it predicts as xterm.js decorations over the
// cells: they follow the terminal's own layout, scaling and scrolling.

import type { IDisposable, IMarker, Terminal } from '@xterm/xterm';
import { Modes, Predictor, Screen, Setting } from './predict';

/** How a prediction is drawn until its echo confirms it. */
export type PredictStyle = 'underline' | 'dim' | 'plain';

export const PREDICT_STYLES: PredictStyle[] = ['underline', 'dim', 'plain'];

/** How many round trips the estimate looks back on (a ping every 2 s). */
const RTT_SAMPLES = 5;

export class PredictView {
  private readonly p: Predictor;
  private termMode: Modes['termMode'] = null;
  private shell: Modes['shell'] = 'unknown';
  private marks: IMarker[] = [];
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
    this.subs.push(term.buffer.onBufferChange(() => this.modes()));
  }

  /** setPrefs applies the setting and the style. */
  setPrefs(setting: Setting, style: PredictStyle): void {
    this.style = style;
    if (setting === this.setting) return;
    this.setting = setting;
    this.p.setSetting(setting);
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
    for (const m of this.marks) m.dispose();
    this.marks = [];
  }

  /** draw replaces the decorations with the predictor's view, and arms its deadline. */
  private draw(): void {
    this.clear();
    const v = this.p.view();
    const b = this.term.buffer.active;
    const cur = { row: b.baseY + b.cursorY, col: b.cursorX };
    const cells = v.cells.map((c) => ({ ...c, cls: 'tk-predict' }));
    if (v.cursor && (v.cursor.row !== cur.row || v.cursor.col !== cur.col)) {
      // The cursor where the prediction leaves it; the real one hidden
      // under its own cell, unless a predicted cell covers it already.
      const at = cells.find((c) => c.row === v.cursor!.row && c.col === v.cursor!.col);
      if (at) at.cls += ' tk-predict-cursor';
      else cells.push({ ...v.cursor, char: b.getLine(v.cursor.row)?.getCell(v.cursor.col)?.getChars() || ' ', cls: 'tk-predict-cursor' });
      if (!cells.some((c) => c.row === cur.row && c.col === cur.col)) {
        cells.push({ ...cur, char: b.getLine(cur.row)?.getCell(cur.col)?.getChars() || ' ', cls: 'tk-predict-mask' });
      }
    }
    const theme = this.term.options.theme ?? {};
    for (const c of cells) {
      if (c.col < 0 || c.col >= this.term.cols) continue;
      const m = this.term.registerMarker(c.row - cur.row);
      if (!m) continue;
      this.marks.push(m);
      const d = this.term.registerDecoration({ marker: m, x: c.col, width: 1, layer: 'top' });
      d?.onRender((el) => {
        // Added to xterm.js's own classes, never in their place: its
        // xterm-decoration class is what lays the element out on its cell.
        el.classList.remove(...PREDICT_STYLES.map((s) => `tk-predict-${s}`));
        el.classList.add(...c.cls.split(' '), `tk-predict-${this.style}`);
        el.textContent = c.char;
        el.style.fontFamily = this.term.options.fontFamily ?? 'monospace';
        el.style.fontSize = `${this.term.options.fontSize ?? 14}px`;
        el.style.lineHeight = el.style.height;
        const cursor = c.cls.includes('tk-predict-cursor');
        el.style.background = (cursor ? theme.cursor : theme.background) ?? '#000';
        el.style.color = (cursor ? theme.cursorAccent : theme.foreground) ?? '#fff';
      });
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
