// Who holds a session's size, as this page says it, and when the page
// takes the size by itself. Pure functions (tested under node): no DOM.
//
// The server decides the size by its policy (docs/protocol.md, "Many
// viewers"). Under `latest` a viewer takes it by typing or by a fit; the
// page fits by itself only where tmux and editors' terminals do: when no
// viewer holds the size (a session nobody watches, or whose holder left),
// and on a desktop, when the window of the tab that holds it is resized.
// A phone that rotates or opens its keyboard only reports its size; a
// page that holds the size and changes its text size (a pinch, Ctrl+=)
// takes the size its window holds at the new text, on a phone too.

/** One viewer of the Viewers frame (docs/protocol.md). */
export interface SizeViewer {
  id: number;
  kind?: string;
  name?: string;
  read_only?: boolean;
  ignore_size?: boolean;
  cols?: number;
  rows?: number;
}

/** The size part of a Viewers frame. */
export interface SizeState {
  viewers: SizeViewer[];
  size_owner: number;
  size_policy?: string;
  cols: number;
  rows: number;
  you: number;
}

/** Holder is what the page shows of the session's size: short (the indicator), long (its tooltip). */
export interface Holder {
  short: string;
  long: string;
  /** mine: this page holds the size. */
  mine: boolean;
}

/** whoIs names a viewer by its kind and name, as the others see it. */
export function whoIs(v: SizeViewer): string {
  const name = clean(v.name);
  switch (v.kind) {
    case 'cli':
      return name || 'termkeep attach';
    case 'share':
      return name ? `link “${name}”` : 'a share link';
    case 'web':
      return name || 'a browser';
  }
  return name || 'a viewer';
}

/** clean keeps a name's printable characters, at most 64 of them. */
function clean(s: string | undefined): string {
  return [...(s ?? '').replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim()].slice(0, 64).join('');
}

/** holder says whose size the session has (s.you: this page's viewer id). */
export function holder(s: SizeState): Holder {
  const size = s.cols > 0 && s.rows > 0 ? `${s.cols}×${s.rows}` : '';
  const policy = s.size_policy || 'latest';
  let who: string;
  let mine = false;
  if (policy === 'fixed') who = 'fixed size';
  else if (policy === 'smallest') who = 'smallest window';
  else if (policy === 'largest') who = 'largest window';
  else {
    const v = s.size_owner > 0 ? s.viewers.find((x) => x.id === s.size_owner) : undefined;
    mine = !!v && s.you > 0 && v.id === s.you;
    who = mine ? 'this tab' : v ? whoIs(v) : 'nobody';
  }
  const short = size ? `${size} · ${who}` : who;
  let long: string;
  if (policy === 'latest') {
    long = mine
      ? `The session is ${size || 'at its size'}, the size of this tab's window.`
      : `The session is ${size || 'at its size'}, ${who === 'nobody' ? 'a size no viewer holds' : `the size of ${who}`}: this tab draws at it.`;
  } else {
    long = `The session is ${size || 'at its size'} (size policy ${policy}): this tab draws at it.`;
  }
  return { short, long, mine };
}

/** What claim decides from. */
export interface ClaimState {
  policy?: string;
  owner: number;
  you: number;
  readOnly: boolean;
  /** active: this is the page's visible tab. */
  active: boolean;
  /** asked: this connection has already fit since the size was last held. */
  asked: boolean;
}

/** claim says whether the page takes the size by itself now: under latest, when nobody holds it. */
export function claim(c: ClaimState): boolean {
  if ((c.policy ?? 'latest') !== 'latest' || c.readOnly || !c.active || c.asked) return false;
  return c.you > 0 && c.owner === 0;
}

/**
 * followsWindow says whether a change of this tab's window takes the size
 * again: under latest, when the tab holds it and is on a desktop (coarse:
 * a touch screen, whose rotations and keyboards do not).
 */
export function followsWindow(s: SizeState, readOnly: boolean, coarse: boolean): boolean {
  return !coarse && followsText(s, readOnly);
}

/**
 * followsText says whether a change of this page's text size takes the
 * size again: under latest, when the page holds it. Unlike a rotation, a
 * pinch is asked for, and larger text at the same columns would only be
 * shrunk back to fit (fitplan.ts).
 */
export function followsText(s: SizeState, readOnly: boolean): boolean {
  if ((s.size_policy || 'latest') !== 'latest' || readOnly) return false;
  return s.you > 0 && s.size_owner === s.you;
}

/**
 * offersFit says whether "fit to this window" is offered: where the page
 * may take the size, unless it holds it already at its window's size (a
 * fit would change nothing, and the bar has no room to spare).
 */
export function offersFit(h: Holder | null, readOnly: boolean, want: { cols: number; rows: number } | null, cols: number, rows: number): boolean {
  if (!h || readOnly) return false;
  const same = !!want && want.cols > 0 && want.rows > 0 && want.cols === cols && want.rows === rows;
  return !(h.mine && same);
}

/** browserName is how this page calls itself to the other viewers: "Chrome on Linux". */
export function browserName(ua: string): string {
  const browser = /Edg\//.test(ua)
    ? 'Edge'
    : /Firefox\//.test(ua)
      ? 'Firefox'
      : /(Chrome|Chromium|CriOS)\//.test(ua)
        ? 'Chrome'
        : /Safari\//.test(ua)
          ? 'Safari'
          : 'A browser';
  const os = /iPhone/.test(ua)
    ? 'iPhone'
    : /iPad/.test(ua)
      ? 'iPad'
      : /Android/.test(ua)
        ? /Mobile/.test(ua)
          ? 'Android phone'
          : 'Android'
        : /CrOS/.test(ua)
          ? 'ChromeOS'
          : /Mac OS X|Macintosh/.test(ua)
            ? 'macOS'
            : /Windows/.test(ua)
              ? 'Windows'
              : /Linux/.test(ua)
                ? 'Linux'
                : '';
  return os ? `${browser} on ${os}` : browser;
}
