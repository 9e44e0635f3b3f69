//! Problems a student asks in words that code works out in their own
//! numbers: which of two numbers is bigger, a decimal as a percentage, a
//! ratio in its simplest form, like terms collected, a letter replaced by
//! its value, a percentage taken off or added on. Each is worked as the
//! tutor works any problem of the student's own: a first step asked as a
//! question, then the step that finishes it, the answer left to them.

use std::sync::LazyLock;

use regex::Regex;

use super::problem::{SmallerSteps, StudentProblem};
use crate::content::course::ProblemShape;
use crate::engine::interpret::outside_math::listed;
use crate::math::{self, Rational};
use crate::text::template::plain;

/// The problem asked in words in `message`, with the kind of problem it is.
pub fn worded_problem(message: &str) -> Option<(ProblemShape, StudentProblem)> {
    let text = message.to_lowercase();
    comparison(&text)
        .or_else(|| decimal_as_percentage(&text).map(|p| (ProblemShape::Conversion, p)))
        .or_else(|| simplified_ratio(&text).map(|p| (ProblemShape::Ratio, p)))
        .or_else(|| percentage_change(&text).map(|p| (ProblemShape::Percentage, p)))
        .or_else(|| unit_price(&text).map(|p| (ProblemShape::Ratio, p)))
        .or_else(|| substitution(&text).map(|p| (ProblemShape::Expression, p)))
        .or_else(|| like_terms(&text).map(|p| (ProblemShape::Expression, p)))
}

/// A number as the student wrote it, with its exact value.
#[derive(Debug, Clone)]
struct Written {
    text: String,
    value: Rational,
}

impl Written {
    fn read(text: &str) -> Option<Written> {
        let size = text.trim_start_matches('-');
        let size = match size.split_once('/') {
            Some((n, d)) => Rational::new(n.parse().ok()?, d.parse().ok()?).ok()?,
            None => Rational::parse_decimal(size).ok()?,
        };
        let value = if text.starts_with('-') { -size } else { size };
        Some(Written {
            text: text.to_owned(),
            value,
        })
    }

    fn is_fraction(&self) -> bool {
        self.text.contains('/')
    }

    fn is_decimal(&self) -> bool {
        self.text.contains('.')
    }

    fn is_negative(&self) -> bool {
        self.text.starts_with('-')
    }

    /// Numerator and denominator as written (a whole number over 1).
    fn as_fraction(&self) -> Option<(i64, i64)> {
        match self.text.split_once('/') {
            Some((n, d)) => Some((n.parse().ok()?, d.parse().ok()?)),
            None => Some((self.text.parse().ok()?, 1)),
        }
    }

    fn decimal_places(&self) -> usize {
        self.text.split_once('.').map_or(0, |(_, f)| f.len())
    }
}

