// The replay view: a session's recorded output played back on a read-only
// terminal of its own, over the live one, with a timeline to seek on.
// This file seeks and plays; the clock's arithmetic is replay-clock.ts,
// the playback queue and its decisions replay-playback.ts, the timeline
// replay-timeline.ts and the whole-log search replay-search.ts.
//
// Moments. The server renders the screen at any moment (replay/screen:
// its newest checkpoint before it plus the log after it), so a seek is one
// request and a reset, wherever it lands. Playing writes the log from the
// shown screen's offset on (replay/output, fetched ahead in batches), each
// chunk when the playback clock reaches the chunk's time.
//
// Generations. Every seek, play, pause and close starts a new generation
// and aborts the previous one's request; an answer or a write callback of
// an older generation is dropped, so a seek made while a batch is on its
// way never mixes that batch's bytes into the new screen. Writes already
// handed to xterm.js are parsed in order: a seek resets the terminal only
// after they are (a write of nothing whose callback does the reset).
//
// Test hooks (web/test/ui/replay.test.mjs): #replay's data-state
// (loading, paused, playing, error), data-offset (the shown screen reflects
// every byte below it) and data-t (its moment, Unix ms); data-state is
// "paused" only once the terminal has parsed every byte of the moment.

import type { Terminal } from '@xterm/xterm';
import { ApiError, GrepHit, replay as api, ReplayTimeline } from './api';
import { offsetTime, SPEEDS } from './replay-clock';
import { Item, Playback } from './replay-playback';
import { markMatch, ReplaySearch } from './replay-search';
import { Fitter, openTerm } from './replay-term';
import { Timeline } from './replay-timeline';
import { themes, ThemeName } from './theme';

/** Lines of history above a sought screen (the server's at most is 10,000). */
const SCROLLBACK = 1000;
/** Bytes of output one replay/output request asks for. */
const BATCH = 256 << 10;
/** Bytes handed to xterm.js and not yet parsed beyond which playback waits for it. */
const MAX_INFLIGHT = 4 << 20;
/** A live session's playback at the end asks for new output this often. */
const LIVE_POLL_MS = 1000;
/** A live session's timeline is read again this often while the view is open. */
const TIMELINE_POLL_MS = 5000;

type State = 'closed' | 'loading' | 'paused' | 'playing' | 'error';

/** A moment to seek to: an offset, a time, or (neither) the end. */
interface At {
  offset?: number;
  t?: number;
}

export interface ReplayPrefs {
  fontSize: number;
  theme: ThemeName;
  minContrast: number;
}

/** What the view tells the page around it. */
export interface ReplayHooks {
  /** moved: the view shows another moment for a while (a seek, a pause): the page keeps its address in step. */
  moved(id: string, t: number): void;
  closed(id: string): void;
  authLost(code?: string): void;
}

function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`page is missing #${id}`);
  return e as T;
}

function isAbort(e: unknown): boolean {
  return e instanceof DOMException && e.name === 'AbortError';
}

/** errorText is what the view says when a request failed. */
function errorText(e: unknown): string {
  if (e instanceof ApiError) {
    if (e.status === 0) return 'The termkeep server is not answering. The session keeps running meanwhile.';
    if (e.status === 404) return `This session is gone: ${e.message}.`;
    if (e.status === 416) return `That moment is past the end of the session's output: ${e.message}.`;
    return `The server could not replay this: ${e.message}.`;
  }
  return `Replay failed: ${(e as Error)?.message ?? String(e)}.`;
}

const utf8 = new TextEncoder();

// ---- the view ----------------------------------------------------------------

export class ReplayView {
  private readonly root = byId('replay');
  private readonly screenEl = byId('replay-screen');
  private readonly termEl = byId('replay-term');
  private readonly msgEl = byId('replay-msg');
  private readonly playBtn = byId<HTMLButtonElement>('replay-play');
  private readonly speedEl = byId<HTMLSelectElement>('replay-speed');
  private readonly skipEl = byId<HTMLInputElement>('replay-skip');
  private readonly timeline: Timeline;
  private readonly search: ReplaySearch;
  private readonly fitter: Fitter;

  private term: Terminal | null = null;
  private prefs: ReplayPrefs;

  /** The session shown, and its timeline (null until read). */
  id: string | null = null;
  private tl: ReplayTimeline | null = null;
  private state: State = 'closed';
  /** gen numbers the current seek, playback or pause; older answers and callbacks are dropped. */
  private gen = 0;
  private abort: AbortController | null = null;
  /** The terminal shows the stream below offset: the moment t (Unix ms). */
  private offset = 0;
  private t = 0;
  /** The marker the last ←/→ went to (the screen's offset may land past a marker's). */
  private atMarker: number | null = null;
  private cols = 80;
  private rows = 24;

