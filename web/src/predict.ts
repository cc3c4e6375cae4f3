// Predictive echo: what the page may show of the user's typing before the
// server's echo of it arrives, as mosh does (Winstein and Balakrishnan,
// USENIX ATC 2012). A pure, single-threaded state machine with the clock
// passed in: the page feeds it keys, the screen after each output it drew,
// the session's modes and the measured round trip, and draws view() over
// the terminal (underlined) until the echo confirms or replaces it.
//
// When in doubt it predicts nothing. Never at a password prompt (the pty's
// echo off with line editing on), on the alternate screen, with mouse
// tracking, for a paste, or while the pty's mode is unknown (a holder
// before protocol 7); only at a shell's prompt (its shell integration
// says so) or, without one, after several keys in a row were echoed as
// predicted. A prediction the screen contradicts, or whose echo does not
// come in time, is rolled back, and prediction pauses until the screen
// settles. Only typing at the end of a line is predicted: a printable
// character, a backspace over what was typed, and the left and right
// arrows over it when a line editor (not the pty) edits the line.

/** off: never; auto: when the round trip is above the threshold; always. */
export type Setting = 'off' | 'auto' | 'always';

/** The pty's input mode, as the server's term-mode frame says it. */
export interface TermMode {
  echo: boolean;
  canonical: boolean;
}

/** What the page knows of the session's state. */
export interface Modes {
  /** The alternate screen is shown (a full-screen program). */
  altScreen: boolean;
  /** The program tracks the mouse (a full-screen program). */
  mouse: boolean;
  /** The pty's mode; null while unknown. */
  termMode: TermMode | null;
  /** The shell as its integration's marks say; unknown without them. */
  shell: 'prompt' | 'running' | 'unknown';
}

/**
 * The terminal's screen as drawn now. Rows are absolute lines of the
 * buffer (they stay put while the screen scrolls); cell returns a cell's
 * character, ' ' for an empty one.
 */
export interface Screen {
  row: number;
  col: number;
  cols: number;
  cell(row: number, col: number): string;
}

export interface Cell {
  row: number;
  col: number;
  char: string;
}

/** What to draw over the terminal: predicted cells, and the cursor where the prediction puts it (null: where it is). */
export interface View {
  cells: Cell[];
  cursor: { row: number; col: number } | null;
}

export interface Options {
  setting: Setting;
  /** Above this round trip (ms), auto predicts. */
  thresholdMs: number;
  /** Keys in a row that must echo as predicted before predictions are shown without shell integration. */
  confidence: number;
}

export const defaults: Options = { setting: 'auto', thresholdMs: 30, confidence: 3 };

/**
 * Counts for the bench: keys typed, shown predictions, those the echo
 * confirmed, those the screen contradicted (wrong), and those taken back
 * because their echo was overdue (late: a slow link or machine, not a
 * wrong guess).
 */
export interface Stats {
  keys: number;
  shown: number;
  confirmed: number;
  wrong: number;
  late: number;
}

/** One predicted key: the cell it changes (if any) and where it leaves the cursor. */
interface Step {
  cell: Cell | null;
  /** The cell's character before this step, as predicted. */
  before: string;
  row: number;
  col: number;
  /** Where the cursor was before it. */
  fromRow: number;
  fromCol: number;
  /** Shown to the user (not a tentative one, made only to earn confidence). */
  shown: boolean;
  /** A key that could not be predicted followed it: the cursor after it cannot be checked. */
  cellsOnly: boolean;
  expires: number;
  /** When it was typed. */
  at: number;
  /** The line it was typed on (see Predictor.epoch). */
  epoch: number;
}

/** How many echo delays the expiry looks back on, and the most it takes from them (ms). */
const ECHO_SAMPLES = 16;
const ECHO_MAX = 3000;
/** How many correction times the bench can read back. */
const CORRECTIONS_KEPT = 256;

const printable = /^[\x20-\x7e\u00a0-\u02ff\u0370-\u1fff]$/u;
/** Ctrl+A, B, E, F, K, U and W: a line editor's keys that edit the line it reads and run nothing. */
const lineEditKey = /^[\x01\x02\x05\x06\x0b\x15\x17]$/;

