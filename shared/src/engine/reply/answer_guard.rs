//! No answer reaches the student, or the tutor model, while its question is
//! still waiting to be graded: the pending question, the drill on screen and
//! every open exam card.
//!
//! An answer is recognised as a value, not only as a string: "34", "34.0"
//! and "1,000" are numbers wherever they appear, "1/2" is found as "0.5".
//! Numbers the question itself states ("What is 72 - 38?") are no evidence
//! and are left alone. Content retrieved for the tutor has pending answers
//! masked, and a reply that states one is replaced (see `engine::reply`).

use chrono::{DateTime, Duration, Utc};

use crate::content::yaml_index::YamlPath;
use crate::content::{Course, ExamItem, Unit};
use crate::engine::exam::cards;
use crate::model::{
    ExpectedAnswer, LlmTutorResponse, PendingQuestion, SessionState, TutorTurnInput, UnitAnchor,
};

/// What a masked answer is replaced with in the tutor's context.
pub const MASK: &str = "…";

/// Relative difference under which two numbers are the same value.
const SAME_VALUE: f64 = 1e-9;

/// An answer that must not be shown yet.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingAnswer {
    /// Whose answer it is, for the log: `exam question EX-1`, `drill`, ...
    pub owner: String,
    /// The answer as written.
    pub answer: String,
    /// The numbers the answer states that its question does not, all of
    /// which a text must contain to give the answer away.
    values: Vec<f64>,
    /// The numbers of the question as written: a text restating the
    /// question ("4/8" while "1/2" is pending) gives nothing away.
    question_forms: Vec<String>,
    /// The answer's wording, lower case without spaces, when it is more
    /// than a number (`x=5`, `192.168.1.0`, `7r2`).
    phrase: Option<String>,
    /// A multiple-choice answer's option id (`B`), named as "option B".
    option_id: Option<String>,
    /// For an item the student has not seen yet: the numbers its question
    /// states. A text gives its answer away only when it works that very
    /// problem (states them all); "2:3" in a lesson answers no drill.
    unseen_question: Vec<f64>,
}

impl PendingAnswer {
    /// `answer` to `question`; `None` when the answer has nothing a text
    /// could be checked for.
    pub fn new(owner: impl Into<String>, question: &str, answer: &str) -> Option<PendingAnswer> {
        let answer = answer.trim();
        let question_forms = forms(question);
        let found = numbers(answer);
        let mut values: Vec<f64> = Vec::new();
        for n in &found {
            let form = squeeze(&answer[n.start..n.end]);
            if !question_forms.contains(&form) && !values.iter().any(|v| same(*v, n.value)) {
                values.push(n.value);
            }
        }
        let is_one_number = found.len() == 1
            && answer[..found[0].start].trim().is_empty()
            && answer[found[0].end..]
                .trim()
                .chars()
                .all(|c| c == '%' || c.is_alphabetic() || c == '$');
        let squeezed = squeeze(answer);
        let phrase = (!is_one_number
            && squeezed.chars().count() >= 3
            && !squeeze(question).contains(&squeezed))
        .then_some(squeezed);
        if values.is_empty() && phrase.is_none() {
            return None;
        }
        Some(PendingAnswer {
            owner: owner.into(),
            answer: answer.to_owned(),
            values,
            question_forms,
            phrase,
            option_id: None,
            unseen_question: Vec::new(),
        })
    }

    /// An answer only its option id can give away.
    fn bare(owner: String, answer: &str) -> PendingAnswer {
        PendingAnswer {
            owner,
            answer: answer.trim().to_owned(),
            values: Vec::new(),
            question_forms: Vec::new(),
            phrase: None,
            option_id: None,
            unseen_question: Vec::new(),
        }
    }

    /// The correct option of an exam question.
    pub fn for_exam(item: &ExamItem) -> Option<PendingAnswer> {
        let index = item.option_index(&item.answer)?;
        let owner = format!("exam question {}", item.id);
        let option = item.options.get(index)?;
        let mut pending = PendingAnswer::new(owner.clone(), &item.stem, option)
            .unwrap_or_else(|| PendingAnswer::bare(owner, option));
        pending.option_id = Some(ExamItem::option_id(index));
        Some(pending)
    }

