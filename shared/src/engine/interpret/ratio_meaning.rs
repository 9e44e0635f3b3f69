//! A student's question about what one ratio means ("what does 4:6
//! mean?"), answered by code in its own numbers: what it compares, and its
//! simplest form when it has one. Pure text work.

use std::sync::LazyLock;

use regex::Regex;

use crate::math;

/// The answer to `message` when it asks what a ratio means; `None` for
/// anything else.
pub fn answer(message: &str) -> Option<String> {
    static MEANING: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)\b(?:what\s+(?:does|do|is)|what's|whats)\s+(?:the\s+ratio\s+)?(\d+)\s*:\s*(\d+)\s*(?:mean|means|stand\s+for|tell\s+(?:me|you|us))?\s*\??\s*$",
        )
        .expect("a valid pattern")
    });
    let found = MEANING.captures(message)?;
    let (a, b): (i64, i64) = (found[1].parse().ok()?, found[2].parse().ok()?);
    if a == 0 || b == 0 {
        return None;
    }
    let ratio = format!("{a}:{b}");
    let compares = format!(
        "{ratio} means that for every {a} of the first thing there {} {b} of the second. Out of every {} altogether, {a} are the first and {b} the second.",
        if b == 1 { "is" } else { "are" },
        a + b
    );
    let hcf = math::gcd(a, b);
    if hcf == 1 {
        return Some(compares);
    }
    Some(format!(
        "{compares} It is the same ratio as {}:{}: divide both parts by {hcf}.",
        a / hcf,
        b / hcf
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_is_read_in_its_own_numbers() {
        assert_eq!(
            answer("what does 4:6 mean").as_deref(),
            Some(
                "4:6 means that for every 4 of the first thing there are 6 of the second. Out of every 10 altogether, 4 are the first and 6 the second. It is the same ratio as 2:3: divide both parts by 2."
            )
        );
        assert!(
            answer("whats 2:3?")
                .unwrap()
                .starts_with("2:3 means that for every 2")
        );
        assert_eq!(answer("what does a ratio mean"), None);
        assert_eq!(answer("share 40 in the ratio 3:5"), None);
    }
}
