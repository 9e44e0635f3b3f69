//! LaTeX as students and LLMs write answers (`\frac{9}{2}`, `\boxed{x=4}`,
//! `$3 \times 4$`), rewritten into the plain notation the parser reads.

use std::ops::Range;

use super::text::Text;

/// Nesting beyond this is copied verbatim (the parser then bounds it).
const MAX_NESTING: usize = 24;

/// Whether `message` uses LaTeX at all (a command or `$…$` delimiters).
pub(super) fn looks_like_latex(message: &str) -> bool {
    message.contains('\\') || message.matches('$').count() >= 2
}

/// The byte range inside the first `\boxed{…}`: a boxed answer is the answer.
pub(super) fn boxed_range(message: &str) -> Option<Range<usize>> {
    let at = message.find("\\boxed")?;
    let open = at + message[at..].find('{')?;
    let mut depth = 0usize;
    for (i, c) in message[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + 1..open + i);
                }
            }
            _ => {}
        }
    }
    None
}

pub(super) fn rewrite(source: &Text) -> Text {
    let mut out = Text::default();
    let dollars = math_delimiters(source);
    Rewriter {
        source,
        dollars: &dollars,
    }
    .convert(0..source.len(), &mut out, 0);
    out
}

/// Positions of `$` that delimit math (paired, hugging their content), as
/// opposed to dollar signs in front of amounts (`$9.60 or $36`).
fn math_delimiters(source: &Text) -> Vec<usize> {
    let chars = source.chars();
    // `$$` counts as one delimiter: (position, width).
    let mut marks: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '$' {
            let width = if chars.get(i + 1) == Some(&'$') { 2 } else { 1 };
            marks.push((i, width));
            i += width;
        } else {
            i += 1;
        }
    }
    let mut delimiters = Vec::new();
    let mut k = 0;
    while k + 1 < marks.len() {
        let ((open, open_width), (close, close_width)) = (marks[k], marks[k + 1]);
        let content = open + open_width;
        let opens = chars.get(content).is_some_and(|c| !c.is_whitespace());
        let closes = close > content && !chars[close - 1].is_whitespace();
        if opens && closes {
            delimiters.extend(open..content);
            delimiters.extend(close..close + close_width);
            k += 2;
        } else {
            k += 1;
        }
    }
    delimiters
}

struct Rewriter<'a> {
    source: &'a Text,
    dollars: &'a [usize],
}

