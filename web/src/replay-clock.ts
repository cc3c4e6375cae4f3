// The replay's clock and its arithmetic: where a moment sits on the
// timeline, when a byte was logged, how the playback clock moves (skipping
// idle stretches), how durations and markers are said. Pure (no DOM), so
// that it is tested under node (test/unit).

import type { GrepHit, ReplayMarker, ReplayPoint } from './api';

export const SPEEDS = [0.5, 1, 2, 4, 8, 16];
/** With "skip idle" a pause in the output longer than this (ms of recording) plays as this long. */
export const IDLE_MAX = 1000;

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

/** dueAt is the clock time at which the item logged at t is written, after the last at lastT (skipIdle shortens a silence). */
export function dueAt(t: number, lastT: number, skipIdle: boolean): number {
  return skipIdle && t - lastT > IDLE_MAX ? Math.min(t, lastT + IDLE_MAX) : t;
}

/** fraction is where moment t sits between start and end, 0 to 1. */
export function fraction(t: number, start: number, end: number): number {
  return Math.min(1, Math.max(0, (t - start) / (end - start)));
}

/** span says a duration as m:ss (h:mm:ss past an hour). */
export function span(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** clockTime says a moment as the time of day, with the date when it is not today. */
export function clockTime(t: number): string {
  const d = new Date(t);
  const time = d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  if (d.toDateString() === new Date().toDateString()) return time;
  return `${d.toLocaleDateString([], { month: 'short', day: 'numeric' })} ${time}`;
}

/** failed says whether m is a command that finished with a non-zero status. */
export function failed(m: ReplayMarker): boolean {
  return m.kind === 'done' && m.status !== undefined && m.status !== 0;
}

/** hitTime is when a search hit's line was logged, or null when the log has no time for it. */
export function hitTime(h: GrepHit): number | null {
  if (typeof h.t === 'number') return h.t;
  if (h.time) {
    const t = Date.parse(h.time);
    if (Number.isFinite(t)) return t;
  }
  return null;
}

export function markerTitle(m: ReplayMarker): string {
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