    /// The expected answer of a question the tutor asked.
    pub fn for_expected(
        owner: impl Into<String>,
        question: &str,
        expected: &ExpectedAnswer,
    ) -> Option<PendingAnswer> {
        // A multiple-choice answer may be stored as its option's id.
        let by_id = (0..expected.options.len())
            .find(|&i| ExamItem::option_id(i).eq_ignore_ascii_case(expected.value.trim()));
        match by_id {
            Some(i) => {
                let owner = owner.into();
                let option = &expected.options[i];
                let mut pending = PendingAnswer::new(owner.clone(), question, option)
                    .unwrap_or_else(|| PendingAnswer::bare(owner, option));
                pending.option_id = Some(ExamItem::option_id(i));
                Some(pending)
            }
            None => PendingAnswer::new(owner, question, &expected.value),
        }
    }

    /// The answer of an item offered to the tutor but not shown yet (the
    /// practice item): only a text working its very problem gives it away.
    pub fn for_unseen_item(
        owner: impl Into<String>,
        question: &str,
        expected: &ExpectedAnswer,
    ) -> Option<PendingAnswer> {
        let mut pending = PendingAnswer::for_expected(owner, question, expected)?;
        pending.unseen_question = numbers(question).into_iter().map(|n| n.value).collect();
        Some(pending)
    }

    /// Whether a text with the numbers `found` could be about this answer's
    /// question: always, except for an unseen item whose numbers it does
    /// not all state.
    fn could_work(&self, found: &[Found]) -> bool {
        self.unseen_question
            .iter()
            .all(|v| found.iter().any(|n| same(n.value, *v)))
    }

    /// Whether `text` gives this answer away.
    pub fn found_in(&self, text: &str) -> bool {
        self.found_among(text, &numbers(text))
    }

    /// [`Self::found_in`] given the numbers of `text`.
    fn found_among(&self, text: &str, found: &[Found]) -> bool {
        if !self.could_work(found) {
            return false;
        }
        if !self.values.is_empty() {
            let present: Vec<f64> = found
                .iter()
                .filter(|n| !self.is_question_form(text, n))
                .map(|n| n.value)
                .collect();
            if self
                .values
                .iter()
                .all(|v| present.iter().any(|p| same(*p, *v)))
            {
                return true;
            }
        }
        if let Some(phrase) = &self.phrase
            && squeeze(text).contains(phrase.as_str())
        {
            return true;
        }
        self.option_id
            .as_deref()
            .is_some_and(|id| names_option(text, id))
    }

    /// Whether the number `n` of `text` is written as one of the question's.
    fn is_question_form(&self, text: &str, n: &Found) -> bool {
        let written = &text[n.start..n.end];
        self.question_forms
            .iter()
            .any(|form| squeezed(written).eq(form.chars()))
    }

    /// `text` with this answer's numbers and wording replaced by [`MASK`].
    pub fn mask(&self, text: &str) -> String {
        self.mask_found(text, &numbers(text))
            .unwrap_or_else(|| text.to_owned())
    }

    /// [`Self::mask`] given the numbers of `text`; `None` when it would
    /// leave `text` as it is.
    fn mask_found(&self, text: &str, found: &[Found]) -> Option<String> {
        if !self.could_work(found) {
            return None;
        }
        let mut hits = found
            .iter()
            .filter(|n| {
                self.values.iter().any(|v| same(*v, n.value)) && !self.is_question_form(text, n)
            })
            .peekable();
        if hits.peek().is_none() && self.phrase.is_none() {
            return None;
        }
        let mut masked = String::with_capacity(text.len());
        let mut rest = 0;
        for n in hits {
            masked.push_str(&text[rest..n.start]);
            masked.push_str(MASK);
            rest = n.end;
        }
        masked.push_str(&text[rest..]);
        if self.phrase.is_some() {
            masked = replace_ignoring_case(&masked, &self.answer, MASK);
        }
        Some(masked)
    }
}

