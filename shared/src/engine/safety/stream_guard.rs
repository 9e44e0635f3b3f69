//! The sanitizer's rules applied to tutor text while it streams: text is
//! released only once no leak pattern can still match over it, so leaked
//! internal language is never shown, not even for a moment. A sentence is
//! released whole when it ends clean; until then all but its last
//! [`HOLD_BACK_CHARS`] characters are. A sentence a pattern matches is
//! withheld from the match on, and the whole reply is then sanitized and
//! sent again in full. Once the text states an answer still to be graded,
//! nothing more is shown at all: the reply will be replaced.

use regex::{Regex, RegexSet};

use super::sanitize::Sanitizer;
use crate::engine::reply::answer_guard::PendingAnswer;

/// Characters of an unfinished sentence held back: more than any leak
/// pattern's match is long, so a match found later starts in held-back text.
pub const HOLD_BACK_CHARS: usize = 64;

/// One stream's guard; feed it pieces, show what it returns.
#[derive(Debug)]
pub struct StreamGuard<'a> {
    patterns: &'a [Regex],
    any: &'a RegexSet,
    text: String,
    /// Bytes of `text` released.
    shown: usize,
    /// Where the unfinished sentence starts.
    sentence_start: usize,
    /// The unfinished sentence leaks: none of the rest of it is shown.
    withholding: bool,
    leaked: bool,
    /// Answers the text must not state before they are graded.
    answers: Vec<&'a PendingAnswer>,
    /// An answer was stated: the rest of the stream is withheld.
    halted: bool,
}

impl Sanitizer {
    pub fn stream_guard(&self) -> StreamGuard<'_> {
        StreamGuard {
            patterns: &self.patterns,
            any: &self.any,
            text: String::new(),
            shown: 0,
            sentence_start: 0,
            withholding: false,
            leaked: false,
            answers: Vec::new(),
            halted: false,
        }
    }
}

impl<'a> StreamGuard<'a> {
    /// Guards `answers` too. The held-back window lets a number be read
    /// whole before any of it is shown; an unfinished one that could be an
    /// answer halts the stream, which errs on the side of not showing.
    pub fn with_answers(mut self, answers: impl IntoIterator<Item = &'a PendingAnswer>) -> Self {
        self.answers.extend(answers);
        self
    }

    /// Reads `piece`; returns the text it makes safe to show.
    pub fn push(&mut self, piece: &str) -> String {
        self.text.push_str(piece);
        self.advance(false)
    }

    /// The end of the stream: the rest that is safe to show.
    pub fn finish(&mut self) -> String {
        self.advance(true)
    }

    /// Whether some sentence leaked, or an answer was stated (and withheld).
    pub fn leaked(&self) -> bool {
        self.leaked
    }

    fn advance(&mut self, done: bool) -> String {
        let mut out = String::new();
        if !self.halted && self.answers.iter().any(|a| a.found_in(&self.text)) {
            self.halted = true;
            self.leaked = true;
        }
        if self.halted {
            return out;
        }
        while let Some(length) = sentence_end(&self.text[self.sentence_start..], done) {
            let end = self.sentence_start + length;
            let sentence = &self.text[self.sentence_start..end];
            if self.withholding || self.any.is_match(sentence) {
                self.leaked = true;
            } else {
                out.push_str(&self.text[self.shown.max(self.sentence_start)..end]);
            }
            self.shown = end;
            self.sentence_start = end;
            self.withholding = false;
        }
        let tail = &self.text[self.sentence_start..];
        // A match that ends before the text does is decided; one that
        // reaches the end might still grow or fail, and stays held back.
        if !self.withholding
            && self
                .patterns
                .iter()
                .any(|p| p.find_iter(tail).any(|m| m.end() < tail.len()))
        {
            self.withholding = true;
            self.leaked = true;
        }
        if !self.withholding {
            let limit = self
                .text
                .char_indices()
                .rev()
                .nth(HOLD_BACK_CHARS - 1)
                .map_or(0, |(i, _)| i);
            if limit > self.shown {
                out.push_str(&self.text[self.shown..limit]);
                self.shown = limit;
            }
        }
        out
    }
}

