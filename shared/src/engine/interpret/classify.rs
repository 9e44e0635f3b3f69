//! Routing a student message to one of the workflow's categories.
//!
//! The merge: the LLM's reading (or, without one, offline
//! heuristics) decides whether the message is an answer at all; when it is,
//! code grading decides how good the answer is — the LLM's opinion of
//! correctness is never used. Then the categories are matched exactly as
//! the workflow's comment block defines: every condition that is set must
//! hold, at least one signal (grade, intent, phrase) must match, the highest
//! priority wins and declaration order breaks ties. No category matching
//! means the workflow's default category.

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use crate::content::Workflow;
use crate::content::workflow::{Category, GradingSettings, Phrase};
use crate::engine::grading::{self, Grade, SlipTag};
use crate::engine::interpret::{comparison, student_math};
use crate::model::{
    AnswerKind, ExpectedAnswer, GradeOutcome, LlmTurnAnalysis, PendingQuestion, SessionState,
    StudentIntent,
};
use crate::text::{fold, is_word_char, word_bit};

/// The category of a question about maths outside the course.
pub(crate) const BEYOND_COURSE: &str = "beyond_course";

/// The LLM's reading of the message, when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageReading {
    pub intent: StudentIntent,
    /// What the student literally answered, if the message is an answer.
    pub answer_text: Option<String>,
}

impl From<&LlmTurnAnalysis> for MessageReading {
    fn from(analysis: &LlmTurnAnalysis) -> Self {
        MessageReading {
            intent: analysis.student_intent,
            answer_text: analysis.answer_text.clone(),
        }
    }
}

/// Where the intent came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IntentSource {
    Llm,
    Heuristics,
}

/// One category's verdict, for the explanation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CategoryCheck {
    pub id: String,
    pub priority: i32,
    pub matched: bool,
    /// The signals that matched, or why the category did not apply.
    pub detail: String,
}

/// The chosen category and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Classification {
    pub category: String,
    pub intent: StudentIntent,
    pub intent_source: IntentSource,
    pub intent_reason: String,
    /// The code grade, when the message was read as an answer to the
    /// pending question.
    pub answer_grade: Option<GradeOutcome>,
    /// Every category in declaration order, matched or not.
    pub checks: Vec<CategoryCheck>,
    /// Which rule chose the category.
    pub rule: String,
}

impl Classification {
    /// A few lines a person can read (`tutorflow classify`).
    pub fn explain(&self) -> String {
        let mut lines = vec![
            format!("category: {}", self.category),
            format!(
                "intent: {} ({}: {})",
                self.intent.as_str(),
                match self.intent_source {
                    IntentSource::Llm => "LLM reading",
                    IntentSource::Heuristics => "offline heuristics",
                },
                self.intent_reason
            ),
        ];
        if let Some(outcome) = self.answer_grade {
            lines.push(format!("answer graded by code: {}", outcome_name(outcome)));
        }
        lines.push(format!("rule: {}", self.rule));
        lines.push("categories:".to_owned());
        for check in &self.checks {
            lines.push(format!(
                "  {} {} (priority {}): {}",
                if check.matched { "+" } else { "-" },
                check.id,
                check.priority,
                check.detail
            ));
        }
        lines.join("\n")
    }
}

fn outcome_name(outcome: GradeOutcome) -> &'static str {
    match outcome {
        GradeOutcome::Correct => "correct",
        GradeOutcome::Close => "close",
        GradeOutcome::Wrong => "wrong",
        GradeOutcome::Unverifiable => "unverifiable",
    }
}

/// What the classifier looks at.
#[derive(Debug, Clone, Copy)]
pub struct ClassifyInput<'a> {
    pub workflow: &'a Workflow,
    pub session: &'a SessionState,
    pub message: &'a str,
    /// Code grading of the answer to the pending question, if there is one.
    pub grade: Option<&'a Grade>,
    /// The LLM's reading, if there is one.
    pub reading: Option<&'a MessageReading>,
    /// What the message is, beyond its words.
    pub kind: MessageKind,
}

