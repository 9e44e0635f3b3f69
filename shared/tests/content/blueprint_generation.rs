//! Every shipped blueprint, over 10,000 random seeds and target difficulties:
//! the question shown is solved here independently — its numbers are read
//! back from the LaTeX and worked out with plain Rust arithmetic, never with
//! the expression evaluator — and must give the stated answer; the
//! scenario's conditions hold; the options are distinct and contain the
//! answer exactly once, with no distractor worth the same; the difficulty
//! is in [0, 1] and never lower for a scenario with a higher weight.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::LazyLock;

use proptest::prelude::*;
use regex::Regex;
use tutorflow::content::blueprint::{AnswerShape, Blueprint};
use tutorflow::content::{Bundle, ContentSource, FsSource};
use tutorflow::engine::practice::generate::{Item, generate, generate_in_scenario};

static BLUEPRINTS: LazyLock<BTreeMap<String, Blueprint>> = LazyLock::new(|| {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let files = runtime
        .block_on(FsSource::new(root).fetch())
        .expect("the repository holds a bundle");
    Bundle::load(&files)
        .unwrap_or_else(|d| panic!("{d}"))
        .blueprints
});

fn blueprint(id: &str) -> &'static Blueprint {
    BLUEPRINTS
        .get(id)
        .unwrap_or_else(|| panic!("no shipped blueprint {id}"))
}

// ---------------------------------------------------------------------------
// Exact fractions, written out again here so the oracle shares nothing with
// the engine's arithmetic.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Q {
    n: i128,
    d: i128,
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn q(n: i128, d: i128) -> Q {
    assert_ne!(d, 0, "zero denominator");
    let g = gcd(n, d).max(1);
    let s = if d < 0 { -1 } else { 1 };
    Q {
        n: s * n / g,
        d: s * d / g,
    }
}

fn int(n: i128) -> Q {
    Q { n, d: 1 }
}

impl Q {
    fn add(self, o: Q) -> Q {
        q(self.n * o.d + o.n * self.d, self.d * o.d)
    }
    fn mul(self, o: Q) -> Q {
        q(self.n * o.n, self.d * o.d)
    }
    fn whole(self) -> Option<i128> {
        (self.d == 1).then_some(self.n)
    }
    fn fraction(self) -> String {
        if self.d == 1 {
            self.n.to_string()
        } else {
            format!("{}/{}", self.n, self.d)
        }
    }
    /// Terminating decimals only (the oracle never needs others).
    fn decimal(self) -> String {
        let mut places = 0;
        let mut scaled = self;
        while scaled.d != 1 {
            scaled = scaled.mul(int(10));
            places += 1;
            assert!(places <= 12, "{self:?} does not terminate");
        }
        let digits = scaled.n.unsigned_abs().to_string();
        let sign = if scaled.n < 0 { "-" } else { "" };
        if places == 0 {
            return format!("{sign}{digits}");
        }
        let digits = format!("{digits:0>width$}", width = places + 1);
        let (whole, frac) = digits.split_at(digits.len() - places);
        format!("{sign}{whole}.{frac}")
    }
}

/// `-12`, `3.45`, `5/4` → a reduced fraction.
fn parse_number(text: &str) -> Option<Q> {
    let text = text.trim();
    if let Some((n, d)) = text.split_once('/') {
        return Some(q(n.trim().parse().ok()?, d.trim().parse().ok()?));
    }
    match text.split_once('.') {
        Some((w, f)) => {
            let negative = w.starts_with('-');
            let whole: i128 = w.parse().ok()?;
            let frac: i128 = f.parse().ok()?;
            let scale = 10i128.pow(f.len() as u32);
            let magnitude = whole.abs() * scale + frac;
            Some(q(if negative { -magnitude } else { magnitude }, scale))
        }
        None => text.parse().ok().map(int),
    }
}

// ---------------------------------------------------------------------------
// Reading the question back.

static NUMBER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"-?\d+(\.\d+)?").unwrap());

/// The LaTeX with every number replaced by `#`, and the numbers.
fn shape(latex: &str) -> (String, Vec<Q>) {
    let numbers = NUMBER
        .find_iter(latex)
        .map(|m| parse_number(m.as_str()).unwrap())
        .collect();
    (NUMBER.replace_all(latex, "#").into_owned(), numbers)
}