/// `text` with every pending answer masked. Masking answer after answer,
/// the text is read for numbers again only when one changed it.
fn mask_all(pending: &[&PendingAnswer], text: &mut String) {
    mask_all_found(pending, text, numbers(text));
}

/// [`mask_all`] given the numbers of `text`.
fn mask_all_found(pending: &[&PendingAnswer], text: &mut String, mut found: Vec<Found>) {
    for p in pending {
        if let Some(masked) = p.mask_found(text, &found) {
            *text = masked;
            found = numbers(text);
        }
    }
}

/// Every answer pending in `session` at `now`: the question the tutor is
/// waiting on and the exam cards on screen (open for `card_valid_for`).
pub fn pending_in_session(
    course: &Course,
    session: &SessionState,
    question: Option<&PendingQuestion>,
    now: DateTime<Utc>,
    card_valid_for: Duration,
) -> Vec<PendingAnswer> {
    let mut pending: Vec<PendingAnswer> = question
        .and_then(|q| {
            PendingAnswer::for_expected(
                format!("pending question ({})", q.concept),
                &q.text,
                q.expected.as_ref()?,
            )
        })
        .into_iter()
        .collect();
    pending.extend(
        cards::open_cards(session, now, card_valid_for)
            .filter_map(|card| course.exam_item(&card.question_id))
            .filter_map(|(_, item)| PendingAnswer::for_exam(item)),
    );
    pending
}

/// The tutor's context with every pending answer masked: unit anchors, key
/// ideas, worked examples, retrieved chunks and misconception notes. The
/// question, the practice item and what the student wrote stay as they are.
pub fn mask_input<'p>(
    input: &mut TutorTurnInput,
    pending: impl IntoIterator<Item = &'p PendingAnswer>,
) {
    let pending: Vec<&PendingAnswer> = pending.into_iter().collect();
    if pending.is_empty() {
        return;
    }
    let mask = |text: &mut String| mask_all(&pending, text);
    for anchor in &mut input.context.unit_anchors {
        guard_anchor(anchor, &pending);
    }
    for chunk in &mut input.context.unit_content_chunks {
        mask(&mut chunk.text);
    }
    input.category.misconceptions.iter_mut().for_each(&mask);
}

/// A unit anchor with no pending answer in it. A key idea that states one
/// is left out, not masked: the tutor may say an idea word for word, and
/// "7 + … = 9" reads as a broken sentence, not a hint (masked only when
/// every idea states one). A worked example that reaches one is left out
/// whole: masked, its steps would still add up to it.
fn guard_anchor(anchor: &mut UnitAnchor, pending: &[&PendingAnswer]) {
    let mask = |text: &mut String| mask_all(pending, text);
    mask(&mut anchor.anchor_text);
    let ideas = std::mem::take(&mut anchor.key_ideas);
    let mut read: Vec<(String, Vec<Found>, bool)> = ideas
        .into_iter()
        .map(|idea| {
            let found = numbers(&idea);
            let states = pending.iter().any(|p| p.found_among(&idea, &found));
            (idea, found, states)
        })
        .collect();
    if read.iter().any(|(_, _, states)| !states) {
        read.retain(|(_, _, states)| !states);
    }
    anchor.key_ideas = read
        .into_iter()
        .map(|(mut idea, found, _)| {
            mask_all_found(pending, &mut idea, found);
            idea
        })
        .collect();
    if anchor.worked_example.as_ref().is_some_and(|e| {
        let all = format!("{} {} {}", e.problem, e.steps.join(" "), e.answer);
        pending.iter().any(|p| p.found_in(&all))
    }) {
        anchor.worked_example = None;
    }
}