/// What kind of message it is, as the unit mapper reads it, for the
/// categories that select on it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MessageKind {
    /// No maths and nothing in the course, yet more than small talk
    /// ([`crate::engine::interpret::mapping::UnitMapper::is_unrelated`]).
    pub unrelated: bool,
    /// Nothing but a greeting
    /// ([`crate::engine::interpret::mapping::UnitMapper::is_greeting`]).
    pub greeting: bool,
    /// Nothing but an acknowledgement or a short yes or no
    /// ([`crate::engine::interpret::mapping::UnitMapper::is_acknowledgement`]).
    pub acknowledgement: bool,
    /// The tutor's last reply paused tutoring for a safety concern and
    /// pointed the student to help.
    pub after_safety_help: bool,
    /// The message names a unit of the course ("help me with fractions").
    pub names_a_unit: bool,
    /// With a question pending, the message is nothing but a topic's name
    /// ("fractions")
    /// ([`crate::engine::interpret::mapping::UnitMapper::names_only_a_topic`]).
    pub topic_only: bool,
}

/// The grade and category of one message.
#[derive(Debug, Clone, PartialEq)]
pub struct Interpretation {
    pub grade: Option<Grade>,
    pub classification: Classification,
}

/// Grades the message against the pending question (if any) and classifies
/// it. When code finds no answer in the message but the LLM reading quotes
/// one (`answer_text`), that text is graded instead: the LLM extracts what
/// was said, code decides whether it is right.
pub fn interpret(
    workflow: &Workflow,
    session: &SessionState,
    message: &str,
    reading: Option<&MessageReading>,
    kind: MessageKind,
) -> Interpretation {
    let grade = answer_grade(&workflow.grading, session, message, reading);
    let classification = classify(&ClassifyInput {
        workflow,
        session,
        message,
        grade: grade.as_ref(),
        reading,
        kind,
    });
    Interpretation {
        grade,
        classification,
    }
}

/// A problem the student brings as their own while another is pending
/// ("and how do I solve 3x - 5 = 10"): not graded against the pending
/// question, and read as a problem to solve whatever else it says.
pub fn interpret_own_problem(
    workflow: &Workflow,
    session: &SessionState,
    message: &str,
) -> Interpretation {
    interpret_as(
        workflow,
        session,
        message,
        StudentIntent::Solve,
        "brings a problem of their own",
    )
}

/// The student explains an idea in words after asking about it: not
/// off topic, whatever words they use, and not an answer to grade.
pub fn interpret_explanation(
    workflow: &Workflow,
    session: &SessionState,
    message: &str,
) -> Interpretation {
    interpret_as(
        workflow,
        session,
        message,
        StudentIntent::Explain,
        "explains the idea just asked about",
    )
}

/// `message` classified as `intent`, known from the conversation rather
/// than read from the words, and not graded.
fn interpret_as(
    workflow: &Workflow,
    session: &SessionState,
    message: &str,
    intent: StudentIntent,
    reason: &str,
) -> Interpretation {
    let reading = MessageReading {
        intent,
        answer_text: None,
    };
    let mut classification = classify(&ClassifyInput {
        workflow,
        session,
        message,
        grade: None,
        reading: Some(&reading),
        kind: MessageKind::default(),
    });
    classification.intent_source = IntentSource::Heuristics;
    classification.intent_reason = reason.to_owned();
    Interpretation {
        grade: None,
        classification,
    }
}

fn answer_grade(
    settings: &GradingSettings,
    session: &SessionState,
    message: &str,
    reading: Option<&MessageReading>,
) -> Option<Grade> {
    let question = session.pending_question.as_ref()?;
    // A yes-or-no question about other numbers is asked, not answered.
    if comparison::asks_beyond(message, &question.text) {
        return None;
    }
    let from_message = grading::grade_pending(question, message, settings)?;
    // The answer to the smaller step the tutor offered is progress on
    // the problem, not a wrong try at it.
    if from_message.result != GradeOutcome::Correct && answers_step(session, message, settings) {
        return None;
    }
    let quoted = reading
        .and_then(|r| r.answer_text.as_deref())
        .filter(|t| !t.trim().is_empty());
    match quoted {
        Some(text)
            if from_message.result == GradeOutcome::Unverifiable
                && from_message.tags.is_empty() =>
        {
            grading::grade_pending(question, text, settings).or(Some(from_message))
        }
        _ => Some(from_message),
    }
}