fn p(item: &Item, name: &str) -> Q {
    let r = item
        .parameter(name)
        .unwrap_or_else(|| panic!("{} has no parameter {name}", item.blueprint_id));
    q(r.numer(), r.denom())
}

fn pi(item: &Item, name: &str) -> i128 {
    p(item, name)
        .whole()
        .unwrap_or_else(|| panic!("{name} is not whole"))
}

/// Exact division, or a failed property.
fn div(a: i128, b: i128) -> Result<i128, String> {
    if b != 0 && a % b == 0 {
        Ok(a / b)
    } else {
        Err(format!("{a} / {b} does not come out exactly"))
    }
}

fn check(condition: bool, what: &str) -> Result<(), String> {
    if condition {
        Ok(())
    } else {
        Err(format!("violated: {what}"))
    }
}

type Oracle = fn(&Item) -> Result<String, String>;

fn unexpected(item: &Item, shape: &str) -> String {
    format!(
        "{} shows a question of unexpected shape `{shape}`",
        item.blueprint_id
    )
}

fn add_2digit(item: &Item) -> Result<String, String> {
    let (a, b) = (pi(item, "a"), pi(item, "b"));
    check(
        (10..=99).contains(&a) && (10..=99).contains(&b),
        "2-digit numbers",
    )?;
    let ones_carry = a % 10 + b % 10 >= 10;
    let tens_carry = a + b >= 100;
    let expected = match (ones_carry, tens_carry) {
        (false, false) => "no_carry",
        (true, true) => "double_carry",
        _ => "single_carry",
    };
    check(item.scenario == expected, "the carries match the scenario")?;
    match shape(&item.question_latex) {
        (s, n) if s == "# + #" => Ok((n[0].n + n[1].n).to_string()),
        (s, _) => Err(unexpected(item, &s)),
    }
}

fn sub_borrow(item: &Item) -> Result<String, String> {
    let digit = |name| pi(item, name);
    let a = 100 * digit("ah") + 10 * digit("at") + digit("ao");
    let b = 100 * digit("bh") + 10 * digit("bt") + digit("bo");
    check(b >= 10 && a > b, "b >= 10 and a > b")?;
    let (ones_borrow, tens_borrow) = (a % 10 < b % 10, (a / 10) % 10 < (b / 10) % 10);
    let expected = if a < 100 {
        check(b < 100, "2-digit problems take a 2-digit number away")?;
        if ones_borrow {
            "borrow_ones"
        } else {
            "no_borrow"
        }
    } else if (a / 10) % 10 == 0 && ones_borrow {
        "borrow_across_zero"
    } else {
        check(ones_borrow || tens_borrow, "a 3-digit item needs a borrow")?;
        "three_digit_borrow"
    };
    check(item.scenario == expected, "the borrows match the scenario")?;
    match shape(&item.question_latex) {
        (s, n) if s == "# - #" => {
            check(n[0] == int(a) && n[1] == int(b), "the LaTeX shows a and b")?;
            Ok((n[0].n - n[1].n).to_string())
        }
        (s, _) => Err(unexpected(item, &s)),
    }
}

fn mul_2digit(item: &Item) -> Result<String, String> {
    let (a, b) = (pi(item, "a"), pi(item, "b"));
    check(a % 10 != 0, "a does not end in 0")?;
    let carries = (a % 10) * b >= 10 || (a / 10) * b >= 10;
    let expected = match b {
        2..=9 if !carries => "by_one_digit_no_carry",
        2..=9 => "by_one_digit",
        _ if b % 10 == 0 => "by_multiple_of_ten",
        _ => "by_two_digit",
    };
    check(
        item.scenario == expected,
        "the multiplier matches the scenario",
    )?;
    match shape(&item.question_latex) {
        (s, n) if s == r"# \times #" => Ok((n[0].n * n[1].n).to_string()),
        (s, _) => Err(unexpected(item, &s)),
    }
}

