//! English number words and spoken operators, as students type them
//! (`minus two`, `four and a half`, `twenty-one`, `a third`, `three point
//! one four`, `x equals four`), rewritten into digits and symbols.
//!
//! A hand-written reader rather than a words-to-numbers crate: fractions
//! (`three quarters`, `and a half`) and the offsets back into the student's
//! text are what matter here, and general-purpose crates offer neither.

use super::text::Text;
use crate::math::Rational;

/// Rewrites number words and operator words in lowercased `source`.
pub(super) fn rewrite(source: &Text) -> Text {
    let words = split_words(source);
    let mut out = Text::default();
    let mut cursor = 0;
    let mut k = 0;
    while k < words.len() {
        let start = words[k].start;
        if let Some((literal_start, value, end)) = digits_and_fraction(source, &words, k, cursor) {
            copy(source, &mut out, cursor..literal_start);
            out.replace_from(source, literal_start..end, &render(value));
            cursor = end;
            while k < words.len() && words[k].start < end {
                k += 1;
            }
            continue;
        }
        if let Some((literal_start, value)) = digits_before_scale(source, &words, k, cursor) {
            copy(source, &mut out, cursor..literal_start);
            out.replace_from(source, literal_start..words[k].end, &value);
            cursor = words[k].end;
            k += 1;
            continue;
        }
        let number = number_phrase(source, &words, k);
        if let Some((_, end)) = number
            && glued_to_next_word(source, &words, end)
        {
            // `one-step`, `two-digit`: a modifier stays words, not a number.
            k = end;
            continue;
        }
        if let Some((value, end)) = number {
            let phrase = start..words[end - 1].end;
            let digits = render(value);
            if let Some(parenthesis) = restated_in_words(source, phrase.clone(), &digits) {
                // `12 (twelve)`: keep the digits, drop the restatement.
                copy(source, &mut out, cursor..parenthesis.start);
                out.replace_from(source, parenthesis.clone(), " ");
                cursor = parenthesis.end;
                k = end;
                continue;
            }
            if let Some(parenthesis) = restated_in_digits(source, phrase.end, &digits) {
                // `twelve (12)`: one number, not a product.
                copy(source, &mut out, cursor..start);
                out.replace_from(source, start..parenthesis.end, &format!(" {digits} "));
                cursor = parenthesis.end;
                k = end;
                continue;
            }
        }
        let matched = number
            .map(|(value, end)| (render(value), end))
            .or_else(|| operator_phrase(source, &words, k));
        match matched {
            Some((replacement, end)) => {
                copy(source, &mut out, cursor..start);
                let last = words[end - 1].end;
                out.replace_from(source, start..last, &format!(" {replacement} "));
                cursor = last;
                k = end;
            }
            None => k += 1,
        }
    }
    copy(source, &mut out, cursor..source.len());
    out
}

/// The parenthesis around `phrase` when it restates, in words, the number
/// written just before it (`12 (twelve)`), which would otherwise read as
/// the product 12 × 12.
fn restated_in_words(
    source: &Text,
    phrase: std::ops::Range<usize>,
    digits: &str,
) -> Option<std::ops::Range<usize>> {
    let chars = source.chars();
    let open = skip_spaces_back(chars, phrase.start)?.checked_sub(1)?;
    let close = skip_spaces(chars, phrase.end);
    if chars[open] != '(' || chars.get(close) != Some(&')') {
        return None;
    }
    let number_end = skip_spaces_back(chars, open)?;
    let number_start = (0..number_end)
        .rev()
        .take_while(|&i| chars[i].is_ascii_digit() || chars[i] == '.')
        .last()?;
    let standalone = number_start == 0 || !chars[number_start - 1].is_alphanumeric();
    (standalone && source.slice(number_start..number_end) == digits).then_some(open..close + 1)
}

