// The box a terminal is drawn in. The terminal always has the session's
// columns and rows; this frame decides only how it is drawn in the
// window (fitplan.ts): at the page's text size, centred, the space around
// it marked as outside the terminal; shrunk down to 9 px; or at 9 px,
// panning: scrollbars on a desktop, a one-finger drag on a phone.

import type { Terminal } from '@xterm/xterm';
import { Box, Grid, Plan, plan, windowGrid, xtermCell } from './fitplan';

/** The pixels a terminal takes beside its cells: the scrollbar's overview ruler (session.ts sets its width). */
export const SCROLLBAR = 8;

export class TermFrame {
  /** The element xterm.js opens in, sized to the terminal at the planned font. */
  readonly frame: HTMLDivElement;
  /** The last plan applied (null before the first). */
  last: Plan | null = null;
  private readonly cells = new Map<number, Box>();
  private ctx: OffscreenCanvasRenderingContext2D | null = null;

  constructor(
    /** host is the box in the page: it centres the frame, and scrolls when the plan pans. */
    private readonly host: HTMLElement,
    private readonly term: Terminal,
    /** pref is the page's text size. */
    public pref: number,
  ) {
    this.frame = document.createElement('div');
    this.frame.className = 'term-frame';
    host.appendChild(this.frame);
    this.bindDrag();
    // A click beside a centred terminal is a click on it: it takes the keyboard.
    host.addEventListener('mousedown', (e) => {
      // The host's scrollbars are outside its client box: they keep their drag.
      if (e.target !== host || e.offsetX >= host.clientWidth || e.offsetY >= host.clientHeight) return;
      e.preventDefault();
      term.focus();
    });
  }

  /** box is the room the host gives, scrollbars included (so that panning does not shrink it). */
  private box(): Box {
    return { width: this.host.offsetWidth, height: this.host.offsetHeight };
  }

  /** cellAt measures a cell at a font size as xterm.js does (a canvas's metrics of "W"). */
  cellAt = (font: number): Box => {
    const hit = this.cells.get(font);
    if (hit) return hit;
    let cell: Box = { width: 0, height: 0 };
    try {
      this.ctx ??= new OffscreenCanvas(10, 10).getContext('2d');
      if (this.ctx) {
        this.ctx.font = `${font}px ${this.term.options.fontFamily}`;
        const m = this.ctx.measureText('W');
        cell = xtermCell(m.width, m.fontBoundingBoxAscent + m.fontBoundingBoxDescent, window.devicePixelRatio || 1, this.term.options.lineHeight ?? 1);
      }
    } catch {
      // no canvas: the plan pans at the page's size, which hides nothing
    }
    if (cell.width > 0) this.cells.set(font, cell);
    return cell;
  };

  /** windowGrid is the size this window would give the session at the page's text size; null while hidden. */
  windowGrid(): Grid | null {
    return windowGrid(this.box(), this.cellAt(this.pref), SCROLLBAR);
  }

  /** apply draws the terminal (at its own size, the session's) in the window. */
  apply(): Plan {
    const box = this.box();
    const p = plan(box, { cols: this.term.cols, rows: this.term.rows }, this.pref, this.cellAt, SCROLLBAR);
    if (this.term.options.fontSize !== p.font) this.term.options.fontSize = p.font;
    if (p.width > 0) {
      this.frame.style.width = `${p.width}px`;
      this.frame.style.height = `${p.height}px`;
    }
    const cell = this.cellAt(p.font);
    const room = box.width - p.width >= cell.width || box.height - p.height >= cell.height;
    this.host.dataset.fit = p.pan ? 'pan' : room ? 'letterbox' : 'fill';
    this.last = p;
    return p;
  }

  /**
   * A one-finger drag pans a terminal larger than the screen (touch
   * scrolling of the terminal would only move its scrollback); what the
   * box cannot pan further up or down scrolls the scrollback.
   */
  private bindDrag(): void {
    let x = 0;
    let y = 0;
    let rest = 0;
    const panning = () => this.host.dataset.fit === 'pan';
    this.host.addEventListener(
      'touchstart',
      (e) => {
        if (!panning() || e.touches.length !== 1) return;
        x = e.touches[0].clientX;
        y = e.touches[0].clientY;
        rest = 0;
      },
      { capture: true, passive: true },
    );
    this.host.addEventListener(
      'touchmove',
      (e) => {
        if (!panning() || e.touches.length !== 1) return;
        const t = e.touches[0];
        const dx = x - t.clientX;
        const dy = y - t.clientY;
        x = t.clientX;
        y = t.clientY;
        this.host.scrollLeft += dx;
        const top = this.host.scrollTop;
        this.host.scrollTop += dy;
        rest += dy - (this.host.scrollTop - top);
        const line = this.cellAt(this.last?.font ?? this.pref).height || 16;
        const n = Math.trunc(rest / line);
        if (n !== 0) {
          this.term.scrollLines(n);
          rest -= n * line;
        }
        e.preventDefault();
        e.stopPropagation();
      },
      { capture: true, passive: false },
    );
  }
}