impl Rewriter<'_> {
    fn at(&self, i: usize) -> Option<char> {
        self.source.get(i)
    }

    fn convert(&self, range: Range<usize>, out: &mut Text, depth: usize) {
        if depth > MAX_NESTING {
            range.for_each(|i| out.copy_from(self.source, i));
            return;
        }
        let mut i = range.start;
        while i < range.end {
            let c = self.at(i).unwrap_or(' ');
            match c {
                '$' if self.dollars.contains(&i) => {
                    out.replace_from(self.source, i..i + 1, " ");
                    i += 1;
                }
                '\\' => i = self.command(i, range.end, out, depth),
                '{' => {
                    out.replace_from(self.source, i..i + 1, "(");
                    i += 1;
                }
                '}' => {
                    out.replace_from(self.source, i..i + 1, ")");
                    i += 1;
                }
                _ => {
                    out.copy_from(self.source, i);
                    i += 1;
                }
            }
        }
    }

    /// Rewrites the command starting at `start` (a backslash); returns where
    /// the text after it begins.
    fn command(&self, start: usize, end: usize, out: &mut Text, depth: usize) -> usize {
        let mut i = start + 1;
        while i < end && self.at(i).is_some_and(|c| c.is_ascii_alphabetic()) {
            i += 1;
        }
        let name = self.source.slice(start + 1..i);
        if name.is_empty() {
            // A one-character command: spacing, escaped symbols, delimiters.
            let symbol = self.at(i).unwrap_or(' ');
            let text = match symbol {
                '%' => "%",
                '$' => "$",
                '{' => "(",
                '}' => ")",
                _ => " ",
            };
            let after = (i + 1).min(end.max(i));
            out.replace_from(self.source, start..after, text);
            return after;
        }
        let plain = |out: &mut Text, text: &str| out.replace_from(self.source, start..i, text);
        match name.as_str() {
            "frac" | "dfrac" | "tfrac" | "cfrac" => {
                let (top, after_top) = self.argument(i, end);
                let (bottom, after) = self.argument(after_top, end);
                // `4\frac{1}{2}` is the mixed number four and a half.
                let digits = |r: &Range<usize>| {
                    !r.is_empty()
                        && r.clone()
                            .all(|k| self.at(k).is_some_and(|c| c.is_ascii_digit()))
                };
                let after_digit =
                    start > 0 && self.at(start - 1).is_some_and(|c| c.is_ascii_digit());
                if after_digit && digits(&top) && digits(&bottom) {
                    let fraction =
                        format!(" {}/{}", self.source.slice(top), self.source.slice(bottom));
                    out.replace_from(self.source, start..after, &fraction);
                    return after;
                }
                plain(out, "((");
                self.convert(top.clone(), out, depth + 1);
                out.replace_from(self.source, top.end..bottom.start, ")/(");
                self.convert(bottom.clone(), out, depth + 1);
                out.replace_from(self.source, bottom.end..after, "))");
                after
            }
            "sqrt" => {
                let (index, after_index) = self.optional_index(i, end);
                let (radicand, after) = self.argument(after_index, end);
                let closing = radicand.end..after;
                match index {
                    Some(index) => {
                        plain(out, "((");
                        self.convert(radicand, out, depth + 1);
                        out.replace_from(self.source, closing.clone(), ")^(1/(");
                        self.convert(index, out, depth + 1);
                        out.replace_from(self.source, closing, ")))");
                    }
                    None => {
                        plain(out, "sqrt(");
                        self.convert(radicand, out, depth + 1);
                        out.replace_from(self.source, closing, ")");
                    }
                }
                after
            }
            "boxed" | "fbox" | "text" | "textrm" | "textbf" | "textit" | "mathrm" | "mathbf"
            | "mathit" | "operatorname" | "mbox" | "hbox" => {
                let (content, after) = self.argument(i, end);
                plain(out, " ");
                self.convert(content.clone(), out, depth + 1);
                out.replace_from(self.source, content.end..after, " ");
                after
            }
            // A bar or dot over digits marks the ones that recur: the
            // same marks typed on a phone, which the recurring reader reads.
            "overline" | "bar" | "dot" => {
                let (content, after) = self.argument(i, end);
                let digits = self.source.slice(content.clone());
                if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
                    plain(out, "");
                    return i;
                }
                let mark = if name == "dot" { '\u{307}' } else { '\u{305}' };
                let marked: String = digits.chars().flat_map(|d| [d, mark]).collect();
                out.replace_from(self.source, start..after, &marked);
                after
            }
            "left" | "right" | "bigl" | "bigr" | "Bigl" | "Bigr" | "big" | "Big" | "bigg"
            | "Bigg" => {
                // `\left.` is an invisible delimiter.
                if self.at(i) == Some('.') {
                    plain(out, "");
                    return i + 1;
                }
                plain(out, "");
                i
            }
            "displaystyle" | "textstyle" | "limits" | "nolimits" => {
                plain(out, "");
                i
            }
            _ => {
                let text = symbol_command(&name).unwrap_or(&name);
                plain(out, text);
                i
            }
        }
    }

    /// A command argument: a `{…}` group, or else the next character.
    fn argument(&self, from: usize, end: usize) -> (Range<usize>, usize) {
        let mut i = from;
        while i < end && self.at(i).is_some_and(char::is_whitespace) {
            i += 1;
        }
        match self.at(i) {
            Some('{') if i < end => {
                let close = self.matching(i, '{', '}', end);
                (i + 1..close, (close + 1).min(end))
            }
            Some(_) if i < end => (i..i + 1, i + 1),
            _ => (i..i, i),
        }
    }

    fn optional_index(&self, from: usize, end: usize) -> (Option<Range<usize>>, usize) {
        if self.at(from) == Some('[') && from < end {
            let close = self.matching(from, '[', ']', end);
            (Some(from + 1..close), (close + 1).min(end))
        } else {
            (None, from)
        }
    }

    /// Index of the bracket closing the one at `open`, or `end` when unclosed.
    fn matching(&self, open: usize, left: char, right: char, end: usize) -> usize {
        let mut depth = 0usize;
        for i in open..end {
            match self.at(i) {
                Some(c) if c == left => depth += 1,
                Some(c) if c == right => {
                    depth -= 1;
                    if depth == 0 {
                        return i;
                    }
                }
                _ => {}
            }
        }
        end
    }
}

