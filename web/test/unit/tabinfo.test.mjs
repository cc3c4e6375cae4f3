// What a tab says about its session (web/src/tabinfo.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { badge, label, shortPath, commandName, sentence } = await load('tabinfo.ts');

function session(over = {}) {
  return {
    id: 'abcdef12',
    title: '',
    state: 'live',
    exit: null,
    written: null,
    ...over,
    info: { id: 'abcdef12', name: '', command: ['/bin/bash'], state: 'running', cwd: '/', end_offset: 0, exit_code: null, ...(over.info ?? {}) },
  };
}

test('label: the name, else the title, else the command and the id', () => {
  assert.equal(label(session({ info: { name: 'work' }, title: 'vim' })), 'work');
  assert.equal(label(session({ title: 'vim' })), 'vim');
  assert.equal(label(session()), 'bash abcd');
  assert.equal(label(session({ info: { command: [] } })), 'shell abcd');
  assert.equal(commandName({ command: ['/usr/bin/'] }), 'shell');
  assert.equal(commandName({}), 'shell');
});

test('badge: the state as a word', () => {
  const cases = [
    [session(), 'live'],
    [session({ state: 'reconnecting' }), 'reconnecting'],
    [session({ exit: { state: 'exited', exit_code: 0 } }), 'exited 0'],
    [session({ exit: { state: 'exited', exit_code: 130 } }), 'exited 130'],
    [session({ info: { state: 'exited', exit_code: null } }), 'exited'],
    [session({ info: { state: 'interrupted' } }), 'interrupted'],
    [session({ info: { state: 'paused' }, exit: { state: 'exited', exit_code: 1 } }), 'paused'],
    [session({ info: { state: 'closed' } }), 'closed'],
  ];
  for (const [ts, want] of cases) assert.equal(badge(ts).text, want, JSON.stringify(ts.info) + JSON.stringify(ts.exit));
  assert.equal(badge(session({ info: { state: 'interrupted', cause_text: 'its holder was killed' } })).title, 'its holder was killed');
});

test('shortPath keeps the last two parts', () => {
  const cases = [
    ['', ''],
    ['/', '/'],
    ['/home', '/home'],
    ['/home/me', '/home/me'],
    ['/home/me/src/app', '…/src/app'],
    ['//a//b//c//', '…/b/c'],
  ];
  for (const [p, want] of cases) assert.equal(shortPath(p), want, p);
});

test('sentence', () => {
  assert.equal(sentence(' connection refused '), 'Connection refused.');
  assert.equal(sentence('done!'), 'Done!');
  assert.equal(sentence(''), '.');
});
