//! Rewritten text that remembers where each character came from, so the
//! grader can rewrite a message (LaTeX, number words, unicode) and still
//! quote exactly what the student typed.

use std::ops::Range;

/// A string of characters, each tagged with the byte range of the original
/// message it was produced from.
#[derive(Debug, Clone, Default)]
pub(super) struct Text {
    chars: Vec<char>,
    origins: Vec<Range<usize>>,
}

impl Text {
    pub fn new(original: &str) -> Text {
        let mut text = Text::default();
        for (at, c) in original.char_indices() {
            text.chars.push(c);
            text.origins.push(at..at + c.len_utf8());
        }
        text
    }

    pub fn len(&self) -> usize {
        self.chars.len()
    }

    pub fn chars(&self) -> &[char] {
        &self.chars
    }

    pub fn get(&self, i: usize) -> Option<char> {
        self.chars.get(i).copied()
    }

    /// Appends character `i` of `source` unchanged.
    pub fn copy_from(&mut self, source: &Text, i: usize) {
        if let (Some(&c), Some(origin)) = (source.chars.get(i), source.origins.get(i)) {
            self.chars.push(c);
            self.origins.push(origin.clone());
        }
    }

    /// Appends `replacement`, standing for characters `from` of `source`.
    pub fn replace_from(&mut self, source: &Text, from: Range<usize>, replacement: &str) {
        let origin = source.origin_of(from);
        for c in replacement.chars() {
            self.chars.push(c);
            self.origins.push(origin.clone());
        }
    }

    /// The byte range of the original message behind characters `range`.
    pub fn origin_of(&self, range: Range<usize>) -> Range<usize> {
        let end = range.end.min(self.origins.len());
        let start = range.start.min(end);
        let covered = &self.origins[start..end];
        match (
            covered.iter().map(|r| r.start).min(),
            covered.iter().map(|r| r.end).max(),
        ) {
            (Some(s), Some(e)) => s..e,
            _ => {
                let at = self.origins.get(start).map_or(0, |r| r.start);
                at..at
            }
        }
    }

    /// What the student typed for characters `range`.
    pub fn original<'a>(&self, original: &'a str, range: Range<usize>) -> &'a str {
        let r = self.origin_of(range);
        original.get(r).unwrap_or("").trim()
    }

    pub fn slice(&self, range: Range<usize>) -> String {
        let end = range.end.min(self.chars.len());
        let start = range.start.min(end);
        self.chars[start..end].iter().collect()
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.chars.iter().try_for_each(|c| write!(f, "{c}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacements_remember_their_origin() {
        let original = "x ≈ four";
        let source = Text::new(original);
        let mut out = Text::default();
        for i in 0..2 {
            out.copy_from(&source, i);
        }
        out.replace_from(&source, 2..3, "=");
        out.copy_from(&source, 3);
        out.replace_from(&source, 4..8, "4");
        assert_eq!(out.to_string(), "x = 4");
        assert_eq!(out.original(original, 4..5), "four");
        assert_eq!(out.original(original, 0..5), "x ≈ four");
        assert_eq!(out.original(original, 9..12), "");
    }
}
