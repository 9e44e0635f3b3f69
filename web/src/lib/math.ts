// Maths on the page: KaTeX for LaTeX fields and for LaTeX inside text.
import katex from 'katex';

/** HTML for one LaTeX expression; malformed input shows as typed. */
export function latexHtml(tex: string, display = false): string {
  return katex.renderToString(tex, {
    displayMode: display,
    throwOnError: false,
    strict: 'ignore',
    trust: false,
    output: 'htmlAndMathml',
  });
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** `$…$`, `$$…$$`, `\(…\)` and `\[…\]` spans of a text. */
const MATH = /\$\$([\s\S]+?)\$\$|\\\[([\s\S]+?)\\\]|\\\(([\s\S]+?)\\\)|\$([^$\n]+?)\$/g;

/** HTML for a text that may carry LaTeX between delimiters. */
export function richHtml(text: string): string {
  let html = '';
  let last = 0;
  for (const match of text.matchAll(MATH)) {
    const at = match.index ?? 0;
    html += escapeHtml(text.slice(last, at));
    const display = match[1] ?? match[2];
    const inline = match[3] ?? match[4];
    html += display !== undefined ? latexHtml(display, true) : latexHtml(inline ?? '', false);
    last = at + match[0].length;
  }
  return html + escapeHtml(text.slice(last));
}

/** Whether a text has any LaTeX to render. */
export function hasMath(text: string): boolean {
  MATH.lastIndex = 0;
  return MATH.test(text) || /\\[a-zA-Z]+/.test(text);
}
