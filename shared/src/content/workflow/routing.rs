//! How a message is routed: the categories a workflow lists, what detects
//! each (grades, intents, phrases), the state transitions each causes,
//! and the maths beyond the course that gets a short true answer.

use serde::{Deserialize, Serialize};

use crate::model::{GradeOutcome, StudentIntent};

/// A routing category: how it is detected, which prompt answers
/// it and which state transitions it causes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Category {
    pub id: String,
    #[serde(default)]
    pub description: String,
    /// Higher wins when several categories match.
    pub priority: i32,
    pub detect: Detection,
    /// Never read from a message: a mode answers as this category (e.g. a
    /// question session's recap), so it needs no detection.
    #[serde(default)]
    pub set_by_mode: bool,
    /// Prompt template with this category's guidance for the tutor.
    pub prompt: String,
    #[serde(default)]
    pub transitions: Vec<Transition>,
}

impl Category {
    /// Whether the category asks the student what to do next rather than
    /// taking part in the work (a hello, a feeling, the check-in after a
    /// safety reply).
    pub fn invites_choice(&self) -> bool {
        self.transitions.contains(&Transition::InviteChoice)
    }

    /// Whether the category is the student asking for help (stuck, a hint):
    /// it starts or deepens the scaffolding.
    pub fn asks_for_help(&self) -> bool {
        self.transitions.iter().any(|t| {
            matches!(
                t,
                Transition::StartScaffolding | Transition::DeepenScaffolding
            )
        })
    }
}

/// When a category applies: every condition that is set (`pending_question`,
/// `answer_expected`, `scaffolding`, `teach_back`, `unit_named`,
/// `after_safety_help`, `offer_pending`) must hold, and at least one signal must match (a
/// listed grade, a listed intent, one of the phrases, or a kind of message).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Detection {
    /// Code grading outcomes of the student's answer that select this category.
    pub grades: Vec<GradeOutcome>,
    /// Intents from the LLM's reading (or the offline heuristics).
    pub intents: Vec<StudentIntent>,
    /// Offline heuristics: case-insensitive phrases; a match selects the category.
    pub phrases: Vec<Phrase>,
    /// Selects the category when the message holds no maths and names
    /// nothing in the course, yet says more than a greeting or a "thanks":
    /// chatter about something else.
    pub unrelated: bool,
    /// Selects the category when the message is nothing but a greeting
    /// ("hi", "hello there", "good morning!", "hey, how are you?").
    pub greeting: bool,
    /// Selects the category when the message is nothing but an
    /// acknowledgement or a short yes or no ("ok", "yeah thanks", "i will",
    /// "not really"): it asks for nothing.
    pub acknowledgement: bool,
    /// Selects the category when, with a question pending, the message is
    /// nothing but the name of a topic of the course ("fractions", "ratios
    /// please") and does not grade as an answer to it.
    pub topic_only: bool,
    /// Match only when a question is (or is not) pending.
    pub pending_question: Option<bool>,
    /// Match only when the pending question has (or has not) an answer
    /// code checks: a problem, not a "Does that make sense?".
    pub answer_expected: Option<bool>,
    pub scaffolding: Option<bool>,
    pub teach_back: Option<bool>,
    /// Match only when the message names (or does not name) a unit of the
    /// course: "can you help me?" asks for help, "can you help me with
    /// fractions?" already says with what.
    pub unit_named: Option<bool>,
    /// Match only when the tutor's last reply was (or was not) a safety
    /// response that paused tutoring and pointed the student to help: an
    /// "ok" after it is not a cue to carry on with maths.
    pub after_safety_help: Option<bool>,
    /// Match only when the pending question is (or is not) an offer the
    /// tutor made ("Shall we look at Decimals, the nearest thing to it
    /// that we cover?"): a "no thanks" declines it.
    pub offer_pending: Option<bool>,
}

/// A routing phrase as the author wrote it, and folded once at load
/// (lowercase, straight apostrophes, single spaces) for the comparison
/// every turn makes against every category's phrases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub struct Phrase {
    written: String,
    folded: String,
    /// The folded phrase's first word: a message without that word cannot
    /// contain the phrase.
    first_word: String,
    /// [`crate::text::word_bit`] of the first word.
    first_word_bit: u64,
}

impl Phrase {
    pub fn as_written(&self) -> &str {
        &self.written
    }

    pub fn folded(&self) -> &str {
        &self.folded
    }

    /// The folded phrase's first word; empty when it starts with a symbol.
    pub fn first_word(&self) -> &str {
        &self.first_word
    }

    /// [`crate::text::word_bit`] of [`Self::first_word`].
    pub fn first_word_bit(&self) -> u64 {
        self.first_word_bit
    }
}

impl From<String> for Phrase {
    fn from(written: String) -> Self {
        let folded = crate::text::fold(&written);
        let first_word = crate::text::first_word(&folded).to_owned();
        let first_word_bit = crate::text::word_bit(&first_word);
        Phrase {
            written,
            folded,
            first_word,
            first_word_bit,
        }
    }
}

impl From<Phrase> for String {
    fn from(phrase: Phrase) -> Self {
        phrase.written
    }
}

/// A state change a category causes. A fixed vocabulary that the engine
/// implements; workflows compose them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transition {
    /// The pending question is answered: forget it.
    ClearQuestion,
    /// Count a wrong attempt and escalate asked → probe → hint → explain.
    RecordWrongAttempt,
    StartScaffolding,
    DeepenScaffolding,
    EndScaffolding,
    StartTeachBack,
    EndTeachBack,
    CountOffTopic,
    ResetOffTopic,
    /// On to the unit after the focus (unless the focus shows weakness);
    /// the pending question is dropped.
    MoveOn,
    /// The next practice item is harder (or easier) than the student's
    /// ability alone would pick, by `irt.request_step`, until they ask again.
    Harder,
    Easier,
    /// The student's last right answer was a guess: it no longer counts
    /// towards their drill streak.
    RetractGuess,
    /// The reply asks what the student would like to work on: an
    /// invitation, not a question with an answer, so it is never kept as
    /// the pending question (whatever was pending stays).
    InviteChoice,
}

/// A maths question the course does not teach ("why can't you divide by
/// zero?"): answered briefly and truly, never with an unrelated unit's text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BeyondCourse {
    /// Phrases that ask about it, matched on whole words.
    pub asks: Vec<String>,
    /// The short answer a 12-15-year-old can follow.
    pub answer: String,
    /// The unit of a course closest to it, offered after the answer.
    #[serde(default)]
    pub nearest_unit: Option<String>,
}