/// Whether `message` gives the result of the step being scaffolded, or
/// of any step of the worked solution of a problem the student brought
/// (its highest common factor, after the hundredths were asked for).
fn answers_step(session: &SessionState, message: &str, settings: &GradingSettings) -> bool {
    if !session.scaffolding.active {
        return false;
    }
    let own_problem = session
        .pending_question
        .as_ref()
        .filter(|q| q.drill_token.is_none())
        .and_then(|q| student_math::student_problem(&q.text));
    let step_values = session.scaffolding.step_expects.as_deref().into_iter();
    let solution_values = own_problem.iter().flat_map(|p| p.passes_through());
    step_values.chain(solution_values).any(|value| {
        let step = ExpectedAnswer {
            kind: AnswerKind::Number,
            value: value.to_owned(),
            unit: None,
            options: Vec::new(),
            mistakes: Vec::new(),
        };
        grading::grade(&step, message, None, settings).result == GradeOutcome::Correct
    })
}

/// Chooses the category of a message.
pub fn classify(input: &ClassifyInput) -> Classification {
    let (intent, intent_source, intent_reason) = match input.reading {
        Some(reading) if reading.intent != StudentIntent::Unknown => (
            reading.intent,
            IntentSource::Llm,
            "as the LLM read the message".to_owned(),
        ),
        _ => {
            let (intent, reason) = heuristic_intent(input.message, input.session, input.grade);
            (intent, IntentSource::Heuristics, reason)
        }
    };
    // The reading decides whether this is an answer; code grades it.
    let is_answer = matches!(intent, StudentIntent::Answer | StudentIntent::Check);
    let answer_grade = input.grade.filter(|_| is_answer).map(|g| g.result);
    let text = fold(input.message);
    let message = FoldedMessage::new(&text);
    let checks: Vec<CategoryCheck> = input
        .workflow
        .categories
        .iter()
        .map(|category| {
            check(
                category,
                input.session,
                answer_grade,
                intent,
                &message,
                input.kind,
            )
        })
        .collect();
    let winner = checks
        .iter()
        .enumerate()
        .filter(|(_, c)| c.matched)
        // Highest priority; among equals the first declared (max_by_key keeps the last).
        .max_by_key(|(i, c)| (c.priority, std::cmp::Reverse(*i)));
    let (category, rule) = match winner {
        Some((i, chosen)) => {
            let matched: Vec<&CategoryCheck> = checks.iter().filter(|c| c.matched).collect();
            let tied: Vec<&str> = matched
                .iter()
                .filter(|c| c.priority == chosen.priority && c.id != chosen.id)
                .map(|c| c.id.as_str())
                .collect();
            let rule = if matched.len() == 1 {
                "the only matching category".to_owned()
            } else if tied.is_empty() {
                format!(
                    "highest priority ({}) of {} matching categories",
                    chosen.priority,
                    matched.len()
                )
            } else {
                format!(
                    "tied at priority {} with {}; declared first (category {} in the file)",
                    chosen.priority,
                    tied.join(", "),
                    i + 1
                )
            };
            (chosen.id.clone(), rule)
        }
        None => (
            input.workflow.default_category.clone(),
            "no category matched: the workflow's default_category".to_owned(),
        ),
    };
    Classification {
        category,
        intent,
        intent_source,
        intent_reason,
        answer_grade,
        checks,
        rule,
    }
}