/// The first pending answer `reply` states in what the student reads: the
/// tutor's words, a concept card, and the drill it wrote itself (a server
/// item is a new question, not an answer: pass `own_drill` false). Cards'
/// options come from the bank, where the answer is one choice among others.
pub fn leak_in<'p>(
    reply: &LlmTutorResponse,
    own_drill: bool,
    pending: impl IntoIterator<Item = &'p PendingAnswer>,
) -> Option<&'p PendingAnswer> {
    let mut shown = vec![reply.tutor_text.clone()];
    if let Some(card) = &reply.concept_card {
        shown.extend(card.key_ideas.iter().cloned());
        if let Some(example) = &card.worked_example {
            shown.push(example.problem_latex.clone());
            shown.push(example.final_answer_latex.clone());
            shown.extend(example.steps_latex.iter().flatten().cloned());
        }
    }
    if let Some(drill) = reply.drill_card.as_ref().filter(|_| own_drill) {
        shown.push(drill.prompt.clone());
        shown.push(drill.question_latex.clone());
    }
    pending
        .into_iter()
        .find(|p| shown.iter().any(|text| p.found_in(text)))
}

/// Whether `text` works `item` out to its answer: it states the answer
/// together with every number of the question (for `tutorflow validate`).
pub fn works_out(text: &str, item: &ExamItem) -> bool {
    let Some(pending) = PendingAnswer::for_exam(item) else {
        return false;
    };
    if pending.values.is_empty() {
        return false;
    }
    let present: Vec<f64> = numbers(text).into_iter().map(|n| n.value).collect();
    let stated = numbers(&item.stem);
    !stated.is_empty()
        && stated
            .iter()
            .all(|s| present.iter().any(|p| same(*p, s.value)))
        && pending.found_in(text)
}

/// Where a unit's own text works one of its exam questions out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkedInUnit {
    pub question_id: String,
    pub answer: String,
    /// The unit field, as a path into the unit's document.
    pub at: YamlPath,
}

/// Every exam question of `unit` that the unit's text (anchor, key ideas,
/// worked example, misconceptions, chunks) works out to its answer. The
/// tutor's context masks it, but authors should know.
pub fn worked_in_unit(unit: &Unit) -> Vec<WorkedInUnit> {
    let root = YamlPath::root();
    let mut texts: Vec<(YamlPath, String)> = vec![(root.key("anchor"), unit.anchor.clone())];
    for (i, idea) in unit.key_ideas.iter().enumerate() {
        texts.push((root.key("key_ideas").index(i), idea.clone()));
    }
    if let Some(e) = &unit.worked_example {
        let all = format!("{} {} {}", e.problem, e.steps.join(" "), e.answer);
        texts.push((root.key("worked_example"), all));
    }
    for (i, m) in unit.misconceptions.iter().enumerate() {
        let all = format!("{} {}", m.description, m.remedy);
        texts.push((root.key("misconceptions").index(i), all));
    }
    for (i, c) in unit.chunks.iter().enumerate() {
        texts.push((root.key("chunks").index(i), c.text.clone()));
    }
    let mut found = Vec::new();
    for item in &unit.exam {
        for (at, text) in &texts {
            if works_out(text, item) {
                found.push(WorkedInUnit {
                    question_id: item.id.clone(),
                    answer: item
                        .option_index(&item.answer)
                        .and_then(|i| item.options.get(i))
                        .cloned()
                        .unwrap_or_default(),
                    at: at.clone(),
                });
            }
        }
    }
    found
}

/// The numbers of `text` as written, without spaces.
fn forms(text: &str) -> Vec<String> {
    numbers(text)
        .into_iter()
        .map(|n| squeeze(&text[n.start..n.end]))
        .collect()
}

fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= SAME_VALUE * a.abs().max(b.abs()).max(1.0)
}

fn squeeze(text: &str) -> String {
    squeezed(text).collect()
}

/// The characters of [`squeeze`], without collecting them.
fn squeezed(text: &str) -> impl Iterator<Item = char> + '_ {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
}