fn div_remainder(item: &Item) -> Result<String, String> {
    match shape(&item.question_latex) {
        (s, n) if s == r"# \div #" => {
            let (a, b) = (n[0].n, n[1].n);
            let (quotient, remainder) = (a / b, a % b);
            check(remainder != 0, "there is a remainder")?;
            let expected = if a < 100 {
                if quotient < 10 {
                    "single_digit_quotient"
                } else {
                    "two_digit"
                }
            } else if quotient >= 100 && (quotient / 10) % 10 == 0 {
                "zero_in_quotient"
            } else {
                "three_digit"
            };
            check(
                item.scenario == expected,
                "the division matches the scenario",
            )?;
            Ok(format!("{quotient} r {remainder}"))
        }
        (s, _) => Err(unexpected(item, &s)),
    }
}

fn frac_add_unlike(item: &Item) -> Result<String, String> {
    match shape(&item.question_latex) {
        (s, n) if s == r"\frac{#}{#} + \frac{#}{#}" => {
            let [n1, d1, n2, d2] = [n[0].n, n[1].n, n[2].n, n[3].n];
            check(n1 < d1 && n2 < d2, "proper fractions")?;
            check(
                gcd(n1, d1) == 1 && gcd(n2, d2) == 1,
                "fractions in lowest terms",
            )?;
            check(d1 != d2, "unlike denominators")?;
            let expected = if d1.max(d2) % d1.min(d2) == 0 {
                "one_denominator_divides_the_other"
            } else if gcd(d1, d2) == 1 {
                "coprime_denominators"
            } else {
                "shared_factor"
            };
            check(
                item.scenario == expected,
                "the denominators match the scenario",
            )?;
            Ok(q(n1, d1).add(q(n2, d2)).fraction())
        }
        (s, _) => Err(unexpected(item, &s)),
    }
}

fn frac_simplify(item: &Item) -> Result<String, String> {
    let m = pi(item, "m");
    let expected = match m {
        2 => "halve_once",
        3 | 5 | 7 | 11 => "one_prime_factor",
        _ => "several_steps",
    };
    check(
        item.scenario == expected,
        "the common factor matches the scenario",
    )?;
    match shape(&item.question_latex) {
        (s, n) if s == r"\frac{#}{#}" => {
            check(gcd(n[0].n, n[1].n) == m, "the common factor is exactly m")?;
            check(n[0].n < n[1].n, "a proper fraction")?;
            Ok(q(n[0].n, n[1].n).fraction())
        }
        (s, _) => Err(unexpected(item, &s)),
    }
}

fn pct_of_quantity(item: &Item) -> Result<String, String> {
    let (s, n) = shape(&item.question_latex);
    let unit = match s.as_str() {
        r"#\% \text{ of } #" => "",
        r"#\% \text{ of } #\text{ kg}" => " kg",
        _ => return Err(unexpected(item, &s)),
    };
    let (percent, quantity) = (n[0].n, n[1].n);
    let expected = match percent {
        10 | 25 | 50 => "friendly_percent",
        _ if percent % 10 == 0 => "multiple_of_ten",
        _ if percent % 5 == 0 => "multiple_of_five",
        _ => "any_percent_of_a_measure",
    };
    check(
        item.scenario == expected,
        "the percentage matches the scenario",
    )?;
    check(
        (unit == " kg") == (expected == "any_percent_of_a_measure"),
        "only measures have a unit",
    )?;
    let value = q(percent * quantity, 100);
    if unit.is_empty() {
        check(value.d == 1, "a count of people or things is whole")?;
    }
    Ok(format!("{}{unit}", value.decimal()))
}

fn eq_one_step(item: &Item) -> Result<String, String> {
    let (s, n) = shape(&item.question_latex);
    let v = |i: usize| n[i].n;
    let x = match s.as_str() {
        "x + # = #" => v(1) - v(0),
        "x - # = #" => v(1) + v(0),
        "#x = #" => div(v(1), v(0))?,
        r"\frac{ x}{#} = #" => v(1) * v(0),
        _ => return Err(unexpected(item, &s)),
    };
    check(
        (x < 0) == item.scenario.starts_with("negative"),
        "negative solutions only in negative scenarios",
    )?;
    Ok(format!("x = {x}"))
}

