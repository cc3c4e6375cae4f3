// Predictive echo's decisions (web/src/predict.ts), against a small
// terminal that plays the server's echo.

import assert from 'node:assert/strict';
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

const prompt = { altScreen: false, mouse: false, termMode: { echo: false, canonical: false }, shell: 'prompt' };
const readline = prompt; // bash's line editor: the pty echoes nothing, the shell draws the line
const cooked = { ...prompt, termMode: { echo: true, canonical: true }, shell: 'unknown' }; // cat, dash: the pty echoes
const password = { ...prompt, termMode: { echo: false, canonical: true } };

/** setup: a predictor at a prompt "$ " with a round trip of rtt ms. */
function setup({ modes = prompt, rtt = 150, setting = 'auto', cols = 40 } = {}) {
  const p = new Predictor({ setting });
  p.setRtt(rtt);
  p.setModes(modes);
  const t = new Term(cols).write('$ ');
  return { p, t };
}

/** shown renders the predicted cells of row 0 over the terminal's, as the page would draw them. */
function shown(p, t, row = 0) {
  const line = [...t.line(row)];
  for (const c of p.view().cells) if (c.row === row) line[c.col] = c.char;
  return line.join('').trimEnd();
}

test('predictions show at a shell prompt above the threshold, and the echo confirms them', () => {
  const { p, t } = setup();
  p.key('l', 0, t.screen());
  p.key('s', 10, t.screen());
  assert.equal(shown(p, t), '$ ls');
  assert.deepEqual(p.view().cursor, { row: 0, col: 4 });
  p.screen(150, t.write('l').screen());
  assert.deepEqual(p.view().cells.map((c) => c.char), ['s']);
  p.screen(160, t.write('s').screen());
  assert.deepEqual(p.view(), { cells: [], cursor: null });
  assert.deepEqual(p.stats, { keys: 2, shown: 2, confirmed: 2, wrong: 0 });
});

test('when prediction is on', () => {
  const cases = [
    ['auto, 150 ms', { rtt: 150 }, '$ a'],
    ['auto, 31 ms', { rtt: 31 }, '$ a'],
    ['auto, exactly the threshold', { rtt: 30 }, '$'],
    ['auto, 5 ms (low latency)', { rtt: 5 }, '$'],
    ['auto, no round trip measured', { rtt: NaN }, '$'],
    ['always, 5 ms', { rtt: 5, setting: 'always' }, '$ a'],
    ['off, 300 ms', { rtt: 300, setting: 'off' }, '$'],
    ['the pty mode unknown (an older holder)', { modes: { ...prompt, termMode: null } }, '$'],
    ['a password prompt (echo off, line editing on)', { modes: password }, '$'],
    ['the alternate screen (vim)', { modes: { ...prompt, altScreen: true } }, '$'],
    ['mouse tracking', { modes: { ...prompt, mouse: true } }, '$'],
    ['a command running', { modes: { ...prompt, shell: 'running' } }, '$'],
    ['no shell integration, no confidence yet', { modes: { ...prompt, shell: 'unknown' } }, '$'],
  ];
  for (const [name, opts, want] of cases) {
    const { p, t } = setup(opts);
    p.key('a', 0, t.screen());
    assert.equal(shown(p, t), want, name);
  }
});

test('what is predicted: typing at the end of the line', () => {
  const cases = [
    // [name, modes, text on the line before, keys, what shows]
    ['a space', readline, '', [' ', 'x'], '$  x'],
    ['backspace over what was typed', readline, '', ['a', 'b', '\x7f'], '$ a'],
    ['backspace over the prompt', readline, '', ['\x7f'], '$'],
    ['backspace past what was typed', readline, '', ['a', '\x7f', '\x7f'], '$'],
    ['a control key', readline, '', ['\x03'], '$'],
    ['several characters at once (a paste, an IME)', readline, '', ['ab'], '$'],
    ['a bracketed paste', readline, '', ['\x1b[200~ls\x1b[201~'], '$'],
    ['a wide character', readline, '', ['漢'], '$'],
    ['in the middle of a line', readline, 'abc\x1b[2D', ['x'], '$ abc'],
  ];
  for (const [name, modes, before, keys, want] of cases) {
    const { p, t } = setup({ modes });
    t.write(before);
    keys.forEach((k, i) => p.key(k, i, t.screen()));
    assert.equal(shown(p, t), want, name);
  }
});

