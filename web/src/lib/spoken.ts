// Maths said aloud ("x squared plus three equals twelve") as LaTeX, for the
// voice confirm dialog. Returns null when the words hold no maths.

const UNITS: Record<string, number> = {
  zero: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9,
  ten: 10, eleven: 11, twelve: 12, thirteen: 13, fourteen: 14, fifteen: 15, sixteen: 16,
  seventeen: 17, eighteen: 18, nineteen: 19,
};
const TENS: Record<string, number> = {
  twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90,
};

/** Number words at the start of `words`: the value and how many words it took. */
function numberAt(words: string[], i: number): [number, number] | null {
  let total = 0;
  let current = 0;
  let used = 0;
  for (let k = i; k < words.length; k++) {
    const w = words[k]!;
    if (w in UNITS) current += UNITS[w]!;
    else if (w in TENS) current += TENS[w]!;
    else if (/^\d+(\.\d+)?$/.test(w)) {
      if (used > 0) break;
      return [Number(w), 1];
    } else if (w === 'hundred' && used > 0) current *= 100;
    else if (w === 'thousand' && used > 0) {
      total += current * 1000;
      current = 0;
    } else if (w === 'and' && used > 0 && k + 1 < words.length && (words[k + 1]! in UNITS || words[k + 1]! in TENS)) {
      // "two hundred and five"
    } else break;
    used = k - i + 1;
  }
  return used > 0 ? [total + current, used] : null;
}

const PHRASES: [RegExp, string][] = [
  [/\bdivided by\b/g, ' \\div '],
  [/\bmultiplied by\b|\btimes\b/g, ' \\times '],
  [/\bis equal to\b|\bequals\b/g, ' = '],
  [/\bplus\b/g, ' + '],
  [/\bminus\b/g, ' - '],
  [/\bsquared\b/g, ' ^{2} '],
  [/\bcubed\b/g, ' ^{3} '],
  [/\bpercent\b/g, ' \\% '],
  [/\bsquare root of\b/g, ' \\sqrt '],
  [/\bover\b/g, ' / '],
  [/\bto the power of\b/g, ' ^ '],
];

export function spokenToLatex(text: string): string | null {
  const lowered = ` ${text.toLowerCase().replace(/[?!,]/g, ' ').replace(/\.(?!\d)/g, ' ')} `;
  let s = lowered;
  for (const [re, sym] of PHRASES) s = s.replace(re, sym);
  const tokens = s.split(/\s+/).filter(Boolean);
  const out: string[] = [];
  for (let i = 0; i < tokens.length; ) {
    const n = numberAt(tokens, i);
    if (n) {
      out.push(String(n[0]));
      i += n[1];
    } else {
      out.push(tokens[i]!);
      i += 1;
    }
  }
  // Keep the stretch from the first to the last maths token.
  const isMath = (t: string) => /^(\d+(\.\d+)?|[b-hj-z]|[+\-=/^]|\^\{\d\}|\\(div|times|sqrt|%))$/.test(t);
  const first = out.findIndex(isMath);
  const last = out.length - 1 - [...out].reverse().findIndex(isMath);
  if (first < 0) return null;
  const span = out.slice(first, last + 1);
  if (!span.some((t) => /^[+\-=/^]|^\\(div|times|sqrt|%)|^\^\{/.test(t))) return null;
  if (span.some((t) => !isMath(t))) return null;
  const parts: string[] = [];
  for (let i = 0; i < span.length; i++) {
    const t = span[i]!;
    const next = span[i + 1];
    if (t === '/' && parts.length > 0 && next !== undefined) {
      parts.push(`\\frac{${parts.pop()}}{${next}}`);
      i += 1;
    } else if (t === '\\sqrt' && next !== undefined) {
      parts.push(`\\sqrt{${next}}`);
      i += 1;
    } else if (t === '^' && parts.length > 0 && next !== undefined) {
      parts.push(`${parts.pop()}^{${next}}`);
      i += 1;
    } else if (t.startsWith('^{') && parts.length > 0) {
      parts.push(`${parts.pop()}${t}`);
    } else {
      parts.push(t);
    }
  }
  return parts.join(' ');
}