export class Predictor {
  private opts: Options;
  private rtt: number | null = null;
  private modes: Modes = { altScreen: false, mouse: false, termMode: null, shell: 'unknown' };
  private steps: Step[] = [];
  /** Keys in a row echoed as predicted (without shell integration). */
  private earned = 0;
  /**
   * Counts the new lines and control keys typed without shell integration:
   * only the echo of a key typed since the last one earns confidence (the
   * program now reading may not echo; mosh's epochs).
   */
  private epoch = 0;
  /** The last echo delays (ms), and the time an overdue echo had been waited for: a slow machine or link waits longer. */
  private echoes: number[] = [];
  /** No new prediction before this time (a rollback's pause), nor while a barrier waits. */
  private pausedUntil = 0;
  private barrier = false;
  /**
   * A key not predicted was sent at this time (null: none since the
   * screen showed its effect): where it leaves the cursor is not known
   * before output that could be its echo, or its deadline.
   */
  private unseen: number | null = null;
  /** A new line or a control key was typed at a prompt: nothing shows until the shell draws its next prompt (prompt). */
  private awaitPrompt = false;
  /** Columns typed on the cursor's line since it was last unpredictable: what backspace and the arrows may cross. */
  private line: { row: number; start: number; end: number } | null = null;
  readonly stats: Stats = { keys: 0, shown: 0, confirmed: 0, wrong: 0, late: 0 };
  /** How long each of the last shown predictions rolled back was shown (ms): the time to correct a misprediction. */
  readonly corrections: number[] = [];

  constructor(opts: Partial<Options> = {}) {
    this.opts = { ...defaults, ...opts };
  }

  setSetting(s: Setting): void {
    this.opts.setting = s;
    if (s === 'off') this.drop();
  }

  /** setRtt records the measured round trip in ms. */
  setRtt(ms: number): void {
    if (Number.isFinite(ms) && ms >= 0) this.rtt = ms;
  }

  /** setModes takes the session's modes; a mode that forbids prediction drops the pending ones. */
  setModes(m: Modes): void {
    this.modes = { ...m };
    if (this.forbidden()) this.drop();
  }

  /** prompt says the shell has drawn a new prompt (its integration's mark): what is typed now goes to its line editor. */
  prompt(): void {
    this.awaitPrompt = false;
  }

  /** key takes what the user typed, the screen as it is before it is sent. */
  key(data: string, now: number, scr: Screen): void {
    // The terminal's focus reports (the page's, not the user's) change nothing on the screen.
    if (data === '\x1b[I' || data === '\x1b[O') return;
    this.stats.keys++;
    const step = this.allowed(now) ? this.predictKey(data, now, scr) : null;
    if (!step) {
      this.unpredictable(data);
      this.unseen = now;
      return;
    }
    this.steps.push(step);
    if (step.shown) this.stats.shown++;
  }

  /** screen takes the screen after the page drew output: it confirms, keeps or rolls back the predictions. */
  screen(now: number, scr: Screen): void {
    // Output while paused keeps the pause going; once it has ended, output
    // (the echo of what is predicted now) must not bring it back.
    if (now < this.pausedUntil) this.pausedUntil = Math.max(this.pausedUntil, now + this.settle());
    else this.pausedUntil = 0;
    if (this.unseen !== null && now - this.unseen >= this.echoFloor()) this.unseen = null;
    if (this.steps.length === 0) {
      this.barrier = false;
      return;
    }
    const j = this.matched(scr, now);
    if (j < 0) {
      this.rollback(now);
      return;
    }
    for (const s of this.steps.slice(0, j)) {
      if (s.shown) this.stats.confirmed++;
      if (s.epoch === this.epoch) this.earned++;
      this.echoed(now - s.at);
    }
    this.steps = this.steps.slice(j);
    if (this.steps.length === 0) this.barrier = false;
  }

  /** tick rolls back predictions whose echo is overdue; call it by nextDeadline. */
  tick(now: number): void {
    if (!this.steps.some((s) => now >= s.expires)) return;
    // A machine or link this slow keeps its echoes this late for a while:
    // the next predictions wait longer instead of rolling back each time.
    this.echoed(now - Math.min(...this.steps.map((s) => s.at)));
    this.rollback(now, true);
  }

  /** nextDeadline is when tick has something to do (null: nothing pending). */
  nextDeadline(): number | null {
    return this.steps.length ? Math.min(...this.steps.map((s) => s.expires)) : null;
  }

