// Who holds a session's size, and when the page takes it (web/src/sizeinfo.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { holder, claim, followsWindow, followsText, offersFit, whoIs, browserName } = await load('sizeinfo.ts');

const viewers = [
  { id: 1, kind: 'web', name: 'Chrome on Linux' },
  { id: 2, kind: 'web', name: 'Pixel phone' },
  { id: 3, kind: 'share', name: 'review', read_only: true },
  { id: 4, kind: 'cli', name: 'attach /dev/pts/3' },
  { id: 5, kind: 'cli' },
  { id: 6, kind: 'share' },
  { id: 7, kind: '<b>', name: 'x\u0007\u001b[31my' },
];

test('holder: by kind and name, this tab, and the policies', () => {
  const cases = [
    [{ size_owner: 1, you: 1 }, '149×41 · this tab', true],
    [{ size_owner: 2, you: 1 }, '149×41 · Pixel phone', false],
    [{ size_owner: 4, you: 1 }, '149×41 · attach /dev/pts/3', false],
    [{ size_owner: 5, you: 1 }, '149×41 · termkeep attach', false],
    [{ size_owner: 6, you: 1 }, '149×41 · a share link', false],
    [{ size_owner: 3, you: 1 }, '149×41 · link “review”', false],
    [{ size_owner: 7, you: 1 }, '149×41 · x[31my', false],
    [{ size_owner: 0, you: 1 }, '149×41 · nobody', false],
    [{ size_owner: 99, you: 1 }, '149×41 · nobody', false],
    [{ size_owner: 0, you: 0 }, '149×41 · nobody', false],
    [{ size_owner: 1, you: 1, size_policy: 'fixed' }, '149×41 · fixed size', false],
    [{ size_owner: 0, you: 1, size_policy: 'smallest' }, '149×41 · smallest window', false],
    [{ size_owner: 0, you: 1, size_policy: 'largest' }, '149×41 · largest window', false],
    [{ size_owner: 1, you: 1, cols: 0, rows: 0 }, 'this tab', true],
  ];
  for (const [s, short, mine] of cases) {
    const h = holder({ viewers, cols: 149, rows: 41, ...s });
    assert.equal(h.short, short, JSON.stringify(s));
    assert.equal(h.mine, mine, JSON.stringify(s));
    assert.ok(h.long.length > 0);
  }
});

test('whoIs: a name of 200 characters is cut to 64', () => {
  assert.equal([...whoIs({ id: 1, kind: 'web', name: 'é'.repeat(200) })].length, 64);
});

test('claim: only when nobody holds the size, under latest, for a writable visible tab, once', () => {
  const base = { policy: 'latest', owner: 0, you: 3, readOnly: false, active: true, asked: false };
  const cases = [
    [{}, true],
    [{ policy: undefined }, true],
    [{ owner: 2 }, false],
    [{ owner: 3 }, false],
    [{ you: 0 }, false],
    [{ readOnly: true }, false],
    [{ active: false }, false],
    [{ asked: true }, false],
    [{ policy: 'fixed' }, false],
    [{ policy: 'smallest' }, false],
    [{ policy: 'bogus' }, false],
  ];
  for (const [d, want] of cases) assert.equal(claim({ ...base, ...d }), want, JSON.stringify(d));
});

test('followsWindow: the holder on a desktop only', () => {
  const s = { viewers, size_owner: 1, you: 1, cols: 80, rows: 24, size_policy: 'latest' };
  assert.equal(followsWindow(s, false, false), true);
  assert.equal(followsWindow(s, false, true), false, 'a phone rotating takes the size');
  assert.equal(followsWindow(s, true, false), false);
  assert.equal(followsWindow({ ...s, size_owner: 2 }, false, false), false);
  assert.equal(followsWindow({ ...s, you: 0, size_owner: 0 }, false, false), false);
  assert.equal(followsWindow({ ...s, size_policy: 'largest' }, false, false), false);
});

test('followsText: the holder that changes its text size, on a phone too', () => {
  const s = { viewers, size_owner: 1, you: 1, cols: 80, rows: 24, size_policy: 'latest' };
  const cases = [
    [{}, false, true],
    [{ size_policy: undefined }, false, true],
    [{}, true, false],
    [{ size_owner: 2 }, false, false],
    [{ size_owner: 0 }, false, false],
    [{ you: 0, size_owner: 0 }, false, false],
    [{ you: -1, size_owner: -1 }, false, false],
    [{ size_policy: 'largest' }, false, false],
    [{ size_policy: 'fixed' }, false, false],
    [{ size_policy: 'bogus' }, false, false],
  ];
  for (const [d, readOnly, want] of cases) assert.equal(followsText({ ...s, ...d }, readOnly), want, JSON.stringify({ d, readOnly }));
});

test('offersFit: unless this page holds the size at its own window', () => {
  const mine = { short: '80×24 · this tab', long: '.', mine: true };
  const theirs = { short: '80×24 · Pixel phone', long: '.', mine: false };
  const w = { cols: 80, rows: 24 };
  const cases = [
    [mine, false, w, 80, 24, false],
    [mine, false, { cols: 81, rows: 24 }, 80, 24, true],
    [mine, false, { cols: 80, rows: 23 }, 80, 24, true],
    [mine, false, null, 80, 24, true],
    [theirs, false, w, 80, 24, true],
    [theirs, true, w, 80, 24, false],
    [mine, true, { cols: 100, rows: 30 }, 80, 24, false],
    [null, false, w, 80, 24, false],
    [mine, false, { cols: 0, rows: 0 }, 0, 0, true],
    [mine, false, { cols: NaN, rows: NaN }, NaN, NaN, true],
  ];
  for (const [h, readOnly, want, cols, rows, offer] of cases) assert.equal(offersFit(h, readOnly, want, cols, rows), offer, JSON.stringify({ h: h?.short, readOnly, want, cols, rows }));
});

test('browserName', () => {
  const cases = [
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36', 'Chrome on Linux'],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Mobile Safari/537.36', 'Chrome on Android phone'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1', 'Safari on iPhone'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:130.0) Gecko/20100101 Firefox/130.0', 'Firefox on Windows'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140 Safari/537.36 Edg/140', 'Edge on macOS'],
    ['', 'A browser'],
    ['\u0000<script>', 'A browser'],
  ];
  for (const [ua, want] of cases) assert.equal(browserName(ua), want, ua);
});
