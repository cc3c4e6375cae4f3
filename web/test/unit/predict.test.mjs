// Predictive echo's decisions (web/src/predict.ts), against a small
// terminal that plays the server's echo. The decisions are the traces of
// internal/predict/testdata/traces.json, which the Go predictor
// (internal/predict) plays too: the page and attach cannot drift apart.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { load } from './load.mjs';

const { Predictor } = await load('predict.ts');

/** A terminal of cols columns: printable characters, BS, CR, LF, CSI C/D/K. */
class Term {
  constructor(cols = 40) {
    this.cols = cols;
    this.lines = new Map();
    this.row = 0;
    this.col = 0;
  }
  line(r) {
    if (!this.lines.has(r)) this.lines.set(r, Array(this.cols).fill(' '));
    return this.lines.get(r);
  }
  write(s) {
    for (let i = 0; i < s.length; i++) {
      const ch = s[i];
      if (ch === '\b') this.col = Math.max(0, this.col - 1);
      else if (ch === '\r') this.col = 0;
      else if (ch === '\n') this.row++;
      else if (ch === '\x1b') {
        const m = /^\x1b\[(\d*)([A-Za-z])/.exec(s.slice(i));
        const n = Number(m[1] || 1);
        if (m[2] === 'C') this.col = Math.min(this.cols - 1, this.col + n);
        if (m[2] === 'D') this.col = Math.max(0, this.col - n);
        if (m[2] === 'K') this.line(this.row).fill(' ', this.col);
        if (m[2] === 'H') [this.row, this.col] = [0, 0];
        i += m[0].length - 1;
      } else {
        this.line(this.row)[this.col] = ch;
        this.col = Math.min(this.cols - 1, this.col + 1);
      }
    }
    return this;
  }
  screen() {
    return { row: this.row, col: this.col, cols: this.cols, cell: (r, c) => this.line(r)[c] };
  }
}

const corpus = JSON.parse(readFileSync(new URL('../../../internal/predict/testdata/traces.json', import.meta.url), 'utf8'));

/** modesOf resolves a trace's modes: a name from the corpus, or an object over the prompt's. */
const modesOf = (m) => (typeof m === 'string' ? corpus.modes[m] : { ...corpus.modes.prompt, ...(m ?? {}) });

/** shown renders the predicted cells of row over the terminal's, as the page would draw them. */
function shown(p, t, row = 0) {
  const line = [...t.line(row)];
  for (const c of p.view().cells) if (c.row === row) line[c.col] = c.char;
  return line.join('').trimEnd();
}

/** play runs one trace, checking each expect step. */
function play(tr) {
  const p = new Predictor({ setting: tr.setting ?? 'auto' });
  if (tr.rtt !== null) p.setRtt(tr.rtt ?? 150);
  p.setModes(modesOf(tr.modes ?? 'prompt'));
  const t = new Term(tr.cols ?? 40).write(tr.screen ?? '$ ');
  tr.steps.forEach((s, i) => {
    const at = `${tr.name}, step ${i + 1}`;
    if ('key' in s) p.key(s.key, s.at, t.screen());
    else if ('keys' in s) s.keys.forEach((k, j) => p.key(k, s.at + j, t.screen()));
    else if ('write' in s) t.write(s.write);
    else if ('out' in s) p.screen(s.at, t.write(s.out).screen());
    else if ('tick' in s) p.tick(s.tick);
    else if ('modes' in s) p.setModes(modesOf(s.modes));
    else if ('rtt' in s) p.setRtt(s.rtt);
    else if ('prompt' in s) p.prompt();
    else if ('expect' in s) {
      const e = s.expect;
      const v = p.view();
      if ('shown' in e) assert.equal(shown(p, t, e.row ?? 0), e.shown, at);
      if ('cells' in e) {
        const cells = v.cells.map((c) => [c.row, c.col, c.char]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        assert.deepEqual(cells, e.cells, at);
      }
      if ('cursor' in e) assert.deepEqual(v.cursor && [v.cursor.row, v.cursor.col], e.cursor, at);
      for (const [k, n] of Object.entries(e.stats ?? {})) assert.equal(p.stats[k], n, `${at}: stats.${k}`);
      if ('deadline' in e) assert.equal(p.nextDeadline(), e.deadline, at);
      if ('corrections' in e) assert.deepEqual(p.corrections, e.corrections, at);
    } else assert.fail(`${at}: an unknown step ${JSON.stringify(s)}`);
  });
}

for (const tr of corpus.traces) test(tr.name, () => play(tr));

test('hostile screens and keys never throw nor predict into nonsense', () => {
  const p = new Predictor();
  p.setRtt(150);
  p.setModes(modesOf('prompt'));
  const t = new Term().write('$ ');
  const keys = ['a', '\x7f', '\x1b[D', '\x1b[C', '\x1bOD', '', '\x00', '\x1b', 'é', '\r', ' ', '\x1b[200~'];
  let now = 0;
  for (let i = 0; i < 2000; i++) {
    now += (i * 7919) % 40;
    const k = keys[(i * 31) % keys.length];
    p.key(k, now, t.screen());
    if (i % 3 === 0) p.screen(now, t.write(['x', 'a', '\b', '\r\n', '\x1b[K', '\x1b[H'][(i * 13) % 6]).screen());
    if (i % 5 === 0) p.tick(now);
    if (i % 97 === 0) p.setModes(modesOf(i % 2 ? 'prompt' : { shell: 'unknown' }));
    for (const c of p.view().cells) {
      assert.ok(c.col >= 0 && c.col < t.cols - 1 && c.char.length === 1, `cell ${JSON.stringify(c)}`);
    }
  }
  const s = p.stats;
  assert.ok(s.confirmed + s.wrong + s.late <= s.shown && s.shown <= s.keys, JSON.stringify(s));
});
