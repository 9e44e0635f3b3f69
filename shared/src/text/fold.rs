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

/// One bit of 64 standing for `word`: a text whose words' bits do not
/// include a phrase's first word's bit cannot contain the phrase, a test
/// far cheaper than looking for the word.
pub fn word_bit(word: &str) -> u64 {
    // FNV-1a: stable across processes, unlike the standard hasher.
    let hash = word.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    1 << (hash % 64)
}

#[cfg(test)]
mod tests {
    use super::{first_word, fold, word_bit};

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

    #[test]
    fn a_word_has_one_bit_and_keeps_it() {
        assert_eq!(word_bit("stuck").count_ones(), 1);
        assert_eq!(word_bit("stuck"), word_bit("stuck"));
        let bits: std::collections::HashSet<u64> = ["why", "how", "stuck", "help", "idk", "hint"]
            .map(word_bit)
            .into();
        assert!(bits.len() > 1, "different words spread over the bits");
    }
}
