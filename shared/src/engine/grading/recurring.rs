//! Recurring decimals as students write them — `0.333...`, `0.3 recurring`,
//! `0.16 repeating`, a bar or dot over the repeating digits (`0.3̅`, and
//! LaTeX's `\overline{3}` / `\dot{3}`, which the LaTeX reader turns into
//! the same marks) — read as the exact fraction they stand for: 0.3
//! recurring is 1/3, not 0.3.

use std::sync::LazyLock;

use regex::Regex;

use super::text::Text;
use crate::math::Rational;

/// Combining marks over a digit that say it repeats: overline, macron, dot.
const MARKS: [char; 3] = ['\u{305}', '\u{304}', '\u{307}'];

/// The longest repeating block read from trailing dots (1/7's is six).
const LONGEST_CYCLE: usize = 6;

pub(super) fn rewrite(source: &Text) -> Text {
    static RECURRING: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?x)
            (?P<whole>\d*)\.(?P<marked>(?:\d[\u{304}\u{305}\u{307}]?)*\d[\u{304}\u{305}\u{307}])
            | (?P<whole_d>\d*)\.(?P<dotted>\d+)\s*\.\.\.
            | (?P<whole_w>\d*)\.(?P<worded>\d+)\s+(?:recurring|repeating|repeated|recur|rec)\b",
        )
        .expect("a valid pattern")
    });
    let text: String = source.chars().iter().collect();
    let mut out = Text::default();
    let mut cursor = 0;
    for found in RECURRING.captures_iter(&text) {
        let whole = found.get(0).map_or(0..0, |m| m.range());
        // A version number or a date ("1.2.3...") is not a decimal, and
        // digits after the marked ones would not repeat.
        if text[..whole.start].ends_with(['.', ','])
            || text[whole.end..].starts_with(|c: char| c.is_ascii_digit())
        {
            continue;
        }
        let value = if let Some(marked) = found.name("marked") {
            from_marks(
                found.name("whole").map_or("", |m| m.as_str()),
                marked.as_str(),
            )
        } else if let Some(dotted) = found.name("dotted") {
            from_dots(
                found.name("whole_d").map_or("", |m| m.as_str()),
                dotted.as_str(),
            )
        } else {
            let worded = found.name("worded").map_or("", |m| m.as_str());
            from_word(found.name("whole_w").map_or("", |m| m.as_str()), worded)
        };
        let Some(value) = value else {
            continue;
        };
        let start = text[..whole.start].chars().count();
        let end = start + text[whole.clone()].chars().count();
        for i in cursor..start {
            out.copy_from(source, i);
        }
        out.replace_from(source, start..end, &format!("({value})"));
        cursor = end;
    }
    for i in cursor..source.len() {
        out.copy_from(source, i);
    }
    out
}

/// `0.1̅6̅`: the marked digits are the block that repeats; a dot over the
/// first and last digit of a longer block (`0.1̇4285̇7`) marks all of it.
fn from_marks(whole: &str, marked: &str) -> Option<String> {
    let mut digits = String::new();
    let (mut first, mut last) = (None, None);
    for c in marked.chars() {
        if MARKS.contains(&c) {
            let at = digits.len().checked_sub(1)?;
            first.get_or_insert(at);
            last = Some(at);
        } else {
            digits.push(c);
        }
    }
    let (first, last) = (first?, last?);
    // Digits after the block would not repeat: not a recurring decimal.
    if last + 1 != digits.len() {
        return None;
    }
    exact(whole, &digits[..first], &digits[first..])
}

/// `0.333...`, `0.1666...`, `0.142857142857...`: the shortest block that
/// the digits end with at least twice, and three times for a single digit
/// (`0.33...` alone may just be cut short).
fn from_dots(whole: &str, digits: &str) -> Option<String> {
    (1..=LONGEST_CYCLE).find_map(|length| {
        let times = if length == 1 { 3 } else { 2 };
        let repeated = length * times;
        if digits.len() < repeated {
            return None;
        }
        let block = &digits[digits.len() - length..];
        let tail = &digits[digits.len() - repeated..];
        if tail != block.repeat(times) {
            return None;
        }
        // The block's first appearance: `0.1666...` is 0.1 then 6s.
        let mut start = digits.len() - repeated;
        while start >= length && digits[start - length..start] == *block {
            start -= length;
        }
        exact(whole, &digits[..start], block)
    })
}

/// `0.3 recurring`, `0.16 recurring`: the last digit repeats, as the
/// words are said aloud in class.
fn from_word(whole: &str, digits: &str) -> Option<String> {
    let (before, block) = digits.split_at(digits.len() - 1);
    exact(whole, before, block)
}

/// The fraction `whole.before(block)(block)...` equals, in lowest terms.
fn exact(whole: &str, before: &str, block: &str) -> Option<String> {
    if block.is_empty() || block.chars().all(|c| c == '0') {
        return None;
    }
    let int = |s: &str| -> Option<i128> {
        if s.is_empty() {
            Some(0)
        } else {
            s.parse().ok()
        }
    };
    let shift = 10i128.checked_pow(u32::try_from(before.len()).ok()?)?;
    let nines = 10i128.checked_pow(u32::try_from(block.len()).ok()?)? - 1;
    // whole + (before.block - before) / ((10^len(block) - 1) × 10^len(before))
    let with_block = int(&format!("{before}{block}"))?;
    let top = with_block - int(before)?;
    let bottom = nines.checked_mul(shift)?;
    let value = Rational::new(int(whole)?.checked_mul(bottom)?.checked_add(top)?, bottom).ok()?;
    Some(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> String {
        rewrite(&Text::new(text)).to_string()
    }

    #[test]
    fn recurring_decimals_become_exact_fractions() {
        assert_eq!(read("0.333..."), "(1/3)");
        assert_eq!(read("it's 0.1666..."), "it's (1/6)");
        assert_eq!(read("0.142857142857..."), "(1/7)");
        assert_eq!(read("0.3 recurring"), "(1/3)");
        assert_eq!(read("0.16 recurring"), "(1/6)");
        assert_eq!(read("2.6 repeating"), "(8/3)");
        assert_eq!(read("0.3\u{305}"), "(1/3)");
        assert_eq!(read("0.1\u{307}4285\u{307}7"), "0.1\u{307}4285\u{307}7");
        assert_eq!(read("0.1\u{307}42857\u{307}"), "(1/7)");
        assert_eq!(read("0.8\u{305}3\u{305}"), "(83/99)");
    }

    #[test]
    fn a_decimal_that_is_only_cut_short_stays() {
        assert_eq!(read("0.33..."), "0.33...");
        assert_eq!(read("3.14159..."), "3.14159...");
        assert_eq!(read("0.5"), "0.5");
        assert_eq!(read("0.000..."), "0.000...");
        assert_eq!(read("1.2.333..."), "1.2.333...");
    }
}
