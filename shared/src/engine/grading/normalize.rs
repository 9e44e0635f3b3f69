//! Unicode as phones and keyboards produce it, folded into the ASCII-ish
//! notation the rest of the grader reads; letters lowercased (students write
//! `X = 4` for `x = 4`).

use super::text::Text;

pub(super) fn fold(source: &Text) -> Text {
    let chars = source.chars();
    let mut out = Text::default();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let digit_before = i > 0 && chars[i - 1].is_ascii_digit();
        let digit_after = chars.get(i + 1).is_some_and(char::is_ascii_digit);
        match c {
            // `x = +-2`, `+/-2`: plus or minus, where a value starts.
            '+' if plus_minus(chars, i).is_some() => {
                let width = plus_minus(chars, i).unwrap_or(1);
                out.replace_from(source, i..i + width, "±");
                i += width;
                continue;
            }
            '−' | '–' | '‒' | '﹣' | '－' => out.replace_from(source, i..i + 1, "-"),
            '—' | '―' => out.replace_from(source, i..i + 1, " "),
            '×' | '✕' | '✖' | '·' | '⋅' | '∙' => out.replace_from(source, i..i + 1, "*"),
            '÷' | '∕' | '⁄' => out.replace_from(source, i..i + 1, "/"),
            '≈' | '≃' | '≅' | '＝' => out.replace_from(source, i..i + 1, "="),
            '’' | '‘' | '`' | '´' | 'ʼ' => out.replace_from(source, i..i + 1, "'"),
            '“' | '”' | '„' => out.replace_from(source, i..i + 1, "\""),
            '…' => out.replace_from(source, i..i + 1, "..."),
            '\u{a0}' | '\u{2009}' | '\u{202f}' | '\u{2007}' | '\u{2008}' => {
                // Thin and no-break spaces between digits group thousands.
                let text = if digit_before && digit_after { "" } else { " " };
                out.replace_from(source, i..i + 1, text);
            }
            '０'..='９' => {
                let digit = char::from_digit(c as u32 - '０' as u32, 10).unwrap_or('0');
                out.replace_from(source, i..i + 1, &digit.to_string());
            }
            _ if superscript(c).is_some() => {
                let start = i;
                let mut exponent = String::new();
                while let Some(s) = chars.get(i).copied().and_then(superscript) {
                    exponent.push(s);
                    i += 1;
                }
                out.replace_from(source, start..i, &format!("^({exponent})"));
                continue;
            }
            _ if vulgar_fraction(c).is_some() => {
                let fraction = vulgar_fraction(c).unwrap_or_default();
                // 1½ is the mixed number 1 1/2.
                let text = if digit_before {
                    format!(" {fraction}")
                } else {
                    fraction.to_owned()
                };
                out.replace_from(source, i..i + 1, &text);
            }
            _ if c.is_whitespace() => out.replace_from(source, i..i + 1, " "),
            _ if c.is_uppercase() => {
                let lower: String = c.to_lowercase().collect();
                out.replace_from(source, i..i + 1, &lower);
            }
            _ => out.copy_from(source, i),
        }
        i += 1;
    }
    out
}

/// The width of a `+-` or `+/-` at `i` that means ±: always for `+/-`,
/// and for `+-` where a value starts (after `=`, a bracket or nothing).
fn plus_minus(chars: &[char], i: usize) -> Option<usize> {
    let rest = |s: &str| {
        s.chars()
            .enumerate()
            .all(|(k, c)| chars.get(i + k) == Some(&c))
    };
    if rest("+/-") {
        return Some(3);
    }
    let before = chars[..i].iter().rev().find(|c| **c != ' ');
    (rest("+-") && before.is_none_or(|c| matches!(c, '=' | '(' | ','))).then_some(2)
}

fn superscript(c: char) -> Option<char> {
    Some(match c {
        '⁰' => '0',
        '¹' => '1',
        '²' => '2',
        '³' => '3',
        '⁴' => '4',
        '⁵' => '5',
        '⁶' => '6',
        '⁷' => '7',
        '⁸' => '8',
        '⁹' => '9',
        '⁻' => '-',
        '⁺' => '+',
        _ => return None,
    })
}

fn vulgar_fraction(c: char) -> Option<&'static str> {
    Some(match c {
        '½' => "1/2",
        '⅓' => "1/3",
        '⅔' => "2/3",
        '¼' => "1/4",
        '¾' => "3/4",
        '⅕' => "1/5",
        '⅖' => "2/5",
        '⅗' => "3/5",
        '⅘' => "4/5",
        '⅙' => "1/6",
        '⅚' => "5/6",
        '⅛' => "1/8",
        '⅜' => "3/8",
        '⅝' => "5/8",
        '⅞' => "7/8",
        '⅐' => "1/7",
        '⅑' => "1/9",
        '⅒' => "1/10",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(text: &str) -> String {
        fold(&Text::new(text)).to_string()
    }

    #[test]
    fn phone_keyboard_symbols() {
        assert_eq!(folded("−4"), "-4");
        assert_eq!(folded("3×4÷6"), "3*4/6");
        assert_eq!(folded("x² + 10⁻³"), "x^(2) + 10^(-3)");
        assert_eq!(folded("1½"), "1 1/2");
        assert_eq!(folded("¾"), "3/4");
        assert_eq!(folded("1\u{202f}234\u{a0}cm"), "1234 cm");
        assert_eq!(folded("X ≈ 4"), "x = 4");
        assert_eq!(folded("It’s ４"), "it's 4");
        assert_eq!(folded("x = +-2"), "x = ±2");
        assert_eq!(folded("3 +/- 1"), "3 ± 1");
        assert_eq!(folded("5+-3"), "5+-3");
    }
}