test('never into the last column: the wrap is the terminal\'s', () => {
  const { p, t } = setup({ cols: 4 });
  p.key('a', 0, t.screen());
  assert.equal(shown(p, t), '$ a');
  p.key('b', 1, t.screen());
  assert.equal(shown(p, t), '$ a', 'b would be in the last column');
});

test('arrows move the predicted cursor over what was typed, in a line editor only', () => {
  {
    const { p, t } = setup({ modes: readline });
    p.key('a', 0, t.screen());
    p.key('b', 1, t.screen());
    p.key('\x1b[D', 2, t.screen());
    assert.deepEqual(p.view().cursor, { row: 0, col: 3 });
    p.key('\x1b[C', 3, t.screen());
    assert.deepEqual(p.view().cursor, { row: 0, col: 4 });
    p.key('\x1b[C', 4, t.screen());
    assert.equal(p.stats.shown, 4, 'right past the end is not predicted');
    // The shell's echo: the characters, then the cursor left and right.
    p.screen(150, t.write('ab\b').screen());
    p.screen(151, t.write('\x1b[C').screen());
    assert.equal(p.stats.confirmed, 4);
    assert.equal(p.stats.wrong, 0);
  }
  {
    // The pty edits the line: it would echo ^[[D, not move the cursor.
    const { p, t } = setup({ modes: { ...cooked, shell: 'prompt' } });
    p.key('a', 0, t.screen());
    p.key('\x1b[D', 1, t.screen());
    assert.equal(p.view().cursor, null, 'the arrow is not predicted: where the cursor goes is not known');
    assert.equal(shown(p, t), '$ a');
  }
});

test('backspace is confirmed by the echo of BS SP BS', () => {
  const { p, t } = setup();
  for (const [i, k] of ['a', 'b', '\x7f'].entries()) p.key(k, i, t.screen());
  p.screen(150, t.write('ab').screen());
  assert.equal(shown(p, t), '$ a');
  p.screen(151, t.write('\b \b').screen());
  assert.deepEqual(p.stats, { keys: 3, shown: 3, confirmed: 3, wrong: 0 });
  assert.deepEqual(p.view(), { cells: [], cursor: null });
});

test('a mismatch is rolled back, and prediction pauses until the screen settles', () => {
  const { p, t } = setup();
  p.key('a', 0, t.screen());
  p.key('b', 1, t.screen());
  // The echo of something else: the program drew x where a was predicted.
  p.screen(150, t.write('x').screen());
  assert.equal(shown(p, t), '$ x');
  assert.equal(p.stats.wrong, 2);
  // More output keeps the pause going; typing meanwhile is not predicted.
  p.screen(300, t.write('y').screen());
  p.key('c', 350, t.screen());
  assert.equal(shown(p, t), '$ xy');
  assert.equal(p.stats.shown, 2);
  p.screen(500, t.write('c').screen()); // c's echo: output too
  // Still, for two round trips after the last output: predicted again.
  p.key('d', 500 + 2 * 150, t.screen());
  assert.equal(shown(p, t), '$ xycd');
});

test('an echo that does not come in time is rolled back, and a late one changes nothing', () => {
  const { p, t } = setup();
  p.key('a', 0, t.screen());
  assert.equal(p.nextDeadline(), 1.5 * 150 + 250);
  p.tick(100);
  assert.equal(shown(p, t), '$ a', 'not overdue yet');
  p.tick(p.nextDeadline());
  assert.equal(shown(p, t), '$');
  assert.equal(p.stats.wrong, 1);
  assert.equal(p.nextDeadline(), null);
  p.screen(600, t.write('a').screen()); // the late echo
  assert.equal(shown(p, t), '$ a');
  assert.deepEqual(p.stats, { keys: 1, shown: 1, confirmed: 0, wrong: 1 });
});

test('a password prompt mid-typing drops what is shown and predicts nothing more', () => {
  const { p, t } = setup();
  p.key('a', 0, t.screen());
  p.setModes(password);
  assert.deepEqual(p.view(), { cells: [], cursor: null });
  p.key('s', 10, t.screen());
  p.key('3', 20, t.screen());
  assert.equal(shown(p, t), '$');
  assert.equal(p.stats.wrong, 0, 'dropped, not wrong');
  // Echo on again, back at the prompt, once the keys typed meanwhile are overdue.
  p.setModes(prompt);
  p.key('z', 20 + 1.5 * 150 + 250, t.screen());
  assert.equal(shown(p, t), '$ z');
});

