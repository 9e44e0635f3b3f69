//! Maths outside the course, worked out in the student's own numbers: a
//! question such as "what is the mean of 3, 5 and 10?" or "lcm of 4 and 6"
//! is answered with its result and how it was found, not only with the
//! general rule. Pure text work, like `student_math`: no course, no state.

use std::fmt::Write as _;
use std::sync::LazyLock;

use regex::Regex;

use crate::text::template::count_word;

/// Largest whole number worked with: beyond it a list of multiples or
/// factors is no help to a student.
const LARGEST: i64 = 100_000;
/// π as a student works with it by hand.
#[expect(
    clippy::approx_constant,
    reason = "the rounded value a student uses, shown in the working"
)]
const PI_ROUNDED: f64 = 3.14;
/// Most numbers read from one message.
const MOST_NUMBERS: usize = 20;

/// `message` worked out, when it asks for something code can work out
/// outside the course: an average or the range of its numbers, the lowest
/// common multiple or highest common factor, a square root or a power, a
/// rounding, a rectangle's or triangle's area or perimeter, whether a
/// number is prime, or a number's factors.
pub fn worked(message: &str) -> Option<String> {
    let text = message.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| contains_word(&text, w));
    let numbers = numbers_in(&text);
    if has(&["median"]) {
        return median(&numbers);
    }
    if has(&["mode"]) {
        return mode(&numbers);
    }
    if has(&["the mean", "mean of", "mean is", "average", "avg"]) {
        return mean(&numbers);
    }
    if has(&["range"]) {
        return range(&numbers);
    }
    let wholes = || whole_numbers(&numbers);
    if has(&[
        "lcm",
        "lowest common multiple",
        "least common multiple",
        "smallest common multiple",
    ]) {
        return lowest_common_multiple(&wholes()?);
    }
    if has(&[
        "hcf",
        "gcf",
        "gcd",
        "highest common factor",
        "greatest common factor",
        "greatest common divisor",
        "biggest common factor",
    ]) {
        return highest_common_factor(&wholes()?);
    }
    if has(&["square root", "sqrt", "root of"]) || text.contains('√') {
        return square_root(*wholes()?.first()?);
    }
    if let Some(answer) = rounding(&text) {
        return Some(answer);
    }
    if let Some(answer) = power(&text) {
        return Some(answer);
    }
    if has(&["area", "perimeter", "circumference"]) {
        return shape(&text, &numbers);
    }
    if let Some(answer) = speed(&text) {
        return Some(answer);
    }
    if let Some(answer) = measure_conversion(&text) {
        return Some(answer);
    }
    if has(&["prime"]) {
        return prime(*wholes()?.first()?);
    }
    if has(&["factors", "factor pairs"]) && !has(&["common"]) {
        return factors(*wholes()?.first()?);
    }
    None
}

/// Whether `text` has `word` (or a phrase) with no letter either side.
fn contains_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(char::is_alphabetic) && !after.is_some_and(char::is_alphabetic)
    })
}

/// The numbers in `text`, in order (decimals and negatives included).
fn numbers_in(text: &str) -> Vec<f64> {
    static NUMBER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?:^|[^\d.])(-?\d+(?:\.\d+)?)").expect("a valid pattern"));
    NUMBER
        .captures_iter(text)
        .filter_map(|c| c[1].parse::<f64>().ok())
        .filter(|n| n.is_finite() && n.abs() <= LARGEST as f64)
        .take(MOST_NUMBERS)
        .collect()
}

/// The numbers as whole numbers from 1 up, when they all are.
fn whole_numbers(numbers: &[f64]) -> Option<Vec<i64>> {
    let wholes: Vec<i64> = numbers
        .iter()
        .map(|n| (n.fract() == 0.0 && *n >= 1.0).then_some(*n as i64))
        .collect::<Option<_>>()?;
    (!wholes.is_empty()).then_some(wholes)
}