fn eq_two_step(item: &Item) -> Result<String, String> {
    let (s, n) = shape(&item.question_latex);
    let v = |i: usize| n[i].n;
    let x = match s.as_str() {
        "#x + # = #" => div(v(2) - v(1), v(0))?,
        "#x - # = #" => div(v(2) + v(1), v(0))?,
        r"\frac{ x}{#} + # = #" => (v(2) - v(1)) * v(0),
        "#(x + #) = #" => div(v(2), v(0))? - v(1),
        _ => return Err(unexpected(item, &s)),
    };
    check(x != 0, "a non-zero solution")?;
    check(
        (x < 0) == (item.scenario == "negative_solution"),
        "negative solutions only in their scenario",
    )?;
    Ok(format!("x = {x}"))
}

fn order_of_operations(item: &Item) -> Result<String, String> {
    let (s, n) = shape(&item.question_latex);
    let v = |i: usize| n[i].n;
    let value = match s.as_str() {
        r"# + # \times #" => v(0) + v(1) * v(2),
        r"# - # \div #" => v(0) - div(v(1), v(2))?,
        r"(# + #) \times #" => (v(0) + v(1)) * v(2),
        r"# \div # \times #" => div(v(0), v(1))? * v(2),
        r"# + #^# \times #" => v(0) + v(1).pow(v(2) as u32) * v(3),
        r"# \times (# + #) - #^#" => v(0) * (v(1) + v(2)) - v(3).pow(v(4) as u32),
        _ => return Err(unexpected(item, &s)),
    };
    check(value >= 0, "a whole-number answer for this unit")?;
    Ok(value.to_string())
}

fn dec_add(item: &Item) -> Result<String, String> {
    match shape(&item.question_latex) {
        (s, n) if s == "# + #" => {
            let places = |x: Q| x.decimal().split_once('.').map_or(0, |(_, f)| f.len());
            let (pa, pb) = (places(n[0]), places(n[1]));
            let carry_tenths = |x: Q| (x.mul(int(10)).n / x.mul(int(10)).d) % 10;
            let expected = match (pa, pb) {
                (1, 1) if carry_tenths(n[0]) + carry_tenths(n[1]) < 10 => "tenths_no_carry",
                (1, 1) => "carry_across_the_point",
                (2, 2) => "hundredths",
                (0, 2) => "whole_plus_decimal",
                (2, 1) => "different_places",
                _ => return Err(format!("unexpected places {pa} and {pb}")),
            };
            check(
                item.scenario == expected,
                "the decimal places match the scenario",
            )?;
            Ok(n[0].add(n[1]).decimal())
        }
        (s, _) => Err(unexpected(item, &s)),
    }
}

fn frac_mul(item: &Item) -> Result<String, String> {
    let (s, n) = shape(&item.question_latex);
    match s.as_str() {
        r"\frac{#}{#} \times \frac{#}{#}" => {
            let [n1, d1, n2, d2] = [n[0].n, n[1].n, n[2].n, n[3].n];
            check(n1 < d1 && n2 < d2, "proper fractions")?;
            let cancels = gcd(n1, d2) > 1 || gcd(n2, d1) > 1;
            check(
                item.scenario
                    == if cancels {
                        "cancelling"
                    } else {
                        "no_cancelling"
                    },
                "cancelling matches the scenario",
            )?;
            Ok(q(n1, d1).mul(q(n2, d2)).fraction())
        }
        r"# \times \frac{#}{#}" => {
            check(item.scenario == "whole_times_fraction", "the scenario")?;
            Ok(n[0].mul(q(n[1].n, n[2].n)).fraction())
        }
        _ => Err(unexpected(item, &s)),
    }
}

