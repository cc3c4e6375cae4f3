// The extra-keys row's encoder (web/src/keys.ts): the bytes each key sends,
// with and without the latched Ctrl and Alt, in both cursor-key modes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { encodeKey, latched, parseKeys, keyLabel, tapMod, usedMod, DOUBLE_TAP_MS, MAX_EXTRA_KEYS, terminalGets, isTabModeKey } = await load('keys.ts');

const none = { ctrl: false, alt: false };
const ctrl = { ctrl: true, alt: false };
const alt = { ctrl: false, alt: true };
const both = { ctrl: true, alt: true };

test('encodeKey: the row\'s keys as the terminal expects them', () => {
  const cases = [
    // key, latches, application cursor mode, data, latches used
    ['up', none, false, '\x1b[A', false],
    ['down', none, false, '\x1b[B', false],
    ['right', none, false, '\x1b[C', false],
    ['left', none, false, '\x1b[D', false],
    ['up', none, true, '\x1bOA', false],
    ['left', none, true, '\x1bOD', false],
    ['up', alt, false, '\x1b[1;3A', true],
    ['right', ctrl, true, '\x1b[1;5C', true], // a modifier wins over SS3
    ['down', both, false, '\x1b[1;7B', true],
    ['esc', none, false, '\x1b', false],
    ['esc', ctrl, false, '\x1b', false], // Esc and Tab keep the latches for the next key
    ['tab', none, false, '\t', false],
    ['tab', alt, false, '\t', false],
    ['c', ctrl, false, '\x03', true],
    ['x', alt, false, '\x1bx', true],
    ['a', none, false, 'a', false],
    // hostile: names of Object's own properties are not arrows
    ['constructor', none, false, 'constructor', false],
    ['__proto__', none, false, '__proto__', false],
    ['toString', ctrl, false, 'toString', true],
    ['hasOwnProperty', none, false, 'hasOwnProperty', false],
    // the keys a user may add, as xterm sends them
    ['home', none, false, '\x1b[H', false],
    ['end', none, true, '\x1bOF', false],
    ['home', ctrl, true, '\x1b[1;5H', true],
    ['pgup', none, false, '\x1b[5~', false],
    ['pgdn', alt, false, '\x1b[6;3~', true],
    ['ins', none, false, '\x1b[2~', false],
    ['del', both, false, '\x1b[3;7~', true],
    ['f1', none, false, '\x1bOP', false],
    ['f4', none, true, '\x1bOS', false],
    ['f2', ctrl, false, '\x1b[1;5Q', true],
    ['f5', none, false, '\x1b[15~', false],
    ['f11', none, false, '\x1b[23~', false],
    ['f12', ctrl, false, '\x1b[24;5~', true],
    ['f13', none, false, 'f13', false], // not a key: typed as text
  ];
  for (const [key, l, app, data, used] of cases) {
    assert.deepEqual(encodeKey(key, l, app), { data, used }, `${key} ctrl=${l.ctrl} alt=${l.alt} app=${app}`);
  }
});

test('latched: Ctrl makes control characters, Alt prefixes ESC', () => {
  const cases = [
    ['a', none, 'a', false],
    ['a', ctrl, '\x01', true],
    ['A', ctrl, '\x01', true],
    ['z', ctrl, '\x1a', true],
    ['@', ctrl, '\x00', true],
    ['[', ctrl, '\x1b', true],
    ['_', ctrl, '\x1f', true],
    [' ', ctrl, '\x00', true],
    ['2', ctrl, '\x00', true],
    ['?', ctrl, '\x7f', true],
    ['1', ctrl, '1', true], // no control form: as typed, latch released
    ['é', ctrl, 'é', true],
    ['ab', ctrl, 'ab', true], // a paste: not one character
    ['', ctrl, '', true],
    ['c', both, '\x1b\x03', true],
    ['x', alt, '\x1bx', true],
    ['hello', alt, '\x1bhello', true],
    ['\x1b[A', none, '\x1b[A', false],
  ];
  for (const [d, l, data, used] of cases) assert.deepEqual(latched(d, l), { data, used }, JSON.stringify([d, l]));
});

test('parseKeys: names and single characters, each once; the rest said', () => {
  const cases = [
    // text, keys, bad
    ['', [], []],
    ['   \t\n ', [], []],
    ['PgUp F5 @', ['pgup', 'f5', '@'], []],
    ['pageup PAGEDOWN Insert delete escape', ['pgup', 'pgdn', 'ins', 'del', 'esc'], []],
    ['~ | / -', ['~', '|', '/', '-'], []],
    ['~ ~ PgUp pgup', ['~', 'pgup'], []], // each once
    ['😀 é', ['😀', 'é'], []], // one character is one code point, not one UTF-16 unit
    ['PgUp Bogus F5', ['pgup', 'f5'], ['Bogus']],
    ['ctrl alt up', [], ['ctrl', 'alt', 'up']], // the row has them already
    ['ab', [], ['ab']],
    ['F13 F0 f-1', [], ['F13', 'F0', 'f-1']],
    ['\x00 \x1b \u200b \u00a0', [], ['\x00', '\x1b', '\u200b']], // control and invisible characters; NBSP is a separator
    ['constructor __proto__ toString', [], ['constructor', '__proto__', 'toString']],
    ['x'.repeat(100), [], ['x'.repeat(24) + '…']],
    ['a b c d e f g h i j k l m n', 'abcdefghijkl'.split(''), ['more than 12 keys']],
  ];
  for (const [text, keys, bad] of cases) assert.deepEqual(parseKeys(text), { keys, bad }, JSON.stringify(text));
});

