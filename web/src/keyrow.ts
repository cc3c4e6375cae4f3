// The extra-keys row (Esc, Tab, Ctrl, Alt, arrows) shown on phones or on
// demand: taps keep the terminal's focus, Ctrl and Alt latch onto the
// next key (typed or tapped). The encoding is keys.ts's.

import { $ } from './dom';
import { encodeKey, latched, Latches } from './keys';
import type { TermSession } from './session';

export class KeyRow {
  readonly el = $('keys');
  private readonly latches: Latches = { ctrl: false, alt: false };

  constructor(private readonly active: () => TermSession | undefined) {
    // Keep the terminal's focus (and a phone's keyboard) when a key is tapped.
    this.el.addEventListener('pointerdown', (e) => e.preventDefault());
    this.el.addEventListener('click', (e) => {
      const b = (e.target as HTMLElement).closest('button');
      if (b?.dataset.key) this.press(b.dataset.key);
    });
  }

  /** show shows or hides the row. */
  show(on: boolean): void {
    this.el.hidden = !on;
  }

  get shown(): boolean {
    return !this.el.hidden;
  }

  private press(key: string): void {
    const ts = this.active();
    if (!ts) return;
    if (key === 'ctrl' || key === 'alt') {
      this.latches[key] = !this.latches[key];
      this.render();
      ts.focus();
      return;
    }
    const r = encodeKey(key, this.latches, ts.term.modes.applicationCursorKeysMode);
    if (r.used) this.release();
    ts.sendKeys(r.data);
    ts.focus();
  }

  /** apply applies a Ctrl or Alt tapped on the row to the next key typed. */
  apply(d: string): string {
    const r = latched(d, this.latches);
    if (r.used) this.release();
    return r.data;
  }

  private release(): void {
    this.latches.ctrl = this.latches.alt = false;
    this.render();
  }

  private render(): void {
    this.el.querySelector('[data-key="ctrl"]')?.classList.toggle('latched', this.latches.ctrl);
    this.el.querySelector('[data-key="alt"]')?.classList.toggle('latched', this.latches.alt);
  }
}