fn int_addsub(item: &Item) -> Result<String, String> {
    let (s, n) = shape(&item.question_latex);
    let (a, b) = (n[0].n, n[1].n);
    check(a != 0 && b != 0, "no zeros")?;
    let (value, expected) = match s.as_str() {
        "# + #" | "# + (#)" => (
            a + b,
            if a < 0 && b < 0 {
                "add_two_negatives"
            } else {
                "add_opposite_signs"
            },
        ),
        "# - #" | "# - (#)" => (
            a - b,
            if b < 0 {
                "subtract_a_negative"
            } else {
                "subtract_past_zero"
            },
        ),
        _ => return Err(unexpected(item, &s)),
    };
    check(item.scenario == expected, "the signs match the scenario")?;
    if expected == "subtract_past_zero" {
        check(0 < a && a < b, "the answer crosses zero")?;
    }
    check(
        (b < 0) == s.contains("(#)"),
        "negative second numbers are in brackets",
    )?;
    Ok(value.to_string())
}

fn int_muldiv(item: &Item) -> Result<String, String> {
    let (s, n) = shape(&item.question_latex);
    let v = |i: usize| n[i].n;
    let (value, expected) = match s.as_str() {
        r"# \times #" | r"# \times (#)" => (
            v(0) * v(1),
            if v(0) < 0 && v(1) < 0 {
                "multiply_two_negatives"
            } else {
                "multiply_opposite_signs"
            },
        ),
        r"# \div #" | r"# \div (#)" => (
            div(v(0), v(1))?,
            if v(0) < 0 && v(1) < 0 {
                "divide_two_negatives"
            } else {
                "divide_opposite_signs"
            },
        ),
        _ if s.matches(r"\times").count() == 2 => (v(0) * v(1) * v(2), "three_factors"),
        _ => return Err(unexpected(item, &s)),
    };
    check(item.scenario == expected, "the signs match the scenario")?;
    check(
        value != 0 && n.iter().any(|x| x.n < 0),
        "a negative number is involved",
    )?;
    if expected != "three_factors"
        && expected != "multiply_two_negatives"
        && expected != "divide_two_negatives"
    {
        check(value < 0, "opposite signs give a negative answer")?;
    }
    Ok(value.to_string())
}

fn alg_evaluate(item: &Item) -> Result<String, String> {
    let (s, n) = shape(&item.question_latex);
    let v = |i: usize| n[i].n;
    let when = r" \quad \text{ when } x = #";
    let Some(form) = s.strip_suffix(when) else {
        return Err(unexpected(item, &s));
    };
    let value = match form {
        "#x + #" => v(0) * v(2) + v(1),
        "#x - #" => v(0) * v(2) - v(1),
        "#x^# + #" => v(0) * v(3).pow(v(1) as u32) + v(2),
        "#x^# - #" => v(0) * v(3).pow(v(1) as u32) - v(2),
        _ => return Err(unexpected(item, &s)),
    };
    let x = *n.last().map(|x| &x.n).unwrap_or(&0);
    check(
        x != 0 && (x < 0) == item.scenario.contains("negative"),
        "negative x only in negative scenarios",
    )?;
    Ok(value.to_string())
}

fn alg_inverse(item: &Item) -> Result<String, String> {
    let (s, n) = shape(&item.question_latex);
    let v = |i: usize| n[i].n;
    let number = match s.as_str() {
        r"? \xrightarrow{+\,#} #" => v(1) - v(0),
        r"? \xrightarrow{-\,#} #" => v(1) + v(0),
        r"? \xrightarrow{\times\,#} #" => div(v(1), v(0))?,
        r"? \xrightarrow{\div\,#} #" => v(1) * v(0),
        r"? \xrightarrow{\times\,#} \square \xrightarrow{+\,#} #" => div(v(2) - v(1), v(0))?,
        _ => return Err(unexpected(item, &s)),
    };
    check(number > 0, "the number thought of is positive")?;
    check(
        item.stem
            .contains(&n.last().map(|x| x.n).unwrap_or(0).to_string()),
        "the stem states the result",
    )?;
    Ok(number.to_string())
}