/// A number as a student writes it: no trailing zeros, at most 2 decimal
/// places (with "about" when it was rounded).
fn shown(n: f64) -> String {
    let rounded = (n * 100.0).round() / 100.0;
    let text = format!("{rounded:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    let text = if text == "-0" { "0" } else { text };
    if (rounded - n).abs() > 1e-9 {
        format!("about {text}")
    } else {
        text.to_owned()
    }
}

/// "3, 5 and 10".
pub(crate) fn listed(numbers: &[String]) -> String {
    match numbers {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn shown_all(numbers: &[f64]) -> Vec<String> {
    numbers.iter().map(|n| shown(*n)).collect()
}

fn mean(numbers: &[f64]) -> Option<String> {
    if numbers.len() < 2 {
        return None;
    }
    let total: f64 = numbers.iter().sum();
    let count = numbers.len();
    let sum = shown_all(numbers).join(" + ");
    Some(format!(
        "To find the mean, add the numbers up and divide by how many there are. {sum} = {}, and there are {count} numbers, so the mean is {} ÷ {count} = {}.",
        shown(total),
        shown(total),
        shown(total / count as f64),
    ))
}

fn sorted(numbers: &[f64]) -> Vec<f64> {
    let mut sorted = numbers.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

fn median(numbers: &[f64]) -> Option<String> {
    if numbers.len() < 2 {
        return None;
    }
    let ordered = sorted(numbers);
    let in_order = listed(&shown_all(&ordered));
    let middle = ordered.len() / 2;
    let said = if ordered.len() % 2 == 1 {
        format!(
            "The median is the middle number once they are in order: {in_order}. The middle one is {}.",
            shown(ordered[middle])
        )
    } else {
        let (a, b) = (ordered[middle - 1], ordered[middle]);
        format!(
            "The median is the middle number once they are in order: {in_order}. With an even count there are two middle numbers, {} and {}, so the median is halfway between them: ({} + {}) ÷ 2 = {}.",
            shown(a),
            shown(b),
            shown(a),
            shown(b),
            shown((a + b) / 2.0)
        )
    };
    Some(said)
}

fn mode(numbers: &[f64]) -> Option<String> {
    if numbers.len() < 2 {
        return None;
    }
    let ordered = sorted(numbers);
    let mut counts: Vec<(f64, usize)> = Vec::new();
    for n in ordered {
        match counts.last_mut() {
            Some((value, count)) if *value == n => *count += 1,
            _ => counts.push((n, 1)),
        }
    }
    let most = counts.iter().map(|(_, c)| *c).max()?;
    let modes: Vec<String> = counts
        .iter()
        .filter(|(_, c)| *c == most)
        .map(|(n, _)| shown(*n))
        .collect();
    Some(if most == 1 {
        "The mode is the number that appears most often. Here every number appears once, so there is no mode.".to_owned()
    } else if modes.len() == 1 {
        format!(
            "The mode is the number that appears most often: {} appears {most} times, more than any other, so the mode is {}.",
            modes[0], modes[0]
        )
    } else {
        format!(
            "The mode is the number that appears most often. {} each appear {most} times, so there are {} modes: {}.",
            listed(&modes),
            modes.len(),
            listed(&modes)
        )
    })
}

fn range(numbers: &[f64]) -> Option<String> {
    if numbers.len() < 2 {
        return None;
    }
    let ordered = sorted(numbers);
    let (low, high) = (*ordered.first()?, *ordered.last()?);
    Some(format!(
        "The range is the biggest number minus the smallest: {} - {} = {}.",
        shown(high),
        shown(low),
        shown(high - low)
    ))
}

fn lowest_common_multiple(numbers: &[i64]) -> Option<String> {
    if numbers.len() < 2 {
        return None;
    }
    let mut lcm: i64 = 1;
    for n in numbers {
        lcm = lcm.checked_mul(n / crate::math::gcd(lcm, *n))?;
        if lcm > LARGEST {
            return None;
        }
    }
    let mut said = String::from("List the multiples of each number until one is in every list. ");
    for n in numbers {
        let multiples: Vec<String> = (1..=lcm / n).take(8).map(|k| (k * n).to_string()).collect();
        let more = if lcm / n > 8 { ", …" } else { "" };
        let _ = write!(said, "Multiples of {n}: {}{more}. ", multiples.join(", "));
    }
    let names: Vec<String> = numbers.iter().map(i64::to_string).collect();
    let _ = write!(
        said,
        "The lowest common multiple of {} is {lcm}.",
        listed(&names)
    );
    Some(said)
}

fn highest_common_factor(numbers: &[i64]) -> Option<String> {
    if numbers.len() < 2 {
        return None;
    }
    let hcf = numbers.iter().copied().reduce(crate::math::gcd)?;
    let mut said =
        String::from("List the factors of each number and find the biggest one they share. ");
    for n in numbers {
        let _ = write!(said, "Factors of {n}: {}. ", factor_list(*n).join(", "));
    }
    let names: Vec<String> = numbers.iter().map(i64::to_string).collect();
    let _ = write!(
        said,
        "The highest common factor of {} is {hcf}.",
        listed(&names)
    );
    Some(said)
}

fn factor_list(n: i64) -> Vec<String> {
    (1..=n)
        .filter(|d| n % d == 0)
        .map(|d| d.to_string())
        .collect()
}

fn square_root(n: i64) -> Option<String> {
    let root = (n as f64).sqrt();
    let below = root.floor() as i64;
    Some(if below * below == n {
        format!("The square root of {n} is {below}, because {below} × {below} = {n}.")
    } else {
        format!(
            "{n} is not a square number, so its square root is not a whole number: {below} × {below} = {} and {} × {} = {}, so the square root of {n} is between {below} and {} (about {}).",
            below * below,
            below + 1,
            below + 1,
            (below + 1) * (below + 1),
            below + 1,
            shown(root).trim_start_matches("about ")
        )
    })
}

/// "5 squared", "2 cubed", "2 to the power of 5", "3^4".
fn power(text: &str) -> Option<String> {
    static POWER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\(?(-?\d+)\)?\s*(?:(squared)|(cubed)|\^\s*(\d+)|to the power of\s*(\d+)|to the (\d+)(?:st|nd|rd|th) power)")
            .expect("a valid pattern")
    });
    let c = POWER.captures(text)?;
    let base: i64 = c[1].parse().ok()?;
    let exponent: u32 = if c.get(2).is_some() {
        2
    } else if c.get(3).is_some() {
        3
    } else {
        [4, 5, 6]
            .iter()
            .find_map(|&i| c.get(i))
            .and_then(|m| m.as_str().parse().ok())?
    };
    if !(1..=10).contains(&exponent) {
        return None;
    }
    let value = base
        .checked_pow(exponent)
        .filter(|v| v.abs() <= 10 * LARGEST)?;
    let shown_base = if base < 0 {
        format!("({base})")
    } else {
        base.to_string()
    };
    let product = vec![shown_base.clone(); exponent as usize].join(" × ");
    let name = match exponent {
        2 => format!("{shown_base} squared"),
        3 => format!("{shown_base} cubed"),
        _ => format!("{shown_base} to the power of {exponent}"),
    };
    // "Multiplied by itself twice" would be three of them: count the factors.
    let count = count_word(exponent)?;
    Some(format!(
        "{name} means {count} {shown_base}s multiplied together: {product} = {value}."
    ))
}

/// "round 3.46 to one decimal place", "743 to the nearest ten".
fn rounding(text: &str) -> Option<String> {
    static TO_PLACES: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(-?\d+(?:\.\d+)?)\D{0,20}?\bto\s+(\d+|one|two|three)\s*(?:decimal places?|dp|d\.p\.?|d p)")
            .expect("a valid pattern")
    });
    static TO_NEAREST: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(-?\d+(?:\.\d+)?)\D{0,20}?\bto the nearest\s+(ten|10|hundred|100|thousand|1000|whole number|whole|integer|one|unit)\b")
            .expect("a valid pattern")
    });
    if let Some(c) = TO_PLACES.captures(text) {
        let number = &c[1];
        let places: usize = match &c[2] {
            "one" => 1,
            "two" => 2,
            "three" => 3,
            digits => digits.parse().ok()?,
        };
        return round_to_places(number, places);
    }
    let c = TO_NEAREST.captures(text)?;
    let number = &c[1];
    let (step, name): (i64, &str) = match &c[2] {
        "ten" | "10" => (10, "ten"),
        "hundred" | "100" => (100, "hundred"),
        "thousand" | "1000" => (1000, "thousand"),
        _ => (1, "whole number"),
    };
    round_to_nearest(number, step, name)
}