/// "which is bigger, 0.5 or 0.45", "is -7 bigger than -3", "which is
/// smaller 3/4 or 2/3": two numbers and a word that compares them, in a
/// question, with no arithmetic between them.
fn comparison(text: &str) -> Option<(ProblemShape, StudentProblem)> {
    static ASKED: LazyLock<Regex> = LazyLock::new(|| {
        // "the bigger of 0.5 and 0.45" is the question as the tutor says it back.
        Regex::new(r"\b(which|what|is|are|whats|what's|the)\b.*\b(bigger|larger|greater|more|higher|smaller|less|lower)\b")
            .expect("a valid pattern")
    });
    static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:^|[^\w.])(-?\d{1,6}(?:\.\d{1,6})?(?:/\d{1,4})?)\b")
            .expect("a valid pattern")
    });
    let asked = ASKED.captures(text)?;
    if text.contains(['+', '*', '×', '÷', '=']) || text.contains("%") {
        return None;
    }
    let numbers: Vec<Written> = NUMBER
        .captures_iter(text)
        .filter_map(|c| Written::read(&c[1]))
        .collect();
    let [a, b] = &numbers[..] else {
        return None;
    };
    if a.value == b.value {
        return None;
    }
    let wants_bigger = matches!(
        &asked[2],
        "bigger" | "larger" | "greater" | "more" | "higher"
    );
    let (big, small) = if a.value > b.value { (a, b) } else { (b, a) };
    let answer = if wants_bigger { big } else { small }.text.clone();
    let word = if wants_bigger { "bigger" } else { "smaller" };
    let text_shown = format!("the {word} of {} and {}", a.text, b.text);
    if a.is_fraction() || b.is_fraction() {
        let (an, ad) = a.as_fraction()?;
        let (bn, bd) = b.as_fraction()?;
        if ad <= 0 || bd <= 0 {
            return None;
        }
        let common = ad / math::gcd(ad, bd) * bd;
        let (at, bt) = (an * (common / ad), bn * (common / bd));
        return Some((
            ProblemShape::SingleFraction,
            StudentProblem {
                text: text_shown,
                answer,
                solves_for: None,
                first_step: format!(
                    "Give them the same denominator, so the pieces are the same size: what is the lowest common multiple of {ad} and {bd}?"
                ),
                first_step_expects: Some(common.to_string()),
                middle_step: None,
                later_values: vec![at.to_string(), bt.to_string()],
                finishing_step: format!(
                    "So {} = {at}/{common} and {} = {bt}/{common}. With the same size pieces, the one with more pieces is bigger. Which is {word}, {} or {}?",
                    a.text, b.text, a.text, b.text
                ),
                smaller: SmallerSteps {
                    first: Some(format!(
                        "What is the first number in both the {ad} times table and the {bd} times table?"
                    )),
                    finishing: Some(format!("Which is {word}: {at} or {bt}?")),
                },
            },
        ));
    }
    if a.is_negative() || b.is_negative() {
        return Some((
            ProblemShape::NegativeNumbers,
            StudentProblem {
                text: text_shown,
                answer,
                solves_for: None,
                first_step: format!(
                    "Picture a number line with 0 in the middle. Which side of 0 is {}, and how many steps from 0?",
                    a.text
                ),
                first_step_expects: None,
                middle_step: None,
                later_values: Vec::new(),
                finishing_step: format!(
                    "Now place {} too. Numbers get bigger as you move right on the number line, so which is {word}, {} or {}?",
                    b.text, a.text, b.text
                ),
                smaller: SmallerSteps {
                    first: Some(format!(
                        "Start at 0 and count {} steps: do you go left or right?",
                        a.text.trim_start_matches('-')
                    )),
                    finishing: Some(format!(
                        "Which of {} and {} is further to the right?",
                        a.text, b.text
                    )),
                },
            },
        ));
    }
    if !(a.is_decimal() || b.is_decimal()) {
        return None;
    }
    let places = a.decimal_places().max(b.decimal_places());
    let padded = |n: &Written| format!("{:.*}", places, n.value.to_f64());
    let (ap, bp) = (padded(a), padded(b));
    let digits =
        |p: &str| -> String { p.replace(['.', '-'], "").trim_start_matches('0').to_owned() };
    let place_name = match places {
        1 => "tenths",
        2 => "hundredths",
        3 => "thousandths",
        _ => "of the smallest place",
    };
    Some((
        ProblemShape::DecimalArithmetic,
        StudentProblem {
            text: text_shown,
            answer,
            solves_for: None,
            first_step: format!(
                "Give them the same number of decimal places: {}. How many {place_name} is {ap}?",
                [(a, &ap), (b, &bp)]
                    .iter()
                    .filter(|(n, padded)| n.text != **padded)
                    .map(|(n, padded)| format!("{} is {padded}", n.text))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            first_step_expects: Some(digits(&ap)),
            middle_step: None,
            later_values: vec![digits(&bp)],
            finishing_step: format!(
                "So compare {} {place_name} with {} {place_name}. Which is {word}, {} or {}?",
                digits(&ap),
                digits(&bp),
                a.text,
                b.text
            ),
            smaller: SmallerSteps {
                first: Some(format!(
                    "Write {ap} without its decimal point: what number is that?"
                )),
                finishing: Some(format!(
                    "Which is {word}: {} or {}?",
                    digits(&ap),
                    digits(&bp)
                )),
            },
        },
    ))
}

