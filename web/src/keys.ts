// The extra-keys row's encoder: what bytes a tapped key sends, and how a
// latched Ctrl or Alt changes the next key. Pure (no DOM), tested under
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

/**
 * encodeKey is what the row's key sends: arrows as the terminal's cursor
 * keys (SS3 in application cursor mode, CSI 1;m with a latched modifier),
 * esc and tab as themselves, anything else as typed, through the latches.
 */
export function encodeKey(key: string, l: Latches, appCursor: boolean): { data: string; used: boolean } {
  const arrow = Object.prototype.hasOwnProperty.call(ARROWS, key) ? ARROWS[key] : undefined;
  if (arrow) {
    const mod = 1 + (l.alt ? 2 : 0) + (l.ctrl ? 4 : 0);
    if (mod > 1) return { data: `\x1b[1;${mod}${arrow}`, used: true };
    return { data: (appCursor ? '\x1bO' : '\x1b[') + arrow, used: false };
  }
  if (key === 'esc') return { data: '\x1b', used: false };
  if (key === 'tab') return { data: '\t', used: false };
  return latched(key, l);
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
  if (tabMoves && e.key === 'Tab' && !e.ctrlKey && !e.altKey && !e.metaKey) return false;
  return true;
}

/** isTabModeKey says whether e is Ctrl+Shift+M, which turns tabMoves on and off. */
export function isTabModeKey(e: KeyLike): boolean {
  return (e.ctrlKey || e.metaKey) && e.shiftKey && !e.altKey && e.code === 'KeyM';
}