fn check(
    category: &Category,
    session: &SessionState,
    grade: Option<GradeOutcome>,
    intent: StudentIntent,
    message: &FoldedMessage<'_>,
    kind: MessageKind,
) -> CategoryCheck {
    let verdict = |matched: bool, detail: String| CategoryCheck {
        id: category.id.clone(),
        priority: category.priority,
        matched,
        detail,
    };
    let detect = &category.detect;
    let conditions = [
        (
            "a pending question",
            detect.pending_question,
            session.pending_question.is_some(),
        ),
        (
            "a pending question with an answer to check",
            detect.answer_expected,
            session
                .pending_question
                .as_ref()
                .is_some_and(|q| q.expected.is_some()),
        ),
        (
            "scaffolding",
            detect.scaffolding,
            session.scaffolding.active,
        ),
        ("teach-back", detect.teach_back, session.teach_back.active),
        ("a unit named", detect.unit_named, kind.names_a_unit),
        (
            "a safety reply that pointed to help just before",
            detect.after_safety_help,
            kind.after_safety_help,
        ),
        (
            "an offer pending",
            detect.offer_pending,
            session
                .pending_question
                .as_ref()
                .is_some_and(PendingQuestion::is_offer),
        ),
    ];
    for (name, wanted, actual) in conditions {
        if let Some(wanted) = wanted
            && wanted != actual
        {
            let need = if wanted { "needs" } else { "needs no" };
            return verdict(false, format!("{need} {name}"));
        }
    }
    let mut signals = Vec::new();
    if let Some(outcome) = grade.filter(|g| detect.grades.contains(g)) {
        signals.push(format!("grade {}", outcome_name(outcome)));
    }
    if detect.intents.contains(&intent) {
        signals.push(format!("intent {}", intent.as_str()));
    }
    if detect.unrelated && kind.unrelated {
        signals.push("unrelated to the course".to_owned());
    }
    if detect.greeting && kind.greeting {
        signals.push("a greeting".to_owned());
    }
    if detect.acknowledgement && kind.acknowledgement {
        signals.push("an acknowledgement".to_owned());
    }
    // A topic's name that grades as an answer (a word answer) is one.
    let graded = grade.is_some_and(|g| g != GradeOutcome::Unverifiable);
    if detect.topic_only && kind.topic_only && !graded {
        signals.push("only a topic's name".to_owned());
    }
    signals.extend(
        detect
            .phrases
            .iter()
            .filter(|p| message.contains_phrase(p))
            .map(|p| format!("phrase \"{}\"", p.as_written().trim())),
    );
    if signals.is_empty() {
        verdict(false, "no signal matched".to_owned())
    } else {
        verdict(true, signals.join(", "))
    }
}

/// A folded message and its words, read once for the whole workflow's
/// phrases: most phrases' first word is not among them, which settles the
/// phrase without a search of the text.
struct FoldedMessage<'a> {
    text: &'a str,
    /// A message has a dozen words or so: a scan beats hashing each of the
    /// workflow's hundreds of phrases.
    words: Vec<&'a str>,
    /// The words' [`word_bit`]s: most phrases are ruled out by one test.
    word_bits: u64,
}

impl<'a> FoldedMessage<'a> {
    fn new(text: &'a str) -> Self {
        let words: Vec<&str> = text.split(|c| !is_word_char(c)).collect();
        FoldedMessage {
            text,
            word_bits: words.iter().fold(0, |bits, w| bits | word_bit(w)),
            words,
        }
    }

    /// [`contains_phrase`]: a phrase that starts with a word can only
    /// match where that whole word stands in the message.
    fn contains_phrase(&self, phrase: &Phrase) -> bool {
        let first = phrase.first_word();
        (first.is_empty()
            || (self.word_bits & phrase.first_word_bit() != 0 && self.words.contains(&first)))
            && contains_phrase(self.text, phrase.folded())
    }
}

/// Whether `phrase` occurs in `text` starting and ending at word boundaries
/// (`bye` is not found in `maybe`).
fn contains_phrase(text: &str, phrase: &str) -> bool {
    if phrase.trim().is_empty() {
        return false;
    }
    let is_word = is_word_char;
    text.match_indices(phrase).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        let starts = !phrase.starts_with(is_word) || before.is_none_or(|c| !is_word(c));
        let ends = !phrase.ends_with(is_word) || after.is_none_or(|c| !is_word(c));
        starts && ends
    })
}