/// "convert 0.4 to a percentage", "0.35 as a percent": through hundredths.
fn decimal_as_percentage(text: &str) -> Option<StudentProblem> {
    static AS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:^|[^\d/])(\d{0,3}\.\d{1,4})\b[^\d/]{0,25}?\b(?:as|to|into|in)\s+(?:an?\s+)?(?:percent(?:age)?s?|per cent|%)")
            .expect("a valid pattern")
    });
    let written = Written::read(&AS.captures(text)?[1])?;
    let hundredths = written
        .value
        .checked_mul(Rational::integer(100))
        .ok()
        .map(plain)?;
    let number = &written.text;
    Some(StudentProblem {
        text: format!("{number} as a percentage"),
        answer: format!("{hundredths}%"),
        solves_for: None,
        first_step: format!(
            "Per cent means out of 100, so count in hundredths: how many hundredths is {number}?"
        ),
        first_step_expects: Some(hundredths.clone()),
        middle_step: None,
        later_values: Vec::new(),
        finishing_step: format!(
            "So {number} is {hundredths} out of 100. What is {number} as a percentage?"
        ),
        smaller: SmallerSteps {
            first: Some(format!("What is {number} × 100?")),
            finishing: Some(format!("{hundredths} out of 100 is how many per cent?")),
        },
    })
}

/// "simplify 12:18", "12:18 in its simplest form": divided through by the
/// highest common factor of its parts.
fn simplified_ratio(text: &str) -> Option<StudentProblem> {
    static RATIO: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\b(\d{1,5})\s*:\s*(\d{1,5})(?:\s*:\s*(\d{1,5}))?\b").expect("a valid pattern")
    });
    let simplify = ["simplif", "simplest", "lowest terms"]
        .iter()
        .any(|w| text.contains(w));
    if !simplify {
        return None;
    }
    let c = RATIO.captures(text)?;
    let parts: Vec<i64> = (1..=3)
        .filter_map(|i| c.get(i))
        .map(|m| m.as_str().parse().ok())
        .collect::<Option<_>>()?;
    if parts.contains(&0) {
        return None;
    }
    let hcf = parts.iter().copied().fold(0, math::gcd);
    if hcf == 1 {
        return None;
    }
    let join = |ps: &[i64]| ps.iter().map(i64::to_string).collect::<Vec<_>>().join(":");
    let ratio = join(&parts);
    let all = listed(&parts.iter().map(i64::to_string).collect::<Vec<_>>());
    let divided = parts
        .iter()
        .map(|p| format!("{p} ÷ {hcf}"))
        .collect::<Vec<_>>()
        .join(", ");
    Some(StudentProblem {
        text: format!("{ratio} in its simplest form"),
        answer: join(&parts.iter().map(|p| p / hcf).collect::<Vec<_>>()),
        solves_for: None,
        first_step: format!(
            "Simplify a ratio like a fraction: find the biggest number that divides into {all}. What is it?"
        ),
        first_step_expects: Some(hcf.to_string()),
        middle_step: None,
        later_values: Vec::new(),
        finishing_step: format!(
            "So divide every part by {hcf}. What is {ratio} in its simplest form?"
        ),
        smaller: SmallerSteps {
            first: Some(format!("Which numbers divide exactly into {all}?")),
            finishing: Some(format!("What is {divided}?")),
        },
    })
}

/// "25% off £60", "£60 jumper with 25% off", "increase 80 by 15%":
/// the percentage of the amount first, then taken off or added on.
fn percentage_change(text: &str) -> Option<StudentProblem> {
    static OFF: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(\d{1,3}(?:\.\d+)?)\s*%\s*(off|discount|reduction|decrease|increase|more|rise|extra)",
        )
        .expect("a valid pattern")
    });
    static BY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\b(increase|decrease|reduce|raise)d?\s+[£$€]?(\d{1,6}(?:\.\d{1,2})?)\s*\w*\s+by\s+(\d{1,3}(?:\.\d+)?)\s*%")
            .expect("a valid pattern")
    });
    // As the tutor says it back: "60 decreased by 25%".
    static SAID: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:^|\s)[£$€]?(\d{1,6}(?:\.\d{1,2})?)\s+(increased|decreased)\s+by\s+(\d{1,3}(?:\.\d+)?)\s*%")
            .expect("a valid pattern")
    });
    static AMOUNT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[£$€](\d{1,6}(?:\.\d{1,2})?)").expect("a valid pattern"));
    let (percent, amount, down) = if let Some(c) = SAID.captures(text) {
        (c[3].to_owned(), c[1].to_owned(), &c[2] == "decreased")
    } else if let Some(c) = BY.captures(text) {
        (
            c[3].to_owned(),
            c[2].to_owned(),
            &c[1] != "increase" && &c[1] != "raise",
        )
    } else {
        let c = OFF.captures(text)?;
        let amount = AMOUNT.captures(text)?[1].to_owned();
        let down = matches!(&c[2], "off" | "discount" | "reduction" | "decrease");
        (c[1].to_owned(), amount, down)
    };
    let p = Rational::parse_decimal(&percent).ok()?;
    let a = Rational::parse_decimal(&amount).ok()?;
    let part = p
        .checked_mul(a)
        .ok()?
        .checked_mul(Rational::new(1, 100).ok()?)
        .ok()?;
    let result = if down {
        a.checked_sub(part).ok()?
    } else {
        a.checked_add(part).ok()?
    };
    let part = plain(part);
    let (verb, sign, name) = if down {
        ("take that away", '-', "after the decrease")
    } else {
        ("add that on", '+', "after the increase")
    };
    Some(StudentProblem {
        text: format!(
            "{amount} {} by {percent}%",
            if down { "decreased" } else { "increased" }
        ),
        answer: plain(result),
        solves_for: None,
        first_step: format!("First find {percent}% of {amount}. What is {percent}% of {amount}?"),
        first_step_expects: Some(part.clone()),
        middle_step: None,
        later_values: Vec::new(),
        finishing_step: format!(
            "So {percent}% of {amount} is {part}. Now {verb}: what is the amount {name}?"
        ),
        smaller: SmallerSteps {
            first: Some(format!("What is 10% of {amount}?")),
            finishing: Some(format!("What is {amount} {sign} {part}?")),
        },
    })
}

