// Touch on the terminal: a long press selects the word under the finger
// (moving on extends the selection) and offers Copy, since a phone has no
// Ctrl+Shift+C and may refuse a copy that no tap asked for; two fingers
// pinch the terminal's text size (its font, then a refit: the page itself
// never zooms). What a gesture means is gestures.ts's.

import { copy, toast } from './dialogs';
import { $ } from './dom';
import { LONG_PRESS_MS, pinchFont, Press, pressIs, wordAt } from './gestures';
import type { TermSession } from './session';

/** What the gestures need of the page. */
export interface TouchHost {
  active(): TermSession | undefined;
  readonly fontSize: number;
  setFont(size: number): void;
}

const FONT_MIN = 8;
const FONT_MAX = 32;

export class TouchGestures {
  private press: Press | null = null;
  private pressTimer = 0;
  /** anchor is the word a long press selected, in buffer rows and columns: a move extends from it. */
  private anchor: { row: number; start: number; end: number } | null = null;
  private pinch: { dist: number; font: number; want: number } | null = null;
  private pinchRaf = 0;
  private readonly copyBtn = $('copy-selection') as HTMLButtonElement;

  constructor(private readonly host: TouchHost, area: HTMLElement) {
    const opts = { passive: false, capture: true };
    area.addEventListener('touchstart', (e) => this.start(e), opts);
    area.addEventListener('touchmove', (e) => this.move(e), opts);
    area.addEventListener('touchend', (e) => this.end(e), opts);
    area.addEventListener('touchcancel', () => this.reset(), opts);
    // A long press is ours: no context menu over the terminal meanwhile.
    area.addEventListener('contextmenu', (e) => {
      if (this.anchor || this.press) e.preventDefault();
    });
    this.copyBtn.addEventListener('pointerdown', (e) => e.preventDefault());
    this.copyBtn.addEventListener('click', () => this.copy());
  }

  private start(e: TouchEvent): void {
    if (e.touches.length === 2) {
      this.cancelPress();
      this.anchor = null;
      const d = distance(e.touches);
      this.pinch = { dist: d, font: this.host.fontSize, want: this.host.fontSize };
      e.preventDefault();
      return;
    }
    if (e.touches.length !== 1) return this.reset();
    this.hideCopy();
    const t = e.touches[0];
    this.press = { x: t.clientX, y: t.clientY, at: performance.now() };
    window.clearTimeout(this.pressTimer);
    this.pressTimer = window.setTimeout(() => this.longPress(), LONG_PRESS_MS);
  }

  private move(e: TouchEvent): void {
    if (this.pinch && e.touches.length === 2) {
      e.preventDefault();
      const want = pinchFont(this.pinch.font, this.pinch.dist, distance(e.touches), FONT_MIN, FONT_MAX);
      if (want !== this.pinch.want) {
        this.pinch.want = want;
        // One refit a frame, however fast the fingers move.
        if (!this.pinchRaf)
          this.pinchRaf = requestAnimationFrame(() => {
            this.pinchRaf = 0;
            if (this.pinch && this.pinch.want !== this.host.fontSize) this.host.setFont(this.pinch.want);
          });
      }
      return;
    }
    const t = e.touches[0];
    if (!t) return;
    if (this.anchor) {
      e.preventDefault();
      this.extend(t.clientX, t.clientY);
      return;
    }
    if (this.press && pressIs(this.press, t.clientX, t.clientY, performance.now()) === 'moved') this.cancelPress();
  }

  private end(e: TouchEvent): void {
    if (this.anchor) {
      // No mouse events after it: a mousedown would clear the selection.
      e.preventDefault();
      this.anchor = null;
      if (this.host.active()?.term.hasSelection()) this.showCopy();
    }
    this.cancelPress();
    if (e.touches.length < 2) this.pinch = null;
  }

  private reset(): void {
    this.cancelPress();
    this.anchor = null;
    this.pinch = null;
  }

  private cancelPress(): void {
    window.clearTimeout(this.pressTimer);
    this.press = null;
  }

  private longPress(): void {
    const p = this.press;
    this.press = null;
    const ts = this.host.active();
    if (!p || !ts) return;
    const cell = this.cellAt(ts, p.x, p.y);
    if (!cell) return;
    const word = wordAt(this.lineCells(ts, cell.row), cell.col);
    const [start, end] = word ?? [cell.col, cell.col + 1];
    this.anchor = { row: cell.row, start, end };
    ts.term.select(start, cell.row, end - start);
    navigator.vibrate?.(10);
  }

  /** extend selects from the long-pressed word to the cell under the finger. */
  private extend(x: number, y: number): void {
    const ts = this.host.active();
    const a = this.anchor;
    if (!ts || !a) return;
    const c = this.cellAt(ts, x, y);
    if (!c) return;
    const cols = ts.term.cols;
    const here = c.row * cols + c.col;
    if (here >= a.row * cols + a.start) ts.term.select(a.start, a.row, Math.max(a.end - a.start, here + 1 - (a.row * cols + a.start)));
    else ts.term.select(c.col, c.row, a.row * cols + a.end - here);
  }

  /** cellAt is the buffer row and column under a point of the page, or null off the terminal. */
  private cellAt(ts: TermSession, x: number, y: number): { row: number; col: number } | null {
    const screen = ts.el.querySelector('.xterm-screen');
    if (!screen) return null;
    const r = screen.getBoundingClientRect();
    const { cols, rows } = ts.term;
    if (r.width <= 0 || r.height <= 0) return null;
    const col = Math.floor(((x - r.left) * cols) / r.width);
    const row = Math.floor(((y - r.top) * rows) / r.height);
    if (col < 0 || row < 0 || col >= cols || row >= rows) return null;
    return { row: ts.term.buffer.active.viewportY + row, col };
  }

  /** lineCells is a buffer row with one character per column (a wide character's second cell repeats it). */
  private lineCells(ts: TermSession, row: number): string {
    const line = ts.term.buffer.active.getLine(row);
    if (!line) return '';
    const out: string[] = [];
    for (let x = 0; x < ts.term.cols; x++) {
      const cell = line.getCell(x);
      if (!cell) break;
      const ch = [...cell.getChars()][0];
      out.push(cell.getWidth() === 0 ? (out[out.length - 1] ?? ' ') : ch || ' ');
    }
    return out.join('');
  }

  private showCopy(): void {
    this.copyBtn.hidden = false;
  }

  private hideCopy(): void {
    this.copyBtn.hidden = true;
  }

  private copy(): void {
    const ts = this.host.active();
    const text = ts?.term.getSelection() ?? '';
    this.hideCopy();
    if (!ts || !text) return;
    copy(text, 'select');
    toast(`Copied ${text.length} character${text.length === 1 ? '' : 's'}`);
    ts.term.clearSelection();
    ts.focus();
  }
}

function distance(t: TouchList): number {
  return Math.hypot(t[0].clientX - t[1].clientX, t[0].clientY - t[1].clientY);
}
