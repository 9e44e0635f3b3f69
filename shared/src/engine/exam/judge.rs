//! Marking a written exam answer: an explanation or a word answer that
//! code cannot grade as it grades a number or an option.
//!
//! The `exam_evaluation` call marks it when a model is configured; it sees
//! this question, its model answer and rubric, and the student's answer,
//! never another question. The offline judge here marks it otherwise, and
//! whenever the call fails, times out or replies with something invalid:
//! a mark is always given at once (the student's turn never fails, the
//! report is complete and an adaptive exam knows how to go on), and the
//! question records which judge gave it, so a teacher can look again.
//!
//! The offline judge reads the answer for each rubric point's terms (any
//! one shows the point was made; a term right after "not" or "don't" does
//! not count) and for the model answer's key words, and scores
//! `0.75 × points made + 0.25 × key words found`. Every point made is
//! correct; a score of at least [`PARTIAL_AT`] is close (partial credit);
//! anything less is wrong.

use std::collections::BTreeSet;

use crate::model::{ExamEvaluationInput, JudgedBy, LlmExamEvaluation, QuestionResult, RubricPoint};

/// The share of the score the rubric's points carry; the model answer's
/// key words carry the rest.
const POINTS_WEIGHT: f64 = 0.75;
/// The lowest score that earns partial credit.
pub const PARTIAL_AT: f64 = 0.4;
/// With no rubric, the share of the model answer's key words that makes
/// an answer correct.
const KEY_WORDS_CORRECT_AT: f64 = 0.8;

/// Words that carry no meaning of their own in an answer.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "because", "by", "can", "do", "does", "for", "from",
    "get", "gets", "has", "have", "how", "if", "in", "into", "is", "it", "its", "of", "on", "or",
    "so", "that", "the", "their", "then", "there", "this", "to", "was", "we", "what", "when",
    "which", "will", "with", "you", "your",
];
/// Words that undo the term after them ("you don't add").
const NEGATIONS: &[&str] = &["not", "don't", "dont", "never", "no", "isn't", "doesn't"];

/// A written answer the turn needs marked.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeRequest {
    /// The question's number in the exam (the answer is for it only).
    pub number: u32,
    /// What the evaluation call sees.
    pub input: ExamEvaluationInput,
}

/// A written answer a turn marks: the request for the evaluation call,
/// and the verdict the turn goes on with (the offline judge's until the
/// call's comes back).
#[derive(Debug, Clone, PartialEq)]
pub struct Judging {
    pub request: JudgeRequest,
    pub verdict: WrittenMark,
}

/// The mark a written answer got.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenMark {
    pub result: QuestionResult,
    /// One or two sentences on the answer, shown once marks may be.
    pub feedback: String,
    pub by: JudgedBy,
}

impl WrittenMark {
    /// The model's marking, as the exam records it.
    pub fn from_model(evaluation: &LlmExamEvaluation) -> WrittenMark {
        WrittenMark {
            result: evaluation.result,
            feedback: evaluation.feedback.trim().to_owned(),
            by: JudgedBy::Model,
        }
    }

    /// The credit the mark earns: all of it, the workflow's partial credit
    /// when close, none when wrong.
    pub fn credit(&self, partial_credit: f64) -> f64 {
        credit(self.result, partial_credit)
    }
}

/// The credit a result earns.
pub fn credit(result: QuestionResult, partial_credit: f64) -> f64 {
    match result {
        QuestionResult::Correct => 1.0,
        QuestionResult::Partial => partial_credit.clamp(0.0, 1.0),
        QuestionResult::Incorrect => 0.0,
    }
}

/// The offline judge's reading of an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Marking {
    /// In [0, 1].
    pub score: f64,
    /// The rubric's points the answer made, by index.
    pub points_made: Vec<usize>,
    /// The model answer's key words, and those the answer has.
    pub key_words: usize,
    pub key_words_found: usize,
    pub result: QuestionResult,
}

/// The offline judge's marking of `input`.
pub fn mark(input: &ExamEvaluationInput) -> Marking {
    let answer = tokens(&input.student_answer);
    let points_made: Vec<usize> = input
        .rubric
        .iter()
        .enumerate()
        .filter(|(_, p)| made(&answer, p))
        .map(|(i, _)| i)
        .collect();
    let said: BTreeSet<String> = answer.iter().map(|t| stem(t)).collect();
    let key: BTreeSet<String> = tokens(&input.expected_answer)
        .iter()
        .filter(|t| !STOP_WORDS.contains(&t.as_str()) && !NEGATIONS.contains(&t.as_str()))
        .map(|t| stem(t))
        .collect();
    let found = key.iter().filter(|k| said.contains(*k)).count();
    let key_share = if key.is_empty() {
        0.0
    } else {
        found as f64 / key.len() as f64
    };
    let (score, all_points) = if input.rubric.is_empty() {
        (key_share, key_share >= KEY_WORDS_CORRECT_AT)
    } else {
        let points = points_made.len() as f64 / input.rubric.len() as f64;
        (
            POINTS_WEIGHT * points + (1.0 - POINTS_WEIGHT) * key_share,
            points_made.len() == input.rubric.len(),
        )
    };
    let result = if all_points {
        QuestionResult::Correct
    } else if score >= PARTIAL_AT {
        QuestionResult::Partial
    } else {
        QuestionResult::Incorrect
    };
    Marking {
        score: (score * 1000.0).round() / 1000.0,
        points_made,
        key_words: key.len(),
        key_words_found: found,
        result,
    }
}

