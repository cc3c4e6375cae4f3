// The paste sanitizer: what a paste may carry into a terminal. The list
// of control characters it keeps is internal/keys/paste.json, which the
// server's sanitizer (send, the API) reads too, and both are held to one
// table of cases (internal/keys/testdata/paste_cases.json). Pure (no
// DOM), tested under node (test/unit).

import table from '../../internal/keys/paste.json';

const START = '\x1b[200~';
const END = '\x1b[201~';

const allowed = new Set<string>(table.allowed_controls);

/** isControl: a C0 control character, DEL or a C1 control character. */
function isControl(c: number): boolean {
  return c < 0x20 || c === 0x7f || (c >= 0x80 && c <= 0x9f);
}

/**
 * sanitizePaste is text as a paste may carry it: without the
 * bracketed-paste marks (removed whole, again until none is left, so that
 * removing one cannot make another) and without any control character
 * paste.json does not allow. Its ESC gone, no escape sequence survives.
 */
export function sanitizePaste(text: string): string {
  while (text.includes(END) || text.includes(START)) text = text.split(END).join('').split(START).join('');
  let out = '';
  for (const ch of text) {
    if (!isControl(ch.charCodeAt(0)) || allowed.has(ch)) out += ch;
  }
  return out;
}
