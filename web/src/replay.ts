// The replay view: a session's recorded output played back on a read-only
// terminal of its own, over the live one, with a timeline to seek on.
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

import { Terminal } from '@xterm/xterm';
import { Unicode11Addon } from '@xterm/addon-unicode11';
import { WebLinksAddon } from '@xterm/addon-web-links';
import { ApiError, GrepHit, replay as api, ReplayItem, ReplayMarker, ReplayPoint, ReplayTimeline } from './api';
import { themes, ThemeName } from './theme';

export const SPEEDS = [0.5, 1, 2, 4, 8, 16];
/** With "skip idle" a pause in the output longer than this (ms of recording) plays as this long. */
export const IDLE_MAX = 1000;
/** Lines of history above a sought screen (the server's at most is 10,000). */
const SCROLLBACK = 1000;
const TERM_SCROLLBACK = 10000;
/** Bytes of output one replay/output request asks for. */
const BATCH = 256 << 10;
/** Fetch more while less than this much playing time (ms, at any speed) is buffered ahead of the clock. */
const AHEAD_MS = 8000;
/** Bytes handed to xterm.js and not yet parsed beyond which playback waits for it. */
const MAX_INFLIGHT = 4 << 20;
/** The playback loop wakes at least this often to move the playhead. */
const TICK_MS = 100;
/** A live session's playback at the end asks for new output this often. */
const LIVE_POLL_MS = 1000;
/** A live session's timeline is read again this often while the view is open. */
const TIMELINE_POLL_MS = 5000;
const HIT_LIMIT = 500;
/** The timeline's time index holds at most this many points (thinned beyond). */
const MAX_POINTS = 4096;

type State = 'closed' | 'loading' | 'paused' | 'playing' | 'error';

/** Item is a line of replay/output with its time known: a line the log gave no time takes the one before's. */
type Item = ReplayItem & { t: number };

/** A moment to seek to: an offset, a time, or (neither) the end. */
interface At {
  offset?: number;
  t?: number;
}

export interface ReplayPrefs {
  fontSize: number;
  theme: ThemeName;
}

/** What the view tells the page around it. */
export interface ReplayHooks {
  /** moved: the view shows another moment for a while (a seek, a pause): the page keeps its address in step. */
  moved(id: string, t: number): void;
  closed(id: string): void;
  authLost(): void;
}

// ---- time and offsets --------------------------------------------------------

/**
 * offsetTime is the time the byte at offset was logged, interpolated
 * between the time index's points (ascending by offset).
 */
export function offsetTime(points: ReplayPoint[], offset: number): number | null {
  if (!points.length) return null;
  let lo = 0;
  let hi = points.length - 1;
  if (offset <= points[0].offset) return points[0].t;
  if (offset >= points[hi].offset) return points[hi].t;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (points[mid].offset <= offset) lo = mid;
    else hi = mid;
  }
  const a = points[lo];
  const b = points[hi];
  return a.t + ((b.t - a.t) * (offset - a.offset)) / Math.max(1, b.offset - a.offset);
}

/**
 * advanceClock moves the playback clock (ms of recording) over elapsed
 * ms of the page's time at speed. lastT is the time of the last chunk
 * written, nextT the next one's (null when none is known yet). With
 * skipIdle a silence longer than IDLE_MAX plays as IDLE_MAX: once the clock
 * has run that far past lastT it jumps to nextT.
 */
export function advanceClock(clock: number, elapsed: number, speed: number, lastT: number, nextT: number | null, skipIdle: boolean): number {
  let c = clock + elapsed * speed;
  if (skipIdle) {
    const cap = lastT + IDLE_MAX;
    if (nextT === null) c = Math.min(c, Math.max(clock, cap));
    else if (nextT > cap && c >= cap) c = Math.max(c, nextT);
  }
  return c;
}