/// "option B", "choice B", "answer B", "answer is B", "(B)".
fn names_option(text: &str, id: &str) -> bool {
    let lower = text.to_lowercase();
    let id = id.to_lowercase();
    ["option ", "choice ", "answer ", "answer is ", "("]
        .iter()
        .any(|lead| {
            let needle = format!("{lead}{id}");
            lower.match_indices(&needle).any(|(at, m)| {
                let before = lower[..at].chars().next_back();
                let after = lower[at + m.len()..].chars().next();
                !before.is_some_and(char::is_alphanumeric)
                    && !after.is_some_and(char::is_alphanumeric)
            })
        })
}

fn replace_ignoring_case(text: &str, needle: &str, with: &str) -> String {
    if needle.is_empty() {
        return text.to_owned();
    }
    let lower = text.to_lowercase();
    let needle = needle.to_lowercase();
    // Lower-casing can change lengths outside ASCII: then match exactly.
    if lower.len() != text.len() {
        return text.replace(needle.as_str(), with);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = 0;
    for (at, _) in lower.match_indices(&needle) {
        if at < rest {
            continue;
        }
        out.push_str(&text[rest..at]);
        out.push_str(with);
        rest = at + needle.len();
    }
    out.push_str(&text[rest..]);
    out
}

/// A number written in a text, and where.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Found {
    start: usize,
    end: usize,
    value: f64,
}

/// The numbers in `text`: integers (with thousands commas), decimals,
/// fractions `a/b`, mixed numbers `1 2/3`, `½`-style fractions and a sign
/// written against the digits. Digits glued to a letter before them (`B1`,
/// `x2`) are part of a name; dotted runs (`192.168.1.0`) are not numbers.
fn numbers(text: &str) -> Vec<Found> {
    let bytes = text.as_bytes();
    let mut found: Vec<Found> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if is_plain(bytes[i]) {
            i += plain_run(&bytes[i..]);
            continue;
        }
        if let Some((value, len)) = vulgar_fraction(&text[i..]) {
            // "1½" is one and a half.
            match found.last_mut() {
                Some(prev) if prev.end == i && prev.value.fract() == 0.0 => {
                    prev.value += value.copysign(prev.value + 0.5);
                    prev.end = i + len;
                }
                _ => found.push(Found {
                    start: i,
                    end: i + len,
                    value,
                }),
            }
            i += len;
            continue;
        }
        if !bytes[i].is_ascii_digit() {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let glued = text[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphabetic() || c == '_');
        let start = i;
        let (mut value, mut end) = plain_number(bytes, i);
        // A dotted run is an address or a version, not a number.
        if bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
            while end < bytes.len() && (bytes[end].is_ascii_digit() || bytes[end] == b'.') {
                end += 1;
            }
            i = end;
            continue;
        }
        if glued {
            i = end;
            continue;
        }
        // a/b
        if bytes.get(end) == Some(&b'/')
            && bytes.get(end + 1).is_some_and(u8::is_ascii_digit)
            && value.fract() == 0.0
        {
            let (denominator, after) = plain_number(bytes, end + 1);
            if denominator != 0.0 && denominator.fract() == 0.0 {
                value /= denominator;
                end = after;
                // "1 2/3": the whole number just before joins it.
                if let Some(prev) = found.last()
                    && prev.end + 1 == start
                    && bytes[prev.end] == b' '
                    && prev.value.fract() == 0.0
                    && value < 1.0
                {
                    let prev = found.pop().expect("just checked");
                    found.push(Found {
                        start: prev.start,
                        end,
                        value: prev.value + value.copysign(prev.value + 0.5),
                    });
                    i = end;
                    continue;
                }
            }
        }
        let signed = start > 0
            && bytes[start - 1] == b'-'
            && (start < 2 || !bytes[start - 2].is_ascii_alphanumeric());
        let (start, value) = if signed {
            (start - 1, -value)
        } else {
            (start, value)
        };
        found.push(Found { start, end, value });
        i = end;
    }
    found
}