/// "if 3 pencils cost 45p, how much do 7 cost?": the price of one, then of
/// as many as asked (the unitary method), in the money as written.
fn unit_price(text: &str) -> Option<StudentProblem> {
    static PRICED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\b(?P<had>\d{1,3})\s+(?P<things>[a-z]+(?:\s[a-z]+)?)\s+costs?\s+(?P<symbol>[£$€]?)(?P<price>\d{1,5}(?:\.\d{1,2})?)\s*(?P<pence>p|c|pence|cents?)?\b.*?\bhow\s+much\s+(?:do|does|would|will|for|are|is)?\s*(?P<asked>\d{1,3})\b")
            .expect("a valid pattern")
    });
    // The problem as the tutor says it back, read again on later turns.
    static RESTATED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\bhow\s+much\s+(?P<asked>\d{1,3})\s+(?P<things>[a-z]+(?:\s[a-z]+)?)\s+cost\s+when\s+(?P<had>\d{1,3})\s+cost\s+(?P<symbol>[£$€]?)(?P<price>\d{1,5}(?:\.\d{1,2})?)(?P<pence>p|c)?")
            .expect("a valid pattern")
    });
    let c = PRICED.captures(text).or_else(|| RESTATED.captures(text))?;
    let (had, asked): (i64, i64) = (c["had"].parse().ok()?, c["asked"].parse().ok()?);
    if had < 2 || asked == 0 || had == asked {
        return None;
    }
    let things = c["things"].to_owned();
    let price = Rational::parse_decimal(&c["price"]).ok()?;
    let money = |r: Rational| match (&c["symbol"], c.name("pence").map(|m| m.as_str())) {
        ("", Some(pence)) => format!(
            "{}{}",
            plain(r),
            if pence.starts_with('p') { "p" } else { "c" }
        ),
        ("", None) => plain(r),
        // Pounds, dollars and euros are written with their pence.
        (symbol, _) => format!("{symbol}{:.2}", r.to_f64()),
    };
    let one = price
        .checked_div(Rational::new(i128::from(had), 1).ok()?)
        .ok()?;
    let total = one
        .checked_mul(Rational::new(i128::from(asked), 1).ok()?)
        .ok()?;
    let (price_text, one_text) = (money(price), money(one));
    // In money, so the same amount in other units ("60p" for £0.60) is
    // graded as the same.
    Some(StudentProblem {
        text: format!("how much {asked} {things} cost when {had} cost {price_text}"),
        answer: money(total),
        solves_for: None,
        first_step: format!(
            "First find the cost of one: {had} {things} cost {price_text}, so what does one cost?"
        ),
        first_step_expects: Some(one_text.clone()),
        middle_step: None,
        later_values: Vec::new(),
        finishing_step: format!("So one costs {one_text}. How much do {asked} cost?"),
        smaller: SmallerSteps {
            first: Some(format!("What is {} ÷ {had}?", plain(price))),
            finishing: Some(format!("What is {asked} × {}?", plain(one))),
        },
    })
}