test('parseKeys: any text gives keys the encoder and labels take, never more than the bound', () => {
  // A seeded generator, so a failure is the same input every run.
  let seed = 7;
  const rnd = (n) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  const alphabet = ['PgUp', 'f', '1', ' ', '\t', '\x00', '\x1b', '😀', '\ud800', 'é', 'Home', '__proto__', '~', '|', 'x', '  '];
  for (let i = 0; i < 3000; i++) {
    let text = '';
    for (let n = rnd(20); n > 0; n--) text += alphabet[rnd(alphabet.length)];
    const { keys, bad } = parseKeys(text);
    assert.ok(keys.length <= MAX_EXTRA_KEYS, JSON.stringify(text));
    assert.equal(new Set(keys).size, keys.length, JSON.stringify(text));
    for (const k of keys) {
      assert.ok(keyLabel(k).length > 0);
      const enc = encodeKey(k, none, false);
      assert.ok(typeof enc.data === 'string' && enc.data.length > 0, JSON.stringify(k));
      assert.ok(!/[\x00-\x08\x0a-\x1a\x1c-\x1f]/.test(enc.data), `${JSON.stringify(k)} sends no control character but ESC and Tab`);
    }
    for (const b of bad) assert.ok(typeof b === 'string' && b.length > 0);
  }
});

test('tapMod: a tap is once, a quick second tap locks, the next tap releases', () => {
  const off = { state: 'off', at: 0 };
  const cases = [
    // from, tapped at, to
    [off, 1000, 'once'],
    [{ state: 'once', at: 1000 }, 1000 + DOUBLE_TAP_MS, 'locked'],
    [{ state: 'once', at: 1000 }, 1200, 'locked'],
    [{ state: 'once', at: 1000 }, 1001 + DOUBLE_TAP_MS, 'off'], // too slow: a second tap takes it off
    [{ state: 'once', at: 1000 }, 900, 'off'], // the clock went back: not a double tap
    [{ state: 'once', at: 1000 }, NaN, 'off'],
    [{ state: 'locked', at: 1000 }, 1100, 'off'],
    [{ state: 'locked', at: 1000 }, 99999, 'off'],
  ];
  for (const [from, now, to] of cases) assert.equal(tapMod(from, now).state, to, `${from.state}@${from.at} tapped at ${now}`);
  assert.deepEqual(usedMod({ state: 'once', at: 5 }), { state: 'off', at: 5 });
  assert.deepEqual(usedMod({ state: 'locked', at: 5 }), { state: 'locked', at: 5 });
  assert.deepEqual(usedMod(off), off);
});

const key = (over) => ({ key: 'a', code: 'KeyA', ctrlKey: false, shiftKey: false, altKey: false, metaKey: false, ...over });

test('terminalGets: copy, paste and (with Ctrl+Shift+M) Tab go to the browser', () => {
  const tab = key({ key: 'Tab', code: 'Tab' });
  const cases = [
    ['a letter', key(), false, true],
    ['Ctrl+Shift+C', key({ key: 'C', code: 'KeyC', ctrlKey: true, shiftKey: true }), false, false],
    ['Ctrl+Shift+V', key({ key: 'V', code: 'KeyV', ctrlKey: true, shiftKey: true }), false, false],
    ['Ctrl+Shift+Alt+V, the raw paste', key({ key: 'V', code: 'KeyV', ctrlKey: true, shiftKey: true, altKey: true }), false, false],
    ['Ctrl+C', key({ key: 'c', code: 'KeyC', ctrlKey: true }), false, true],
    ['Ctrl+Alt+Shift+C', key({ key: 'C', code: 'KeyC', ctrlKey: true, shiftKey: true, altKey: true }), false, true],
    ['Tab', tab, false, true],
    ['Tab, Tab moves', tab, true, false],
    ['Shift+Tab, Tab moves', { ...tab, shiftKey: true }, true, false],
    ['Ctrl+Tab, Tab moves', { ...tab, ctrlKey: true }, true, true],
    ['Alt+Tab, Tab moves', { ...tab, altKey: true }, true, true],
    ['a letter, Tab moves', key(), true, true],
    ['a layout whose Tab key has another name', key({ key: 'Unidentified', code: 'Tab' }), true, true],
  ];
  for (const [name, e, moves, want] of cases) assert.equal(terminalGets(e, moves), want, name);
});

test('isTabModeKey is Ctrl+Shift+M (Cmd on a Mac) and nothing else', () => {
  assert.equal(isTabModeKey(key({ key: 'M', code: 'KeyM', ctrlKey: true, shiftKey: true })), true);
  assert.equal(isTabModeKey(key({ key: 'M', code: 'KeyM', metaKey: true, shiftKey: true })), true);
  assert.equal(isTabModeKey(key({ key: 'm', code: 'KeyM', ctrlKey: true })), false); // Ctrl+M is Enter to the shell
  assert.equal(isTabModeKey(key({ key: 'M', code: 'KeyM', ctrlKey: true, shiftKey: true, altKey: true })), false);
  assert.equal(isTabModeKey(key({ key: 'M', code: 'KeyM', shiftKey: true })), false);
});
