//! Text made fit to say: a passage cut to its first sentences and a
//! quotable length, without what was just said, steps written as
//! sentences, an instruction given once.

use crate::llm::offline::passage;

/// Longest passage of lesson text quoted as an explanation, in characters.
const MAX_EXPLANATION_CHARS: usize = 320;

/// Lowercased words of four letters or more, a plural `s` or an `-ing`
/// dropped (carrying is about carry).
pub(super) fn content_words(text: &str) -> std::collections::BTreeSet<String> {
    crate::engine::modes::study_plan::words(text)
}

/// `passage` without the sentences that mostly repeat `said` (more than
/// two thirds of their content words are in it, or what
/// [`passage::repeats`] finds said again).
pub(super) fn without_repeats(passage: &str, said: &str) -> String {
    let known = content_words(said);
    // Split on sentence ends only: a decimal point is not one, and a
    // piece cut off at "2." would be dropped and leave "put 3.40 above 2."
    let mut kept: Vec<String> = Vec::new();
    let mut dropped = false;
    for sentence in passage::sentences(passage) {
        let words = content_words(sentence);
        if (!words.is_empty() && words.intersection(&known).count() * 3 > words.len() * 2)
            || passage::repeats(sentence, said)
        {
            dropped = true;
            continue;
        }
        // "So 5 - 8 = ..." after a dropped sentence would point back to
        // nothing: it stands alone without its "So", or goes too.
        let sentence = if std::mem::take(&mut dropped) {
            match passage::standing_alone(sentence) {
                Some(alone) => alone,
                None => {
                    dropped = true;
                    continue;
                }
            }
        } else {
            sentence.to_owned()
        };
        kept.push(passage::without_said_maths(&sentence, said));
    }
    kept.join(" ").trim().to_owned()
}

/// The first `count` sentences of `text`, cut to a quotable length.
pub(super) fn first_sentences(text: &str, count: usize) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut end = text.len();
    let mut last_start = 0;
    let mut seen = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (i, &(at, c)) in chars.iter().enumerate() {
        let next = chars.get(i + 1).map(|&(_, n)| n);
        if matches!(c, '.' | '?' | '!') && next.is_none_or(char::is_whitespace) {
            seen += 1;
            if seen == count {
                end = at + c.len_utf8();
                break;
            }
            last_start = at + c.len_utf8();
        }
    }
    // A last sentence that sets up what follows ("Take 36/48.") reads as
    // cut off without it.
    if end < text.len() && last_start > 0 && passage::sets_up_next(&text[last_start..end]) {
        end = last_start;
    }
    let mut out = text[..end].trim_end().to_owned();
    if out.chars().count() > MAX_EXPLANATION_CHARS {
        let cut = out
            .char_indices()
            .nth(MAX_EXPLANATION_CHARS)
            .map_or(out.len(), |(i, _)| i);
        let boundary = out[..cut].rfind(' ').unwrap_or(cut);
        out.truncate(boundary);
        out.push('…');
    }
    out
}

pub(super) fn as_sentence(step: &str) -> String {
    let step = step.trim();
    if step.ends_with(['.', '!', '?', '✓']) {
        step.to_owned()
    } else {
        format!("{step}.")
    }
}

/// Verbs that open an instruction to go over the work again.
const RETRY_VERBS: &[&str] = &["check", "try", "look", "go"];

/// `text` without an instruction that a later sentence gives again
/// ("Check each column again. Check that part and try again."): a known
/// mistake's explanation often ends by saying what to do, and so does the
/// move after it, which is kept. A sentence that works something out
/// ("Check: 3 + 4 = 7.") is working, not an instruction.
pub(super) fn without_repeated_instructions(text: &str) -> String {
    let instruction = |sentence: &str| -> Option<String> {
        let works_out = sentence.split('=').skip(1).any(|after| {
            after
                .trim_start()
                .starts_with(|c: char| c.is_ascii_digit() || c == '-')
        });
        if works_out {
            return None;
        }
        let verb = sentence.split_whitespace().next()?.to_lowercase();
        RETRY_VERBS.contains(&verb.as_str()).then_some(verb)
    };
    let sentences = passage::sentences(text);
    let verbs: Vec<Option<String>> = sentences.iter().map(|s| instruction(s)).collect();
    let repeated = |i: usize| {
        verbs[i]
            .as_ref()
            .is_some_and(|verb| verbs[i + 1..].iter().flatten().any(|v| v == verb))
    };
    if !(0..sentences.len()).any(repeated) {
        return text.to_owned();
    }
    sentences
        .iter()
        .enumerate()
        .filter(|(i, _)| !repeated(*i))
        .map(|(_, s)| *s)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Collapses whitespace and trims.
pub(super) fn tidy(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sentences_keep_decimals_together() {
        assert_eq!(
            first_sentences("It costs 2.50 dollars. Then more. And more.", 2),
            "It costs 2.50 dollars. Then more."
        );
        assert_eq!(first_sentences("No full stop", 2), "No full stop");
        assert_eq!(
            first_sentences("Divide by a common factor. Take 36/48. Both halve.", 2),
            "Divide by a common factor."
        );
        assert_eq!(
            first_sentences("Divide by a common factor. Take 36/48.", 2),
            "Divide by a common factor. Take 36/48."
        );
    }

    #[test]
    fn a_repeat_is_dropped_whole_and_a_decimal_is_not_a_sentence_end() {
        let idea = "To add or subtract decimals, line up the decimal points so that digits with the same value are in the same column.";
        let lesson = "When you add decimals, the decimal points must line up. For 3.4 + 2.75, put 3.40 above 2.75 with the points in a straight column.";
        assert_eq!(
            without_repeats(lesson, idea),
            "For 3.4 + 2.75, put 3.40 above 2.75 with the points in a straight column."
        );
    }

    #[test]
    fn an_instruction_is_given_once() {
        assert_eq!(
            without_repeated_instructions(
                "Very close. One fact is out. Check each column again. Check that part and try again."
            ),
            "Very close. One fact is out. Check that part and try again."
        );
        let working = "Check: 3 + 4 = 7. Check that part and try again.";
        assert_eq!(without_repeated_instructions(working), working);
        assert_eq!(
            without_repeated_instructions(
                "Check each column again. Check it with this step: 16 - 7 = ?"
            ),
            "Check it with this step: 16 - 7 = ?"
        );
    }
}
