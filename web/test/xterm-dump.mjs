#!/usr/bin/env node
// xterm-dump: the reference the screen model is tested against.
//
// It feeds recorded terminal byte streams to xterm.js (@xterm/headless with
// the Unicode 11 width tables, as the browser UI uses it) and prints, for
// each case, the terminal's state as one line of JSON in the Dump form of
// internal/screen/dump.go. internal/screen/xterm_test.go runs it once for a
// whole corpus (node starts slowly) and compares the model with it.
//
// Usage:
//   node web/test/xterm-dump.mjs CASE.json...
//   echo '["CASE.json", ...]' | node web/test/xterm-dump.mjs
//
// A case is a JSON file:
//   {"cols": 80, "rows": 24,
//    "resizes": [{"at": BYTE_OFFSET, "cols": C, "rows": R}],  // optional
//    "chunks": [N, ...],        // optional: the sizes of the pty reads
//    "bin": "other.bin",        // optional: the bytes, relative to the case
//    "source": "how it was recorded"}
// with its bytes in the file of the same name ending in .bin (or "bin").
// The bytes are written in the recorded chunks, split further at every
// resize offset; a resize at offset N is applied after bytes [0, N) have
// been parsed. internal/screen/corpus_test.go splits them the same way.
//
// Output: one line per case, in the order given. A case that cannot be read
// ends the program with status 1 and a message on stderr.
//
// One private field is read: the cursor's visibility (DECTCEM, ?25) is not
// in xterm.js's public API, so it comes from
// terminal._core.coreService.isCursorHidden (@xterm/headless 6.0.0). The
// dumper checks that the field exists and stops with an error if an
// upgrade removes it, rather than report a cursor that is always visible.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';

// Both packages are CommonJS bundles without named ES exports.
const require = createRequire(import.meta.url);
const { Terminal } = require('@xterm/headless');
const { Unicode11Addon } = require('@xterm/addon-unicode11');

function loadCase(path) {
  const spec = JSON.parse(readFileSync(path, 'utf8'));
  for (const k of ['cols', 'rows']) {
    if (!Number.isInteger(spec[k]) || spec[k] < 1) {
      throw new Error(`${path}: "${k}" must be a positive integer`);
    }
  }
  const binPath = spec.bin
    ? resolve(dirname(path), spec.bin)
    : path.replace(/\.json$/, '') + '.bin';
  const data = new Uint8Array(readFileSync(binPath));
  return { path, spec, data };
}

// steps turns a case into the writes and resizes to apply, in order.
function steps({ path, spec, data }) {
  const cuts = new Set();
  let off = 0;
  for (const n of spec.chunks ?? []) {
    off += n;
    cuts.add(off);
  }
  if (spec.chunks && off !== data.length) {
    throw new Error(`${path}: chunks add up to ${off}, the bytes are ${data.length}`);
  }
  const resizes = spec.resizes ?? [];
  for (const r of resizes) {
    if (!(r.at >= 0 && r.at <= data.length)) {
      throw new Error(`${path}: resize at ${r.at} is outside the ${data.length} bytes`);
    }
    cuts.add(r.at);
  }
  cuts.add(data.length);
  const out = [];
  let start = 0;
  let ri = 0;
  for (const end of [...cuts].sort((a, b) => a - b)) {
    if (end > start) {
      out.push({ write: data.subarray(start, end) });
      start = end;
    }
    for (; ri < resizes.length && resizes[ri].at === end; ri++) {
      out.push({ resize: resizes[ri] });
    }
  }
  return out;
}

function write(term, bytes) {
  return new Promise((done) => term.write(bytes, done));
}

function color(cell, fg) {
  if (fg ? cell.isFgDefault() : cell.isBgDefault()) return '';
  const v = fg ? cell.getFgColor() : cell.getBgColor();
  if (fg ? cell.isFgPalette() : cell.isBgPalette()) return 'p' + v;
  return '#' + v.toString(16).padStart(6, '0');
}

// The order of Dump's attribute letters "bdiukrhso".
const attrs = [
  ['b', 'isBold'], ['d', 'isDim'], ['i', 'isItalic'], ['u', 'isUnderline'],
  ['k', 'isBlink'], ['r', 'isInverse'], ['h', 'isInvisible'],
  ['s', 'isStrikethrough'], ['o', 'isOverline'],
];

function dumpLine(buf, y, cols) {
  const line = buf.getLine(y);
  const c = [];
  const cell = buf.getNullCell();
  for (let x = 0; x < cols; x++) {
    if (!line || !line.getCell(x, cell)) {
      c.push({ ch: '', w: 1 });
      continue;
    }
    const d = { ch: cell.getChars(), w: cell.getWidth() };
    const fg = color(cell, true);
    const bg = color(cell, false);
    let f = '';
    for (const [letter, fn] of attrs) if (cell[fn]()) f += letter;
    if (fg) d.fg = fg;
    if (bg) d.bg = bg;
    if (f) d.f = f;
    c.push(d);
  }
  const out = { c };
  if (line && line.isWrapped) out.w = true;
  return out;
}

async function dumpCase(kase) {
  const { spec } = kase;
  const term = new Terminal({
    cols: spec.cols,
    rows: spec.rows,
    scrollback: 100000,
    allowProposedApi: true,
  });
  term.loadAddon(new Unicode11Addon());
  term.unicode.activeVersion = '11';
  let title = '';
  term.onTitleChange((t) => { title = t; });

  for (const s of steps(kase)) {
    if (s.write) await write(term, s.write);
    else term.resize(s.resize.cols, s.resize.rows);
  }
  await write(term, new Uint8Array(0));

  const core = term._core;
  if (!core || !core.coreService || typeof core.coreService.isCursorHidden !== 'boolean') {
    throw new Error('xterm.js no longer has _core.coreService.isCursorHidden: update the dumper');
  }
  const active = term.buffer.active;
  const normal = term.buffer.normal;
  const cols = term.cols;
  const rows = term.rows;
  const m = term.modes;
  const dump = {
    cols,
    rows,
    cursor: {
      x: Math.min(active.cursorX, cols - 1),
      y: active.cursorY,
      visible: !core.coreService.isCursorHidden,
    },
    alt: active.type === 'alternate',
    title,
    modes: {
      applicationCursorKeys: m.applicationCursorKeysMode,
      wraparound: m.wraparoundMode,
      insert: m.insertMode,
      origin: m.originMode,
      bracketedPaste: m.bracketedPasteMode,
      sendFocus: m.sendFocusMode,
      mouseTracking: m.mouseTrackingMode,
    },
    // Dump's scrollback is the normal buffer's (the alternate buffer has
    // none), also while the alternate buffer is shown.
    scrollback: [],
    screen: [],
  };
  for (let y = 0; y < normal.baseY; y++) dump.scrollback.push(dumpLine(normal, y, cols));
  for (let y = 0; y < rows; y++) dump.screen.push(dumpLine(active, active.baseY + y, cols));
  term.dispose();
  return dump;
}

async function main() {
  let paths = process.argv.slice(2);
  if (paths.length === 0) {
    paths = JSON.parse(readFileSync(0, 'utf8'));
    if (!Array.isArray(paths)) throw new Error('stdin must hold a JSON list of case files');
  }
  for (const p of paths) {
    const dump = await dumpCase(loadCase(p));
    // One write per case; a large one must drain before the next case.
    const line = JSON.stringify(dump) + '\n';
    if (!process.stdout.write(line)) {
      await new Promise((done) => process.stdout.once('drain', done));
    }
  }
}

main().catch((err) => {
  process.stderr.write(`xterm-dump: ${err.message}\n`);
  process.exit(1);
});