fn round_to_places(number: &str, places: usize) -> Option<String> {
    if !(1..=3).contains(&places) {
        return None;
    }
    let decimals = number.split('.').nth(1).unwrap_or("");
    let value: f64 = number.parse().ok()?;
    let scale = 10f64.powi(places as i32);
    let rounded = (value.abs() * scale + 0.5).floor() / scale * value.signum();
    let result = format!("{rounded:.places$}");
    let Some(next) = decimals.chars().nth(places) else {
        return Some(format!(
            "{number} has no more than {places} decimal place{}, so it stays {number}.",
            if places == 1 { "" } else { "s" }
        ));
    };
    let kept = decimals.chars().nth(places - 1)?;
    let place = ["", "tenths", "hundredths", "thousandths"][places];
    let direction = if next >= '5' {
        format!("{next} is 5 or more, so the {place} digit {kept} goes up by one")
    } else {
        format!("{next} is 4 or less, so the {place} digit {kept} stays as it is")
    };
    Some(format!(
        "To round {number} to {places} decimal place{}, look at the next digit along: {direction}. {number} rounds to {result}.",
        if places == 1 { "" } else { "s" }
    ))
}

fn round_to_nearest(number: &str, step: i64, name: &str) -> Option<String> {
    let value: f64 = number.parse().ok()?;
    let step_f = step as f64;
    let below = (value / step_f).floor() * step_f;
    let above = below + step_f;
    let rounded = if value - below >= step_f / 2.0 {
        above
    } else {
        below
    };
    let halfway = below + step_f / 2.0;
    Some(format!(
        "{number} is between {} and {}. Halfway is {}, and {number} is {} halfway, so to the nearest {name} it rounds to {}.",
        shown(below),
        shown(above),
        shown(halfway),
        if value >= halfway {
            "at or past"
        } else {
            "below"
        },
        shown(rounded)
    ))
}

