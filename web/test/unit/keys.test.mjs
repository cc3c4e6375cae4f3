// The extra-keys row's encoder (web/src/keys.ts): the bytes each key sends,
// with and without the latched Ctrl and Alt, in both cursor-key modes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { encodeKey, latched, terminalGets, isTabModeKey } = await load('keys.ts');

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

const key = (over) => ({ key: 'a', code: 'KeyA', ctrlKey: false, shiftKey: false, altKey: false, metaKey: false, ...over });

test('terminalGets: copy, paste and (with Ctrl+Shift+M) Tab go to the browser', () => {
  const tab = key({ key: 'Tab', code: 'Tab' });
  const cases = [
    ['a letter', key(), false, true],
    ['Ctrl+Shift+C', key({ key: 'C', code: 'KeyC', ctrlKey: true, shiftKey: true }), false, false],
    ['Ctrl+Shift+V', key({ key: 'V', code: 'KeyV', ctrlKey: true, shiftKey: true }), false, false],
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