  // Playback: the queue and the clock (pb), where the next request
  // starts, whether the last answer reached the end; wall is the page
  // time the clock was last moved at, inflight the bytes handed to the
  // terminal and not yet parsed.
  private readonly pb = new Playback();
  private next = 0;
  private outDone = false;
  private doneAt = 0;
  private fetching = false;
  private wall = 0;
  private inflight = 0;
  private timer = 0;

  private tlTimer = 0;
  private tlFetching = false;
  private retry: (() => void) | null = null;
  private scrubTarget: { t: number; play: boolean } | null = null;
  private scrubbing = false;
  /** The search hit's text highlighted on the screen shown, if any. */
  private marked: string | null = null;

  constructor(prefs: ReplayPrefs, private readonly hooks: ReplayHooks) {
    this.prefs = { ...prefs };
    for (const s of SPEEDS) {
      const o = document.createElement('option');
      o.value = String(s);
      o.textContent = `${s}×`;
      this.speedEl.appendChild(o);
    }
    this.speedEl.value = '1';
    this.fitter = new Fitter(this.screenEl, this.termEl, () => this.term, () => !this.root.hidden, () => this.prefs.fontSize);
    this.timeline = new Timeline({
      isOpen: () => this.isOpen,
      grab: () => {
        const playing = this.state === 'playing';
        if (playing) this.newGen();
        return playing;
      },
      scrub: (t, play) => this.scrub(t, play),
      toMarker: (offset, play) => {
        this.atMarker = offset;
        void this.seek({ offset }, play);
      },
    });
    this.search = new ReplaySearch({
      id: () => this.id,
      show: (h, query) => void this.seekHit(h, query),
      hits: (hits) => this.timeline.setHits(hits),
      failed: errorText,
      left: () => this.timeline.el.focus(),
    });
    this.bind();
  }

  get isOpen(): boolean {
    return this.state !== 'closed';
  }

  // ---- opening and closing ---------------------------------------------------

  /**
   * open shows the view for session id (named label) at moment t, or at the
   * end of its output when t is null.
   */
  async open(id: string, label: string, t: number | null): Promise<void> {
    const same = this.id === id && this.isOpen;
    if (!same) this.search.clear();
    this.id = id;
    byId('replay-title').textContent = label;
    this.root.hidden = false;
    this.ensureTerm();
    if (same && this.tl) {
      await this.seek(t === null ? {} : { t });
      return;
    }
    this.tl = null;
    this.timeline.set(null);
    this.render();
    const gen = this.newGen();
    this.setState('loading');
    this.showMessage('');
    this.retry = () => void this.open(id, label, t);
    const ac = (this.abort = new AbortController());
    let tl: ReplayTimeline;
    try {
      tl = await api.timeline(id, ac.signal);
    } catch (e) {
      if (gen === this.gen && !isAbort(e)) this.fail(e);
      return;
    }
    if (gen !== this.gen) return;
    this.setTimeline(tl);
    window.clearInterval(this.tlTimer);
    this.tlTimer = window.setInterval(() => {
      if (this.tl?.state === 'running') void this.refreshTimeline();
    }, TIMELINE_POLL_MS);
    if (tl.end_offset <= tl.first_offset) {
      // Nothing logged yet: an empty screen at the session's size.
      this.term!.reset();
      this.resizeTerm(tl.cols, tl.rows);
      this.offset = tl.first_offset;
      this.t = tl.start_t;
      this.render();
      this.showMessage(tl.state === 'running' ? 'Nothing was printed yet: press play to follow the session.' : 'This session printed nothing.');
      this.setState('paused');
      return;
    }
    await this.seek(t === null ? {} : { t });
  }

  close(): void {
    if (!this.isOpen) return;
    const id = this.id;
    this.newGen();
    window.clearInterval(this.tlTimer);
    this.tlTimer = 0;
    this.search.stop();
    this.setState('closed');
    this.root.hidden = true;
    if (id) this.hooks.closed(id);
  }

  applyPrefs(p: ReplayPrefs): void {
    this.prefs = { ...p };
    if (this.term) {
      this.term.options.theme = themes[p.theme];
      this.term.options.minimumContrastRatio = p.minContrast;
    }
    this.fitter.soon();
    this.timeline.drawActivity();
  }

  private ensureTerm(): void {
    if (!this.term) this.term = openTerm(this.termEl, this.prefs);
  }