fn shape(text: &str, numbers: &[f64]) -> Option<String> {
    let area = contains_word(text, "area");
    let units = unit_of_length(text);
    let squared = if units.is_empty() {
        " square units".to_owned()
    } else {
        format!(" {units}²")
    };
    let length = if units.is_empty() {
        String::new()
    } else {
        format!(" {units}")
    };
    if contains_word(text, "circle") {
        let [size] = numbers else { return None };
        let radius = if contains_word(text, "diameter") {
            size / 2.0
        } else {
            *size
        };
        let plain = |n: f64| shown(n).trim_start_matches("about ").to_owned();
        return Some(if area {
            format!(
                "The area of a circle is π × radius × radius. With radius {}{length} that is about 3.14 × {} × {} = {}{squared}.",
                plain(radius),
                plain(radius),
                plain(radius),
                plain(PI_ROUNDED * radius * radius)
            )
        } else {
            format!(
                "The distance around a circle (its circumference) is π × diameter. With diameter {}{length} that is about 3.14 × {} = {}{length}.",
                plain(2.0 * radius),
                plain(2.0 * radius),
                plain(PI_ROUNDED * 2.0 * radius)
            )
        });
    }
    if contains_word(text, "triangle") {
        let [base, height] = numbers else {
            return None;
        };
        if !area {
            return None;
        }
        return Some(format!(
            "The area of a triangle is half of base × height: {} × {} = {}, and half of that is {}{squared}.",
            shown(*base),
            shown(*height),
            shown(base * height),
            shown(base * height / 2.0)
        ));
    }
    if contains_word(text, "square") {
        let [side] = numbers else { return None };
        return Some(if area {
            format!(
                "A square's sides are all {}{length}, so its area is side × side: {} × {} = {}{squared}.",
                shown(*side),
                shown(*side),
                shown(*side),
                shown(side * side)
            )
        } else {
            format!(
                "A square has four equal sides, so its perimeter is 4 × {} = {}{length}.",
                shown(*side),
                shown(4.0 * side)
            )
        });
    }
    let [long, wide] = numbers else { return None };
    Some(if area {
        format!(
            "The area of a rectangle is length × width: {} × {} = {}{squared}.",
            shown(*long),
            shown(*wide),
            shown(long * wide)
        )
    } else {
        format!(
            "The perimeter is the distance all the way round: {} + {} + {} + {} = {}{length}.",
            shown(*long),
            shown(*wide),
            shown(*long),
            shown(*wide),
            shown(2.0 * (long + wide))
        )
    })
}

/// The unit of length a message measures in, if it names one.
fn unit_of_length(text: &str) -> &'static str {
    static UNIT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\d\s*(mm|cm|km|m|in|ft)\b|\b(millimetres?|centimetres?|centimeters?|metres?|meters?|kilometres?|inch(?:es)?|feet)\b")
            .expect("a valid pattern")
    });
    let Some(c) = UNIT.captures(text) else {
        return "";
    };
    let word = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
    match word {
        "mm" | "millimetre" | "millimetres" => "mm",
        "cm" | "centimetre" | "centimetres" | "centimeter" | "centimeters" => "cm",
        "km" | "kilometre" | "kilometres" => "km",
        "m" | "metre" | "metres" | "meter" | "meters" => "m",
        "in" | "inch" | "inches" => "in",
        "ft" | "feet" => "ft",
        _ => "",
    }
}