/// "if a = 4 what is 3a + 7", "work out 2x - 1 when x = 5": the letter
/// replaced by its value, for an expression of the form `kv`, `kv ± b`
/// or `v ± b`.
fn substitution(text: &str) -> Option<StudentProblem> {
    static VALUE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\b([a-z])\s*=\s*(-?\d{1,4})\b").expect("a valid pattern"));
    static LINEAR: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:^|[^\w=])(\d{0,3})\s*([a-z])\s*(?:([+-])\s*(\d{1,4}))?(?:\s|\?|$|,)")
            .expect("a valid pattern")
    });
    let c = VALUE.captures(text)?;
    let (variable, value): (String, i64) = (c[1].to_owned(), c[2].parse().ok()?);
    let rest = text.replacen(&c[0], " ", 1);
    let e = LINEAR
        .captures_iter(&rest)
        .find(|e| e[2] == variable && (!e[1].is_empty() || e.get(3).is_some()))?;
    let k: i64 = if e[1].is_empty() {
        1
    } else {
        e[1].parse().ok()?
    };
    let b: i64 = match (e.get(3), e.get(4)) {
        (Some(sign), Some(n)) => {
            let n: i64 = n.as_str().parse().ok()?;
            if sign.as_str() == "-" { -n } else { n }
        }
        _ => 0,
    };
    let kv = if k == 1 {
        variable.clone()
    } else {
        format!("{k}{variable}")
    };
    let expression = match b {
        0 => kv.clone(),
        b if b > 0 => format!("{kv} + {b}"),
        b => format!("{kv} - {}", -b),
    };
    let product = k.checked_mul(value)?;
    let answer = product.checked_add(b)?;
    let shown_value = if value < 0 {
        format!("({value})")
    } else {
        value.to_string()
    };
    let (first_step, first_step_expects, smaller_first) = if k == 1 {
        (
            format!("Write {value} in place of {variable}: what does {expression} become?"),
            None,
            Some(format!(
                "{variable} stands for {value}. So what is {expression} with {value} written instead of {variable}?"
            )),
        )
    } else {
        (
            format!(
                "Write {value} in place of {variable}: {kv} means {k} × {variable}. What is {k} × {shown_value}?"
            ),
            Some(product.to_string()),
            Some(format!("What is {k} lots of {shown_value}?")),
        )
    };
    let finishing = match b {
        0 => format!("So what is {kv} when {variable} = {value}?"),
        b if b > 0 => format!("So {expression} = {product} + {b}. What is that?"),
        b => format!("So {expression} = {product} - {}. What is that?", -b),
    };
    Some(StudentProblem {
        text: format!("{expression} when {variable} = {value}"),
        answer: answer.to_string(),
        solves_for: None,
        first_step,
        first_step_expects,
        middle_step: None,
        later_values: Vec::new(),
        finishing_step: finishing,
        smaller: SmallerSteps {
            first: smaller_first,
            finishing: Some(match b {
                0 => format!("What is {k} × {shown_value}?"),
                b if b > 0 => format!("What is {product} + {b}?"),
                b => format!("What is {product} - {}?", -b),
            }),
        },
    })
}

