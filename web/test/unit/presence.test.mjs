// What the Share dialog says of viewers and links (web/src/presence.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { viewerLine, sizeLine, linkLine, untilText } = await load('presence.ts');

test('viewerLine: who, how, and the size', () => {
  const cases = [
    [{ id: 1, kind: 'owner', name: 'Chrome 156 on Linux', read_only: false, cols: 120, rows: 40, holds_size: true }, 1,
      'Owner (Chrome 156 on Linux) — this page', 'can type · 120×40 · sets the size'],
    [{ id: 2, kind: 'link', name: 'phone', read_only: true, cols: 40, rows: 60, holds_size: false }, 1, 'Link “phone”', 'watching · 40×60'],
    [{ id: 3, kind: 'link', read_only: true, holds_size: false }, 0, 'A share link', 'watching'],
    [{ id: 4, kind: 'cli', name: 'termkeep attach', read_only: false, cols: 80, rows: 24, holds_size: false }, 1, 'Terminal (termkeep attach)', 'can type · 80×24'],
    [{ id: 5, kind: 'user', name: 'alice', read_only: false, holds_size: false }, 1, 'User alice', 'can type'],
    [{ id: 6, kind: 'user', read_only: true, holds_size: false }, 6, 'Another user — this page', 'watching'],
    [{ id: 7, kind: 'owner', name: 'owner', read_only: false, holds_size: false }, 0, 'Owner', 'can type'],
    // Hostile: an unknown kind, names of blanks, markup kept as text.
    [{ id: 8, kind: '<script>', name: 'x', read_only: true, holds_size: false }, 0, 'A viewer', 'watching'],
    [{ id: 9, kind: 'link', name: '   ', read_only: true, holds_size: false }, 0, 'A share link', 'watching'],
    [{ id: 10, kind: 'link', name: '<b>x</b>', read_only: true, cols: 0, rows: 5, holds_size: false }, 0, 'Link “<b>x</b>”', 'watching'],
  ];
  for (const [v, you, who, detail] of cases) assert.deepEqual(viewerLine(v, you), { who, detail }, JSON.stringify(v));
});

test('sizeLine: whose size the session has', () => {
  const viewers = [
    { id: 1, kind: 'owner', read_only: false, holds_size: true },
    { id: 2, kind: 'link', name: 'phone', read_only: true, holds_size: false },
  ];
  assert.equal(sizeLine({ cols: 120, rows: 40, size_owner: 1, viewers }, 1), 'The session is 120×40, the size of this page.');
  assert.equal(sizeLine({ cols: 120, rows: 40, size_owner: 1, viewers }, 2), 'The session is 120×40, the size of Owner.');
  assert.equal(sizeLine({ cols: 120, rows: 40, size_owner: 0, viewers }, 1), 'The session is 120×40; no viewer sets its size.');
  assert.equal(sizeLine({ cols: 0, rows: 0, size_owner: 9, viewers: [] }, 1), 'The session is its own size; no viewer sets its size.');
});

test('linkLine and untilText', () => {
  const now = Date.parse('2026-11-26T12:00:00Z');
  assert.deepEqual(linkLine({ id: 'abc', name: 'phone', read_only: true, expires_at: '2026-11-26T13:00:00Z', last_used_at: null }, now),
    { who: '“phone”', detail: 'read-only · expires in 1 h · not used yet' });
  assert.deepEqual(linkLine({ id: 'abc', read_only: false, expires_at: null, last_used_at: '2026-11-26T11:00:00Z' }, now),
    { who: 'abc', detail: 'writable: full shell access · never expires · used' });
  assert.equal(untilText(-5), 'now');
  assert.equal(untilText(NaN), 'at an unknown time');
  assert.equal(untilText(30 * 3600e3), 'in 30 h');
  assert.equal(untilText(7 * 86400e3), 'in 7 days');
});
