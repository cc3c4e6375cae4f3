// The page's preferences (text size, theme, copy on select, WebGL, the
// extra-keys row), kept in the browser's storage and applied to every
// terminal when they change.

import { toast } from './dialogs';
import { $, readJSON, writeStorage } from './dom';
import type { TermPrefs } from './session';
import type { ThemeName } from './theme';

const PREFS_KEY = 'termkeep.prefs';
const FONT_MIN = 8;
const FONT_MAX = 32;
export const FONT_DEFAULT = 14;

export interface Prefs extends TermPrefs {
  keys: 'auto' | 'on' | 'off';
}

/** loadPrefs reads the saved preferences; the theme defaults to the system's. */
export function loadPrefs(): Prefs {
  const saved = readJSON<Partial<Prefs>>(localStorage, PREFS_KEY) ?? {};
  const dark = window.matchMedia?.('(prefers-color-scheme: light)').matches ? 'light' : 'dark';
  return {
    fontSize: clampFont(saved.fontSize ?? FONT_DEFAULT),
    theme: saved.theme === 'light' || saved.theme === 'dark' ? saved.theme : (dark as ThemeName),
    copyOnSelect: saved.copyOnSelect ?? true,
    webgl: saved.webgl ?? true,
    keys: saved.keys ?? 'auto',
  };
}

export function savePrefs(p: Prefs): void {
  writeStorage(localStorage, PREFS_KEY, JSON.stringify(p));
}

export function clampFont(n: number): number {
  return Math.max(FONT_MIN, Math.min(FONT_MAX, Math.round(n) || FONT_DEFAULT));
}

/** applyPageTheme colors the page around the terminals. */
export function applyPageTheme(theme: ThemeName): void {
  document.documentElement.dataset.theme = theme;
  const meta = document.querySelector('meta[name="theme-color"]');
  meta?.setAttribute('content', theme === 'dark' ? '#101318' : '#f3f5f8');
}

/** What the preferences change: the terminals (live and replay), the extra-keys row, the active terminal's fit. */
export interface PrefsHost {
  terminals(): Iterable<{ applyPrefs(p: Prefs): void }>;
  showKeyRow(on: boolean): void;
  keyRowShown(): boolean;
  fitActive(): void;
}

/** Preferences holds the page's preferences and applies each change everywhere. */
export class Preferences {
  readonly p: Prefs = loadPrefs();

  constructor(private readonly host: PrefsHost) {}

  setFont(size: number): void {
    this.p.fontSize = clampFont(size);
    savePrefs(this.p);
    for (const t of this.host.terminals()) t.applyPrefs(this.p);
    toast(`Text size ${this.p.fontSize}px`);
  }

  toggleTheme(): void {
    this.p.theme = this.p.theme === 'dark' ? 'light' : 'dark';
    savePrefs(this.p);
    this.applyTheme();
  }

  applyTheme(): void {
    applyPageTheme(this.p.theme);
    for (const t of this.host.terminals()) t.applyPrefs(this.p);
  }

  toggleKeys(): void {
    this.p.keys = this.host.keyRowShown() ? 'off' : 'on';
    savePrefs(this.p);
    this.updateKeysRow();
  }

  /** updateKeysRow shows the extra-keys row when asked for, or on a touch screen unless asked not to. */
  updateKeysRow(): void {
    const coarse = window.matchMedia?.('(pointer: coarse)').matches ?? false;
    const show = this.p.keys === 'on' || (this.p.keys === 'auto' && coarse);
    this.host.showKeyRow(show);
    $('btn-keys').classList.toggle('on', show);
    this.host.fitActive();
  }
}