/// "simplify 3x + 5x - 2x", "collect like terms 4a + 3 + 2a": the terms in
/// one letter added up, a number term kept on its own.
fn like_terms(text: &str) -> Option<StudentProblem> {
    static EXPRESSION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(-?\s*\d{0,3}\s*[a-z]?(?:\s*[+-]\s*\d{0,3}\s*[a-z]?){2,7})")
            .expect("a valid pattern")
    });
    static TERM: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"([+-]?)\s*(\d{0,3})\s*([a-z]?)").expect("a valid pattern"));
    let asks = ["simplif", "collect", "like terms", "simplest"]
        .iter()
        .any(|w| text.contains(w));
    if !asks {
        return None;
    }
    let found = EXPRESSION
        .find_iter(text)
        .map(|m| m.as_str().trim())
        .find(|m| m.chars().any(|c| c.is_ascii_lowercase()) && m.contains(['+', '-']))?;
    let mut letter: Option<char> = None;
    let mut letter_terms: Vec<i64> = Vec::new();
    let mut number_total: i64 = 0;
    let mut numbers = 0;
    for t in TERM.captures_iter(found) {
        if t[2].is_empty() && t[3].is_empty() {
            continue;
        }
        let sign = if &t[1] == "-" { -1 } else { 1 };
        let n: i64 = if t[2].is_empty() {
            1
        } else {
            t[2].parse().ok()?
        };
        match t[3].chars().next() {
            Some(v) => {
                if letter.is_some_and(|l| l != v) {
                    return None;
                }
                letter = Some(v);
                letter_terms.push(sign * n);
            }
            None => {
                number_total += sign * n;
                numbers += 1;
            }
        }
    }
    let v = letter?;
    if letter_terms.len() < 2 {
        return None;
    }
    let total: i64 = letter_terms.iter().sum();
    let coefficient = |n: i64| match n {
        1 => v.to_string(),
        -1 => format!("-{v}"),
        n => format!("{n}{v}"),
    };
    let terms_shown: Vec<String> = letter_terms.iter().map(|n| coefficient(*n)).collect();
    let sum_shown = letter_terms
        .iter()
        .enumerate()
        .map(|(i, n)| match (i, *n < 0) {
            (0, _) => n.to_string(),
            (_, true) => format!("- {}", -n),
            (_, false) => format!("+ {n}"),
        })
        .collect::<Vec<_>>()
        .join(" ");
    let letter_part = if total == 0 {
        String::new()
    } else {
        coefficient(total)
    };
    let answer = match (letter_part.is_empty(), number_total) {
        (true, n) => n.to_string(),
        (false, 0) => letter_part.clone(),
        (false, n) if n > 0 => format!("{letter_part} + {n}"),
        (false, n) => format!("{letter_part} - {}", -n),
    };
    let written: String = found.split_whitespace().collect::<Vec<_>>().join(" ");
    let keep = if numbers > 0 {
        " The number terms have no letter, so they are collected on their own."
    } else {
        ""
    };
    Some(StudentProblem {
        text: format!("{written} simplified"),
        answer,
        solves_for: None,
        first_step: format!(
            "Only like terms can be collected: the {v} terms are {}. Add their numbers: what is {sum_shown}?",
            listed(&terms_shown)
        ),
        first_step_expects: Some(total.to_string()),
        middle_step: None,
        later_values: Vec::new(),
        finishing_step: format!(
            "So that is {total} lots of {v}.{keep} What is {written} simplified?"
        ),
        smaller: SmallerSteps {
            first: Some(format!("What is {sum_shown}?")),
            finishing: Some(format!("How do you write {total} lots of {v}?")),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worked(message: &str) -> (ProblemShape, StudentProblem) {
        worded_problem(message).unwrap_or_else(|| panic!("{message} is not read as a problem"))
    }

    #[test]
    fn comparisons_are_answered_by_value_not_by_length() {
        let cases = [
            (
                "which is bigger 0.5 or 0.45",
                ProblemShape::DecimalArithmetic,
                "0.5",
            ),
            (
                "which is smaller, 0.3 or 0.25?",
                ProblemShape::DecimalArithmetic,
                "0.25",
            ),
            ("is -7 bigger than -3", ProblemShape::NegativeNumbers, "-3"),
            (
                "which is less -2 or -9",
                ProblemShape::NegativeNumbers,
                "-9",
            ),
            (
                "which is bigger 3/4 or 2/3",
                ProblemShape::SingleFraction,
                "3/4",
            ),
        ];
        for (message, shape, answer) in cases {
            let (s, p) = worked(message);
            assert_eq!((s, p.answer.as_str()), (shape, answer), "{message}");
            assert!(p.first_step.ends_with('?'), "{message}: {}", p.first_step);
        }
        let (_, p) = worked("which is bigger 0.5 or 0.45");
        assert!(p.first_step.contains("0.50"), "{}", p.first_step);
        assert_eq!(p.first_step_expects.as_deref(), Some("50"));
        let (_, p) = worked("which is bigger 3/4 or 2/3");
        assert_eq!(p.first_step_expects.as_deref(), Some("12"));
        assert!(p.finishing_step.contains("9/12") && p.finishing_step.contains("8/12"));
    }

    #[test]
    fn sums_and_equal_numbers_are_not_comparisons() {
        assert!(comparison("is 3 + 4 bigger than 6").is_none());
        assert!(comparison("which is bigger 0.5 or 0.50").is_none());
        assert!(comparison("which is bigger 1 or 2 or 3").is_none());
        assert!(comparison("what is 0.5 times 0.4").is_none());
    }

    #[test]
    fn a_decimal_becomes_a_percentage_through_hundredths() {
        let (shape, p) = worked("convert 0.4 to a percentage");
        assert_eq!(shape, ProblemShape::Conversion);
        assert_eq!(
            (p.answer.as_str(), p.first_step_expects.as_deref()),
            ("40%", Some("40"))
        );
        assert_eq!(worked("what is 0.125 as a percent").1.answer, "12.5%");
        assert!(!worked("0.35 as a percentage").1.first_step.contains("35%"));
    }

    #[test]
    fn a_ratio_is_simplified_by_its_highest_common_factor() {
        let (shape, p) = worked("simplify 12:18");
        assert_eq!((shape, p.answer.as_str()), (ProblemShape::Ratio, "2:3"));
        assert_eq!(p.first_step_expects.as_deref(), Some("6"));
        assert_eq!(
            worked("what is 6:9:15 in its simplest form").1.answer,
            "2:3:5"
        );
        assert!(simplified_ratio("simplify 3:7").is_none());
    }

    #[test]
    fn a_percentage_is_taken_off_or_added_on() {
        let (shape, p) = worked("a £60 jumper has 25% off, how much is it now");
        assert_eq!((shape, p.answer.as_str()), (ProblemShape::Percentage, "45"));
        assert_eq!(p.first_step_expects.as_deref(), Some("15"));
        assert_eq!(worked("increase 80 by 15%").1.answer, "92");
        assert_eq!(worked("decrease £40 by 10%").1.answer, "36");
    }

    #[test]
    fn a_price_is_scaled_through_the_price_of_one() {
        let (shape, p) = worked("if 3 pencils cost 45p how much do 7 cost");
        assert_eq!((shape, p.answer.as_str()), (ProblemShape::Ratio, "105p"));
        assert_eq!(p.first_step_expects.as_deref(), Some("15p"));
        assert!(
            p.finishing_step.contains("one costs 15p"),
            "{}",
            p.finishing_step
        );
        assert!(!p.first_step.contains("105"), "{}", p.first_step);
        let (_, p) = worked("4 apples cost $2.40, how much would 10 apples cost?");
        assert_eq!(p.answer, "$6.00");
        assert!(p.finishing_step.contains("$0.60"), "{}", p.finishing_step);
        // Said back, the problem reads the same on the next turn.
        let again = unit_price(&p.text).expect("the problem said back");
        assert_eq!((again.answer, again.text), (p.answer, p.text));
        assert!(unit_price("3 pens cost 90p, how much do 3 cost").is_none());
    }

    #[test]
    fn a_letter_is_replaced_by_its_value() {
        let (shape, p) = worked("if a = 4 what is 3a+7");
        assert_eq!((shape, p.answer.as_str()), (ProblemShape::Expression, "19"));
        assert_eq!(p.text, "3a + 7 when a = 4");
        assert_eq!(p.first_step_expects.as_deref(), Some("12"));
        assert_eq!(worked("work out 2x - 1 when x = 5").1.answer, "9");
        assert_eq!(worked("find 4y when y = -3").1.answer, "-12");
    }

    #[test]
    fn like_terms_are_collected_and_numbers_kept_apart() {
        let (shape, p) = worked("simplify 3x+5x-2x");
        assert_eq!((shape, p.answer.as_str()), (ProblemShape::Expression, "6x"));
        assert_eq!(p.first_step_expects.as_deref(), Some("6"));
        assert_eq!(worked("collect like terms 4a + 3 + 2a").1.answer, "6a + 3");
        assert_eq!(worked("simplify 5n - 2n - 3n + 4").1.answer, "4");
        assert!(like_terms("simplify 3x + 2y + x").is_none());
    }

    #[test]
    fn first_steps_never_give_the_answer_away() {
        // A comparison's answer is one of the numbers asked about, so it has
        // nothing to hide.
        for message in [
            "convert 0.4 to a percentage",
            "simplify 12:18",
            "a £60 jumper has 25% off",
            "if a = 4 what is 3a+7",
            "simplify 3x+5x-2x",
        ] {
            let (_, p) = worked(message);
            let guard =
                crate::engine::reply::answer_guard::PendingAnswer::new("own", &p.text, &p.answer)
                    .unwrap();
            assert!(
                !guard.found_in(&p.first_step),
                "{message}: {}",
                p.first_step
            );
        }
    }
}
