// widths.mjs prints, as JSON, the cell width xterm.js's Unicode 11 provider
// (@xterm/addon-unicode11) gives every code point: a list of [first, last,
// width] ranges covering 0..0x10FFFF. gen.go turns it into width_table.go.
//
// The provider is taken from the addon itself (its activate registers it
// with the terminal's unicode service), so the table is what browsers
// running the addon compute, not a re-derivation of Unicode data.
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const dir = process.argv[2] ?? resolve(process.cwd(), 'node_modules');
const require = createRequire(resolve(dir, 'x.js'));
const { Unicode11Addon } = require('@xterm/addon-unicode11');
const version = require('@xterm/addon-unicode11/package.json').version;

let provider;
new Unicode11Addon().activate({ unicode: { register(p) { provider = p; } } });
if (!provider || provider.version !== '11') throw new Error('addon did not register a version 11 provider');

const ranges = [];
for (let cp = 0; cp <= 0x10ffff; cp++) {
  const w = provider.wcwidth(cp);
  const last = ranges[ranges.length - 1];
  if (last && last[2] === w && last[1] === cp - 1) last[1] = cp;
  else ranges.push([cp, cp, w]);
}
process.stdout.write(JSON.stringify({ addon: '@xterm/addon-unicode11@' + version, ranges }) + '\n');
