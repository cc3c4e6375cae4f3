// The page's paste sanitizer (web/src/paste.ts) against the table the Go
// sanitizer (internal/keys) is held to: both read one list of allowed
// control characters and must agree on every case.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { load } from './load.mjs';

const { sanitizePaste } = await load('paste.ts');
const cases = JSON.parse(readFileSync(new URL('../../../internal/keys/testdata/paste_cases.json', import.meta.url), 'utf8'));

test('sanitizePaste: the shared table of cases', () => {
  assert.ok(cases.length >= 10);
  for (const c of cases) assert.equal(sanitizePaste(c.in), c.out, c.name);
});

test('sanitizePaste: nothing that ends a bracketed paste survives', () => {
  for (const evil of ['ls\x1b[201~; touch X\r', '\x1b[20\x1b[201~1~', '\x9b201~']) {
    const out = sanitizePaste(evil);
    assert.ok(!out.includes('\x1b') && !out.includes('\x9b'), JSON.stringify(out));
    assert.equal(sanitizePaste(out), out);
  }
});