/// The offline judge's verdict on `input`, with feedback naming the
/// points made and missed.
pub fn judge(input: &ExamEvaluationInput) -> WrittenMark {
    let marking = mark(input);
    let missed: Vec<&str> = input
        .rubric
        .iter()
        .enumerate()
        .filter(|(i, _)| !marking.points_made.contains(i))
        .map(|(_, p)| p.point.trim().trim_end_matches('.'))
        .collect();
    let feedback = match marking.result {
        QuestionResult::Correct => "Your answer makes every point the question asks for.".into(),
        _ if input.rubric.is_empty() => {
            "Your answer does not match the model answer closely enough.".into()
        }
        _ => format!(
            "Your answer makes {} of {} points. Missing: {}.",
            marking.points_made.len(),
            input.rubric.len(),
            missed.join("; ")
        ),
    };
    WrittenMark {
        result: marking.result,
        feedback,
        by: JudgedBy::Rubric,
    }
}

/// The model's marking in the evaluation call's schema, for the offline
/// evaluator that stands in for the call.
pub fn offline_evaluation(input: &ExamEvaluationInput) -> LlmExamEvaluation {
    let verdict = judge(input);
    LlmExamEvaluation {
        result: verdict.result,
        feedback: verdict.feedback,
    }
}

/// The rubric as the evaluation prompt shows it: one point a line, with
/// the words that show it.
pub fn rubric_text(rubric: &[RubricPoint]) -> String {
    rubric
        .iter()
        .map(|p| format!("- {} (shown by: {})", p.point.trim(), p.terms.join(", ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether the answer makes `point`: one of its terms is there, as words
/// in order, and not negated.
fn made(answer: &[String], point: &RubricPoint) -> bool {
    let answer: Vec<String> = answer.iter().map(|t| stem(t)).collect();
    point.terms.iter().any(|term| {
        let term: Vec<String> = tokens(term).iter().map(|t| stem(t)).collect();
        if term.is_empty() || term.len() > answer.len() {
            return false;
        }
        (0..=answer.len() - term.len()).any(|i| {
            answer[i..i + term.len()] == term[..] && !negated(&answer[i.saturating_sub(2)..i])
        })
    })
}

fn negated(before: &[String]) -> bool {
    before.iter().any(|w| NEGATIONS.contains(&w.as_str()))
}

/// Lower-case words and numbers; `+ - × ÷ =` are words of their own.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Vec<String>| {
        let w = word.trim_matches(|c| c == '\'' || c == '.').to_owned();
        if !w.is_empty() {
            out.push(w);
        }
        word.clear();
    };
    let lower = text.to_lowercase();
    let chars: Vec<char> = lower.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let decimal_point = c == '.'
            && word.chars().last().is_some_and(|p| p.is_ascii_digit())
            && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit());
        if c.is_alphanumeric() || c == '\'' || decimal_point {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            if matches!(c, '+' | '-' | '×' | '÷' | '=' | '*' | '/') {
                out.push(c.to_string());
            }
        }
    }
    flush(&mut word, &mut out);
    out
}