test('the alternate screen, mid-typing, drops the predictions', () => {
  const { p, t } = setup();
  p.key('v', 0, t.screen());
  p.setModes({ ...prompt, altScreen: true });
  assert.deepEqual(p.view().cells, []);
  p.key('i', 1, t.screen());
  assert.deepEqual(p.view().cells, []);
});

test('a paste after predictions: they are checked by their cells, then prediction waits for the screen', () => {
  const { p, t } = setup();
  p.key('a', 0, t.screen());
  p.key('\x1b[200~echo hi\x1b[201~', 1, t.screen());
  assert.equal(p.view().cursor, null, 'the cursor after the paste is not predicted');
  p.key('b', 2, t.screen());
  assert.equal(shown(p, t), '$ a', 'nothing predicted after the paste until its effect is seen');
  p.screen(150, t.write('aecho hi').screen());
  assert.equal(p.stats.confirmed, 1);
  p.key('c', 160, t.screen());
  assert.equal(shown(p, t), '$ aecho hic');
});

test('the cursor moved by the program rolls back', () => {
  const { p, t } = setup();
  p.key('a', 0, t.screen());
  p.screen(50, t.write('\r\n').screen()); // the program printed a line
  assert.deepEqual(p.view().cells, []);
  assert.equal(p.stats.wrong, 1);
});

test('the round trip dropping below the threshold: no new prediction, the pending ones still confirmed', () => {
  const { p, t } = setup();
  p.key('a', 0, t.screen());
  p.setRtt(10);
  p.key('b', 1, t.screen());
  assert.equal(shown(p, t), '$ a');
  assert.equal(p.view().cursor, null, 'b moves the cursor: not predicted');
  p.screen(20, t.write('ab').screen());
  assert.deepEqual(p.stats, { keys: 2, shown: 1, confirmed: 1, wrong: 0 });
  p.key('c', 30, t.screen());
  assert.equal(shown(p, t), '$ ab');
});

test('without shell integration, confidence is earned by keys echoed as predicted', () => {
  const { p, t } = setup({ modes: cooked });
  const type = (k, now) => {
    p.key(k, now, t.screen());
    const s = shown(p, t);
    p.screen(now + 150, t.write(k === '\r' ? '\r\n' : k).screen());
    return s;
  };
  assert.equal(type('a', 0), '$');
  assert.equal(type('b', 200), '$ a');
  assert.equal(type('c', 400), '$ ab');
  assert.equal(type('d', 600), '$ abcd', 'three echoed as predicted: shown');
  assert.deepEqual(p.stats, { keys: 4, shown: 1, confirmed: 1, wrong: 0 });
  // A new line: the next program may not echo; one key must echo first.
  type('\r', 800);
  p.key('e', 1000, t.screen());
  assert.deepEqual(p.view().cells, [], 'tentative after a new line');
  p.screen(1150, t.write('e').screen());
  p.key('f', 1200, t.screen());
  assert.equal(shown(p, t, 1), 'ef');
  // A mismatch takes all the confidence away.
  p.screen(1350, t.write('X').screen());
  p.key('g', 1350 + 300, t.screen());
  assert.equal(shown(p, t, 1), 'eX');
});

test('hostile screens and keys never throw nor predict into nonsense', () => {
  const { p, t } = setup();
  const keys = ['a', '\x7f', '\x1b[D', '\x1b[C', '\x1bOD', '', '\x00', '\x1b', 'é', '\r', ' ', '\x1b[200~'];
  let now = 0;
  for (let i = 0; i < 2000; i++) {
    now += (i * 7919) % 40;
    const k = keys[(i * 31) % keys.length];
    p.key(k, now, t.screen());
    if (i % 3 === 0) p.screen(now, t.write(['x', 'a', '\b', '\r\n', '\x1b[K', '\x1b[H'][(i * 13) % 6]).screen());
    if (i % 5 === 0) p.tick(now);
    if (i % 97 === 0) p.setModes(i % 2 ? prompt : { ...prompt, shell: 'unknown' });
    for (const c of p.view().cells) {
      assert.ok(c.col >= 0 && c.col < t.cols - 1 && c.char.length === 1, `cell ${JSON.stringify(c)}`);
    }
  }
  const s = p.stats;
  assert.ok(s.confirmed + s.wrong <= s.shown && s.shown <= s.keys, JSON.stringify(s));
});

