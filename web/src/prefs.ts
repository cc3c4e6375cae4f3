// The page's preferences (text size, theme, copy on select, WebGL, the
// extra-keys row and its keys, screen-reader mode, minimum contrast), kept
// in the browser's storage and applied to every terminal when they change.

import { CLIP_POLICIES, ClipPolicy } from './clipwrite';
import { toast } from './dialogs';
import { $, readJSON, writeStorage } from './dom';
import { DEFAULT_EXTRA_KEYS, parseKeys } from './keys';
import { PREDICT_STYLES, PredictStyle } from './predictview';
import type { TermPrefs } from './session';
import type { ThemeName } from './theme';

const PREFS_KEY = 'termkeep.prefs';
const FONT_MIN = 8;
const FONT_MAX = 32;
export const FONT_DEFAULT = 14;

export interface Prefs extends TermPrefs {
  keys: 'auto' | 'on' | 'off';
  /** extraKeys are the row's keys after the fixed ones (keys.ts names or characters). */
  extraKeys: string[];
  /** clipboardWrites: what the page does with a program's clipboard write (clipwrite.ts). */
  clipboardWrites: ClipPolicy;
}

/** The minimum contrast ratios offered; 1 leaves the colors as programs ask. */
export const CONTRASTS = [1, 3, 4.5, 7];
/** As VS Code's terminal: text a program colors near its background (black on the dark theme) stays readable. */
export const CONTRAST_DEFAULT = 4.5;

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
    // Browsers do not tell a page that a screen reader runs: it is asked for.
    screenReader: saved.screenReader === true,
    minContrast: CONTRASTS.includes(saved.minContrast as number) ? (saved.minContrast as number) : CONTRAST_DEFAULT,
    predict: saved.predict === 'off' || saved.predict === 'always' ? saved.predict : 'auto',
    predictStyle: PREDICT_STYLES.includes(saved.predictStyle as PredictStyle) ? (saved.predictStyle as PredictStyle) : 'underline',
    clipboardWrites: CLIP_POLICIES.includes(saved.clipboardWrites as ClipPolicy) ? (saved.clipboardWrites as ClipPolicy) : 'ask',
    extraKeys: Array.isArray(saved.extraKeys) ? parseKeys(saved.extraKeys.filter((k) => typeof k === 'string').join(' ')).keys : [...DEFAULT_EXTRA_KEYS],
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

/** What the preferences change: the terminals (live and replay), the extra-keys row and its keys, the active terminal's fit. */
export interface PrefsHost {
  terminals(): Iterable<{ applyPrefs(p: Prefs): void }>;
  showKeyRow(on: boolean): void;
  keyRowShown(): boolean;
  setKeys(keys: string[]): void;
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

  /** changed keeps what the settings dialog changed in p and applies it. */
  changed(): void {
    savePrefs(this.p);
    this.applyTheme();
    this.host.setKeys(this.p.extraKeys);
    this.updateKeysRow();
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