/// The parenthesis after a number in words that restates it in digits
/// (`twelve (12)`).
fn restated_in_digits(
    source: &Text,
    phrase_end: usize,
    digits: &str,
) -> Option<std::ops::Range<usize>> {
    let chars = source.chars();
    let open = skip_spaces(chars, phrase_end);
    if chars.get(open) != Some(&'(') {
        return None;
    }
    let inner_start = skip_spaces(chars, open + 1);
    let inner_end =
        (inner_start..chars.len()).find(|&i| !(chars[i].is_ascii_digit() || chars[i] == '.'))?;
    let close = skip_spaces(chars, inner_end);
    (chars.get(close) == Some(&')') && source.slice(inner_start..inner_end) == digits)
        .then_some(open..close + 1)
}

/// Whether the word before `next` is joined to it by a hyphen alone.
fn glued_to_next_word(source: &Text, words: &[Word], next: usize) -> bool {
    words
        .get(next)
        .is_some_and(|w| source.slice(words[next - 1].end..w.start) == "-")
}

/// The first index at or after `i` that is not a space.
fn skip_spaces(chars: &[char], i: usize) -> usize {
    (i..chars.len())
        .find(|&j| chars[j] != ' ')
        .unwrap_or(chars.len())
}

/// One past the last non-space before `i`, if there is one.
fn skip_spaces_back(chars: &[char], i: usize) -> Option<usize> {
    (0..i).rev().find(|&j| chars[j] != ' ').map(|j| j + 1)
}

fn copy(source: &Text, out: &mut Text, range: std::ops::Range<usize>) {
    range.for_each(|i| out.copy_from(source, i));
}

struct Word {
    start: usize,
    end: usize,
    text: String,
}

fn split_words(text: &Text) -> Vec<Word> {
    let chars = text.chars();
    let mut words = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_alphabetic() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_alphabetic() {
                i += 1;
            }
            // Letters glued to digits (`2x`, `x2`, `12cm`) are algebra or units.
            let glued = start > 0 && chars[start - 1].is_ascii_digit()
                || chars.get(i).is_some_and(char::is_ascii_digit);
            if !glued {
                words.push(Word {
                    start,
                    end: i,
                    text: chars[start..i].iter().collect(),
                });
            }
        } else {
            i += 1;
        }
    }
    words
}

/// Whether words `a` and `b` are adjacent: only spaces or one hyphen between.
fn joined(source: &Text, words: &[Word], a: usize, b: usize) -> bool {
    let (Some(left), Some(right)) = (words.get(a), words.get(b)) else {
        return false;
    };
    let gap = source.slice(left.end..right.start);
    let hyphens = gap.matches('-').count();
    gap.chars().all(|c| c == ' ' || c == '-') && hyphens <= 1 && !gap.is_empty()
}

/// Only spaces between words `a` and `b` (a hyphen would be a minus sign).
fn spaced(source: &Text, words: &[Word], a: usize, b: usize) -> bool {
    joined(source, words, a, b) && !source.slice(words[a].end..words[b].start).contains('-')
}

fn word(words: &[Word], k: usize) -> &str {
    words.get(k).map_or("", |w| w.text.as_str())
}

fn small(word: &str) -> Option<u128> {
    const SMALL: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    if word == "nought" || word == "naught" {
        return Some(0);
    }
    SMALL.iter().position(|w| *w == word).map(|n| n as u128)
}