test('after Enter at a prompt, typing is not shown until the shell draws its next prompt', () => {
  const { p, t } = setup();
  p.key('l', 0, t.screen());
  p.screen(150, t.write('l').screen());
  p.key('\r', 200, t.screen()); // the command may read a password: its mode is not known yet
  p.key('x', 210, t.screen());
  assert.deepEqual(p.view().cells, [], 'typed after Enter, before the prompt');
  p.screen(400, t.write('\r\n$ ').screen());
  p.prompt();
  p.key('y', 900, t.screen());
  assert.deepEqual(p.view().cells.map((c) => c.char), ['y']);
});

test('a typed space is not confirmed by its blank cell alone after Enter', () => {
  const { p, t } = setup();
  for (const [i, k] of ['a', ' ', 'b'].entries()) p.key(k, i, t.screen());
  p.key('\r', 3, t.screen()); // the cursor after the pending ones is no longer checked
  p.screen(150, t.write('a').screen());
  p.screen(155, t.screen()); // more output drawn, none of it the echo
  p.screen(160, t.write(' ').screen());
  p.screen(170, t.write('b').screen());
  assert.deepEqual(p.stats, { keys: 4, shown: 3, confirmed: 3, wrong: 0 });
});

test('the pause after a rollback ends once the screen has settled: later output does not bring it back', () => {
  const { p, t } = setup();
  p.key('a', 0, t.screen());
  p.screen(150, t.write('x').screen()); // contradicted: paused for two round trips
  p.key('b', 150 + 2 * 150, t.screen());
  assert.equal(shown(p, t), '$ xb', 'settled: predicted again');
  p.screen(600, t.write('b').screen());
  // The echo of a key predicted after the pause is output too: it must not pause again.
  p.key('c', 610, t.screen());
  assert.equal(shown(p, t), '$ xbc');
  assert.deepEqual(p.stats, { keys: 3, shown: 3, confirmed: 1, wrong: 1 });
});

test('after a new line, confidence counts only echoes of keys typed after it', () => {
  const { p, t } = setup({ modes: cooked });
  let now = 0;
  for (const k of 'abc') {
    p.key(k, now, t.screen());
    p.screen(now + 150, t.write(k).screen());
    now += 200;
  }
  // Typed quickly: the echo of d, e and Enter comes after the Enter was typed.
  p.key('d', now, t.screen());
  p.key('e', now + 1, t.screen());
  p.key('\r', now + 2, t.screen());
  p.screen(now + 150, t.write('de\r\n').screen());
  // A password prompt the pty's mode has not reported yet: nothing may show before a key of the new line echoed.
  p.key('s', now + 300, t.screen());
  assert.deepEqual(p.view().cells, [], 'confirmations of the old line earn nothing for the new one');
});

test('echoes slower than the expiry make the next predictions wait longer, not roll back each time', () => {
  const { p, t } = setup();
  p.key('a', 0, t.screen());
  const first = p.nextDeadline();
  p.tick(first); // the echo is late: rolled back
  assert.equal(p.stats.wrong, 1);
  p.screen(900, t.write('a').screen()); // it comes, 900 ms after the key
  const at = 900 + 2 * 150;
  p.key('b', at, t.screen());
  assert.ok(p.nextDeadline() - at > 900, `a deadline ${p.nextDeadline() - at} ms after the key, under the slow echo's 900 ms`);
  p.tick(at + 899);
  p.screen(at + 900, t.write('b').screen());
  assert.deepEqual(p.stats, { keys: 2, shown: 2, confirmed: 1, wrong: 1 });
});

test('each shown prediction rolled back records how long it was shown, for the bench', () => {
  const { p, t } = setup();
  p.key('a', 0, t.screen());
  p.key('b', 20, t.screen());
  p.screen(160, t.write('x').screen()); // contradicted 160 and 140 ms after they showed
  assert.deepEqual(p.corrections, [160, 140]);
  // Tentative ones (shown to none) are not corrections.
  const q = setup({ modes: cooked });
  q.p.key('a', 0, q.t.screen());
  q.p.tick(10000);
  assert.deepEqual(q.p.corrections, []);
});

