// What a tab says about its session (web/src/tabinfo.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { badge, label, shortPath, commandName, sentence, interruptedWhy, plainReason } = await load('tabinfo.ts');

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
  // Lost with a damaged meta.json: said, not guessed.
  assert.equal(label(session({ info: { command: [], unknown: ['command', 'cwd'] } })), 'unknown abcd');
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

test('interruptedWhy names the cause the server recorded, in words, never in bytes', () => {
  const jargon = 'its holder process (pid 6168) died without recording an exit status; output up to byte 367 is kept';
  const cases = [
    ['holder killed', { state: 'interrupted', cause: 'holder_killed', cause_text: 'its holder was killed' }, null, 'its holder was killed'],
    ['machine restarted', { state: 'interrupted', cause: 'machine_restarted' }, null, 'the machine restarted'],
    ['stopped', { state: 'interrupted', cause: 'stopped' }, null, 'its holder was stopped (the machine or the service stopping)'],
    ['a cause this page does not know: the server\'s words', { state: 'interrupted', cause: 'oom', cause_text: 'out of memory' }, null, 'out of memory'],
    ['hostile cause names', { state: 'interrupted', cause: 'constructor' }, null, ''],
    ['__proto__', { state: 'interrupted', cause: '__proto__', reason: jargon }, null, 'its holder process (pid 6168) died without recording an exit status'],
    ['only the connection has said so yet', { state: 'interrupted' }, { state: 'interrupted', reason: jargon }, 'its holder process (pid 6168) died without recording an exit status'],
    ['no cause, no reason', { state: 'interrupted' }, null, ''],
  ];
  for (const [name, info, exit, want] of cases) assert.equal(interruptedWhy(session({ info, exit })), want, name);
});

test('plainReason drops byte offsets and nothing else', () => {
  const cases = [
    ['its process exited (status 0); its holder process (pid 9) died while it read what the processes left behind printed; output up to byte 12 is kept', 'its process exited (status 0); its holder process (pid 9) died while it read what the processes left behind printed'],
    ['the machine restarted while it ran; output up to byte 4096 is kept', 'the machine restarted while it ran'],
    ['closed by the user', 'closed by the user'],
    ['', ''],
    ['output up to byte 1 is kept', ''],
  ];
  for (const [r, want] of cases) assert.equal(plainReason(r), want, r);
});
