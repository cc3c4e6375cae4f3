// When a tab says its session went quiet (web/src/quiet.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { quietNote } = await load('quiet.ts');

const Q = '2026-11-26T03:10:54Z';
// A shell with shell integration, back at its prompt after `make` (output
// up to 900), the page caught up at 1000, the user last looking at 500.
const base = {
  running: true,
  watched: false,
  quietSince: Q,
  endOffset: 1000,
  written: 1000,
  drawn: 1000,
  seen: 500,
  shell: { state: 'prompt', last: { has_output: true, output_end: 900, status: 0, command: 'make' } },
};
const plain = { ...base, shell: { state: 'unknown' } };

test('quietNote: only what the user has not seen', () => {
  const cases = [
    ['a command finished while away', base, 'done'],
    ['failed while away', { ...base, shell: { state: 'prompt', last: { ...base.shell.last, status: 2 } } }, 'done'],
    ['finished before the user looked', { ...base, seen: 950 }, null],
    ['finished exactly where the user looked', { ...base, seen: 900 }, null],
    ['the tab is watched', { ...base, watched: true }, null],
    ['ended', { ...base, running: false }, null],
    ['a command still running', { ...base, shell: { state: 'running', last: base.shell.last } }, null],
    ['at a prompt, no command ever run', { ...base, shell: { state: 'prompt', last: null } }, null],
    ['a command whose start was not seen', { ...base, shell: { state: 'prompt', last: { ...base.shell.last, has_output: false } } }, null],
    // A brand-new blank session, a backlog being drawn.
    ['never printed (end_offset 0)', { ...plain, endOffset: 0, written: 0, drawn: 0, seen: 0 }, null],
    ['nothing received yet', { ...plain, written: null, drawn: 0, seen: 0 }, null],
    ['still drawing a backlog', { ...plain, written: 1000, drawn: 10, seen: 0 }, null],
    // Without shell integration: output that stopped while away.
    ['printed while away, then quiet', plain, 'quiet'],
    ['quiet, but nothing new since the user looked', { ...plain, seen: 1000 }, null],
    ['an idle shell the user has seen', { ...plain, seen: 1000, endOffset: 1000 }, null],
    ['output flows', { ...plain, quietSince: null }, null],
    ['no shell view at all', { ...plain, shell: null }, 'quiet'],
    // Readiness, where the server gives it.
    ['waiting for input, with new output', { ...base, shell: { state: 'running' }, readiness: 'waiting' }, 'quiet'],
    ['waiting, nothing new', { ...base, shell: { state: 'running' }, readiness: 'waiting', seen: 1000 }, null],
    ['reading the terminal, with new output', { ...base, shell: { state: 'running' }, readiness: 'reading_terminal' }, 'quiet'],
    ['waiting on events, with new output', { ...base, shell: { state: 'running' }, readiness: 'waiting_on_events' }, 'quiet'],
    ['reading the terminal, nothing new', { ...base, shell: { state: 'running' }, readiness: 'reading_terminal', seen: 1000 }, null],
    ['a quiet build the kernel says runs', { ...base, shell: { state: 'running' }, readiness: 'running' }, null],
    ['readiness running, no marks', { ...plain, readiness: 'running' }, null],
    ['readiness starting', { ...plain, readiness: 'starting' }, null],
    // Hostile: offsets that go back, a garbled time, an unknown state.
    ['seen past the end (a reset log)', { ...plain, seen: 5000 }, null],
    ['drawn past written', { ...plain, drawn: 2000 }, 'quiet'],
    ['a garbled time', { ...plain, quietSince: 'not a time' }, 'quiet'],
    ['an unknown shell state', { ...plain, shell: { state: '<b>x</b>', last: base.shell.last } }, 'quiet'],
  ];
  for (const [name, input, want] of cases) assert.equal(quietNote(input)?.text ?? null, want, name);
});

test('quietNote: the sentence says what happened', () => {
  assert.match(quietNote(base).title, /“make” finished \(status 0\) while you were away/);
  assert.match(quietNote({ ...base, shell: { state: 'prompt', last: { has_output: true, output_end: 900, status: 2 } } }).title, /^a command finished with status 2/);
  assert.match(quietNote({ ...base, shell: { state: 'prompt', last: { has_output: true, output_end: 900, status: null } } }).title, /^a command finished while/);
  assert.match(quietNote(plain).title, /quiet since 03:10:54 UTC/);
  assert.match(quietNote({ ...plain, quietSince: 'garbage' }).title, /quiet since a while/);
});