  /** newGen ends what the current generation does (its request, its timer) and starts the next. */
  private newGen(): number {
    this.abort?.abort();
    this.abort = null;
    window.clearTimeout(this.timer);
    this.timer = 0;
    this.fetching = false;
    this.pb.clear();
    // Another moment: a search hit's highlight was for the one before.
    this.marked = null;
    this.term?.clearSelection();
    return ++this.gen;
  }

  private setState(s: State): void {
    this.state = s;
    this.root.dataset.state = s;
    const playing = s === 'playing';
    this.playBtn.classList.toggle('playing', playing);
    this.playBtn.title = playing ? 'Pause (Space)' : 'Play (Space)';
    this.playBtn.setAttribute('aria-label', playing ? 'Pause' : 'Play');
    this.playBtn.disabled = s === 'loading' && !this.tl;
  }

  private fail(e: unknown): void {
    if (e instanceof ApiError && e.status === 401) this.hooks.authLost(e.code);
    this.newGen();
    this.showMessage(errorText(e), true);
    this.setState('error');
  }

  private showMessage(text: string, retry = false): void {
    this.msgEl.hidden = !text;
    byId('replay-msg-text').textContent = text;
    byId('replay-retry').hidden = !retry;
  }

  // ---- the timeline ----------------------------------------------------------

  private setTimeline(tl: ReplayTimeline): void {
    this.tl = tl;
    this.root.dataset.live = tl.state === 'running' ? '1' : '';
    this.timeline.set(tl);
    this.render();
  }

  /** refreshTimeline reads a live session's timeline again: its end and its markers grow. */
  private async refreshTimeline(): Promise<void> {
    const id = this.id;
    if (!id || this.tlFetching || !this.isOpen) return;
    this.tlFetching = true;
    try {
      const tl = await api.timeline(id);
      if (this.id === id && this.isOpen) this.setTimeline(tl);
    } catch {
      // the next poll tries again; playback shows its own errors
    } finally {
      this.tlFetching = false;
    }
  }

  /** render shows the moment: the playhead, the time, the test hooks. */
  private render(t = this.state === 'playing' ? this.pb.clock : this.t): void {
    this.timeline.playhead(t, this.offset);
    this.root.dataset.offset = String(this.offset);
    this.root.dataset.t = String(Math.round(this.t));
  }

  // ---- seeking -----------------------------------------------------------------

  /**
   * seek shows the screen at a moment: the server renders it, the terminal
   * is reset to its size and draws it. play goes on playing from there.
   */
  private async seek(at: At, play = false): Promise<void> {
    const term = this.term;
    const id = this.id;
    if (!term || !id || !this.tl) return;
    if (at.offset === undefined) this.atMarker = null;
    const gen = this.newGen();
    this.setState('loading');
    this.showMessage('');
    this.retry = () => void this.seek(at, play);
    if (at.t !== undefined) this.render(at.t);
    const ac = (this.abort = new AbortController());
    let shot;
    try {
      shot = await api.screen(id, at, SCROLLBACK, ac.signal);
    } catch (e) {
      if (gen !== this.gen || isAbort(e)) return;
      if (e instanceof ApiError && e.status === 416 && (at.t !== undefined || at.offset !== undefined)) {
        // Past the end (a link to a moment the log does not reach): the end.
        await this.seek({}, play);
        return;
      }
      this.fail(e);
      return;
    }
    if (gen !== this.gen) return;
    // Let xterm.js parse what playback handed it before the reset.
    await new Promise<void>((r) => term.write('', r));
    if (gen !== this.gen) return;
    term.reset();
    this.resizeTerm(shot.cols, shot.rows);
    await new Promise<void>((r) => term.write(shot.data, r));
    if (gen !== this.gen) return;
    this.offset = shot.offset;
    this.t = shot.t || (offsetTime(this.tl.points, shot.offset) ?? this.timeline.startT);
    this.render();
    this.hooks.moved(id, this.t);
    if (play) this.play();
    else this.setState('paused');
  }

  /**
   * scrub seeks while the timeline is dragged: one seek at a time, each to
   * the latest place asked for, so a drag neither floods the server nor lags.
   */
  private scrub(t: number, play: boolean): void {
    this.scrubTarget = { t, play };
    this.render(t);
    if (this.scrubbing) return;
    this.scrubbing = true;
    void (async () => {
      while (this.scrubTarget) {
        const s = this.scrubTarget;
        this.scrubTarget = null;
        await this.seek({ t: s.t }, s.play);
      }
      this.scrubbing = false;
    })();
  }