/// A unit of measure and how many of the family's base unit it is.
#[derive(Debug, Clone, Copy)]
struct Measure {
    name: &'static str,
    family: &'static str,
    size: f64,
}

/// The unit `word` names, if it is one: metric length, mass and
/// capacity, and time.
fn measure(word: &str) -> Option<Measure> {
    let (name, family, size) = match word.trim_end_matches('.') {
        "mm" | "millimetre" | "millimetres" | "millimeter" | "millimeters" => {
            ("mm", "length", 0.001)
        }
        "cm" | "centimetre" | "centimetres" | "centimeter" | "centimeters" => {
            ("cm", "length", 0.01)
        }
        "m" | "metre" | "metres" | "meter" | "meters" => ("m", "length", 1.0),
        "km" | "kilometre" | "kilometres" | "kilometer" | "kilometers" => ("km", "length", 1000.0),
        "g" | "gram" | "grams" => ("g", "mass", 0.001),
        "kg" | "kilogram" | "kilograms" | "kilo" | "kilos" => ("kg", "mass", 1.0),
        "ml" | "millilitre" | "millilitres" | "milliliter" | "milliliters" => {
            ("ml", "capacity", 0.001)
        }
        "l" | "litre" | "litres" | "liter" | "liters" => ("litres", "capacity", 1.0),
        "s" | "sec" | "secs" | "second" | "seconds" => ("seconds", "time", 1.0),
        "min" | "mins" | "minute" | "minutes" => ("minutes", "time", 60.0),
        "h" | "hr" | "hrs" | "hour" | "hours" => ("hours", "time", 3600.0),
        "day" | "days" => ("days", "time", 86_400.0),
        _ => return None,
    };
    Some(Measure { name, family, size })
}

/// "how many metres in 3.2 km", "convert 350 cm to m", "2.5 hours in minutes".
fn measure_conversion(text: &str) -> Option<String> {
    static AMOUNT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(\d+(?:\.\d+)?)\s*([a-z]+)").expect("a valid pattern"));
    static TARGET: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"how many\s+([a-z]+)|\b(?:to|into|in)\s+([a-z]+)\s*\??\s*$")
            .expect("a valid pattern")
    });
    let (value, from) = AMOUNT
        .captures_iter(text)
        .find_map(|c| Some((c[1].parse::<f64>().ok()?, measure(&c[2])?)))?;
    let to = TARGET
        .captures(text.trim())
        .and_then(|c| c.get(1).or_else(|| c.get(2)))
        .and_then(|m| measure(m.as_str()))?;
    if to.family != from.family || to.name == from.name {
        return None;
    }
    let result = value * from.size / to.size;
    let (how, factor) = if from.size > to.size {
        ("multiply", from.size / to.size)
    } else {
        ("divide", to.size / from.size)
    };
    let rule = if from.family == "time" {
        format!(
            "There are {} {} in one {}",
            shown(factor),
            if from.size > to.size {
                to.name
            } else {
                from.name
            },
            singular(if from.size > to.size {
                from.name
            } else {
                to.name
            })
        )
    } else {
        format!(
            "1 {} = {} {}",
            if from.size > to.size {
                from.name
            } else {
                to.name
            },
            shown(factor),
            if from.size > to.size {
                to.name
            } else {
                from.name
            }
        )
    };
    Some(format!(
        "{rule}, so to change {} into {} you {how} by {}: {} {} = {} {}.",
        from.name,
        to.name,
        shown(factor),
        shown(value),
        from.name,
        shown(result).trim_start_matches("about "),
        to.name
    ))
}

fn singular(unit: &str) -> &str {
    unit.strip_suffix('s').unwrap_or(unit)
}