fn symbol_command(name: &str) -> Option<&'static str> {
    Some(match name {
        "cdot" | "times" | "ast" => "*",
        "div" => "/",
        "pm" => "±",
        "mp" => "∓",
        "pi" => "π",
        "le" | "leq" | "leqslant" => "<=",
        "ge" | "geq" | "geqslant" => ">=",
        "lt" => "<",
        "gt" => ">",
        "ne" | "neq" => "!=",
        "approx" | "simeq" | "equiv" | "cong" => "=",
        "circ" | "degree" => "°",
        "quad" | "qquad" | "space" => " ",
        "theta" => "θ",
        "alpha" => "α",
        "beta" => "β",
        "lambda" => "λ",
        "mu" => "μ",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(latex: &str) -> String {
        rewrite(&Text::new(latex))
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn fractions_roots_and_operators() {
        assert_eq!(plain(r"\frac{9}{2}"), "((9)/(2))");
        assert_eq!(plain(r"\dfrac{3}{4}"), "((3)/(4))");
        assert_eq!(plain(r"\tfrac12"), "((1)/(2))");
        assert_eq!(plain(r"4\frac{1}{2}"), "4 1/2");
        assert_eq!(plain(r"\frac{\frac{1}{2}}{3}"), "((((1)/(2)))/(3))");
        assert_eq!(plain(r"\sqrt{16}"), "sqrt(16)");
        assert_eq!(plain(r"\sqrt[3]{8}"), "((8)^(1/(3)))");
        assert_eq!(plain(r"3 \times 4 \div 6"), "3 * 4 / 6");
        assert_eq!(plain(r"x^{2} \cdot y"), "x^(2) * y");
        assert_eq!(plain(r"\left( x+1 \right)"), "( x+1 )");
        assert_eq!(plain(r"50\%"), "50%");
        assert_eq!(plain(r"12\,\text{cm}"), "12 cm");
    }

    #[test]
    fn dollar_delimiters_versus_amounts() {
        assert_eq!(plain("$x = 4$"), "x = 4");
        assert_eq!(plain("$$\\frac{1}{2}$$"), "((1)/(2))");
        assert_eq!(plain("$9.60 or $36"), "$9.60 or $36");
        assert_eq!(plain("it costs $36"), "it costs $36");
    }

    #[test]
    fn boxed_answers_are_found() {
        let message = r"so we get \boxed{x = \frac{9}{2}} in the end";
        let range = boxed_range(message).unwrap();
        assert_eq!(&message[range], r"x = \frac{9}{2}");
        assert_eq!(boxed_range(r"\boxed{unclosed"), None);
        assert_eq!(boxed_range("no box"), None);
    }

    #[test]
    fn broken_latex_does_not_panic() {
        for text in [
            r"\frac{", r"\frac", r"\sqrt[", "\\", "$", r"\left", "}}}{{{",
        ] {
            let _ = plain(text);
        }
        let deep = r"\frac{".repeat(200);
        let _ = plain(&deep);
    }
}
