// The replay's playback decisions: the output fetched ahead and not yet
// written, the playback clock, which chunk is due, how long to sleep, when
// to fetch more and where a pause lands. A single-threaded type with the
// page's time passed in; the view (replay.ts) does the writing, fetching
// and timers. Pure (no DOM), tested under node (test/unit).

import type { ReplayItem } from './api';
import { advanceClock, dueAt } from './replay-clock';

/** Item is a line of replay/output with its time known: a line the log gave no time takes the one before's. */
export type Item = ReplayItem & { t: number };

/** The playback loop wakes at least this often to move the playhead. */
export const TICK_MS = 100;
/** Fetch more while less than this much playing time (ms, at any speed) is buffered ahead of the clock. */
export const AHEAD_MS = 8000;

/** What the loop knows of the world at a tick. */
export interface World {
  /** blocked: the terminal is behind (too much handed to it and not parsed): the clock waits. */
  blocked: boolean;
  /** outDone: the last answer reached the end of the log so far; fetching: a request is on its way. */
  outDone: boolean;
  fetching: boolean;
  /** live: the session runs (its log grows); now: the wall clock (Unix ms), which a live session's clock never passes. */
  live: boolean;
  now: number;
}

export class Playback {
  /** clock is the recording time being played (Unix ms); lastT the time of the last item taken. */
  clock = 0;
  lastT = 0;
  speed = 1;
  skipIdle = true;
  private items: Item[] = [];
  private qi = 0;
  /** queuedBytes is the output in the queue, not yet taken. */
  queuedBytes = 0;

  /** start plays from moment t with an empty queue. */
  start(t: number): void {
    this.clear();
    this.clock = t;
    this.lastT = t;
  }

  clear(): void {
    this.items = [];
    this.qi = 0;
    this.queuedBytes = 0;
  }

  /** add queues items of replay/output in their order; one without a time takes the time before it. */
  add(items: readonly ReplayItem[]): void {
    for (const it of items) {
      const t = typeof it.t === 'number' && Number.isFinite(it.t) ? it.t : this.items[this.items.length - 1]?.t ?? this.lastT;
      this.items.push({ ...it, t });
      this.queuedBytes += it.data?.length ?? 0;
    }
  }

  /** head is the next item to write, if one is queued. */
  get head(): Item | undefined {
    return this.items[this.qi];
  }

  /**
   * advance moves the clock over elapsed ms of the page's time, and says
   * whether the playback has reached the end of an ended session (every
   * byte written: it stops there).
   */
  advance(elapsed: number, w: World): 'playing' | 'ended' {
    const head = this.head;
    if (w.blocked) {
      // The terminal is behind: the clock waits for it.
    } else if (head) {
      this.clock = advanceClock(this.clock, elapsed, this.speed, this.lastT, head.t, this.skipIdle);
    } else if (w.outDone && !w.live && !w.fetching) {
      return 'ended';
    } else if (w.outDone) {
      // A live session's present: the clock runs, never past now.
      this.clock = Math.min(w.now, advanceClock(this.clock, elapsed, this.speed, this.lastT, null, this.skipIdle));
    }
    // (No item and a request on its way: the clock waits for it.)
    return 'playing';
  }

  /** take is the next item the clock has reached, or null; the caller writes it. */
  take(): Item | null {
    const it = this.items[this.qi];
    if (!it || it.t > this.clock) return null;
    this.qi++;
    this.queuedBytes -= it.data?.length ?? 0;
    this.lastT = Math.max(this.lastT, it.t);
    if (this.qi > 1024) {
      this.items = this.items.slice(this.qi);
      this.qi = 0;
    }
    return it;
  }

  /** delay is how long the loop sleeps before the next tick (ms). */
  delay(blocked: boolean): number {
    const nh = this.head;
    if (!nh || blocked) return TICK_MS;
    return Math.min(TICK_MS, Math.max(0, (dueAt(nh.t, this.lastT, this.skipIdle) - this.clock) / this.speed));
  }

  /** enoughAhead says whether the queue holds enough to play for a while (no need to fetch more); batch is a request's size. */
  enoughAhead(batch: number): boolean {
    const last = this.items[this.items.length - 1];
    const ahead = last && this.qi < this.items.length ? last.t - this.clock : 0;
    return ahead > AHEAD_MS * this.speed && this.queuedBytes > batch / 2;
  }

  /**
   * pausedAt is the moment a pause shows: the clock, unless an item that
   * is due waits for the terminal (then the moment of the last one written).
   */
  pausedAt(): number {
    const head = this.head;
    return head && head.t <= this.clock ? this.lastT : this.clock;
  }
}