test('after Enter at a prompt, confidence earned on the line does not show what is typed next', () => {
  const { p, t } = setup();
  let now = 0;
  for (const k of 'ls -l') {
    p.key(k, now, t.screen());
    p.screen(now + 150, t.write(k).screen());
    now += 200;
  }
  assert.equal(p.stats.confirmed, 5);
  p.key('\r', now, t.screen()); // the command may read a password; the page does not know yet
  p.key('s', now + 10, t.screen());
  assert.deepEqual(p.view().cells, [], 'shown after Enter, before the next prompt');
});

test('a key typed less than a round trip ago is not confirmed by a screen that only looks as if it were', () => {
  // a, b, then two backspaces: after a, b and one backspace the cells and
  // the cursor are as after a alone, which the echo of a shows first.
  const { p, t } = setup();
  p.key('a', 0, t.screen());
  p.key('b', 100, t.screen());
  p.key('\x7f', 120, t.screen());
  p.key('\x7f', 140, t.screen());
  p.screen(150, t.write('a').screen());
  assert.equal(p.stats.confirmed, 1, 'b and a backspace confirmed before their echo could come');
  p.screen(250, t.write('b').screen());
  p.screen(270, t.write('\b \b').screen());
  p.screen(290, t.write('\b \b').screen());
  assert.deepEqual(p.stats, { keys: 4, shown: 4, confirmed: 4, wrong: 0 });
});

test('an echo sooner than the round trip measured (the link got faster) still confirms', () => {
  const { p, t } = setup({ rtt: 300 });
  p.key('a', 0, t.screen());
  p.key('b', 10, t.screen());
  p.screen(100, t.write('ab').screen());
  assert.deepEqual(p.stats, { keys: 2, shown: 2, confirmed: 2, wrong: 0 });
});

test('after a key it could not predict, nothing is predicted from the old cursor until its effect can be seen', () => {
  const { p, t } = setup();
  t.write('ab'); // typed before: not on the predictor's line
  p.key('\x1b[D', 0, t.screen()); // left over text it did not see typed: not predicted
  p.key('x', 10, t.screen());
  assert.deepEqual(p.view().cells, [], 'x predicted where the cursor was before the arrow');
  p.screen(150, t.write('\b').screen()); // the arrow's effect
  p.key('x', 160, t.screen());
  assert.deepEqual(p.view().cells, [], 'in the middle of the line: not predicted');
  // A key with no visible effect: predicting again once its echo is overdue.
  const q = setup();
  q.t.write('ab');
  q.p.key('\x1b[D', 0, q.t.screen());
  q.p.key('c', 1.5 * 150 + 250, q.t.screen());
  assert.equal(q.p.stats.shown, 1);
});

test('focus reports are not keys', () => {
  const { p, t } = setup();
  p.key('\x1b[I', 0, t.screen());
  p.key('\x1b[O', 1, t.screen());
  p.key('a', 2, t.screen());
  assert.deepEqual(p.stats, { keys: 1, shown: 1, confirmed: 0, wrong: 0 });
});

test('after Ctrl+U at a prompt, typing is shown again on the same line; after Ctrl+C, not before the next prompt', () => {
  for (const [key, erase] of [
    ['\x15', '\b\b\x1b[K'], // Ctrl+U: the line editor kills the line
    ['\x17', '\b\b\x1b[K'], // Ctrl+W: the word
  ]) {
    const { p, t } = setup();
    p.key('l', 0, t.screen());
    p.key('s', 10, t.screen());
    p.screen(150, t.write('ls').screen());
    p.key(key, 200, t.screen());
    p.screen(350, t.write(erase).screen()); // its effect: still at the prompt, no new one
    p.key('p', 400, t.screen());
    assert.equal(shown(p, t), '$ p', `after ${JSON.stringify(key)}, typing on the same line`);
  }
  // Ctrl+C ends the line: a command may run before the next prompt.
  const { p, t } = setup();
  p.key('l', 0, t.screen());
  p.screen(150, t.write('l').screen());
  p.key('\x03', 200, t.screen());
  p.screen(350, t.write('^C\r\n').screen());
  p.key('p', 400, t.screen());
  assert.deepEqual(p.view().cells, [], 'after Ctrl+C, before the next prompt');
});