  private resizeTerm(cols: number, rows: number): void {
    const term = this.term!;
    cols = Math.max(2, cols);
    rows = Math.max(1, rows);
    this.cols = cols;
    this.rows = rows;
    if (term.cols !== cols || term.rows !== rows) term.resize(cols, rows);
    this.fitter.soon();
  }

  /** stepMarker seeks to the next (dir 1) or previous (-1) marker. */
  stepMarker(dir: 1 | -1): void {
    const markers = this.timeline.markers;
    if (!this.tl || !markers.length) return;
    const here = this.atMarker ?? this.offset;
    const m = dir > 0 ? markers.find((x) => x.offset > here) : [...markers].reverse().find((x) => x.offset < here);
    if (!m) return;
    const play = this.state === 'playing';
    this.atMarker = m.offset;
    void this.seek({ offset: m.offset }, play);
  }

  // ---- playing -------------------------------------------------------------------

  private get live(): boolean {
    return this.tl?.state === 'running';
  }

  toggle(): void {
    if (this.state === 'playing') this.pause();
    else if (this.state === 'paused') this.play();
  }

  play(): void {
    const tl = this.tl;
    if (!tl || !this.term || !this.id || this.state === 'playing') return;
    if (this.offset >= tl.end_offset && !this.live && tl.end_offset > tl.first_offset) {
      // At the end of an ended session: from the start again.
      void this.seek({ offset: tl.first_offset }, true);
      return;
    }
    const gen = this.newGen();
    this.next = this.offset;
    this.outDone = false;
    this.pb.start(this.t);
    this.wall = performance.now();
    this.atMarker = null;
    this.showMessage('');
    this.setState('playing');
    this.tick(gen);
  }

  pause(): void {
    if (this.state !== 'playing') return;
    this.stop(this.pb.pausedAt());
  }

  /** stop ends playback at moment t: paused once the terminal has parsed what it was given. */
  private stop(t: number): void {
    const gen = this.newGen();
    this.t = t;
    this.setState('loading');
    this.playBtn.classList.remove('playing');
    this.term!.write('', () => {
      if (gen !== this.gen) return;
      this.render();
      this.setState('paused');
      if (this.id) this.hooks.moved(this.id, this.t);
    });
  }

  /** tick is the playback loop: move the clock, write what is due, fetch ahead, sleep until the next item is due. */
  private tick(gen: number): void {
    if (gen !== this.gen || this.state !== 'playing') return;
    const now = performance.now();
    const elapsed = now - this.wall;
    this.wall = now;
    const pb = this.pb;
    const world = { blocked: this.inflight >= MAX_INFLIGHT, outDone: this.outDone, fetching: this.fetching, live: this.live, now: Date.now() };
    if (pb.advance(elapsed, world) === 'ended') {
      // Every byte is written: the end of an ended session.
      this.stop(Math.max(pb.lastT, this.t));
      return;
    }
    for (let it: Item | null; this.inflight < MAX_INFLIGHT && (it = pb.take()); ) this.apply(it);
    this.fill(gen);
    this.render(pb.clock);
    this.timer = window.setTimeout(() => this.tick(gen), pb.delay(this.inflight >= MAX_INFLIGHT));
  }

  /** apply writes one item of the log to the terminal. */
  private apply(it: Item): void {
    const term = this.term!;
    if (it.data) {
      const n = it.data.length;
      this.inflight += n;
      term.write(it.data, () => {
        this.inflight -= n;
      });
      this.offset = it.offset + n;
      // The moment shown is the chunk's time (not yet the clock's): a pause
      // between two chunks says the clock.
      this.t = it.t;
    } else if (it.cols && it.rows) {
      const cols = it.cols;
      const rows = it.rows;
      // The bytes before a resize were printed at the old size.
      term.write('', () => {
        if (this.state === 'playing') this.resizeTerm(cols, rows);
      });
    } else if (it.end !== undefined) {
      this.offset = Math.max(this.offset, it.end);
    }
  }