  view(): View {
    const cells = new Map<string, Cell>();
    let cursor: View['cursor'] = null;
    for (const s of this.steps) {
      if (!s.shown) continue;
      if (s.cell) cells.set(`${s.cell.row}:${s.cell.col}`, s.cell);
      cursor = s.cellsOnly ? null : { row: s.row, col: s.col };
    }
    return { cells: [...cells.values()], cursor };
  }

  private forbidden(): boolean {
    const m = this.modes;
    return (
      this.opts.setting === 'off' ||
      m.altScreen ||
      m.mouse ||
      m.termMode === null ||
      (!m.termMode.echo && m.termMode.canonical) ||
      m.shell === 'running'
    );
  }

  /** allowed says whether a new key may be predicted now (tentatively or shown). */
  private allowed(now: number): boolean {
    if (this.forbidden() || this.barrier || now < this.pausedUntil) return false;
    if (this.unseen !== null && now < this.unseen + this.expiry()) return false;
    if (this.opts.setting === 'always') return true;
    return this.rtt !== null && this.rtt > this.opts.thresholdMs;
  }

  private predictKey(data: string, now: number, scr: Screen): Step | null {
    const last = this.steps[this.steps.length - 1];
    const row = last ? last.row : scr.row;
    const col = last ? last.col : scr.col;
    if (!last) {
      if (this.line && this.line.row !== row) this.line = null;
      if (this.line && (col < this.line.start || col > this.line.end)) this.line = null;
    }
    const at = (r: number, c: number): string => this.predictedCell(r, c) ?? scr.cell(r, c);
    const restBlank = (from: number): boolean => {
      for (let c = from; c < scr.cols; c++) if (at(row, c) !== ' ') return false;
      return true;
    };
    const base = {
      fromRow: row,
      fromCol: col,
      // At a prompt the shell's marks decide, not confidence earned on a line already sent.
      shown: this.modes.shell === 'prompt' ? !this.awaitPrompt : this.earned >= this.opts.confidence,
      cellsOnly: false,
      expires: now + this.expiry(),
      at: now,
      epoch: this.epoch,
    };
    const editor = !this.modes.termMode!.canonical; // a line editor draws the line, not the pty
    const line = this.line ?? { row, start: col, end: col };
    if (printable.test(data)) {
      // At the end of the line only, and never into the last column (the wrap is the terminal's).
      if (col >= scr.cols - 1 || !restBlank(col)) return null;
      this.line = { row, start: line.start, end: col + 1 };
      return { ...base, cell: { row, col, char: data }, before: at(row, col), row, col: col + 1 };
    }
    if (data === '\x7f' || data === '\b') {
      if (col <= line.start || col !== line.end || !restBlank(col)) return null;
      this.line = { row, start: line.start, end: col - 1 };
      return { ...base, cell: { row, col: col - 1, char: ' ' }, before: at(row, col - 1), row, col: col - 1 };
    }
    if (editor && (data === '\x1b[D' || data === '\x1bOD')) {
      if (col <= line.start) return null;
      this.line = line;
      return { ...base, cell: null, before: '', row, col: col - 1 };
    }
    if (editor && (data === '\x1b[C' || data === '\x1bOC')) {
      if (col >= line.end) return null;
      this.line = line;
      return { ...base, cell: null, before: '', row, col: col + 1 };
    }
    return null;
  }

  /** predictedCell is a cell as the pending predictions leave it (undefined: none touches it). */
  private predictedCell(r: number, c: number): string | undefined {
    let v: string | undefined;
    for (const s of this.steps) if (s.cell && s.cell.row === r && s.cell.col === c) v = s.cell.char;
    return v;
  }