fn ratio_share(item: &Item) -> Result<String, String> {
    let (s, n) = shape(&item.question_latex);
    let v = |i: usize| n[i].n;
    let share = match s.as_str() {
        r"# \text{ in the ratio } #:# \text{, first share}" => {
            let expected = if v(1) == 1 {
                "one_to_many"
            } else {
                "two_parts"
            };
            check(
                item.scenario == expected,
                "1:n ratios are their own scenario",
            )?;
            div(v(0) * v(1), v(1) + v(2))?
        }
        r"# \text{ in the ratio } #:# \text{, second share}" => div(v(0) * v(2), v(1) + v(2))?,
        r"# \text{ in the ratio } #:#:# \text{, second share}" => {
            check(v(3) != v(1) && v(3) != v(2), "three different parts")?;
            div(v(0) * v(2), v(1) + v(2) + v(3))?
        }
        _ => return Err(unexpected(item, &s)),
    };
    check(
        v(1) != v(2) && gcd(v(1), v(2)) == 1,
        "a simplest-form ratio",
    )?;
    Ok(share.to_string())
}

fn ipv4_network(item: &Item) -> Result<String, String> {
    let (address, prefix) = item
        .question_latex
        .split_once('/')
        .ok_or("no prefix in the question")?;
    let octets: Vec<u8> = address
        .split('.')
        .map(|o| o.parse().map_err(|_| format!("bad octet {o}")))
        .collect::<Result<_, _>>()?;
    let prefix: u32 = prefix.parse().map_err(|_| "bad prefix")?;
    check(
        octets.len() == 4 && (8..=30).contains(&prefix),
        "an address and a prefix from 8 to 30",
    )?;
    let ip = u32::from_be_bytes([octets[0], octets[1], octets[2], octets[3]]);
    let mask = u32::MAX << (32 - prefix);
    let network = ip & mask;
    check(
        ip != network,
        "the address is not itself the network address",
    )?;
    let class_prefix = match octets[0] {
        0..=127 => 8,
        128..=191 => 16,
        _ => 24,
    };
    let expected = if !prefix.is_multiple_of(8) {
        "inside_an_octet"
    } else if prefix == class_prefix {
        "classful"
    } else {
        "octet_boundary"
    };
    check(item.scenario == expected, "the prefix matches the scenario")?;
    let [a, b, c, d] = network.to_be_bytes();
    Ok(format!("{a}.{b}.{c}.{d}"))
}

fn oracle(id: &str) -> Oracle {
    match id {
        "MATH.ARITH.ADD.2DIGIT" => add_2digit,
        "MATH.ARITH.SUB.BORROW" => sub_borrow,
        "MATH.ARITH.MUL.2DIGIT" => mul_2digit,
        "MATH.ARITH.DIV.REMAINDER" => div_remainder,
        "MATH.FRAC.ADD.UNLIKE" => frac_add_unlike,
        "MATH.FRAC.SIMPLIFY" => frac_simplify,
        "MATH.PCT.OF_QUANTITY" => pct_of_quantity,
        "MATH.ALG.EQ.ONESTEP" => eq_one_step,
        "MATH.ALG.EQ.TWOSTEP" => eq_two_step,
        "MATH.ARITH.ORDER_OF_OPS" => order_of_operations,
        "MATH.DEC.ADD" => dec_add,
        "MATH.FRAC.MUL" => frac_mul,
        "MATH.INT.ADDSUB" => int_addsub,
        "MATH.INT.MULDIV" => int_muldiv,
        "MATH.ALG.EVALUATE" => alg_evaluate,
        "MATH.ALG.INVERSE" => alg_inverse,
        "MATH.RATIO.SHARE" => ratio_share,
        "NET.IP.SUBNET.CALC" => ipv4_network,
        other => panic!("no oracle for {other}: add one to this test"),
    }
}

// ---------------------------------------------------------------------------
// Properties every item has.

/// Skills about positive amounts: a negative or zero option would look
/// absurd to a 12-year-old, and so give the answer away.
const WHOLE_AMOUNTS: [&str; 10] = [
    "MATH.ARITH.ADD.2DIGIT",
    "MATH.ARITH.SUB.BORROW",
    "MATH.ARITH.MUL.2DIGIT",
    "MATH.ARITH.DIV.REMAINDER",
    "MATH.ARITH.ORDER_OF_OPS",
    "MATH.FRAC.ADD.UNLIKE",
    "MATH.FRAC.SIMPLIFY",
    "MATH.FRAC.MUL",
    "MATH.DEC.ADD",
    "MATH.PCT.OF_QUANTITY",
];