  /** fill asks for the next batch of output when little is buffered ahead of the clock. */
  private fill(gen: number): void {
    const id = this.id;
    if (!id || this.fetching) return;
    if (this.outDone) {
      if (!this.live || performance.now() - this.doneAt < LIVE_POLL_MS) return;
    } else if (this.pb.enoughAhead(BATCH)) {
      return;
    }
    this.fetching = true;
    const ac = (this.abort = new AbortController());
    api.output(id, this.next, BATCH, ac.signal).then(
      (out) => {
        if (gen !== this.gen) return;
        this.fetching = false;
        this.pb.add(out.items);
        this.next = Math.max(this.next, out.next);
        this.outDone = out.done;
        if (out.done) this.doneAt = performance.now();
        if (out.done && this.live && !out.items.length) void this.refreshTimeline();
      },
      (e) => {
        if (gen !== this.gen || isAbort(e)) return;
        this.fetching = false;
        if (e instanceof ApiError && e.status === 416) {
          // Nothing past next yet.
          this.outDone = true;
          this.doneAt = performance.now();
          return;
        }
        this.t = this.pb.lastT;
        this.render();
        this.fail(e);
        this.retry = () => void this.seek({ offset: this.offset }, true);
      },
    );
  }

  /**
   * seekHit shows the screen just after a search hit's match was drawn,
   * and highlights the match there: at the end of the log chunk that holds
   * the match's last byte (the server's shown), a moment a terminal
   * showed; the match's own end could cut a chunk ("MARKER" of
   * "MARKER-alpha" alone, a screen that never was). An offset, not the
   * hit's time: a time is only as fine as the log's time index, and may
   * fall before the match's last byte.
   */
  private async seekHit(h: GrepHit, query: string): Promise<void> {
    const play = this.state === 'playing';
    const last = this.tl ? this.tl.end_offset : Infinity;
    // A server of before sends no shown (nor, older, an end): about where the line ends.
    const end =
      typeof h.shown === 'number' && h.shown > h.offset
        ? h.shown
        : typeof h.end === 'number' && h.end > h.offset
          ? h.end
          : h.offset + utf8.encode(h.line).length;
    const done = this.seek({ offset: Math.min(last, end) }, play);
    const gen = this.gen;
    await done;
    if (gen === this.gen && this.term && this.state === 'paused') this.marked = markMatch(this.term, query);
  }

  /** markedText is the search hit's text highlighted on the replayed screen (tests read it), or null. */
  markedText(): string | null {
    return this.isOpen ? this.marked : null;
  }

  // ---- input ---------------------------------------------------------------------------

  private bind(): void {
    this.playBtn.addEventListener('click', () => this.toggle());
    byId('replay-close').addEventListener('click', () => this.close());
    byId('replay-retry').addEventListener('click', () => this.retry?.());
    this.speedEl.addEventListener('change', () => {
      this.pb.speed = Number(this.speedEl.value) || 1;
    });
    this.skipEl.addEventListener('change', () => {
      this.pb.skipIdle = this.skipEl.checked;
    });
    new ResizeObserver(() => {
      this.fitter.soon();
      this.timeline.drawActivity();
    }).observe(this.screenEl);
  }

  /**
   * key handles the view's keys (the page passes every key while the view
   * is open): Esc closes (or leaves the search box), Space plays or
   * pauses, ←/→ go to the previous/next marker, Home/End to the start and
   * the end. It returns whether it used the key.
   */
  key(e: KeyboardEvent): boolean {
    if (!this.isOpen || e.isComposing) return false;
    const target = e.target as HTMLElement | null;
    const field = !!target && (target.tagName === 'INPUT' || target.tagName === 'SELECT');
    const mods = e.ctrlKey || e.metaKey || e.altKey;
    if (e.key === 'Escape' && !mods) {
      if (target === this.search.input) {
        this.search.escape();
        return true;
      }
      this.close();
      return true;
    }
    if (field || mods) return false;
    switch (e.key) {
      case ' ':
      case 'k':
        this.toggle();
        return true;
      case 'ArrowLeft':
        this.stepMarker(-1);
        return true;
      case 'ArrowRight':
        this.stepMarker(1);
        return true;
      case 'Home':
        if (this.tl) void this.seek({ offset: this.tl.first_offset });
        return true;
      case 'End':
        if (this.tl) void this.seek({});
        return true;
      case '/':
        this.focusSearch();
        return true;
    }
    return false;
  }

  /** focus puts the keyboard on the view (its timeline). */
  focus(): void {
    this.timeline.el.focus();
  }

  focusSearch(): void {
    this.search.focus();
  }

  /** visibleText is the replayed screen, a line per row, trailing blanks cut. */
  visibleText(): string[] | null {
    const term = this.term;
    if (!term || !this.isOpen) return null;
    const b = term.buffer.active;
    const out: string[] = [];
    for (let y = 0; y < term.rows; y++) out.push(b.getLine(b.baseY + y)?.translateToString(true) ?? '');
    return out;
  }

  /** size is the replay terminal's size in cells. */
  size(): { cols: number; rows: number } {
    return { cols: this.cols, rows: this.rows };
  }
}
