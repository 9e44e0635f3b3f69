//! The sanitizer that removes leaked internal language from tutor text
//! (policy field names, prompt section labels, talk of "the student" or a
//! mastery score: words a student should never read), compiled once per
//! content version.

use regex::{Regex, RegexSet};

use crate::content::Workflow;

/// Removes sentences that leak internal language ("The student's mastery
/// estimate is...", "According to the POLICY object...").
pub struct Sanitizer {
    pub(super) patterns: Vec<Regex>,
    /// The same patterns as one set: a sentence is searched once, not once
    /// per pattern.
    pub(super) any: RegexSet,
    fallback: String,
}

/// What sanitizing did to a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sanitized {
    pub text: String,
    /// Sentences removed.
    pub removed: usize,
}

impl Sanitizer {
    pub fn new(workflow: &Workflow) -> Self {
        let patterns: Vec<Regex> = workflow
            .sanitize
            .patterns
            .iter()
            .filter_map(|p| Regex::new(p).ok())
            .collect();
        Sanitizer {
            any: RegexSet::new(patterns.iter().map(Regex::as_str))
                .unwrap_or_else(|_| RegexSet::empty()),
            patterns,
            fallback: workflow.sanitize.fallback_text.trim().to_owned(),
        }
    }

    /// `text` without its leaking sentences; the fallback text when nothing
    /// is left.
    pub fn clean(&self, text: &str) -> Sanitized {
        let mut kept = String::with_capacity(text.len());
        let mut removed = 0;
        for sentence in sentences(text) {
            if self.any.is_match(sentence) {
                removed += 1;
            } else {
                kept.push_str(sentence);
            }
        }
        let kept = kept.trim().to_owned();
        Sanitized {
            text: if kept.is_empty() && removed > 0 {
                self.fallback.clone()
            } else {
                kept
            },
            removed,
        }
    }
}

/// Splits after `.`, `!`, `?` or a line break, keeping each sentence's
/// trailing punctuation and whitespace so the kept ones join back unchanged.
pub(super) fn sentences(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let bytes = rest.as_bytes();
        let mut end = rest.len();
        for (i, &b) in bytes.iter().enumerate() {
            let boundary = b == b'\n'
                || (matches!(b, b'.' | b'!' | b'?')
                    && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()));
            if boundary {
                end = i + 1;
                while end < bytes.len() && bytes[end].is_ascii_whitespace() {
                    end += 1;
                }
                break;
            }
        }
        let (sentence, tail) = rest.split_at(end);
        rest = tail;
        Some(sentence)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::workflow::SanitizeSettings;

    fn workflow() -> Workflow {
        let mut w: Workflow = serde_yaml::from_str(
            "id: w\ntitle: W\ncategories: []\ndefault_category: general\nprompts: {tutor_system: a, tutor_policy: a, tutor_context: a, tutor_input: a, drill_grading: a, exam_evaluation: a, planner: a, summary: a, safety: a}\n",
        )
        .unwrap();
        w.sanitize = SanitizeSettings {
            patterns: vec![r"(?i)\bthe student\b".into(), r"\bPOLICY\b".into()],
            fallback_text: "Let's keep going.".into(),
        };
        w
    }

    #[test]
    fn the_sanitizer_drops_only_leaking_sentences() {
        let s = Sanitizer::new(&workflow());
        let out =
            s.clean("Nice work! The student seems confident. What is 3 + 4?\nPOLICY says drill.");
        assert_eq!(out.text, "Nice work! What is 3 + 4?");
        assert_eq!(out.removed, 2);
        let untouched = s.clean("Try 2.5 next. Then 3.");
        assert_eq!(untouched.text, "Try 2.5 next. Then 3.");
        assert_eq!(untouched.removed, 0);
        assert_eq!(s.clean("The student is stuck.").text, "Let's keep going.");
        assert_eq!(s.clean("").text, "");
    }
}
