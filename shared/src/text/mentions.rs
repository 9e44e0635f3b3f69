//! Whether a sentence gives a value away: what keeps an answer out of a
//! worked step or a representation while its question is pending.

/// Whether `text` mentions the number or answer `needle` on its own (so
/// `34` is in "is it 34?" but not in "340", "3.4" or "1/34").
pub fn mentions(text: &str, needle: &str) -> bool {
    let needle = needle.trim();
    if needle.is_empty() {
        return false;
    }
    let part_of_number = |c: char| c.is_ascii_digit() || matches!(c, '.' | '/' | '-' | ',');
    text.match_indices(needle).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let mut after = text[at + needle.len()..].chars();
        let next = after.next();
        let then = after.next();
        let open_before = before.is_none_or(|c| !part_of_number(c));
        let open_after = match next {
            None => true,
            // `20%` is a percentage, not the number 20.
            Some(c) if c.is_ascii_digit() || c == '%' => false,
            // "is 34." ends a sentence; "34.5" and "34/7" go on.
            Some('.' | '/' | ',') => then.is_none_or(|c| !c.is_ascii_digit()),
            Some(_) => true,
        };
        open_before && open_after
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_finds_whole_numbers_only() {
        assert!(mentions("so the answer is 34.", "34"));
        assert!(mentions("34 sweets", "34"));
        assert!(mentions("x = 4 works", "x = 4"));
        for not in [
            "340", "3.4", "1/34", "34.5", "134", "-34", "34/7", "2,340", "34%",
        ] {
            assert!(!mentions(not, "34"), "{not}");
        }
        assert!(!mentions("anything", ""));
    }
}