const STUCK: &[&str] = &[
    "i don't know",
    "i dont know",
    "i do not know",
    "don't know",
    "dont know",
    "not sure",
    "dunno",
    "idk",
    "no idea",
    "no clue",
    "stuck",
    "help",
    "hint",
    "give up",
    "lost",
    "confused",
    "don't get",
    "dont get",
    "don't understand",
    "dont understand",
    "not sure how",
    "how do i start",
];
/// Asking to be given the answer is asking for help, not answering.
const ASKS_FOR_ANSWER: &[&str] = &[
    "what's the answer",
    "whats the answer",
    "what is the answer",
    "tell me the answer",
    "give me the answer",
    "show me the answer",
    "can i have the answer",
    "just tell me",
    "i'll copy",
    "ill copy",
    "copy it",
];
/// "No" to "does that make sense?".
const NOT_YET: &[&str] = &[
    "no",
    "nope",
    "nah",
    "not really",
    "not yet",
    "no it doesn't",
    "no it doesnt",
    "it doesn't",
    "it doesnt",
];
/// Words that say how a result was reached: an explanation names an
/// operation or a step, not just that the student is sure.
const METHOD: &[&str] = &[
    "add",
    "added",
    "adding",
    "plus",
    "sum",
    "total",
    "subtract",
    "subtracted",
    "subtracting",
    "take away",
    "took away",
    "minus",
    "difference",
    "borrow",
    "borrowed",
    "carry",
    "carried",
    "multiply",
    "multiplied",
    "times",
    "product",
    "divide",
    "divided",
    "share",
    "shared",
    "split",
    "group",
    "groups",
    "both sides",
    "undo",
    "undid",
    "inverse",
    "opposite",
    "denominator",
    "numerator",
    "common",
    "simplify",
    "simplified",
    "cancel",
    "column",
    "ones",
    "tens",
    "hundreds",
    "place value",
    "percent",
    "ratio",
    "factor",
    "square",
    "move",
    "moved",
    "swap",
    "swapped",
    "half",
    "double",
    "count",
    "counted",
];
const DONE: &[&str] = &[
    "bye",
    "goodbye",
    "i'm done",
    "im done",
    "that's all",
    "thats all",
    "no more",
    "see you",
    "end the session",
    "i'm finished",
    "im finished",
    "gotta go",
];
const CHECK: &[&str] = &[
    "is this right",
    "is that right",
    "am i right",
    "is it correct",
    "is this correct",
    "is that correct",
    "did i get it",
    "check my",
];
const EXPLAIN: &[&str] = &[
    "because",
    "since",
    "first",
    "then",
    "so i",
    "i did",
    "i added",
    "i subtracted",
    "i multiplied",
    "i divided",
    "i used",
    "i moved",
    "i took",
    "i worked",
];
const QUESTION_STARTS: &[&str] = &[
    "why",
    "how",
    "what",
    "when",
    "where",
    "which",
    "who",
    "can you",
    "could you",
    "can u",
    "could u",
    // "y" for "why", as typed in a hurry.
    "y do ",
    "y does ",
    "y is ",
    "y are ",
    // Requests ("give me an example") want something said, like a question.
    "give me",
    "show me",
    "explain",
    "does",
    "do ",
    "should",
    "would",
    "is ",
    "are ",
];
const SOLVE: &[&str] = &[
    "solve",
    "calculate",
    "work out",
    "simplify",
    "find",
    "what is",
    "what's",
];
const SMALL_TALK: &[&str] = &[
    "hi",
    "hello",
    "hey",
    "thanks",
    "thank you",
    "ok",
    "okay",
    "cool",
    "yes",
    "no",
    "yep",
    "nope",
    "sure",
    "good morning",
    "good afternoon",
    "hmm",
    "hmmm",
    "umm",
    "um",
    "uh",
    "lol",
];

/// Whether the tutor's last words asked if an explanation made sense.
fn checked_understanding(session: &SessionState) -> bool {
    let asked = |q: &str| {
        let q = q.to_lowercase();
        q.contains("make sense") || q.contains("does that help")
    };
    session
        .pending_question
        .as_ref()
        .is_some_and(|q| asked(&q.text))
        || session
            .scaffolding
            .last_question
            .as_deref()
            .is_some_and(asked)
        || matches!(
            session.last_category.as_deref(),
            Some("conceptual_question" | "guessed")
        )
}

fn has_any(text: &str, cues: &'static [&'static str]) -> Option<&'static str> {
    cues.iter().copied().find(|c| contains_phrase(text, c))
}

/// What a question asking for an explanation says (the teach-back's
/// "Can you explain how you got it?", "How did you work it out?").
const ASKS_TO_EXPLAIN: &[&str] = &[
    "explain",
    "how did you",
    "how you got",
    "your steps",
    "explica",
    "cómo lo has",
    "tus pasos",
];

/// Whether the message asks something: it ends with a question mark or
/// opens the way questions and requests do ("can you explain…").
pub fn asks_something(message: &str) -> bool {
    /// Said before a question without changing it ("no, what is a prime
    /// number", "ok so how do I…").
    const LEAD_INS: [&str; 14] = [
        "no", "nah", "yes", "yeah", "ok", "okay", "um", "umm", "so", "and", "but", "well", "hmm",
        "oh",
    ];
    let text = fold(message);
    let mut text = text.trim();
    while let Some(rest) = LEAD_INS.iter().find_map(|w| {
        text.strip_prefix(w)
            .filter(|r| r.starts_with([',', ' ']))
            .map(|r| r.trim_start_matches([',', ' ']))
    }) {
        text = rest;
    }
    text.ends_with('?') || QUESTION_STARTS.iter().any(|q| text.starts_with(q))
}

