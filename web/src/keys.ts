// The extra-keys row's encoder: what bytes a tapped key sends, how a
// latched Ctrl or Alt changes the next key, how a tap latches or locks
// them, and the user's list of extra keys. Pure (no DOM), tested under
// node (test/unit).

/** Latches are the row's Ctrl and Alt, tapped once to apply to the next key. */
export interface Latches {
  ctrl: boolean;
  alt: boolean;
}

/** The row's arrow keys and the final byte of their sequences. */
const ARROWS: Record<string, string> = { up: 'A', down: 'B', right: 'C', left: 'D' };

/**
 * latched is d as typed with the latches held: Ctrl makes a control
 * character of one character (C0 for @…_, NUL for space and 2, DEL for ?),
 * Alt prefixes ESC. It says whether the latches were used (and are to be released).
 */
export function latched(d: string, l: Latches): { data: string; used: boolean } {
  if (!l.ctrl && !l.alt) return { data: d, used: false };
  let out = d;
  if (l.ctrl && d.length === 1) {
    const c = d.toUpperCase().charCodeAt(0);
    if (c >= 64 && c <= 95) out = String.fromCharCode(c - 64);
    else if (d === ' ' || d === '2') out = '\x00';
    else if (d === '?') out = '\x7f';
  }
  if (l.alt) out = '\x1b' + out;
  return { data: out, used: true };
}

/** Home and End: cursor keys too (SS3 in application cursor mode). */
const HOME_END: Record<string, string> = { home: 'H', end: 'F' };
/** F1 to F4: SS3 P to S (CSI 1;m P… with a modifier). */
const PF: Record<string, string> = { f1: 'P', f2: 'Q', f3: 'R', f4: 'S' };
/** The keys sent as CSI n ~ (CSI n;m ~ with a modifier), as xterm does. */
const TILDE: Record<string, number> = { ins: 2, del: 3, pgup: 5, pgdn: 6, f5: 15, f6: 17, f7: 18, f8: 19, f9: 20, f10: 21, f11: 23, f12: 24 };

const own = <V>(m: Record<string, V>, k: string): V | undefined => (Object.prototype.hasOwnProperty.call(m, k) ? m[k] : undefined);

/**
 * encodeKey is what the row's key sends: arrows, Home and End as the
 * terminal's cursor keys (SS3 in application cursor mode, CSI 1;m with a
 * latched modifier), PgUp, PgDn, Ins, Del and F1-F12 as xterm sends them,
 * esc and tab as themselves, anything else as typed, through the latches.
 */
export function encodeKey(key: string, l: Latches, appCursor: boolean): { data: string; used: boolean } {
  const mod = 1 + (l.alt ? 2 : 0) + (l.ctrl ? 4 : 0);
  const cursor = own(ARROWS, key) ?? own(HOME_END, key);
  if (cursor) {
    if (mod > 1) return { data: `\x1b[1;${mod}${cursor}`, used: true };
    return { data: (appCursor ? '\x1bO' : '\x1b[') + cursor, used: false };
  }
  const pf = own(PF, key);
  if (pf) return mod > 1 ? { data: `\x1b[1;${mod}${pf}`, used: true } : { data: `\x1bO${pf}`, used: false };
  const n = own(TILDE, key);
  if (n !== undefined) return mod > 1 ? { data: `\x1b[${n};${mod}~`, used: true } : { data: `\x1b[${n}~`, used: false };
  if (key === 'esc') return { data: '\x1b', used: false };
  if (key === 'tab') return { data: '\t', used: false };
  return latched(key, l);
}

// ---- the row's keys of the user's own choosing --------------------------

/** The named keys a user may add to the row, by the names they may type. */
const NAMED: Record<string, string> = {
  esc: 'esc', escape: 'esc', tab: 'tab', home: 'home', end: 'end',
  pgup: 'pgup', pageup: 'pgup', pgdn: 'pgdn', pagedown: 'pgdn', pgdown: 'pgdn',
  ins: 'ins', insert: 'ins', del: 'del', delete: 'del',
  f1: 'f1', f2: 'f2', f3: 'f3', f4: 'f4', f5: 'f5', f6: 'f6', f7: 'f7', f8: 'f8', f9: 'f9', f10: 'f10', f11: 'f11', f12: 'f12',
};