fn tens(word: &str) -> Option<u128> {
    const TENS: [&str; 8] = [
        "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    TENS.iter()
        .position(|w| *w == word)
        .map(|n| (n as u128 + 2) * 10)
}

fn scale(word: &str) -> Option<u128> {
    Some(match word {
        "thousand" => 1_000,
        "million" => 1_000_000,
        "billion" => 1_000_000_000,
        _ => return None,
    })
}

fn denominator(word: &str) -> Option<i128> {
    let singular = word.strip_suffix('s').unwrap_or(word);
    Some(match singular {
        "half" | "halve" => 2,
        "third" => 3,
        "quarter" | "fourth" => 4,
        "fifth" => 5,
        "sixth" => 6,
        "seventh" => 7,
        "eighth" => 8,
        "ninth" => 9,
        "tenth" => 10,
        "eleventh" => 11,
        "twelfth" => 12,
        "twentieth" => 20,
        "hundredth" => 100,
        "thousandth" => 1000,
        "millionth" => 1_000_000,
        _ => return None,
    })
}

/// Words after which `one` is a pronoun (`this one`, `the second one`).
const ONE_AS_PRONOUN: [&str; 20] = [
    "this", "that", "the", "which", "each", "every", "any", "no", "another", "other", "last",
    "first", "second", "third", "next", "right", "wrong", "correct", "same", "what",
];

/// A cardinal starting at word `k`: `twenty-one`, `a hundred and five`,
/// `two thousand and twenty`. Returns its value and the word after it.
fn cardinal(source: &Text, words: &[Word], k: usize) -> Option<(u128, usize)> {
    let mut total: u128 = 0;
    let mut current: u128 = 0;
    let mut j = k;
    let mut any = false;
    // Whether the last word was a unit (`one`..`nineteen`), which cannot be
    // followed by another unit, or tens, which take a unit only.
    let mut last_small = false;
    let mut last_tens = false;
    while j < words.len() && (j == k || joined(source, words, j - 1, j)) {
        let w = word(words, j);
        if let Some(v) = small(w) {
            if last_small || (last_tens && v >= 10) {
                break;
            }
            current += v;
            last_small = true;
            last_tens = false;
        } else if let Some(v) = tens(w) {
            if last_small || last_tens {
                break;
            }
            current += v;
            last_tens = true;
            last_small = false;
        } else if w == "hundred" && (any || j == k) {
            current = current.max(1).checked_mul(100)?;
            last_small = false;
            last_tens = false;
        } else if let Some(s) = scale(w) {
            total = total.checked_add(current.max(1).checked_mul(s)?)?;
            current = 0;
            last_small = false;
            last_tens = false;
        } else if (w == "a" || w == "an") && j == k {
            // `a hundred`, `a thousand`: the article is the number one.
            let next = word(words, j + 1);
            if next != "hundred" && scale(next).is_none() {
                return None;
            }
            current = 1;
            j += 1;
            any = true;
            continue;
        } else if w == "and" && any {
            // `one hundred and five`: only after a hundred or a thousand.
            let after = word(words, j + 1);
            let follows_scale = matches!(word(words, j - 1), "hundred" | "thousand" | "million");
            if follows_scale && (small(after).is_some() || tens(after).is_some()) {
                j += 1;
                continue;
            }
            break;
        } else {
            break;
        }
        any = true;
        j += 1;
    }
    if !any {
        return None;
    }
    // A lone `one` after `this`, `the second`… is a pronoun.
    if j == k + 1 && word(words, k) == "one" {
        let before = k.checked_sub(1).map_or("", |p| word(words, p));
        if ONE_AS_PRONOUN.contains(&before) || word(words, j) == "of" {
            return None;
        }
    }
    Some((total.checked_add(current)?, j))
}

/// A number phrase starting at word `k`, with the word after it.
fn number_phrase(source: &Text, words: &[Word], k: usize) -> Option<(Rational, usize)> {
    let w = word(words, k);
    if w == "half" {
        return Some((Rational::new(1, 2).ok()?, k + 1));
    }
    // `a third`, `an eighth`, `one half`.
    let (whole, after) = if (w == "a" || w == "an")
        && denominator(word(words, k + 1)).is_some()
        && spaced(source, words, k, k + 1)
    {
        (1, k + 1)
    } else {
        cardinal(source, words, k)?
    };
    let whole_r = Rational::integer(i128::try_from(whole).ok()?);
    if let Some(den) =
        denominator(word(words, after)).filter(|_| joined(source, words, after - 1, after))
    {
        return Some((Rational::new(whole_r.numer(), den).ok()?, after + 1));
    }
    if word(words, after) == "point" && spaced(source, words, after - 1, after) {
        let mut digits = String::new();
        let mut j = after + 1;
        while spaced(source, words, j - 1, j) {
            let d = word(words, j);
            match small(d)
                .filter(|v| *v < 10)
                .or(if d == "oh" { Some(0) } else { None })
            {
                Some(v) => digits.push_str(&v.to_string()),
                None => match tens(d) {
                    Some(v) => digits.push_str(&v.to_string()),
                    None => break,
                },
            }
            j += 1;
        }
        if digits.is_empty() {
            return Some((whole_r, after));
        }
        let value = Rational::parse_decimal(&format!("{whole}.{digits}")).ok()?;
        return Some((value, j));
    }
    // `four and a half`, `two and three quarters`.
    if word(words, after) == "and"
        && spaced(source, words, after - 1, after)
        && let Some((fraction, end)) = number_phrase(source, words, after + 1)
            .filter(|(f, _)| !f.is_integer() && f.numer() > 0 && *f < Rational::ONE)
    {
        return Some((whole_r.checked_add(fraction).ok()?, end));
    }
    Some((whole_r, after))
}

fn render(value: Rational) -> String {
    if value.is_integer() {
        return value.to_string();
    }
    if let Some(decimal) = terminating_decimal(value) {
        return decimal;
    }
    format!("({value})")
}

/// `value` written as a finite decimal, if it has one of at most 12 digits.
pub(super) fn terminating_decimal(value: Rational) -> Option<String> {
    let mut den = value.denom();
    let (mut twos, mut fives) = (0u32, 0u32);
    while den % 2 == 0 {
        den /= 2;
        twos += 1;
    }
    while den % 5 == 0 {
        den /= 5;
        fives += 1;
    }
    if den != 1 {
        return None;
    }
    let places = twos.max(fives);
    if places > 12 {
        return None;
    }
    let scaled = value
        .checked_mul(Rational::integer(10i128.pow(places)))
        .ok()?;
    let digits = scaled.numer().unsigned_abs().to_string();
    let places = places as usize;
    let padded = format!("{digits:0>width$}", width = places + 1);
    let (int_part, frac_part) = padded.split_at(padded.len() - places);
    let sign = if value.numer() < 0 { "-" } else { "" };
    Some(if places == 0 {
        format!("{sign}{int_part}")
    } else {
        format!("{sign}{int_part}.{frac_part}")
    })
}

/// `2 thousand`, `1.5 million`: digits followed by a scale word at `k`.
fn digits_before_scale(
    source: &Text,
    words: &[Word],
    k: usize,
    cursor: usize,
) -> Option<(usize, String)> {
    let factor = match word(words, k) {
        "hundred" => 100,
        w => scale(w)?,
    };
    let (i, literal) = digits_before(source, words, k, cursor)?;
    let value = Rational::parse_decimal(&literal)
        .ok()?
        .checked_mul(Rational::integer(i128::try_from(factor).ok()?))
        .ok()?;
    Some((i, render(value)))
}

/// The number written in digits right before word `k`, if any: where it
/// starts and its digits.
fn digits_before(
    source: &Text,
    words: &[Word],
    k: usize,
    cursor: usize,
) -> Option<(usize, String)> {
    let chars = source.chars();
    let mut i = words[k].start;
    if i == 0 || chars[i - 1] != ' ' {
        return None;
    }
    i -= 1;
    let end = i;
    while i > cursor && (chars[i - 1].is_ascii_digit() || chars[i - 1] == '.') {
        i -= 1;
    }
    if i == end || (i > 0 && (chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '/')) {
        return None;
    }
    Some((i, chars[i..end].iter().collect()))
}

/// `4 and a half`, `2 and 3/4`: digits, then `and` (word `k`) and a
/// fraction. Returns where the digits start, the value and where it ends.
fn digits_and_fraction(
    source: &Text,
    words: &[Word],
    k: usize,
    cursor: usize,
) -> Option<(usize, Rational, usize)> {
    if word(words, k) != "and" {
        return None;
    }
    let (start, digits) = digits_before(source, words, k, cursor)?;
    let whole = Rational::parse_decimal(&digits)
        .ok()
        .filter(|w| w.is_integer())?;
    let (fraction, end) = match digit_fraction_after(source, words[k].end) {
        Some(found) => found,
        None if spaced(source, words, k, k + 1) => {
            let (fraction, after) = number_phrase(source, words, k + 1)?;
            (fraction, words[after - 1].end)
        }
        None => return None,
    };
    if fraction.is_integer() || fraction.numer() <= 0 || fraction >= Rational::ONE {
        return None;
    }
    Some((start, whole.checked_add(fraction).ok()?, end))
}

/// A fraction in digits (`3/4`) one space after `at`, and where it ends.
fn digit_fraction_after(source: &Text, at: usize) -> Option<(Rational, usize)> {
    let chars = source.chars();
    if chars.get(at) != Some(&' ') {
        return None;
    }
    let digits_from = |from: usize| {
        let mut k = from;
        while chars.get(k).is_some_and(char::is_ascii_digit) {
            k += 1;
        }
        k
    };
    let slash = digits_from(at + 1);
    if slash == at + 1 || chars.get(slash) != Some(&'/') {
        return None;
    }
    let end = digits_from(slash + 1);
    if end == slash + 1
        || chars
            .get(end)
            .is_some_and(|c| c.is_ascii_digit() || *c == '.')
    {
        return None;
    }
    let number =
        |r: std::ops::Range<usize>| chars[r].iter().collect::<String>().parse::<i128>().ok();
    let value = Rational::new(number(at + 1..slash)?, number(slash + 1..end)?).ok()?;
    Some((value, end))
}

/// Spoken operators: `times`, `divided by`, `equals`, `squared`, `percent`…
fn operator_phrase(source: &Text, words: &[Word], k: usize) -> Option<(String, usize)> {
    let w = word(words, k);
    let next = |n: usize| {
        if spaced(source, words, k + n - 1, k + n) {
            word(words, k + n)
        } else {
            ""
        }
    };
    let (symbol, len) = match w {
        "times" => ("*", 1),
        "multiplied" | "divided" if next(1) == "by" => {
            (if w == "multiplied" { "*" } else { "/" }, 2)
        }
        "plus" => ("+", 1),
        "minus" | "negative" => ("-", 1),
        "equals" => ("=", 1),
        "equal" if next(1) == "to" => ("=", 2),
        "is" if next(1) == "equal" && next(2) == "to" => ("=", 3),
        "is" if next(1) == "greater" && next(2) == "than" => (">", 3),
        "is" if next(1) == "less" && next(2) == "than" => ("<", 3),
        "greater" if next(1) == "than" => (">", 2),
        "less" if next(1) == "than" => ("<", 2),
        "at" if next(1) == "least" => (">=", 2),
        "at" if next(1) == "most" => ("<=", 2),
        "squared" => ("^2", 1),
        "cubed" => ("^3", 1),
        "percent" | "pc" => ("%", 1),
        "per" if next(1) == "cent" => ("%", 2),
        "to" if next(1) == "the" && next(2) == "power" && next(3) == "of" => ("^", 4),
        "square" if next(1) == "root" && next(2) == "of" => ("sqrt", 3),
        "root" if next(1) == "of" => ("sqrt", 2),
        "over" if between_operands(source, words, k) => ("/", 1),
        // `x is 4`: a lone letter (not the words `a` or `i`) is a variable.
        "is" if k > 0
            && spaced(source, words, k - 1, k)
            && word(words, k - 1).len() == 1
            && !matches!(word(words, k - 1), "a" | "i")
            && starts_value(source, words[k].end) =>
        {
            ("=", 1)
        }
        _ => return None,
    };
    Some((symbol.to_owned(), k + len))
}

/// Whether the text after `at` starts with a number or a sign.
fn starts_value(source: &Text, at: usize) -> bool {
    let rest = source.slice(at..source.len().min(at + 12));
    let rest = rest.trim_start();
    rest.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '(')
        || [
            "minus", "negative", "zero", "one", "two", "three", "four", "five", "six",
        ]
        .iter()
        .chain(&["seven", "eight", "nine", "ten", "a ", "half"])
        .any(|w| rest.starts_with(w))
}