/// The length of the first whole sentence of `rest`, as the sanitizer
/// splits sentences: after `.`, `!` or `?` and whitespace, or a line break,
/// with the whitespace that follows. `None` while that is still unknown.
fn sentence_end(rest: &str, done: bool) -> Option<usize> {
    let bytes = rest.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let boundary = match b {
            b'\n' => true,
            b'.' | b'!' | b'?' => match bytes.get(i + 1) {
                Some(next) => next.is_ascii_whitespace(),
                None if done => true,
                None => return None,
            },
            _ => false,
        };
        if boundary {
            let mut end = i + 1;
            while end < bytes.len() && bytes[end].is_ascii_whitespace() {
                end += 1;
            }
            return Some(end);
        }
    }
    (done && !bytes.is_empty()).then_some(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::Workflow;
    use proptest::prelude::*;

    fn sanitizer() -> Sanitizer {
        let mut w: Workflow = serde_yaml::from_str(
            "id: w\ntitle: W\ncategories: []\ndefault_category: general\nprompts: {tutor_system: a, tutor_policy: a, tutor_context: a, tutor_input: a, drill_grading: a, exam_evaluation: a, planner: a, summary: a, safety: a}\n",
        )
        .unwrap();
        w.sanitize.patterns = vec![
            r"(?i)\bthe student('s)?\b".into(),
            r"(?i)\bmastery (estimate|probability|score)\b".into(),
        ];
        w.sanitize.fallback_text = "Let's keep going.".into();
        Sanitizer::new(&w)
    }

    fn stream(s: &Sanitizer, pieces: &[&str]) -> (Vec<String>, bool) {
        let mut guard = s.stream_guard();
        let mut shown: Vec<String> = pieces.iter().map(|p| guard.push(p)).collect();
        shown.push(guard.finish());
        (shown, guard.leaked())
    }

    #[test]
    fn clean_text_comes_out_whole_and_early() {
        let s = sanitizer();
        let long = "Let us think about what a fraction of a whole means when we share a pizza between friends";
        let (shown, leaked) = stream(&s, &["Nice work! ", long, " today. What next?"]);
        assert!(!leaked);
        assert_eq!(shown[0], "Nice work! ");
        assert!(
            !shown[1].is_empty(),
            "a long sentence is shown before it ends"
        );
        assert_eq!(
            shown.concat(),
            format!("Nice work! {long} today. What next?")
        );
    }

    #[test]
    fn a_leak_mid_sentence_is_never_shown() {
        let s = sanitizer();
        let (shown, leaked) = stream(
            &s,
            &[
                "Good. Here ",
                "the stu",
                "dent's mastery ",
                "estimate is 0.4. ",
                "Try 3 + 4?",
            ],
        );
        assert!(leaked);
        let all = shown.concat();
        assert!(!all.to_lowercase().contains("stu"), "{all:?}");
        assert!(
            all.starts_with("Good. ") && all.ends_with("Try 3 + 4?"),
            "{all:?}"
        );
    }

    #[test]
    fn a_word_that_only_starts_like_a_leak_is_shown() {
        let s = sanitizer();
        let (shown, leaked) = stream(&s, &["Ask the stu", "dents next door. Ok."]);
        assert!(!leaked);
        assert_eq!(shown.concat(), "Ask the students next door. Ok.");
    }

    #[test]
    fn a_pending_answer_halts_the_stream_before_it_shows() {
        let s = sanitizer();
        let answer = PendingAnswer::new("q", "What is 40 + 45?", "85").unwrap();
        let mut guard = s.stream_guard().with_answers([&answer]);
        let mut shown = String::new();
        for piece in [
            "Nice try. ",
            "Add the tens: 40 + 40 is 80, ",
            "so 40 + 45 is 8",
            "5. ",
            "Try the next one.",
        ] {
            shown.push_str(&guard.push(piece));
        }
        shown.push_str(&guard.finish());
        assert!(guard.leaked());
        assert!(shown.starts_with("Nice try. "), "{shown:?}");
        assert!(!shown.contains("85") && !shown.contains(" 8"), "{shown:?}");
    }

    proptest! {
        #[test]
        fn no_chunking_shows_a_leak(
            before in "[a-z ]{0,80}",
            after in "[a-z ]{0,80}",
            cuts in proptest::collection::vec(0usize..300, 0..20),
        ) {
            let s = sanitizer();
            let text = format!("Hi there. {before} The student's mastery score is low {after}. Bye now.");
            let mut points: Vec<usize> = cuts.iter().map(|c| c % (text.len() + 1)).collect();
            points.extend([0, text.len()]);
            points.sort_unstable();
            points.dedup();
            let pieces: Vec<&str> = points.windows(2).map(|w| &text[w[0]..w[1]]).collect();
            let (shown, leaked) = stream(&s, &pieces);
            prop_assert!(leaked);
            let all = shown.concat();
            prop_assert!(!all.contains("The student"), "{:?}", all);
            prop_assert!(!all.contains("mastery score"), "{:?}", all);
            prop_assert!(all.ends_with("Bye now."), "{:?}", all);
        }

        #[test]
        fn clean_text_is_shown_exactly(
            text in "[a-zé🙂 .!?\n]{0,200}",
            cuts in proptest::collection::vec(0usize..300, 0..20),
        ) {
            let s = sanitizer();
            let chars: Vec<char> = text.chars().collect();
            let mut points: Vec<usize> = cuts.iter().map(|c| c % (chars.len() + 1)).collect();
            points.extend([0, chars.len()]);
            points.sort_unstable();
            points.dedup();
            let pieces: Vec<String> = points.windows(2).map(|w| chars[w[0]..w[1]].iter().collect()).collect();
            let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
            let (shown, leaked) = stream(&s, &refs);
            prop_assert!(!leaked);
            prop_assert_eq!(shown.concat(), text);
        }
    }
}