  /** unpredictable handles a key that was not predicted: what follows it is not known until its effect is seen. */
  private unpredictable(data: string): void {
    const editing = data === '\x7f' || data === '\b' || /^\x1b(\[|O)[CD]$/.test(data) || printable.test(data);
    this.line = null;
    for (const s of this.steps) s.cellsOnly = true;
    if (this.steps.length > 0) this.barrier = true;
    if (!editing && this.modes.shell !== 'prompt') {
      // A new line, a control key, a paste: the next program may not echo (mosh's epochs).
      this.earned = Math.min(this.earned, this.opts.confidence - 1);
      this.epoch++;
    }
    // A line sent or a control key (Tab completes in place) at a prompt:
    // a command may now read a password before its mode is known. Not the
    // keys a line editor edits its line with (Ctrl+U kills it, Ctrl+W a
    // word, Ctrl+A/E/B/F move, Ctrl+K kills the rest): no command runs,
    // the editor still reads this line, and what is typed next is
    // predicted once their effect is seen.
    if (this.modes.shell === 'prompt' && /[\r\n]|^[\x00-\x08\x0a-\x1f]$/.test(data) && !lineEditKey.test(data)) this.awaitPrompt = true;
  }

  /**
   * matched is how many of the pending steps the screen shows done: the
   * most j such that every cell they touch reads as after the first j
   * steps, and the cursor is where the j-th left it; -1 when no j fits.
   * A key typed then erased leaves the screen as before it, so the steps
   * whose echo could have come by now (typed most of a round trip ago)
   * are tried first: else the echo of an older key would confirm them.
   * Younger ones only when nothing else fits (the link got faster than
   * the round trip measured).
   */
  private matched(scr: Screen, now: number): number {
    const floor = this.echoFloor();
    let old = 0;
    while (old < this.steps.length && now - this.steps[old].at >= floor) old++;
    for (let j = old; j >= 0; j--) if (this.fits(j, scr)) return j;
    for (let j = this.steps.length; j > old; j--) if (this.fits(j, scr)) return j;
    return -1;
  }

  /** fits says whether the screen shows the first j pending steps done and the others not. */
  private fits(j: number, scr: Screen): boolean {
    const prev = this.steps[j - 1];
    // Steps checked by their cells only may be confirmed before their
    // echo (a space over a blank reads as typed): the cursor then tells
    // nothing of them, nor of the one after them (j = 0).
    const first = this.steps[0];
    const at = prev ? (prev.cellsOnly ? null : prev) : first.cellsOnly ? null : { row: first.fromRow, col: first.fromCol };
    if (at && (scr.row !== at.row || scr.col !== at.col)) return false;
    return this.cellsAsAfter(j, scr);
  }

  /** cellsAsAfter says whether every cell the steps touch reads as the first j steps leave it. */
  private cellsAsAfter(j: number, scr: Screen): boolean {
    const want = new Map<string, Cell>();
    this.steps.forEach((s, i) => {
      if (!s.cell) return;
      const k = `${s.cell.row}:${s.cell.col}`;
      // Done: the last done step's character; pending: what the first pending one found there.
      if (i < j) want.set(k, s.cell);
      else if (!want.has(k)) want.set(k, { ...s.cell, char: s.before });
    });
    for (const c of want.values()) if (scr.cell(c.row, c.col) !== c.char) return false;
    return true;
  }

  /** rollback takes the pending predictions back: late says their echo was overdue, else the screen contradicted them. */
  private rollback(now: number, late = false): void {
    for (const s of this.steps) {
      if (!s.shown) continue;
      if (late) this.stats.late++;
      else this.stats.wrong++;
      this.corrections.push(now - s.at);
      if (this.corrections.length > CORRECTIONS_KEPT) this.corrections.shift();
    }
    this.steps = [];
    this.line = null;
    this.barrier = false;
    this.earned = 0;
    this.pausedUntil = now + this.settle();
  }

  /** drop forgets the pending predictions without counting them wrong: a mode forbids them. */
  private drop(): void {
    this.steps = [];
    this.line = null;
    this.barrier = false;
    this.earned = 0;
  }

  /** echoFloor is how soon the echo of a key can come (ms): most of the round trip measured. */
  private echoFloor(): number {
    return 0.75 * (this.rtt ?? 0);
  }

  /** echoed records how long an echo took (or was waited for in vain). */
  private echoed(ms: number): void {
    this.echoes.push(Math.min(Math.max(ms, 0), ECHO_MAX));
    if (this.echoes.length > ECHO_SAMPLES) this.echoes.shift();
  }

  /** expiry is how long an echo may take: past it, the prediction is wrong. The round trip, or the slowest recent echo when slower. */
  private expiry(): number {
    return Math.max(250, 1.5 * Math.max(this.rtt ?? 0, ...this.echoes) + 250);
  }

  /** settle is how long the screen must be still after a rollback before predicting again. */
  private settle(): number {
    return Math.max(100, 2 * (this.rtt ?? 0));
  }
}