/// An ASCII byte that is not a digit: no number starts there (a vulgar
/// fraction is never ASCII).
fn is_plain(b: u8) -> bool {
    b.is_ascii() && !b.is_ascii_digit()
}

/// How many [`is_plain`] bytes `bytes` starts with. Most of a lesson is
/// letters and spaces: they are skipped eight at a time, testing a whole
/// word at once (the release profile optimises for size, so a byte loop
/// would not be vectorised).
fn plain_run(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = ONES * 0x80;
    let mut n = 0;
    while let Some(block) = bytes.get(n..n + 8) {
        let word = u64::from_le_bytes(block.try_into().expect("eight bytes"));
        // A digit becomes a byte under 10; an ASCII byte stays under 0x80,
        // where "some byte is under 10" is exact.
        let shifted = word ^ (ONES * u64::from(b'0'));
        let has_digit = shifted.wrapping_sub(ONES * 10) & !shifted & HIGH;
        if (word & HIGH) | has_digit != 0 {
            break;
        }
        n += 8;
    }
    n + bytes[n..]
        .iter()
        .position(|&b| !is_plain(b))
        .unwrap_or(bytes.len() - n)
}

/// Digits with thousands commas and a decimal part, from `at`.
fn plain_number(bytes: &[u8], at: usize) -> (f64, usize) {
    let mut end = at;
    let mut commas = false;
    while end < bytes.len() {
        let b = bytes[end];
        if b.is_ascii_digit() {
            end += 1;
        } else if b == b','
            && bytes.len() >= end + 4
            && bytes[end + 1..end + 4].iter().all(u8::is_ascii_digit)
            && !bytes.get(end + 4).is_some_and(u8::is_ascii_digit)
        {
            commas = true;
            end += 1;
        } else {
            break;
        }
    }
    if bytes.get(end) == Some(&b'.')
        && bytes.get(end + 1).is_some_and(u8::is_ascii_digit)
        && !dotted_after(bytes, end + 1)
    {
        end += 1;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
    }
    let written = &bytes[at..end];
    // Most numbers in a lesson are short whole numbers: exact as f64.
    if written.len() <= 15 && written.iter().all(u8::is_ascii_digit) {
        let whole = written
            .iter()
            .fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
        return (whole as f64, end);
    }
    // Only ASCII digits, commas and a point: always UTF-8.
    let written = std::str::from_utf8(written).unwrap_or_default();
    let value = if commas {
        written.replace(',', "").parse()
    } else {
        written.parse()
    };
    (value.unwrap_or(f64::NAN), end)
}

/// Whether the digits from `at` are followed by another `.digit` (an address).
fn dotted_after(bytes: &[u8], at: usize) -> bool {
    let mut end = at;
    while end < bytes.len() && bytes[end].is_ascii_digit() {
        end += 1;
    }
    bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit)
}