/// `three over four`, `x over 2`: `over` as a fraction bar between operands.
fn between_operands(source: &Text, words: &[Word], k: usize) -> bool {
    let chars = source.chars();
    let before = chars[..words[k].start]
        .iter()
        .rev()
        .find(|c| **c != ' ')
        .copied();
    let after = chars[words[k].end..].iter().find(|c| **c != ' ').copied();
    let operand = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit() || c == ')' || c == '(');
    let word_operand = |j: Option<usize>| {
        j.is_some_and(|j| {
            let w = word(words, j);
            w.len() == 1 || small(w).is_some() || tens(w).is_some()
        })
    };
    (operand(before) || (k > 0 && spaced(source, words, k - 1, k) && word_operand(Some(k - 1))))
        && (operand(after) || (spaced(source, words, k, k + 1) && word_operand(Some(k + 1))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spoken(text: &str) -> String {
        rewrite(&Text::new(text))
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn cardinals() {
        assert_eq!(spoken("twenty-one"), "21");
        assert_eq!(spoken("twenty one"), "21");
        assert_eq!(spoken("one hundred and five"), "105");
        assert_eq!(spoken("a hundred"), "100");
        assert_eq!(spoken("two thousand and twenty"), "2020");
        assert_eq!(spoken("twelve hundred"), "1200");
        assert_eq!(spoken("three million four hundred thousand"), "3400000");
        assert_eq!(spoken("zero"), "0");
        assert_eq!(spoken("2 thousand"), "2000");
        assert_eq!(spoken("1.5 million"), "1500000");
        assert_eq!(spoken("4 and a half"), "4.5");
        assert_eq!(spoken("2 and 3/4"), "2.75");
        assert_eq!(spoken("2 and 3"), "2 and 3");
    }

    #[test]
    fn fractions_decimals_and_signs() {
        assert_eq!(spoken("a third"), "(1/3)");
        assert_eq!(spoken("three quarters"), "0.75");
        assert_eq!(spoken("two thirds"), "(2/3)");
        assert_eq!(spoken("four and a half"), "4.5");
        assert_eq!(spoken("one and two thirds"), "(5/3)");
        assert_eq!(spoken("half"), "0.5");
        assert_eq!(spoken("minus two"), "- 2");
        assert_eq!(spoken("negative four and a half"), "- 4.5");
        assert_eq!(spoken("three point one four"), "3.14");
        assert_eq!(spoken("zero point five"), "0.5");
        assert_eq!(spoken("nought point oh five"), "0.05");
    }

    #[test]
    fn operators() {
        assert_eq!(spoken("x equals four"), "x = 4");
        assert_eq!(spoken("x is 4"), "x = 4");
        assert_eq!(spoken("three times four"), "3 * 4");
        assert_eq!(spoken("twelve divided by three"), "12 / 3");
        assert_eq!(spoken("three over four"), "3 / 4");
        assert_eq!(spoken("x squared"), "x ^2");
        assert_eq!(spoken("fifty percent"), "50 %");
        assert_eq!(spoken("the square root of 16"), "the sqrt 16");
        assert_eq!(spoken("x is greater than 3"), "x > 3");
        assert_eq!(spoken("x is at least 3"), "x is >= 3");
    }

    #[test]
    fn words_that_are_not_numbers_stay() {
        assert_eq!(spoken("the second one"), "the second one");
        assert_eq!(spoken("this one is hard"), "this one is hard");
        assert_eq!(spoken("the third option"), "the third option");
        assert_eq!(spoken("a is for apple"), "a is for apple");
        assert_eq!(spoken("i went over the top"), "i went over the top");
        assert_eq!(spoken("one two three"), "1 2 3");
        assert_eq!(spoken("2x + 3"), "2x + 3");
    }
}