/// A word without the endings that change its form, not its meaning
/// ("adding", "added", "adds" → "add"; "give", "gives" → "giv"); numbers
/// stay as written.
fn stem(word: &str) -> String {
    if word.chars().any(|c| c.is_ascii_digit()) || word.chars().count() <= 3 {
        return word.to_owned();
    }
    let long_enough = |base: &str| base.chars().count() >= 3;
    let mut w = word.to_owned();
    if let Some(base) = word
        .strip_suffix("ing")
        .or_else(|| word.strip_suffix("ed"))
        .filter(|b| long_enough(b))
    {
        w = base.to_owned();
        // "adding" → "add", "stopped" → "stop": a doubled last letter is one.
        let chars: Vec<char> = w.chars().collect();
        if chars.len() >= 4 && chars[chars.len() - 1] == chars[chars.len() - 2] {
            w.pop();
        }
    } else if let Some(base) = word.strip_suffix("es").filter(|b| {
        long_enough(b) && (b.ends_with(['s', 'x', 'z']) || b.ends_with("ch") || b.ends_with("sh"))
    }) {
        w = base.to_owned();
    } else if let Some(base) = word
        .strip_suffix('s')
        .filter(|b| long_enough(b) && !b.ends_with('s'))
    {
        w = base.to_owned();
    }
    if w.chars().count() > 3 && w.ends_with('e') {
        w.pop();
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(point: &str, terms: &[&str]) -> RubricPoint {
        RubricPoint {
            point: point.into(),
            terms: terms.iter().map(|t| (*t).to_owned()).collect(),
        }
    }

    fn check_by_adding(answer: &str) -> ExamEvaluationInput {
        ExamEvaluationInput {
            question: "How can you check that 72 - 38 = 34 is right?".into(),
            expected_answer: "Add back: 34 + 38 should give 72 again.".into(),
            rubric: vec![
                point(
                    "adds the answer and the number taken away",
                    &["add", "plus", "+", "sum"],
                ),
                point("gets back the number started from", &["72"]),
            ],
            student_answer: answer.into(),
        }
    }

    #[test]
    fn every_point_made_is_correct() {
        let v = judge(&check_by_adding(
            "I would add 34 and 38 and see if I get 72",
        ));
        assert_eq!(v.result, QuestionResult::Correct, "{v:?}");
        assert_eq!(v.by, JudgedBy::Rubric);
        let v = judge(&check_by_adding("34+38=72 so it is right"));
        assert_eq!(v.result, QuestionResult::Correct, "{v:?}");
        let v = judge(&check_by_adding("Adding them back gives 72."));
        assert_eq!(v.result, QuestionResult::Correct, "{v:?}");
    }

    #[test]
    fn some_points_made_is_close_and_says_what_is_missing() {
        let input = check_by_adding("you add the answer back on");
        let m = mark(&input);
        assert_eq!(m.points_made, vec![0]);
        assert_eq!(m.result, QuestionResult::Partial, "{m:?}");
        let v = judge(&input);
        assert!(v.feedback.contains("1 of 2 points"), "{}", v.feedback);
        assert!(
            v.feedback.contains("gets back the number"),
            "{}",
            v.feedback
        );
    }

    #[test]
    fn nothing_relevant_or_a_negated_term_is_wrong() {
        for answer in [
            "I don't know",
            "",
            "subtract again",
            "you do not add, you guess",
        ] {
            let v = judge(&check_by_adding(answer));
            assert_eq!(v.result, QuestionResult::Incorrect, "{answer}: {v:?}");
        }
    }

    #[test]
    fn a_term_counts_as_a_whole_word_only() {
        // "address" holds "add" but is not the word.
        let m = mark(&check_by_adding("my address is 172 main street"));
        assert!(m.points_made.is_empty(), "{m:?}");
    }

    #[test]
    fn without_a_rubric_the_model_answers_key_words_decide() {
        let input = ExamEvaluationInput {
            question: "What do we call the top number of a fraction?".into(),
            expected_answer: "the numerator".into(),
            rubric: Vec::new(),
            student_answer: "It's the numerator".into(),
        };
        assert_eq!(judge(&input).result, QuestionResult::Correct);
        let wrong = ExamEvaluationInput {
            student_answer: "denominator".into(),
            ..input
        };
        assert_eq!(judge(&wrong).result, QuestionResult::Incorrect);
    }

    #[test]
    fn the_same_answer_always_gets_the_same_mark() {
        let input = check_by_adding("add 34 and 38");
        assert_eq!(mark(&input), mark(&input));
        assert!(mark(&input).score > 0.0 && mark(&input).score < 1.0);
    }

    #[test]
    fn verdicts_map_to_credit() {
        let model = |result| {
            WrittenMark::from_model(&LlmExamEvaluation {
                result,
                feedback: " Good. ".into(),
            })
        };
        assert_eq!(model(QuestionResult::Correct).credit(0.5), 1.0);
        assert_eq!(model(QuestionResult::Partial).credit(0.5), 0.5);
        assert_eq!(model(QuestionResult::Partial).credit(0.25), 0.25);
        assert_eq!(model(QuestionResult::Partial).credit(7.0), 1.0, "clamped");
        assert_eq!(model(QuestionResult::Incorrect).credit(0.5), 0.0);
        let v = model(QuestionResult::Correct);
        assert_eq!((v.by, v.feedback.as_str()), (JudgedBy::Model, "Good."));
    }

    #[test]
    fn words_are_stemmed_and_numbers_kept() {
        assert_eq!(stem("adding"), "add");
        assert_eq!(stem("added"), "add");
        assert_eq!(stem("adds"), "add");
        assert_eq!(stem("multiplies"), "multipli");
        assert_eq!(stem("multiplied"), "multipli");
        assert_eq!(stem("gives"), stem("give"));
        assert_eq!(stem("boxes"), "box");
        assert_eq!(stem("address"), "address");
        assert_eq!(
            tokens("34+38=72, 0.5."),
            ["34", "+", "38", "=", "72", "0.5"]
        );
    }
}