fn vulgar_fraction(text: &str) -> Option<(f64, usize)> {
    let c = text.chars().next()?;
    let value = match c {
        '½' => 0.5,
        '⅓' => 1.0 / 3.0,
        '⅔' => 2.0 / 3.0,
        '¼' => 0.25,
        '¾' => 0.75,
        '⅕' => 0.2,
        '⅛' => 0.125,
        _ => return None,
    };
    Some((value, c.len_utf8()))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn a_plain_run_ends_at_the_first_digit_or_non_ascii_byte(text in "[a-z0-9 ,./½é-]{0,40}") {
            let bytes = text.as_bytes();
            let expected = bytes.iter().position(|&b| !is_plain(b)).unwrap_or(bytes.len());
            prop_assert_eq!(plain_run(bytes), expected);
        }
    }

    fn values(text: &str) -> Vec<f64> {
        numbers(text).into_iter().map(|n| n.value).collect()
    }

    #[test]
    fn numbers_are_read_as_values() {
        assert_eq!(values("72 - 38 = 34"), vec![72.0, 38.0, 34.0]);
        assert_eq!(values("a total of 1,250 and 3.5"), vec![1250.0, 3.5]);
        assert_eq!(values("(3,4) is a point"), vec![3.0, 4.0]);
        assert_eq!(values("half is 1/2 or ½"), vec![0.5, 0.5]);
        let mixed = values("1 2/3 and 2½");
        assert!(
            same(mixed[0], 1.0 + 2.0 / 3.0) && same(mixed[1], 2.5),
            "{mixed:?}"
        );
        assert_eq!(
            values("it is -6, and 15 - 6 is 9"),
            vec![-6.0, 15.0, 6.0, 9.0]
        );
        assert_eq!(values("question EX-INV-B1 and x2"), Vec::<f64>::new());
        assert_eq!(values("host 192.168.1.0 of 24"), vec![24.0]);
        assert_eq!(values("40% of 7cm"), vec![40.0, 7.0]);
    }

    #[test]
    fn an_answer_is_found_as_a_value_not_a_string() {
        let p = PendingAnswer::new("q", "What is 72 - 38?", "34").unwrap();
        assert!(p.found_in("If 72 - 38 = 34, then..."));
        assert!(p.found_in("that makes 34.0"));
        assert!(!p.found_in("340 is too big, and 3 4 apart"));
        assert!(!p.found_in("What is 72 - 38? Start with the tens."));
        assert_eq!(p.mask("so 72 - 38 = 34."), "so 72 - 38 = ….");
        let half = PendingAnswer::new("q", "Simplify 4/8", "1/2").unwrap();
        assert!(half.found_in("it comes to 0.5"));
        assert!(!half.found_in("4/8 has a common factor of 4"));
        assert!(half.found_in("4/8 = 1/2"));
        assert_eq!(half.mask("4/8 = 1/2"), "4/8 = …");
    }

    #[test]
    fn numbers_the_question_states_are_no_evidence() {
        // The answer repeats a number of the question: only its wording counts.
        assert!(PendingAnswer::new("q", "What is 5 × 1?", "5").is_none());
        let p = PendingAnswer::new("q", "Divide 37 by 5", "7 r 2").unwrap();
        assert!(p.found_in("37 ÷ 5 is 7 remainder 2"));
        assert!(
            !p.found_in("how many 5s fit in 37? about 7?"),
            "both numbers are needed"
        );
        assert!(p.found_in("It is 7r2."));
    }

    #[test]
    fn worded_answers_and_option_names_are_found() {
        let ip = PendingAnswer::new("q", "Network of 192.168.1.77/24?", "192.168.1.0").unwrap();
        assert!(ip.found_in("the network is 192.168.1.0"));
        assert!(!ip.found_in("192.168.1.77 is a host"));
        let eq = PendingAnswer::new("q", "Solve 2x = 10", "x = 5").unwrap();
        assert!(eq.found_in("so X=5"));
        assert_eq!(eq.mask("we get x = 5 here"), "we get x = … here");
        let item = ExamItem {
            id: "EX-1".into(),
            tier: crate::model::ExamTier::Bronze,
            stem: "What is 72 - 38?".into(),
            options: vec!["44".into(), "34".into(), "110".into()],
            answer: "B".into(),
            memo: String::new(),
            video_url: None,
            tags: Vec::new(),
            steps: Vec::new(),
            format: crate::content::ExamItemFormat::Choice,
            rubric: Vec::new(),
        };
        let exam = PendingAnswer::for_exam(&item).unwrap();
        assert!(exam.found_in("Pick option B."));
        assert!(exam.found_in("The answer is b"));
        assert!(!exam.found_in("Be careful with the borrowing."));
        assert!(works_out("Subtract: 72 - 38 = 34.", &item));
        assert!(!works_out("Subtracting 38 from 72 takes care.", &item));
    }

    #[test]
    fn multiple_choice_answers_stored_by_id_are_their_option() {
        let expected = ExpectedAnswer {
            kind: crate::model::AnswerKind::Mcq,
            value: "c".into(),
            unit: None,
            options: vec!["1/3".into(), "2/5".into(), "3/4".into()],
            mistakes: Vec::new(),
        };
        let p = PendingAnswer::for_expected("drill", "Which is largest?", &expected).unwrap();
        assert!(p.found_in("0.75 is the largest"));
        assert!(p.found_in("choose option C"));
    }

    #[test]
    fn an_unseen_item_is_given_away_only_by_its_own_problem() {
        let expected = ExpectedAnswer {
            kind: crate::model::AnswerKind::Number,
            value: "2".into(),
            unit: None,
            options: Vec::new(),
            mistakes: Vec::new(),
        };
        let question = "Share 10 sweets in the ratio 1:4. How many get the first share?";
        let unseen = PendingAnswer::for_unseen_item("practice item", question, &expected).unwrap();
        let lesson = "Ana and Ben share sweets in the ratio 2:3.";
        assert!(!unseen.found_in(lesson));
        assert_eq!(unseen.mask(lesson), lesson);
        let worked = "Share 10 in the ratio 1:4: 5 parts of 2, so the first share is 2.";
        assert!(unseen.found_in(worked));
        assert!(unseen.mask(worked).contains(MASK));
        // Once shown, any text that states it gives it away.
        let seen = PendingAnswer::for_expected("practice item", question, &expected).unwrap();
        assert!(seen.found_in(lesson));
    }

    proptest! {
        /// Masking every pending answer in one pass, reading the text for
        /// numbers only after a change, is masking them one by one.
        #[test]
        fn masking_all_at_once_is_masking_one_by_one(
            answers in proptest::collection::vec(1u32..60, 1..4),
            words in proptest::collection::vec(
                prop_oneof!["[a-z]{1,6}", (1u32..60).prop_map(|n| n.to_string()),
                    (1u32..9, 2u32..9).prop_map(|(a, b)| format!("{a}/{b}"))],
                0..12,
            ),
        ) {
            let pending: Vec<PendingAnswer> = answers
                .iter()
                .filter_map(|a| PendingAnswer::new("q", "What is 3 + 4?", &a.to_string()))
                .chain(PendingAnswer::new("eq", "Solve it", "x = 5"))
                .collect();
            let pending: Vec<&PendingAnswer> = pending.iter().collect();
            let text = words.join(" ");
            let mut one_by_one = text.clone();
            for p in &pending {
                one_by_one = p.mask(&one_by_one);
            }
            let mut at_once = text;
            mask_all(&pending, &mut at_once);
            prop_assert_eq!(at_once, one_by_one);
        }

        /// A number written into any text is found, and masking removes it.
        #[test]
        fn a_written_answer_is_always_found_and_masked(
            answer in 1u32..100_000,
            before in "[a-z ]{0,20}",
            after in "[a-z ]{0,20}",
        ) {
            let p = PendingAnswer::new("q", "What is it?", &answer.to_string()).unwrap();
            let text = format!("{before} {answer} {after}");
            prop_assert!(p.found_in(&text));
            prop_assert!(!p.found_in(&p.mask(&text)));
        }
    }

    #[test]
    fn a_key_idea_stating_a_pending_answer_is_left_out_not_masked() {
        let pending = PendingAnswer::new("drill", "What is 45 - 36?", "9").unwrap();
        let mut anchor = UnitAnchor {
            unit_id: "u".into(),
            title: "Adding".into(),
            anchor_text: "Adding and subtracting.".into(),
            key_ideas: vec![
                "7 + 2 = 9, so 9 - 2 = 7.".into(),
                "Line the columns up.".into(),
            ],
            worked_example: None,
        };
        guard_anchor(&mut anchor, &[&pending]);
        assert_eq!(anchor.key_ideas, ["Line the columns up."]);
        // With every idea stating it, they are masked rather than all lost.
        let mut only = anchor.clone();
        only.key_ideas = vec!["7 + 2 = 9".into()];
        guard_anchor(&mut only, &[&pending]);
        assert_eq!(only.key_ideas, [format!("7 + 2 = {MASK}")]);
    }
}