/// The value an option stands for, when it is a number.
fn option_value(text: &str, kind: AnswerShape) -> Option<Q> {
    if matches!(kind, AnswerShape::Ipv4 | AnswerShape::QuotientRemainder) {
        return None;
    }
    let text = text.strip_prefix("x = ").unwrap_or(text);
    let text = text.strip_suffix(" kg").unwrap_or(text);
    parse_number(text)
}

fn check_item(bp: &Blueprint, item: &Item) -> Result<(), String> {
    let expected = oracle(&bp.id)(item)?;
    check(
        item.answer.text == expected,
        &format!("the answer {} is {expected}", item.answer.text),
    )?;
    check(
        item.options.len() == bp.presentation.options,
        "the blueprint's number of options",
    )?;
    check(
        item.options[item.answer_index] == item.answer.text,
        "answer_index points at the answer",
    )?;
    check(
        item.options
            .iter()
            .filter(|o| **o == item.answer.text)
            .count()
            == 1,
        "the answer is among the options exactly once",
    )?;
    let mut normalized: Vec<String> = item
        .options
        .iter()
        .map(|o| o.trim().to_lowercase())
        .collect();
    normalized.sort();
    normalized.dedup();
    check(normalized.len() == item.options.len(), "distinct options")?;
    let wrong: Vec<&String> = item
        .options
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != item.answer_index)
        .map(|(_, o)| o)
        .collect();
    let listed: Vec<&String> = item.distractors.iter().map(|d| &d.text).collect();
    check(
        wrong == listed,
        "the distractors are the other options, in order",
    )?;
    let answer_value = option_value(&item.answer.text, item.answer.kind);
    for d in &item.distractors {
        let value = option_value(&d.text, item.answer.kind);
        let unsimplified = d.text.split_once('/').is_some_and(|(n, den)| {
            let strip = |t: &str| t.trim().trim_start_matches("x = ").parse::<i128>().ok();
            matches!((strip(n), strip(den)), (Some(n), Some(den)) if gcd(n, den) > 1)
        });
        if value.is_some() && value == answer_value {
            check(
                item.answer.simplest_form && unsimplified,
                &format!("distractor {} is not worth the answer", d.text),
            )?;
        }
    }
    if WHOLE_AMOUNTS.contains(&bp.id.as_str()) {
        for option in &item.options {
            let negative = option.trim_start_matches("x = ").starts_with('-');
            check(
                !negative && option != "0",
                &format!("no negative or zero option such as {option}"),
            )?;
        }
    }
    check(
        (0.0..=1.0).contains(&item.difficulty),
        "difficulty in [0, 1]",
    )?;
    let scenario = bp
        .difficulty
        .scenarios
        .iter()
        .find(|s| s.name == item.scenario)
        .ok_or("the scenario exists")?;
    let nearest = bp
        .difficulty
        .scenarios
        .iter()
        .map(|s| (s.weight - item.target_difficulty).abs())
        .fold(f64::INFINITY, f64::min);
    check(
        (scenario.weight - item.target_difficulty).abs() <= nearest + 1e-9,
        "the scenario is the one nearest the target",
    )?;
    Ok(())
}

fn property(id: &str, seed: u64, target: f64, other_target: f64) -> Result<(), TestCaseError> {
    let bp = blueprint(id);
    let fail = |e: String| TestCaseError::fail(format!("{id} seed {seed}: {e}"));
    let item = generate(bp, target, seed).map_err(|e| fail(e.to_string()))?;
    check_item(bp, &item).map_err(|e| fail(format!("{e}\n{item:#?}")))?;
    prop_assert_eq!(
        &item,
        &generate(bp, target, seed).map_err(|e| fail(e.to_string()))?
    );
    // Monotone in the weights: an item of a heavier scenario is never easier.
    let other = generate(bp, other_target, seed.rotate_left(17) ^ 0x5EED)
        .map_err(|e| fail(e.to_string()))?;
    check_item(bp, &other).map_err(|e| fail(format!("{e}\n{other:#?}")))?;
    let weight = |name: &str| {
        bp.difficulty
            .scenarios
            .iter()
            .find(|s| s.name == name)
            .map_or(f64::NAN, |s| s.weight)
    };
    let (w1, w2) = (weight(&item.scenario), weight(&other.scenario));
    if w1 < w2 {
        prop_assert!(
            item.difficulty <= other.difficulty,
            "{} < {}",
            item.difficulty,
            other.difficulty
        );
    } else if w2 < w1 {
        prop_assert!(
            other.difficulty <= item.difficulty,
            "{} < {}",
            other.difficulty,
            item.difficulty
        );
    }
    Ok(())
}