/** span says a duration as m:ss (h:mm:ss past an hour). */
export function span(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

function clockTime(t: number): string {
  const d = new Date(t);
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  if (d.toDateString() === new Date().toDateString()) return time;
  return `${d.toLocaleDateString([], { month: 'short', day: 'numeric' })} ${time}`;
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
  private readonly timelineEl = byId('replay-timeline');
  private readonly markersEl = byId('replay-markers');
  private readonly hitmarksEl = byId('replay-hitmarks');
  private readonly progressEl = byId('replay-progress');
  private readonly handleEl = byId('replay-handle');
  private readonly hoverEl = byId('replay-hover');
  private readonly activity = byId<HTMLCanvasElement>('replay-activity');
  private readonly playBtn = byId<HTMLButtonElement>('replay-play');
  private readonly speedEl = byId<HTMLSelectElement>('replay-speed');
  private readonly skipEl = byId<HTMLInputElement>('replay-skip');
  private readonly timeEl = byId('replay-time');
  private readonly searchEl = byId<HTMLInputElement>('replay-search');
  private readonly hitsEl = byId('replay-hits');
  private readonly hitsList = byId('replay-hits-list');
  private readonly hitsHead = byId('replay-hits-head');

  private term: Terminal | null = null;
  private prefs: ReplayPrefs;

  /** The session shown, and its timeline (null until read). */
  id: string | null = null;
  private tl: ReplayTimeline | null = null;
  private markers: ReplayMarker[] = [];
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

  // Playback: the items fetched ahead and not yet written (queue from qi),
  // where the next request starts, whether the last answer reached the end.
  private queue: Item[] = [];
  private qi = 0;
  private queuedBytes = 0;
  private next = 0;
  private outDone = false;
  private doneAt = 0;
  private fetching = false;
  /** clock is the recording time being played; wall the page time it was last moved at. */
  private clock = 0;
  private wall = 0;
  /** lastT is the time of the last item written. */
  private lastT = 0;
  private inflight = 0;
  private timer = 0;
  private speed = 1;
  private skipIdle = true;

  private tlTimer = 0;
  private tlFetching = false;
  private retry: (() => void) | null = null;
  private searchGen = 0;
  private searchAbort: AbortController | null = null;
  private hits: GrepHit[] = [];
  private fitRaf = 0;
  private scrubTarget: { t: number; play: boolean } | null = null;
  private scrubbing = false;
  private dragging = false;

  constructor(prefs: ReplayPrefs, private readonly hooks: ReplayHooks) {
    this.prefs = { ...prefs };
    for (const s of SPEEDS) {
      const o = document.createElement('option');
      o.value = String(s);
      o.textContent = `${s}×`;
      this.speedEl.appendChild(o);
    }
    this.speedEl.value = '1';
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
    if (!same) this.clearSearch();
    this.id = id;
    byId('replay-title').textContent = label;
    this.root.hidden = false;
    this.ensureTerm();
    if (same && this.tl) {
      await this.seek(t === null ? {} : { t });
      return;
    }
    this.tl = null;
    this.markers = [];
    this.renderTimeline();
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
    this.searchAbort?.abort();
    this.setState('closed');
    this.root.hidden = true;
    if (id) this.hooks.closed(id);
  }

  applyPrefs(p: ReplayPrefs): void {
    this.prefs = { ...p };
    if (this.term) this.term.options.theme = themes[p.theme];
    this.fitSoon();
    this.drawActivity();
  }

  private ensureTerm(): void {
    if (this.term) return;
    // The live terminals' look (session.ts), without input.
    const term = new Terminal({
      scrollback: TERM_SCROLLBACK,
      allowProposedApi: true,
      cols: 80,
      rows: 24,
      fontSize: this.prefs.fontSize,
      fontFamily: '"JetBrains Mono", "Cascadia Mono", "Fira Code", "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace',
      lineHeight: 1.15,
      theme: themes[this.prefs.theme],
      cursorBlink: false,
      cursorInactiveStyle: 'outline',
      rescaleOverlappingGlyphs: true,
      disableStdin: true,
    });
    term.loadAddon(new Unicode11Addon());
    term.unicode.activeVersion = '11';
    term.loadAddon(
      new WebLinksAddon((ev, uri) => {
        ev.preventDefault();
        window.open(uri, '_blank', 'noopener,noreferrer');
      }),
    );
    term.open(this.termEl);
    this.term = term;
  }

  /** newGen ends what the current generation does (its request, its timer) and starts the next. */
  private newGen(): number {
    this.abort?.abort();
    this.abort = null;
    window.clearTimeout(this.timer);
    this.timer = 0;
    this.fetching = false;
    this.queue = [];
    this.qi = 0;
    this.queuedBytes = 0;
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
    if (e instanceof ApiError && e.status === 401) this.hooks.authLost();
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
    this.markers = [...tl.markers].sort((a, b) => a.offset - b.offset);
    this.timelineEl.dataset.start = String(tl.start_t);
    this.timelineEl.dataset.end = String(tl.end_t);
    this.timelineEl.setAttribute('aria-valuemin', String(tl.start_t));
    this.timelineEl.setAttribute('aria-valuemax', String(tl.end_t));
    this.root.dataset.live = tl.state === 'running' ? '1' : '';
    this.renderTimeline();
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

  private get startT(): number {
    return this.tl?.start_t ?? 0;
  }

  private get endT(): number {
    const tl = this.tl;
    if (!tl) return 1;
    return Math.max(tl.end_t, tl.start_t + 1);
  }

  /** frac is where moment t sits on the timeline, 0 to 1. */
  private frac(t: number): number {
    return Math.min(1, Math.max(0, (t - this.startT) / (this.endT - this.startT)));
  }

  private timeAtX(clientX: number): number {
    const r = this.timelineEl.getBoundingClientRect();
    const f = Math.min(1, Math.max(0, (clientX - r.left) / Math.max(1, r.width)));
    return Math.round(this.startT + f * (this.endT - this.startT));
  }

  private renderTimeline(): void {
    const tl = this.tl;
    // Markers of a kind closer than 1/400 of the width share one tick:
    // its tooltip lists them all, and it is red when any of them failed.
    const ticks = new Map<string, ReplayMarker[]>();
    for (const m of tl ? this.markers : []) {
      const key = `${m.kind}:${Math.round(this.frac(m.t) * 400)}`;
      const at = ticks.get(key);
      if (at) at.push(m);
      else ticks.set(key, [m]);
    }
    // A live session's timeline is read again every few seconds: ticks
    // that stay are updated in place (a tooltip being read stays up).
    const old = new Map<string, HTMLElement>();
    for (const e of this.markersEl.querySelectorAll<HTMLElement>('.replay-marker')) old.set(e.dataset.key ?? '', e);
    for (const ms of ticks.values()) {
      const m = ms.find(failed) ?? ms[0];
      const key = `${ms[0].kind}:${ms[0].offset}`;
      let e = old.get(key);
      old.delete(key);
      if (!e) {
        e = document.createElement('div');
        e.className = 'replay-marker';
        e.dataset.key = key;
        this.markersEl.appendChild(e);
      }
      e.dataset.kind = m.kind;
      e.dataset.offset = String(m.offset);
      e.dataset.t = String(m.t);
      if (m.status !== undefined) e.dataset.status = String(m.status);
      else delete e.dataset.status;
      if (failed(m)) e.dataset.fail = '1';
      else delete e.dataset.fail;
      e.style.left = `${(this.frac(m.t) * 100).toFixed(3)}%`;
      if (m.kind === 'gap' && m.end !== undefined && tl) {
        const endT = offsetTime(tl.points, m.end) ?? m.t;
        e.style.width = `max(3px, ${((this.frac(endT) - this.frac(m.t)) * 100).toFixed(3)}%)`;
      }
      const lines = ms.slice(0, 8).map(markerTitle);
      if (ms.length > 8) lines.push(`… and ${ms.length - 8} more`);
      e.title = lines.join('\n');
    }
    for (const e of old.values()) e.remove();
    this.renderHitmarks();
    this.drawActivity();
    this.render();
  }

  /** drawActivity shades the timeline by how much was printed when: busy stretches stand out in a long, mostly idle session. */
  private drawActivity(): void {
    const c = this.activity;
    const tl = this.tl;
    const w = Math.max(1, Math.round(c.clientWidth));
    const h = Math.max(1, Math.round(c.clientHeight));
    const dpr = window.devicePixelRatio || 1;
    c.width = Math.round(w * dpr);
    c.height = Math.round(h * dpr);
    const g = c.getContext('2d');
    if (!g) return;
    g.clearRect(0, 0, c.width, c.height);
    if (!tl || !tl.points.length || !this.isOpen) return;
    const n = Math.max(1, Math.floor(w / 2));
    const buckets = new Float64Array(n);
    const pts = tl.points;
    // The log stamps output with the time it arrived after a quiet spell,
    // so a point's bytes were printed at its time, unless the index was
    // thinned (it holds at most MAX_POINTS): then spread them over the
    // stretch to the next point.
    const thinned = pts.length >= MAX_POINTS;
    for (let i = 1; i < pts.length; i++) {
      const bytes = pts[i].offset - pts[i - 1].offset;
      if (bytes <= 0) continue;
      const a = this.frac(pts[i - 1].t) * n;
      if (!thinned) {
        buckets[Math.min(n - 1, Math.floor(a))] += bytes;
        continue;
      }
      const b = Math.max(a + 1e-9, this.frac(pts[i].t) * n);
      for (let k = Math.floor(a); k < Math.min(n, Math.ceil(b)); k++) {
        const overlap = Math.min(b, k + 1) - Math.max(a, k);
        if (overlap > 0) buckets[k] += (bytes * overlap) / (b - a);
      }
    }
    const last = pts[pts.length - 1];
    if (tl.end_offset > last.offset) buckets[Math.min(n - 1, Math.floor(this.frac(last.t) * n))] += tl.end_offset - last.offset;
    let max = 0;
    for (const v of buckets) max = Math.max(max, v);
    if (max <= 0) return;
    // The canvas's CSS color is the theme's (app.css), resolved to rgb().
    g.fillStyle = getComputedStyle(c).color;
    const bw = c.width / n;
    for (let k = 0; k < n; k++) {
      if (buckets[k] <= 0) continue;
      const bh = Math.max(dpr, (Math.log1p(buckets[k]) / Math.log1p(max)) * c.height * 0.8);
      g.fillRect(Math.floor(k * bw), c.height - bh, Math.ceil(bw), bh);
    }
  }

  /** render shows the moment: the playhead, the time, the test hooks. */
  private render(t = this.state === 'playing' ? this.clock : this.t): void {
    const f = this.frac(t);
    this.progressEl.style.width = `${f * 100}%`;
    this.handleEl.style.left = `${f * 100}%`;
    this.root.dataset.offset = String(this.offset);
    this.root.dataset.t = String(Math.round(this.t));
    if (!this.tl) {
      this.timeEl.textContent = '';
      return;
    }
    this.timeEl.textContent = `${clockTime(t)} · ${span(t - this.startT)} / ${span(this.endT - this.startT)}`;
    this.timeEl.title = `byte ${this.offset.toLocaleString()} of ${this.tl.end_offset.toLocaleString()}`;
    this.timelineEl.setAttribute('aria-valuenow', String(Math.round(t)));
    this.timelineEl.setAttribute('aria-valuetext', clockTime(t));
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
    this.t = shot.t || (offsetTime(this.tl.points, shot.offset) ?? this.startT);
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
    this.fitSoon();
  }

  /** stepMarker seeks to the next (dir 1) or previous (-1) marker. */
  stepMarker(dir: 1 | -1): void {
    if (!this.tl || !this.markers.length) return;
    const here = this.atMarker ?? this.offset;
    const m = dir > 0 ? this.markers.find((x) => x.offset > here) : [...this.markers].reverse().find((x) => x.offset < here);
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
    this.clock = this.t;
    this.lastT = this.t;
    this.wall = performance.now();
    this.atMarker = null;
    this.showMessage('');
    this.setState('playing');
    this.tick(gen);
  }

  pause(): void {
    if (this.state !== 'playing') return;
    // The screen holds every item up to the clock unless one that is due
    // waits for the terminal: then it is the moment of the last one written.
    const head = this.queue[this.qi];
    this.stop(head && head.t <= this.clock ? this.lastT : this.clock);
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
    const head = this.queue[this.qi];
    if (this.inflight >= MAX_INFLIGHT) {
      // The terminal is behind: the clock waits for it.
    } else if (head) {
      this.clock = advanceClock(this.clock, elapsed, this.speed, this.lastT, head.t, this.skipIdle);
    } else if (this.outDone && !this.live && !this.fetching) {
      // Every byte is written: the end of an ended session.
      this.stop(Math.max(this.lastT, this.t));
      return;
    } else if (this.outDone) {
      // A live session's present: the clock runs, never past now.
      this.clock = Math.min(Date.now(), advanceClock(this.clock, elapsed, this.speed, this.lastT, null, this.skipIdle));
    }
    // (No item and a request on its way: the clock waits for it.)

    while (this.qi < this.queue.length && this.queue[this.qi].t <= this.clock && this.inflight < MAX_INFLIGHT) {
      this.apply(this.queue[this.qi++]);
    }
    if (this.qi > 1024) {
      this.queue = this.queue.slice(this.qi);
      this.qi = 0;
    }
    this.fill(gen);
    this.render(this.clock);

    let delay = TICK_MS;
    const nh = this.queue[this.qi];
    if (nh && this.inflight < MAX_INFLIGHT) {
      const due = this.skipIdle && nh.t - this.lastT > IDLE_MAX ? Math.min(nh.t, this.lastT + IDLE_MAX) : nh.t;
      delay = Math.min(TICK_MS, Math.max(0, (due - this.clock) / this.speed));
    }
    this.timer = window.setTimeout(() => this.tick(gen), delay);
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
    this.queuedBytes -= it.data?.length ?? 0;
    this.lastT = Math.max(this.lastT, it.t);
  }

  /** fill asks for the next batch of output when little is buffered ahead of the clock. */
  private fill(gen: number): void {
    const id = this.id;
    if (!id || this.fetching) return;
    if (this.outDone) {
      if (!this.live || performance.now() - this.doneAt < LIVE_POLL_MS) return;
    } else {
      const last = this.queue[this.queue.length - 1];
      const ahead = last && this.qi < this.queue.length ? last.t - this.clock : 0;
      if (ahead > AHEAD_MS * this.speed && this.queuedBytes > BATCH / 2) return;
    }
    this.fetching = true;
    const ac = (this.abort = new AbortController());
    api.output(id, this.next, BATCH, ac.signal).then(
      (out) => {
        if (gen !== this.gen) return;
        this.fetching = false;
        for (const it of out.items) {
          const t = it.t ?? this.queue[this.queue.length - 1]?.t ?? this.lastT;
          this.queue.push({ ...it, t });
          this.queuedBytes += it.data?.length ?? 0;
        }
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
        this.t = this.lastT;
        this.render();
        this.fail(e);
        this.retry = () => void this.seek({ offset: this.offset }, true);
      },
    );
  }

  // ---- search ----------------------------------------------------------------------

  private async runSearch(): Promise<void> {
    const id = this.id;
    const q = this.searchEl.value;
    this.searchAbort?.abort();
    const sgen = ++this.searchGen;
    if (!id || !q.trim()) {
      this.clearSearch();
      return;
    }
    this.hitsEl.hidden = false;
    this.hitsHead.textContent = 'Searching the whole log…';
    this.hitsList.textContent = '';
    const ac = (this.searchAbort = new AbortController());
    let hits: GrepHit[];
    try {
      hits = await api.grep(id, q, HIT_LIMIT, ac.signal);
    } catch (e) {
      if (sgen !== this.searchGen || isAbort(e)) return;
      this.hitsHead.textContent = errorText(e);
      return;
    }
    if (sgen !== this.searchGen) return;
    this.hits = hits;
    this.hitsHead.textContent =
      hits.length === 0 ? `No line holds “${q}”.` : hits.length >= HIT_LIMIT ? `The first ${HIT_LIMIT} lines holding “${q}”` : `${hits.length} line${hits.length === 1 ? '' : 's'} holding “${q}”`;
    const lower = q.toLowerCase();
    hits.forEach((h, i) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'replay-hit';
      b.dataset.index = String(i);
      b.dataset.offset = String(h.offset);
      const t = hitTime(h);
      if (t !== null) b.dataset.t = String(t);
      const when = document.createElement('time');
      when.textContent = t === null ? `byte ${h.offset}` : clockTime(t);
      const line = document.createElement('span');
      line.className = 'line';
      // The match marked (found without regard to case, as the server did).
      const at = h.line.toLowerCase().indexOf(lower);
      if (at >= 0) {
        const mark = document.createElement('mark');
        mark.textContent = h.line.slice(at, at + q.length);
        line.append(h.line.slice(0, at), mark, h.line.slice(at + q.length));
      } else {
        line.textContent = h.line;
      }
      b.append(when, line);
      this.hitsList.appendChild(b);
    });
    this.renderHitmarks();
  }

  private renderHitmarks(): void {
    this.hitmarksEl.textContent = '';
    if (!this.tl) return;
    for (const h of this.hits) {
      const t = hitTime(h) ?? offsetTime(this.tl.points, h.offset);
      if (t === null) continue;
      const e = document.createElement('div');
      e.className = 'replay-hitmark';
      e.style.left = `${(this.frac(t) * 100).toFixed(3)}%`;
      this.hitmarksEl.appendChild(e);
    }
  }

  private clearSearch(): void {
    this.searchAbort?.abort();
    this.searchGen++;
    this.hits = [];
    this.hitsEl.hidden = true;
    this.hitsList.textContent = '';
    this.hitmarksEl.textContent = '';
  }

  /** seekHit shows the moment a line of the search was printed. */
  private seekHit(h: GrepHit): void {
    const t = hitTime(h);
    const play = this.state === 'playing';
    if (t !== null) {
      // The hit's time is when the line's first byte was logged; a moment
      // in ms covers its whole millisecond, so it has the chunk that
      // printed the line.
      void this.seek({ t }, play);
    } else {
      // No time in the log: the offset past the line's text, about where the line ends.
      const end = this.tl ? this.tl.end_offset : Infinity;
      void this.seek({ offset: Math.min(end, h.offset + utf8.encode(h.line).length) }, play);
    }
  }

  // ---- fitting ----------------------------------------------------------------------

  private fitSoon(): void {
    if (this.fitRaf) return;
    this.fitRaf = requestAnimationFrame(() => {
      this.fitRaf = 0;
      this.fit(2);
    });
  }

  /**
   * fit shows the replayed screen whole at its own size: the text is made
   * smaller (never larger than the page's text size) until it fits the
   * pane, and the screen is centered in it.
   */
  private fit(tries: number): void {
    const term = this.term;
    if (!term || this.root.hidden) return;
    const scr = this.termEl.querySelector('.xterm-screen') as HTMLElement | null;
    if (!scr) return;
    const availW = this.screenEl.clientWidth - 16;
    const availH = this.screenEl.clientHeight - 16;
    const w = scr.offsetWidth;
    const h = scr.offsetHeight;
    const size = term.options.fontSize ?? this.prefs.fontSize;
    if (availW <= 0 || availH <= 0 || w <= 0 || h <= 0) return;
    let want = Math.min(this.prefs.fontSize, (size * availW) / w, (size * availH) / h);
    want = Math.max(5, Math.floor(want * 2) / 2);
    if (want === size) return;
    term.options.fontSize = want;
    // Cell sizes round to pixels: check again once drawn.
    if (tries > 1) requestAnimationFrame(() => this.fit(tries - 1));
  }

  // ---- input ---------------------------------------------------------------------------

  private bind(): void {
    this.playBtn.addEventListener('click', () => this.toggle());
    byId('replay-close').addEventListener('click', () => this.close());
    byId('replay-retry').addEventListener('click', () => this.retry?.());
    this.speedEl.addEventListener('change', () => {
      this.speed = Number(this.speedEl.value) || 1;
    });
    this.skipEl.addEventListener('change', () => {
      this.skipIdle = this.skipEl.checked;
    });
    this.searchEl.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        void this.runSearch();
      }
    });
    this.searchEl.addEventListener('search', () => {
      if (!this.searchEl.value) this.clearSearch();
    });
    this.hitsList.addEventListener('click', (e) => {
      const b = (e.target as HTMLElement).closest<HTMLElement>('.replay-hit');
      const h = b ? this.hits[Number(b.dataset.index)] : undefined;
      if (!b || !h) return;
      for (const x of this.hitsList.querySelectorAll('.replay-hit.current')) x.classList.remove('current');
      b.classList.add('current');
      this.seekHit(h);
    });
    byId('replay-hits-close').addEventListener('click', () => this.clearSearch());

    // The timeline: a click seeks, a drag scrubs; a click on a marker goes to it.
    const tlEl = this.timelineEl;
    let downX = 0;
    let resume = false;
    let scrubbed = NaN;
    const scrubAt = (clientX: number, play: boolean) => {
      const t = this.timeAtX(clientX);
      if (t === scrubbed && !play) return;
      scrubbed = t;
      this.scrub(t, play);
    };
    let marker: HTMLElement | null = null;
    tlEl.addEventListener('pointerdown', (e) => {
      if (e.button !== 0 || !this.tl) return;
      e.preventDefault();
      tlEl.focus();
      downX = e.clientX;
      marker = (e.target as HTMLElement).closest('.replay-marker');
      resume = this.state === 'playing';
      if (resume) this.newGen();
      this.dragging = true;
      tlEl.classList.add('dragging');
      try {
        tlEl.setPointerCapture(e.pointerId);
      } catch {
        // the pointer is gone
      }
      scrubbed = NaN;
      if (!marker) scrubAt(e.clientX, false);
    });
    tlEl.addEventListener('pointermove', (e) => {
      this.hover(e.clientX);
      if (!this.dragging) return;
      if (marker && Math.abs(e.clientX - downX) < 4) return;
      marker = null;
      scrubAt(e.clientX, false);
    });
    const end = (e: PointerEvent, commit: boolean) => {
      if (!this.dragging) return;
      this.dragging = false;
      tlEl.classList.remove('dragging');
      if (!commit) return;
      if (marker && marker.dataset.offset) {
        this.atMarker = Number(marker.dataset.offset);
        void this.seek({ offset: this.atMarker }, resume);
      } else {
        scrubAt(e.clientX, resume);
      }
      marker = null;
    };
    tlEl.addEventListener('pointerup', (e) => end(e, true));
    tlEl.addEventListener('pointercancel', (e) => end(e, false));
    tlEl.addEventListener('pointerleave', () => {
      if (!this.dragging) this.hoverEl.hidden = true;
    });

    new ResizeObserver(() => {
      this.fitSoon();
      this.drawActivity();
    }).observe(this.screenEl);
  }

  private hover(clientX: number): void {
    if (!this.tl) return;
    const r = this.timelineEl.getBoundingClientRect();
    const t = this.timeAtX(clientX);
    this.hoverEl.textContent = clockTime(t);
    this.hoverEl.style.left = `${Math.min(r.width, Math.max(0, clientX - r.left))}px`;
    this.hoverEl.hidden = false;
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
      if (target === this.searchEl) {
        if (this.searchEl.value || !this.hitsEl.hidden) {
          this.searchEl.value = '';
          this.clearSearch();
        }
        this.timelineEl.focus();
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
    this.timelineEl.focus();
  }

  focusSearch(): void {
    this.searchEl.focus();
    this.searchEl.select();
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

/** failed says whether m is a command that finished with a non-zero status. */
function failed(m: ReplayMarker): boolean {
  return m.kind === 'done' && m.status !== undefined && m.status !== 0;
}

function hitTime(h: GrepHit): number | null {
  if (typeof h.t === 'number') return h.t;
  if (h.time) {
    const t = Date.parse(h.time);
    if (Number.isFinite(t)) return t;
  }
  return null;
}

function markerTitle(m: ReplayMarker): string {
  const when = clockTime(m.t);
  switch (m.kind) {
    case 'command':
      return `${when} · ${m.label ? `$ ${m.label}` : 'a command started'}`;
    case 'done':
      return `${when} · ${m.status === undefined ? 'command finished' : m.status === 0 ? 'command succeeded' : `command failed (status ${m.status})`}`;
    case 'restore':
      return `${when} · ${m.label || 'restored'}`;
    case 'gap':
      return `${when} · output missing${m.label ? `: ${m.label}` : ''}`;
    case 'clock':
      return `${when} · ${m.label || 'the clock was set'}`;
  }
  return `${when} · ${m.label || m.kind}`;
}
