/// Lowercase, straight apostrophes, single spaces: the form a message and a
/// routing phrase are compared in, so "Don’t  KNOW" meets "don't know".
pub fn fold(text: &str) -> String {
    let lower = text.to_lowercase().replace(['’', '‘', '`'], "'");
    let mut out = lower.split_whitespace().collect::<Vec<_>>().join(" ");
    // Keep a phrase's deliberate trailing space (`"why "`).
    if text.ends_with(' ') && !out.is_empty() {
        out.push(' ');
    }
    out
}

/// Letters, digits and apostrophes: what the words of a folded text are
/// made of.
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '\''
}

/// The word a folded text starts with; empty when it starts with anything
/// else.
pub fn first_word(folded: &str) -> &str {
    folded.split(|c| !is_word_char(c)).next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::{first_word, fold};

    #[test]
    fn folds_case_apostrophes_and_spaces() {
        assert_eq!(fold("  Don’t   KNOW"), "don't know");
        assert_eq!(fold("why "), "why ");
        assert_eq!(fold("   "), "");
    }

    #[test]
    fn the_first_word_stops_at_anything_but_letters_digits_and_apostrophes() {
        assert_eq!(first_word("don't know"), "don't");
        assert_eq!(first_word("why "), "why");
        assert_eq!(first_word("?? what"), "");
    }
}
