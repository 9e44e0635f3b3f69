//! A student's question about one digit of a number ("what does the 7 mean
//! in 4.07?", "what is the value of the 3 in 352?"), answered by code: the
//! place the digit sits in and what it is worth there. Pure text work.

use std::sync::LazyLock;

use regex::Regex;

/// "the 7 … in 4.07", with the digit first and the number after it.
static DIGIT_IN_NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bthe (\d)\b(?:\s+\w+){0,4}?\s+in\s+(\d[\d,]*(?:\.\d+)?)")
        .expect("a valid pattern")
});

const WHOLE_PLACES: &[&str] = &[
    "ones",
    "tens",
    "hundreds",
    "thousands",
    "ten thousands",
    "hundred thousands",
    "millions",
];
const DECIMAL_PLACES: &[&str] = &["tenths", "hundredths", "thousandths", "ten thousandths"];

/// The answer to `message` when it asks what a digit of a number is worth;
/// `None` for anything else, or when the digit is not in the number once.
pub fn answer(message: &str) -> Option<String> {
    let lower = message.to_lowercase();
    let asks = ["mean", "worth", "value", "place", "stand for", "represent"]
        .iter()
        .any(|w| lower.contains(w));
    if !asks {
        return None;
    }
    let found = DIGIT_IN_NUMBER.captures(&lower)?;
    let digit = found.get(1)?.as_str().chars().next()?;
    let number = found.get(2)?.as_str().replace(',', "");
    let (whole, decimals) = number.split_once('.').unwrap_or((&number, ""));
    // Where the digit sits: (a whole-number place, counted from the ones)
    // or (a decimal place, counted from the tenths).
    let places: Vec<(bool, usize)> = whole
        .chars()
        .rev()
        .enumerate()
        .filter(|(_, c)| *c == digit)
        .map(|(i, _)| (true, i))
        .chain(
            decimals
                .chars()
                .enumerate()
                .filter(|(_, c)| *c == digit)
                .map(|(i, _)| (false, i)),
        )
        .collect();
    let [at] = places.as_slice() else {
        return None;
    };
    let (is_whole, i) = *at;
    let value = digit.to_digit(10)?;
    if is_whole {
        let place = WHOLE_PLACES.get(i)?;
        let worth = u64::from(value) * 10u64.pow(u32::try_from(i).ok()?);
        Some(format!(
            "In {number} the {digit} is in the {place} place, so it is worth {worth}."
        ))
    } else {
        let place = DECIMAL_PLACES.get(i)?;
        let worth = format!("0.{}{digit}", "0".repeat(i));
        Some(format!(
            "In {number} the {digit} is in the {place} place, so it is worth {value} {place}, which is {worth}."
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_digit_is_named_by_its_place() {
        assert_eq!(
            answer("what does the 7 mean in 4.07").as_deref(),
            Some(
                "In 4.07 the 7 is in the hundredths place, so it is worth 7 hundredths, which is 0.07."
            )
        );
        assert_eq!(
            answer("what is the value of the 5 in 352?").as_deref(),
            Some("In 352 the 5 is in the tens place, so it is worth 50.")
        );
        assert_eq!(
            answer("what's the 3 worth in 0.3").as_deref(),
            Some("In 0.3 the 3 is in the tenths place, so it is worth 3 tenths, which is 0.3.")
        );
    }

    #[test]
    fn a_digit_that_is_there_twice_or_not_at_all_is_left_alone() {
        assert_eq!(answer("what does the 4 mean in 4.04"), None);
        assert_eq!(answer("what does the 9 mean in 4.07"), None);
        assert_eq!(answer("what is 7 in 4.07"), None);
    }
}