macro_rules! blueprint_properties {
    ($($test:ident => $id:literal),* $(,)?) => {
        proptest! {
            #![proptest_config(ProptestConfig { cases: 10_000, failure_persistence: None, .. ProptestConfig::default() })]
            $(
                #[test]
                fn $test(seed: u64, target in 0.0f64..=1.0, other in 0.0f64..=1.0) {
                    property($id, seed, target, other)?;
                }
            )*
        }

        #[test]
        fn every_shipped_blueprint_is_covered() {
            let covered = [$($id),*];
            for id in BLUEPRINTS.keys() {
                assert!(covered.contains(&id.as_str()), "{id} has no property test");
            }
        }
    };
}

blueprint_properties! {
    add_2digit_items => "MATH.ARITH.ADD.2DIGIT",
    sub_borrow_items => "MATH.ARITH.SUB.BORROW",
    mul_2digit_items => "MATH.ARITH.MUL.2DIGIT",
    div_remainder_items => "MATH.ARITH.DIV.REMAINDER",
    frac_add_unlike_items => "MATH.FRAC.ADD.UNLIKE",
    frac_simplify_items => "MATH.FRAC.SIMPLIFY",
    pct_of_quantity_items => "MATH.PCT.OF_QUANTITY",
    eq_one_step_items => "MATH.ALG.EQ.ONESTEP",
    eq_two_step_items => "MATH.ALG.EQ.TWOSTEP",
    order_of_operations_items => "MATH.ARITH.ORDER_OF_OPS",
    dec_add_items => "MATH.DEC.ADD",
    frac_mul_items => "MATH.FRAC.MUL",
    int_addsub_items => "MATH.INT.ADDSUB",
    int_muldiv_items => "MATH.INT.MULDIV",
    alg_evaluate_items => "MATH.ALG.EVALUATE",
    alg_inverse_items => "MATH.ALG.INVERSE",
    ratio_share_items => "MATH.RATIO.SHARE",
    ipv4_network_items => "NET.IP.SUBNET.CALC",
}

/// Every scenario of every blueprint is reachable, and a heavier scenario
/// never yields an easier item than a lighter one, seed for seed.
#[test]
fn difficulty_is_monotone_across_all_scenarios() {
    for bp in BLUEPRINTS.values() {
        let scenarios = &bp.difficulty.scenarios;
        for seed in 0..50 {
            let items: Vec<Item> = (0..scenarios.len())
                .map(|i| generate_in_scenario(bp, i, seed).unwrap_or_else(|e| panic!("{e}")))
                .collect();
            for (i, a) in items.iter().enumerate() {
                check_item(bp, a).unwrap_or_else(|e| panic!("{}: {e}", bp.id));
                for (j, b) in items.iter().enumerate() {
                    if scenarios[i].weight < scenarios[j].weight {
                        assert!(
                            a.difficulty <= b.difficulty,
                            "{}: {} vs {}",
                            bp.id,
                            a.scenario,
                            b.scenario
                        );
                    }
                }
            }
        }
    }
}

/// Different seeds give different questions: a drill repeated ten times
/// does not show the same question twice in a row.
#[test]
fn seeds_vary_the_items() {
    for bp in BLUEPRINTS.values() {
        for target in [0.0, 0.5, 1.0] {
            let questions: std::collections::BTreeSet<String> = (0..40)
                .map(|seed| generate(bp, target, seed).unwrap().question_latex)
                .collect();
            assert!(
                questions.len() >= 20,
                "{} at {target}: only {} different questions",
                bp.id,
                questions.len()
            );
        }
    }
}
