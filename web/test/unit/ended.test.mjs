// What the page says when its access ends (web/src/ended.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { load } from './load.mjs';

const { endedNotice } = await load('ended.ts');

test('endedNotice: a guest is told its link ended, the owner that it is signed out', () => {
  const cases = [
    // code, holder, title, text must match, text must not match
    ['revoked', { owner: false }, "This link's access ended (revoked)", /new one/],
    ['expired', { owner: false }, "This link's access ended (expired)", /new one/],
    [undefined, { owner: false }, "This link's access ended", /new one/],
    ['revoked', null, "This link's access ended (revoked)", /new one/],
    // Hostile or unknown codes are not echoed.
    ['<img src=x>', { owner: false }, "This link's access ended", /new one/],
    ['', null, "This link's access ended", /new one/],
    ['revoked', { owner: true }, 'This browser is signed out', /revoked.*termkeep url/],
    ['expired', { owner: true }, 'This browser is signed out', /expired.*termkeep url/],
    [undefined, { owner: true }, 'This browser is signed out', /expired .* or was revoked/],
  ];
  for (const [code, holder, title, text] of cases) {
    const n = endedNotice(code, holder);
    assert.equal(n.title, title, `${code} ${JSON.stringify(holder)}`);
    assert.match(n.text, text, `${code} ${JSON.stringify(holder)}`);
    // The owner's tools' advice is never the page's.
    assert.doesNotMatch(n.title + n.text, /Bearer|token file/);
    if (!holder?.owner) assert.doesNotMatch(n.text, /termkeep url/);
  }
});
