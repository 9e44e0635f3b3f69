// The JavaScript a first visit loads, as the build wrote it, raw and
// compressed (gzip -9 and brotli), against the 200 KB compressed budget.
// KaTeX's fonts and the CSS are reported apart: the budget is for JavaScript.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const BUDGET = 200 * 1024;
const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const html = readFileSync(join(dist, 'index.html'), 'utf8');
// Everything index.html loads: its module script and modulepreloads.
const entry = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
let gz = 0;
let br = 0;
let raw = 0;
for (const file of entry) {
  const bytes = readFileSync(join(dist, file));
  raw += bytes.length;
  gz += gzipSync(bytes, { level: 9 }).length;
  br += brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
}
const assets = readdirSync(join(dist, 'assets'));
const sum = (re) => assets.filter((f) => re.test(f)).reduce((n, f) => n + readFileSync(join(dist, 'assets', f)).length, 0);
console.log(`first-load JavaScript (${entry.length} file${entry.length === 1 ? '' : 's'}): ${kb(raw)} raw, ${kb(gz)} gzip, ${kb(br)} brotli (budget ${kb(BUDGET)} compressed)`);
console.log(`CSS: ${kb(sum(/\.css$/))} raw; KaTeX fonts: ${kb(sum(/^KaTeX_.*\.woff2$/))} woff2 (a browser fetches only the faces a page uses)`);
if (gz > BUDGET) {
  console.error(`first-load JavaScript is over budget: ${kb(gz)} gzip > ${kb(BUDGET)}`);
  process.exit(1);
}