/// Words that stand for something already said, or for the task itself,
/// rather than naming a term: "what it means" asks about the last reply.
const NOT_A_TERM: &[&str] = &[
    "it",
    "this",
    "that",
    "these",
    "those",
    "you",
    "u",
    "i",
    "we",
    "they",
    "he",
    "she",
    "there",
    "answer",
    "question",
    "next",
    "to",
    "do",
    "wrong",
    "right",
    "happening",
    "going",
    "on",
];

/// The term a message asks the meaning of, however the student puts it:
/// "what does reciprocal mean", "what is a denominator?", "idk what a
/// numerator is", "not sure what ratio means". Only words make a term
/// ("what is 15% of 80" is a problem), one to three of them.
pub fn term_asked_about(message: &str) -> Option<String> {
    static ASKS: LazyLock<[Regex; 3]> = LazyLock::new(|| {
        let term = r"(?:(?:an?|the)\s+)?(?P<term>[a-z][a-z'-]*(?:\s+[a-z][a-z'-]*){0,2}?)";
        [
            Regex::new(&format!(r"^what\s+(?:does|do)\s+{term}\s+mean\b")),
            Regex::new(&format!(
                r"^(?:what\s+is|what's|whats|what\s+are)\s+{term}\s*[?.!]*$"
            )),
            Regex::new(&format!(r"\bwhat\s+{term}\s+(?:is|are|means?)\s*[?.!]*$")),
        ]
        .map(|pattern| pattern.expect("a valid pattern"))
    });
    let text = fold(message);
    let text = text.trim();
    let term = ASKS
        .iter()
        .find_map(|asks| asks.captures(text))?
        .name("term")?
        .as_str()
        .to_owned();
    term.split_whitespace()
        .all(|w| !NOT_A_TERM.contains(&w))
        .then_some(term)
}

