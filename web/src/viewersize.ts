// What a page's connection says about the session's size (protocol
// version 6): it reports the size its window would hold (a report takes
// nothing) and fits (takes the size) only by the control, when nobody
// holds the size, on a desktop when the tab that holds it changes its
// window, or when the page that holds it changes its text size (sizeinfo.ts
// decides). Typing takes the size on the server's side.

import { claim, followsText, followsWindow, Holder, holder, SizeState } from './sizeinfo';
import type { Grid } from './fitplan';
import * as wire from './wire';

/** What ViewerSize needs of its connection. */
export interface SizeLink {
  /** send sends a frame on the live connection; false when there is none. */
  send(b: Uint8Array): boolean;
  /** live: connected, welcomed, and the session has not ended. */
  live(): boolean;
  /** active: the page's visible tab. */
  active(): boolean;
}

export class ViewerSize {
  /** want is the size this page's window would give the session (null: not laid out yet). */
  want: Grid | null = null;
  /** This page's viewer is read-only (as the viewers frame says). */
  readOnly = false;
  /** The size part of the last viewers frame (null before the first of a connection). */
  private sizes: SizeState | null = null;
  /** The size last reported or fit on this connection. */
  private sent = '';
  /** This connection has fit since the size was last held (claim). */
  private claimed = false;
  /** The size of this page's last fit, so a window that keeps its size does not fit again. */
  private fitKey = '';

  constructor(private readonly link: SizeLink) {}

  /** connected starts a new connection: nothing reported on it yet. */
  connected(): void {
    this.sent = '';
    this.claimed = false;
    this.sizes = null;
  }

  /**
   * window takes the size the window would hold now, and says what follows
   * from it; text: the page's text size changed, not the window.
   */
  window(want: Grid, coarse: boolean, text = false): void {
    this.want = want;
    this.report();
    const follows = this.sizes && (text ? followsText(this.sizes, this.readOnly) : followsWindow(this.sizes, this.readOnly, coarse));
    if (follows && key(want) !== this.fitKey) this.fit();
    this.maybeClaim();
  }

  /** report tells the session the window's size, once per size. */
  report(): void {
    if (!this.want || !this.link.live() || key(this.want) === this.sent) return;
    if (this.link.send(wire.resize(this.want.cols, this.want.rows))) this.sent = key(this.want);
  }

  /** fit takes the session's size at this window; false when it cannot (read-only, not live, not laid out). */
  fit(): boolean {
    if (!this.want || this.readOnly || !this.link.live()) return false;
    if (!this.link.send(wire.fit(this.want.cols, this.want.rows))) return false;
    this.fitKey = this.sent = key(this.want);
    return true;
  }

  /** viewers follows a viewers frame: who holds the size, and whether this page is read-only. */
  viewers(v: wire.Viewers): void {
    this.readOnly = !!v.viewers.find((x) => x.id === v.you)?.read_only;
    this.sizes = v;
    if (v.size_owner !== 0) this.claimed = false;
    this.maybeClaim();
  }

  /** maybeClaim takes the size when nobody holds it (sizeinfo.claim). */
  maybeClaim(): void {
    const v = this.sizes;
    if (!v) return;
    if (claim({ policy: v.size_policy, owner: v.size_owner, you: v.you, readOnly: this.readOnly, active: this.link.active(), asked: this.claimed }) && this.fit()) this.claimed = true;
  }

  /** holder says whose size the session has, at the terminal's size (null before the viewers frame). */
  holder(cols: number, rows: number): Holder | null {
    return this.sizes ? holder({ ...this.sizes, cols, rows }) : null;
  }
}

const key = (g: Grid) => `${g.cols}x${g.rows}`;