/** keyLabel is what a key's button says. */
export function keyLabel(key: string): string {
  const labels: Record<string, string> = { esc: 'Esc', tab: 'Tab', home: 'Home', end: 'End', pgup: 'PgUp', pgdn: 'PgDn', ins: 'Ins', del: 'Del' };
  return own(labels, key) ?? (/^f\d+$/.test(key) ? key.toUpperCase() : key);
}

/** The row's own keys before the user chooses: today's shell punctuation. */
export const DEFAULT_EXTRA_KEYS = ['~', '|', '/', '-'];
/** MAX_EXTRA_KEYS bounds the choice: the row scrolls past a phone's width, not forever. */
export const MAX_EXTRA_KEYS = 12;

/**
 * parseKeys reads the user's list of extra keys: names (PgUp, F5, Home,
 * Del, …, any case) or single printable characters, separated by spaces.
 * It returns the keys (canonical, each once, at most MAX_EXTRA_KEYS) and
 * the words it could not read: a caller keeps the old list when bad is
 * not empty.
 */
export function parseKeys(text: string): { keys: string[]; bad: string[] } {
  const keys: string[] = [];
  const bad: string[] = [];
  for (const word of text.split(/\s+/)) {
    if (!word) continue;
    const named = own(NAMED, word.toLowerCase());
    const chars = [...word];
    let key: string | undefined = named;
    // One character the keyboard may lack; a control character is not one.
    if (!key && chars.length === 1 && !/[\p{C}\p{Z}]/u.test(word)) key = word;
    if (!key) {
      bad.push(word.length > 24 ? word.slice(0, 24) + '…' : word);
      continue;
    }
    if (!keys.includes(key)) keys.push(key);
  }
  if (keys.length > MAX_EXTRA_KEYS) bad.push(`more than ${MAX_EXTRA_KEYS} keys`);
  return { keys: keys.slice(0, MAX_EXTRA_KEYS), bad };
}

// ---- Ctrl and Alt: once or locked ----------------------------------------

/** A modifier on the row: off, on for the next key (one tap), or on until tapped again (a double tap). */
export interface Mod {
  state: 'off' | 'once' | 'locked';
  /** at is when it was last tapped (ms, the caller's clock). */
  at: number;
}

/** DOUBLE_TAP_MS is how soon a second tap must come to lock a modifier. */
export const DOUBLE_TAP_MS = 400;

/** tapMod is a modifier after a tap at now. */
export function tapMod(m: Mod, now: number): Mod {
  if (m.state === 'off') return { state: 'once', at: now };
  // A clock that went back is not a double tap.
  if (m.state === 'once' && now >= m.at && now - m.at <= DOUBLE_TAP_MS) return { state: 'locked', at: now };
  return { state: 'off', at: now };
}

/** usedMod is a modifier after a key used it: once goes off, locked stays. */
export function usedMod(m: Mod): Mod {
  return m.state === 'once' ? { state: 'off', at: m.at } : m;
}

/** The part of a KeyboardEvent that decides who gets the key. */
export interface KeyLike {
  key: string;
  code: string;
  ctrlKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
  metaKey: boolean;
}

/**
 * terminalGets says whether the terminal takes key e (xterm.js's custom
 * key handler), or leaves it to the browser: Ctrl+Shift+C/V copy and
 * paste; and with tabMoves (Ctrl+Shift+M) Tab and Shift+Tab move the focus
 * through the page, as in VS Code.
 */
export function terminalGets(e: KeyLike, tabMoves: boolean): boolean {
  if (e.ctrlKey && e.shiftKey && !e.altKey && (e.code === 'KeyC' || e.code === 'KeyV')) return false;
  if (e.ctrlKey && e.shiftKey && e.altKey && e.code === 'KeyV') return false;
  if (tabMoves && e.key === 'Tab' && !e.ctrlKey && !e.altKey && !e.metaKey) return false;
  return true;
}

/** isTabModeKey says whether e is Ctrl+Shift+M, which turns tabMoves on and off. */
export function isTabModeKey(e: KeyLike): boolean {
  return (e.ctrlKey || e.metaKey) && e.shiftKey && !e.altKey && e.code === 'KeyM';
}
