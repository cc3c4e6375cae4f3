// The extra-keys row shown on phones or on demand: Esc, Tab, Ctrl, Alt and
// the arrows, then keys of the user's choosing (prefs.ts). Taps keep the
// terminal's focus; Ctrl and Alt apply to the next key (typed or tapped)
// after a tap, to every key after a double tap until tapped again. The
// encoding and the modifiers' states are keys.ts's.

import { $, el } from './dom';
import { encodeKey, keyLabel, latched, Latches, Mod, tapMod, usedMod } from './keys';
import type { TermSession } from './session';

/** The row's fixed keys, on the screen without scrolling. */
const FIXED: [key: string, label: string, name?: string][] = [
  ['esc', 'Esc'],
  ['tab', 'Tab'],
  ['ctrl', 'Ctrl'],
  ['alt', 'Alt'],
  ['left', '←', 'Left'],
  ['up', '↑', 'Up'],
  ['down', '↓', 'Down'],
  ['right', '→', 'Right'],
];

export class KeyRow {
  readonly el = $('keys');
  private readonly mods: Record<'ctrl' | 'alt', Mod> = { ctrl: { state: 'off', at: 0 }, alt: { state: 'off', at: 0 } };

  constructor(private readonly active: () => TermSession | undefined, extra: readonly string[]) {
    // Keep the terminal's focus (and a phone's keyboard) when a key is tapped.
    this.el.addEventListener('pointerdown', (e) => e.preventDefault());
    this.el.addEventListener('click', (e) => {
      const b = (e.target as HTMLElement).closest('button');
      if (b?.dataset.key) this.press(b.dataset.key);
    });
    this.setKeys(extra);
  }

  /** setKeys puts the fixed keys and then the user's extra keys on the row. */
  setKeys(extra: readonly string[]): void {
    const buttons = [...FIXED, ...extra.map((k): [string, string, string?] => [k, keyLabel(k)])].map(([key, label, name]) => {
      const b = el('button', key === 'ctrl' || key === 'alt' ? 'mod' : undefined, label);
      b.type = 'button';
      b.dataset.key = key;
      if (name) b.setAttribute('aria-label', name);
      if (key === 'ctrl' || key === 'alt') b.setAttribute('aria-pressed', 'false');
      return b;
    });
    this.el.replaceChildren(...buttons);
    this.render();
  }

  /** show shows or hides the row. */
  show(on: boolean): void {
    this.el.hidden = !on;
  }

  get shown(): boolean {
    return !this.el.hidden;
  }

  private get latches(): Latches {
    return { ctrl: this.mods.ctrl.state !== 'off', alt: this.mods.alt.state !== 'off' };
  }

  private press(key: string): void {
    const ts = this.active();
    if (!ts) return;
    if (key === 'ctrl' || key === 'alt') {
      this.mods[key] = tapMod(this.mods[key], performance.now());
      this.render();
      ts.focus();
      return;
    }
    const r = encodeKey(key, this.latches, ts.term.modes.applicationCursorKeysMode);
    if (r.used) this.release();
    ts.sendKeys(r.data);
    ts.focus();
  }

  /** apply applies a Ctrl or Alt on the row to the next key typed. */
  apply(d: string): string {
    const r = latched(d, this.latches);
    if (r.used) this.release();
    return r.data;
  }

  /** release takes off the modifiers a key used once; locked ones stay. */
  private release(): void {
    this.mods.ctrl = usedMod(this.mods.ctrl);
    this.mods.alt = usedMod(this.mods.alt);
    this.render();
  }

  private render(): void {
    for (const m of ['ctrl', 'alt'] as const) {
      const b = this.el.querySelector(`[data-key="${m}"]`);
      if (!b) continue;
      const st = this.mods[m].state;
      b.classList.toggle('latched', st !== 'off');
      b.classList.toggle('locked', st === 'locked');
      b.setAttribute('aria-pressed', String(st !== 'off'));
      b.setAttribute('title', st === 'locked' ? `${m === 'ctrl' ? 'Ctrl' : 'Alt'} stays on: tap to release` : 'Tap: the next key; double tap: until tapped again');
    }
  }
}