/// The offline reading of a message, for when no LLM reading is available:
/// its intent and the rule that decided it.
pub fn heuristic_intent(
    message: &str,
    session: &SessionState,
    grade: Option<&Grade>,
) -> (StudentIntent, String) {
    let text = fold(message);
    let text = text.trim();
    if text.is_empty() {
        return (StudentIntent::Unknown, "the message is empty".to_owned());
    }
    let has_math = text
        .chars()
        .any(|c| c.is_ascii_digit() || "=+*/^√".contains(c));
    let asks = asks_something(text);
    let words = text.split_whitespace().count();
    // An answer was found in the message (a step counts as an attempt).
    let attempt = grade.is_some_and(|g| {
        g.result != GradeOutcome::Unverifiable || g.tags.contains(&SlipTag::NotSolved)
    });
    if grade.is_some_and(|g| g.tags.contains(&SlipTag::PastedQuestion)) {
        return (
            StudentIntent::Unknown,
            "the message repeats the question".to_owned(),
        );
    }
    // An explanation is judged by what it says: it names an operation or
    // a step, or works with numbers. A question of their own ("why do we
    // need a common denominator?") is not one, however long.
    if session.teach_back.awaiting_explanation
        && !asks
        && (has_any(text, EXPLAIN).is_some() || words >= 4)
        && (has_any(text, METHOD).is_some() || has_math)
        && has_any(text, &["guess", "guessed", "no idea", "idk"]).is_none()
    {
        return (
            StudentIntent::Explain,
            "teach-back is awaiting an explanation and the message says how".to_owned(),
        );
    }
    // "9/8" where an explanation was asked for: an answer, as if to a
    // new question. Only while the explanation is still what the tutor
    // last asked for, not once it has asked something else.
    let explanation_pending = session
        .pending_question
        .as_ref()
        .is_some_and(|q| has_any(&fold(&q.text), ASKS_TO_EXPLAIN).is_some());
    if session.teach_back.awaiting_explanation
        && explanation_pending
        && !asks
        && has_math
        && words <= 2
    {
        return (
            StudentIntent::Answer,
            "a bare answer where an explanation was asked for".to_owned(),
        );
    }
    if let Some(cue) = has_any(text, ASKS_FOR_ANSWER) {
        return (
            StudentIntent::Stuck,
            format!("asks to be given the answer (\"{cue}\")"),
        );
    }
    if session.pending_question.is_some() && text.chars().all(|c| c == '?') {
        return (
            StudentIntent::Stuck,
            "a bare question mark on a pending question".to_owned(),
        );
    }
    if NOT_YET.contains(&text.trim_end_matches(['!', '.'])) && checked_understanding(session) {
        return (
            StudentIntent::Stuck,
            "says it does not make sense yet".to_owned(),
        );
    }
    // "Is it 12 or 13?" weighs answers up rather than giving one.
    if asks && session.pending_question.is_some() && has_math && contains_phrase(text, "or") {
        return (
            StudentIntent::Stuck,
            "asks which of several answers it is".to_owned(),
        );
    }
    if let Some(cue) = has_any(text, CHECK) {
        return (
            StudentIntent::Check,
            format!("asks whether the work is right (\"{cue}\")"),
        );
    }
    if attempt {
        if text.starts_with("why") || text.starts_with("how") {
            return (
                StudentIntent::Question,
                "asks why or how about an answer".to_owned(),
            );
        }
        return (
            StudentIntent::Answer,
            "an answer to the pending question was found in the message".to_owned(),
        );
    }
    // "idk what a denominator is" asks what the word means: a question to
    // answer, not a request for help with whatever is on screen.
    if let Some(term) = term_asked_about(text) {
        return (
            StudentIntent::Question,
            format!("asks what \"{term}\" means"),
        );
    }
    if let Some(cue) = has_any(text, STUCK) {
        return (
            StudentIntent::Stuck,
            format!("says they are stuck (\"{cue}\")"),
        );
    }
    if let Some(cue) = has_any(text, DONE) {
        return (StudentIntent::Done, format!("wants to finish (\"{cue}\")"));
    }
    // A bare number with nothing pending is no problem to work on.
    if has_math
        && session.pending_question.is_none()
        && (has_any(text, SOLVE).is_some() || !asks)
        && student_math::student_problem(text).is_some()
    {
        return (
            StudentIntent::Solve,
            "brings a problem of their own".to_owned(),
        );
    }
    if asks {
        return (StudentIntent::Question, "asks a question".to_owned());
    }
    if SMALL_TALK.contains(&text.trim_end_matches(['!', '.'])) {
        return (StudentIntent::Unknown, "small talk".to_owned());
    }
    // A short word reply ("left", "subtract") to a scaffolding question.
    if session.scaffolding.active && words <= 8 {
        return (
            StudentIntent::Answer,
            "a short reply to the scaffolding question".to_owned(),
        );
    }
    (StudentIntent::Unknown, "no heuristic applies".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_match_whole_words() {
        assert!(contains_phrase("ok bye then", "bye"));
        assert!(!contains_phrase("maybe 4", "bye"));
        assert!(contains_phrase("why is it 4", "why "));
        assert!(!contains_phrase("idkx", "idk"));
        assert!(contains_phrase("i'm stuck!", "i'm stuck"));
        assert!(!contains_phrase("anything", ""));
    }

    #[test]
    fn a_question_about_a_word_names_the_term() {
        for (message, term) in [
            ("idk what a denominator is", "denominator"),
            ("I don't know what the numerator means", "numerator"),
            ("what does reciprocal mean", "reciprocal"),
            ("what is a ratio?", "ratio"),
            ("whats an integer", "integer"),
            ("not sure what a common factor is", "common factor"),
        ] {
            assert_eq!(
                term_asked_about(message).as_deref(),
                Some(term),
                "{message}"
            );
        }
        for message in [
            "idk what to do",
            "i don't know what the answer is",
            "idk what it means",
            "i don't know what you mean",
            "what is 15% of 80",
            "i don't know",
        ] {
            assert_eq!(term_asked_about(message), None, "{message}");
        }
    }

    #[test]
    fn not_knowing_what_a_word_means_is_a_question() {
        let session = SessionState::default();
        let (intent, _) = heuristic_intent("idk what a denominator is", &session, None);
        assert_eq!(intent, StudentIntent::Question);
        let (intent, _) = heuristic_intent("idk what to do", &session, None);
        assert_eq!(intent, StudentIntent::Stuck);
    }
}
