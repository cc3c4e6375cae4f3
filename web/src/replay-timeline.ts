// The replay's timeline: a bar from the session's first byte to its last,
// with the playhead, ticks at commands and restores, marks at search hits,
// an activity shading, and the pointer: a click seeks, a drag scrubs, a
// click on a tick goes to it. The view (replay.ts) owns what is shown; the
// timeline draws it and reports where the user pointed.

import type { GrepHit, ReplayMarker, ReplayTimeline } from './api';
import { $ } from './dom';
import { clockTime, failed, fraction, hitTime, markerTitle, offsetTime, span } from './replay-clock';

/** The timeline's time index holds at most this many points (thinned beyond). */
const MAX_POINTS = 4096;

/** What the timeline needs of the view. */
export interface TimelineHost {
  isOpen(): boolean;
  /** grab stops playback for a drag; it says whether the view was playing. */
  grab(): boolean;
  /** scrub shows moment t while the timeline is dragged (play: go on playing from there). */
  scrub(t: number, play: boolean): void;
  /** toMarker shows the marker at offset. */
  toMarker(offset: number, play: boolean): void;
}

export class Timeline {
  readonly el = $('replay-timeline');
  private readonly markersEl = $('replay-markers');
  private readonly hitmarksEl = $('replay-hitmarks');
  private readonly progressEl = $('replay-progress');
  private readonly handleEl = $('replay-handle');
  private readonly hoverEl = $('replay-hover');
  private readonly timeEl = $('replay-time');
  private readonly activity = $('replay-activity') as HTMLCanvasElement;

  /** The timeline shown (null until read) and its markers, by offset. */
  tl: ReplayTimeline | null = null;
  markers: ReplayMarker[] = [];
  private hits: GrepHit[] = [];
  private dragging = false;

  constructor(private readonly host: TimelineHost) {
    this.bind();
  }

  /** set shows timeline tl (null: none yet). */
  set(tl: ReplayTimeline | null): void {
    this.tl = tl;
    this.markers = tl ? [...tl.markers].sort((a, b) => a.offset - b.offset) : [];
    if (tl) {
      this.el.dataset.start = String(tl.start_t);
      this.el.dataset.end = String(tl.end_t);
      this.el.setAttribute('aria-valuemin', String(tl.start_t));
      this.el.setAttribute('aria-valuemax', String(tl.end_t));
    }
    this.draw();
  }

  get startT(): number {
    return this.tl?.start_t ?? 0;
  }

  get endT(): number {
    const tl = this.tl;
    if (!tl) return 1;
    return Math.max(tl.end_t, tl.start_t + 1);
  }

  /** frac is where moment t sits on the timeline, 0 to 1. */
  private frac(t: number): number {
    return fraction(t, this.startT, this.endT);
  }

  private timeAtX(clientX: number): number {
    const r = this.el.getBoundingClientRect();
    const f = Math.min(1, Math.max(0, (clientX - r.left) / Math.max(1, r.width)));
    return Math.round(this.startT + f * (this.endT - this.startT));
  }

  /** playhead shows moment t (the screen reflects every byte below offset). */
  playhead(t: number, offset: number): void {
    const f = this.frac(t);
    this.progressEl.style.width = `${f * 100}%`;
    this.handleEl.style.left = `${f * 100}%`;
    if (!this.tl) {
      this.timeEl.textContent = '';
      return;
    }
    this.timeEl.textContent = `${clockTime(t)} · ${span(t - this.startT)} / ${span(this.endT - this.startT)}`;
    this.timeEl.title = `byte ${offset.toLocaleString()} of ${this.tl.end_offset.toLocaleString()}`;
    this.el.setAttribute('aria-valuenow', String(Math.round(t)));
    this.el.setAttribute('aria-valuetext', clockTime(t));
  }

  /** draw draws the ticks, the search marks and the activity. */
  private draw(): void {
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
  }

  /** setHits marks where the search's hits were printed. */
  setHits(hits: GrepHit[]): void {
    this.hits = hits;
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

  /** drawActivity shades the timeline by how much was printed when: busy stretches stand out in a long, mostly idle session. */
  drawActivity(): void {
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
    if (!tl || !tl.points.length || !this.host.isOpen()) return;
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

  private hover(clientX: number): void {
    if (!this.tl) return;
    const r = this.el.getBoundingClientRect();
    const t = this.timeAtX(clientX);
    this.hoverEl.textContent = clockTime(t);
    this.hoverEl.style.left = `${Math.min(r.width, Math.max(0, clientX - r.left))}px`;
    this.hoverEl.hidden = false;
  }

  private bind(): void {
    // A click seeks, a drag scrubs; a click on a marker goes to it.
    const tlEl = this.el;
    let downX = 0;
    let resume = false;
    let scrubbed = NaN;
    const scrubAt = (clientX: number, play: boolean) => {
      const t = this.timeAtX(clientX);
      if (t === scrubbed && !play) return;
      scrubbed = t;
      this.host.scrub(t, play);
    };
    let marker: HTMLElement | null = null;
    tlEl.addEventListener('pointerdown', (e) => {
      if (e.button !== 0 || !this.tl) return;
      e.preventDefault();
      tlEl.focus();
      downX = e.clientX;
      marker = (e.target as HTMLElement).closest('.replay-marker');
      resume = this.host.grab();
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
      if (marker && marker.dataset.offset) this.host.toMarker(Number(marker.dataset.offset), resume);
      else scrubAt(e.clientX, resume);
      marker = null;
    };
    tlEl.addEventListener('pointerup', (e) => end(e, true));
    tlEl.addEventListener('pointercancel', (e) => end(e, false));
    tlEl.addEventListener('pointerleave', () => {
      if (!this.dragging) this.hoverEl.hidden = true;
    });
  }
}