/// "30 km in 2 hours, how fast?": distance ÷ time; "how far at 60 km/h for
/// 3 hours": speed × time.
fn speed(text: &str) -> Option<String> {
    static DISTANCE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(\d+(?:\.\d+)?)\s*(km|kilometres?|kilometers?|miles?|m|metres?|meters?)\b(?:\s*(?:/|per|an|a)\s*(h|hr|hour|s|sec|second))?")
            .expect("a valid pattern")
    });
    static DURATION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(\d+(?:\.\d+)?)\s*(hours?|hrs?|h|minutes?|mins?|seconds?|secs?|s)\b")
            .expect("a valid pattern")
    });
    if ![
        "how fast", "speed", "how far", "mph", "km/h", "kmh", "per hour", "an hour",
    ]
    .iter()
    .any(|w| text.contains(w))
    {
        return None;
    }
    let d = DISTANCE.captures(text)?;
    let t = DURATION
        .captures_iter(text)
        .find(|c| c.get(0).map(|m| m.start()) != d.get(3).map(|m| m.start()))?;
    let distance: f64 = d[1].parse().ok()?;
    let unit = match &d[2] {
        u if u.starts_with("mile") => "miles",
        u if u.starts_with('k') => "km",
        _ => "m",
    };
    let time: f64 = t[1].parse().ok()?;
    if time == 0.0 {
        return None;
    }
    let per = match &t[2] {
        u if u.starts_with('h') => "hour",
        u if u.starts_with("min") => "minute",
        _ => "second",
    };
    if d.get(3).is_some() || text.contains("how far") {
        // The distance is a speed: speed × time.
        return Some(format!(
            "Distance = speed × time: {} {unit} per {per} for {} {per}s is {} × {} = {} {unit}.",
            shown(distance),
            shown(time),
            shown(distance),
            shown(time),
            shown(distance * time)
        ));
    }
    Some(format!(
        "Speed = distance ÷ time: {} {unit} in {} {per}s is {} ÷ {} = {} {unit} per {per}.",
        shown(distance),
        shown(time),
        shown(distance),
        shown(time),
        shown(distance / time)
    ))
}

fn prime(n: i64) -> Option<String> {
    if n == 1 {
        return Some(
            "1 is not a prime number: a prime has exactly two factors, 1 and itself, and 1 has only one.".to_owned(),
        );
    }
    let divisor = (2..n).take_while(|d| d * d <= n).find(|d| n % d == 0);
    Some(match divisor {
        None => format!("{n} is a prime number: nothing divides into it exactly except 1 and {n}."),
        Some(d) => format!(
            "{n} is not a prime number, because {d} × {} = {n}: it has more factors than just 1 and itself.",
            n / d
        ),
    })
}

