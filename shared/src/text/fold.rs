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

#[cfg(test)]
mod tests {
    use super::fold;

    #[test]
    fn folds_case_apostrophes_and_spaces() {
        assert_eq!(fold("  Don’t   KNOW"), "don't know");
        assert_eq!(fold("why "), "why ");
        assert_eq!(fold("   "), "");
    }
}