fn factors(n: i64) -> Option<String> {
    if n > 1000 {
        return None;
    }
    let pairs: Vec<String> = (1..=n)
        .take_while(|d| d * d <= n)
        .filter(|d| n % d == 0)
        .map(|d| format!("{d} × {} = {n}", n / d))
        .collect();
    Some(format!(
        "Find the factors of {n} in pairs, starting from 1: {}. So the factors of {n} are {}.",
        pairs.join(", "),
        listed(&factor_list(n))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn says(message: &str, expected: &[&str]) {
        let said = worked(message).unwrap_or_else(|| panic!("nothing worked for {message:?}"));
        for e in expected {
            assert!(said.contains(e), "{message:?} → {said:?} lacks {e:?}");
        }
    }

    #[test]
    fn averages_and_the_range_are_worked_in_the_students_numbers() {
        says(
            "what is the mean of 3, 5 and 10",
            &["3 + 5 + 10 = 18", "18 ÷ 3 = 6"],
        );
        says("find the average of 2 4 6 8", &["= 20", "20 ÷ 4 = 5"]);
        says(
            "median of 7, 1, 4, 9",
            &["1, 4, 7 and 9", "(4 + 7) ÷ 2 = 5.5"],
        );
        says("median of 7, 1, 4", &["middle one is 4"]);
        says(
            "whats the mode of 2, 3, 3, 5",
            &["3 appears 2 times", "mode is 3"],
        );
        says("mode of 1 2 3", &["no mode"]);
        says("range of 12, 4, 30", &["30 - 4 = 26"]);
        says("mean of 1, 2", &["1.5"]);
        says("mean of 1, 1, 2", &["about 1.33"]);
    }

    #[test]
    fn common_multiples_and_factors_list_what_they_compare() {
        says(
            "whats the lcm of 4 and 6",
            &["Multiples of 4: 4, 8, 12", "Multiples of 6: 6, 12", "is 12"],
        );
        says(
            "hcf of 12 and 18",
            &["Factors of 12: 1, 2, 3, 4, 6, 12", "is 6"],
        );
        assert_eq!(worked("lcm of 4"), None);
        assert_eq!(worked("lcm of 0.5 and 2"), None);
    }

    #[test]
    fn roots_and_powers_show_the_multiplication() {
        says("what is the square root of 49", &["is 7", "7 × 7 = 49"]);
        says("square root of 50", &["between 7 and 8", "7.07"]);
        says(
            "what is 5 squared",
            &["two 5s multiplied together", "5 × 5 = 25"],
        );
        says("2 cubed", &["2 × 2 × 2 = 8"]);
        says("what's 2 to the power of 5", &["2 × 2 × 2 × 2 × 2 = 32"]);
        says("3^4", &["= 81"]);
        says("(-3) squared", &["(-3) × (-3) = 9"]);
        assert_eq!(worked("7 to the power of 40"), None);
    }

    #[test]
    fn rounding_names_the_digit_that_decides() {
        says(
            "how do i round 3.46 to one decimal place",
            &["6 is 5 or more", "rounds to 3.5"],
        );
        says("round 2.718 to 2 dp", &["8 is 5 or more", "rounds to 2.72"]);
        says("round 4.42 to 1 decimal place", &["stays", "rounds to 4.4"]);
        says(
            "round 743 to the nearest ten",
            &["between 740 and 750", "rounds to 740"],
        );
        says("745 to the nearest 10", &["rounds to 750"]);
        says("round 3.5 to the nearest whole number", &["rounds to 4"]);
    }

    #[test]
    fn shapes_use_their_formula_and_units() {
        says(
            "area of a triangle with base 6cm and height 4cm",
            &["6 × 4 = 24", "12 cm²"],
        );
        says("area of a rectangle 5 by 3", &["5 × 3 = 15 square units"]);
        says("perimeter of a rectangle 5m by 3m", &["= 16 m"]);
        says("area of a square with side 7 cm", &["7 × 7 = 49 cm²"]);
        assert_eq!(worked("area of a triangle"), None);
    }

    #[test]
    fn measures_change_units_by_the_right_factor() {
        says(
            "how many metres in 3.2 km",
            &["1 km = 1000 m", "multiply by 1000", "3200 m"],
        );
        says("convert 350 cm to m", &["divide by 100", "3.5 m"]);
        says(
            "how many minutes is 2.5 hours",
            &["60 minutes in one hour", "2.5 hours = 150 minutes"],
        );
        says("90 minutes in hours", &["divide by 60", "1.5 hours"]);
        assert_eq!(worked("how many kg in 3 metres"), None);
    }

    #[test]
    fn a_circle_is_worked_from_its_radius_or_diameter() {
        let area = worked("what's the area of a circle with radius 5").unwrap();
        assert!(area.contains("3.14 × 5 × 5 = 78.5"), "{area}");
        let around = worked("circumference of a circle with diameter 10cm").unwrap();
        assert!(around.contains("3.14 × 10 = 31.4 cm"), "{around}");
        let from_diameter = worked("area of a circle with a diameter of 8").unwrap();
        assert!(
            from_diameter.contains("3.14 × 4 × 4 = 50.24"),
            "{from_diameter}"
        );
    }

    #[test]
    fn speed_is_distance_over_time() {
        says(
            "if i cycle 30 km in 2 hours how fast am i going",
            &["30 ÷ 2 = 15 km per hour"],
        );
        says(
            "how far do you go at 60 km/h for 3 hours",
            &["60 × 3 = 180 km"],
        );
    }

    #[test]
    fn primes_and_factors_give_a_reason() {
        says("is 91 prime", &["not a prime", "7 × 13 = 91"]);
        says("is 13 a prime number", &["13 is a prime number"]);
        says("is 1 prime", &["1 is not a prime"]);
        says(
            "what are the factors of 12",
            &["3 × 4 = 12", "1, 2, 3, 4, 6 and 12"],
        );
    }

    #[test]
    fn a_question_without_numbers_is_left_to_the_general_answer() {
        assert_eq!(
            worked("what's the difference between mean and median"),
            None
        );
        assert_eq!(worked("what is a prime number"), None);
        assert_eq!(worked("how do i find the area of a triangle"), None);
        assert_eq!(worked("what does percent mean"), None);
    }
}
