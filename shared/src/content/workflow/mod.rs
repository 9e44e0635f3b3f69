//! A tutoring workflow (`workflows/*.yaml`): routing categories, policy
//! weights, mastery rules, mode settings, safety, LLM settings and prompts.
//!
//! Every section has the reference values as defaults, so a workflow file
//! only needs to state what it changes; the shipped `default.yaml` spells
//! it all out.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::tutor_text::{OfflinePhrases, PromptSignals};
use crate::model::{ExamFeedbackMode, GradeOutcome, MasteryTier, Mode, StepKind, StudentIntent};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workflow {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// Routing categories; the classifier picks the matching one with the highest priority.
    pub categories: Vec<Category>,
    /// Category used when no other matches.
    pub default_category: String,
    #[serde(default)]
    pub policy: PolicySettings,
    #[serde(default)]
    pub mastery: MasterySettings,
    #[serde(default)]
    pub irt: IrtSettings,
    #[serde(default)]
    pub modes: ModeSettings,
    #[serde(default)]
    pub grading: GradingSettings,
    #[serde(default)]
    pub pacing: PacingSettings,
    #[serde(default)]
    pub style: StyleSettings,
    #[serde(default)]
    pub safety: SafetySettings,
    #[serde(default)]
    pub sanitize: SanitizeSettings,
    #[serde(default)]
    pub llm: LlmCalls,
    pub prompts: PromptNames,
    /// Texts of the tutor prompt's pacing, style and mode signals.
    #[serde(default)]
    pub prompt_signals: PromptSignals,
    /// What the offline tutor says.
    #[serde(default)]
    pub offline_tutor: OfflinePhrases,
    /// Upper bound, in tokens, of one tutor prompt (history, then chunks, are trimmed).
    #[serde(default = "defaults::token_budget")]
    pub token_budget: u32,
    /// Most recent messages included as conversation history.
    #[serde(default = "defaults::history_messages")]
    pub history_messages: u32,
    /// Maths questions outside the course, each with a short true answer.
    #[serde(default)]
    pub beyond_course: Vec<BeyondCourse>,
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

/// When a category applies: every condition that is set (`pending_question`,
/// `answer_expected`, `scaffolding`, `teach_back`, `unit_named`) must hold, and at least one signal must match
/// (a listed grade, a listed intent, or one of the phrases).
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
}

/// A routing phrase as the author wrote it, and folded once at load
/// (lowercase, straight apostrophes, single spaces) for the comparison
/// every turn makes against every category's phrases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub struct Phrase {
    written: String,
    folded: String,
}

impl Phrase {
    pub fn as_written(&self) -> &str {
        &self.written
    }

    pub fn folded(&self) -> &str {
        &self.folded
    }
}

impl From<String> for Phrase {
    fn from(written: String) -> Self {
        let folded = crate::text::fold(&written);
        Phrase { written, folded }
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

/// Which blocking prerequisite becomes the focus when several are missing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockerChoice {
    /// The first missing prerequisite in the course's listed order.
    #[default]
    FirstMissing,
    /// The missing prerequisite with the highest priority score.
    HighestPriority,
}

/// Which prerequisites below `prereq_min_tier` block the unit that needs them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockerEvidence {
    /// Only a prerequisite with evidence of weakness (or one that leads down
    /// to such a unit) blocks. A unit never worked on is unknown, not
    /// missing: the student is taught where they asked, and a prerequisite
    /// is checked only when a wrong answer points to it.
    #[default]
    WeakOnly,
    /// Every prerequisite below the tier blocks, worked on or not (the
    /// strict rule).
    AnyMissing,
}

/// How the policy places a student: what counts as held, and as weak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PlacementSettings {
    /// A unit whose BKT probability reached `mastery.bkt.mastered_at` from
    /// graded evidence is held, whatever its tier.
    pub known_by_mastery: bool,
    /// A unit with graded evidence and a BKT probability below this is weak.
    pub weak_below: f64,
}

/// The guided policy's numbers: scope, scoring weights, blockers, stuck and
/// exam readiness (docs/architecture.md, "The guided policy").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicySettings {
    pub weights: ScoreWeights,
    pub intent_mix: IntentMix,
    /// Recency decays linearly to zero over this many hours.
    pub recency_window_hours: f64,
    pub tier_need: TierNeed,
    pub drill_evidence: DrillEvidence,
    /// Top mapped unit becomes the primary target at or above this confidence.
    pub primary_target_min_confidence: f64,
    /// A best mapped unit (other than the current focus) at or above this
    /// confidence but below `primary_target_min_confidence` makes the
    /// message ambiguous: only a Socratic clarifier is allowed, no card.
    /// Set it to `primary_target_min_confidence` or above to turn this off.
    pub clarify_min_confidence: f64,
    /// A prerequisite is missing until the student holds this tier in it.
    pub prereq_min_tier: MasteryTier,
    /// Which missing prerequisites block.
    pub blocker_evidence: BlockerEvidence,
    pub placement: PlacementSettings,
    /// With no confident mapped unit and a gold focus, move on to the best
    /// unfinished unit in progress or the next unit of the course.
    pub advance_from_mastered: bool,
    /// Most units kept in `unitsInProgress` (most recent first).
    pub units_in_progress_cap: usize,
    pub candidates: CandidateCaps,
    pub scoped: ScopedCaps,
    pub stuck: StuckRule,
    /// Drill streak needed (with prerequisites met) to be exam-ready.
    pub exam_ready_streak: u32,
    pub blocker: BlockerChoice,
    pub constraints: ConstraintSettings,
    /// Built-in lockout after a failed exam question or a support view.
    pub exam_lockout_hours: f64,
    /// How long a shown exam card can be answered.
    pub exam_card_hours: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScoreWeights {
    pub intent: f64,
    pub recency: f64,
    pub in_progress: f64,
    pub tier_need: f64,
    pub drill_evidence: f64,
    /// 1 - the BKT mastery probability. Zero keeps the five-term score.
    pub mastery_gap: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IntentMix {
    pub mapped: f64,
    pub focus: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TierNeed {
    pub none: f64,
    pub bronze: f64,
    pub silver: f64,
    pub gold: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrillEvidence {
    /// Value of a streak of one.
    pub streak_one: f64,
    /// Streak at which the value reaches 1.
    pub full_streak: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CandidateCaps {
    pub top_mapped: usize,
    pub in_progress: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScopedCaps {
    pub max_units: usize,
    pub top_mapped: usize,
    pub in_progress: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StuckRule {
    pub min_attempts: u32,
    pub max_streak: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConstraintSettings {
    pub max_concept_words: u32,
    pub max_worked_examples: u32,
    pub drill_max_steps: u32,
    /// Most key ideas on a concept card (the prompt contract says up to 3).
    pub max_key_ideas: u32,
}

/// What earns each mastery tier, and BKT.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MasterySettings {
    pub bronze: TierRule,
    pub silver: TierRule,
    pub gold: TierRule,
    pub bkt: BktParams,
    /// Help asked for on an item before any answer to it counts as OATutor
    /// counts it: a wrong first attempt for BKT, so the answer that follows
    /// is not a first attempt (and a right one is not evidence of mastery).
    pub hint_before_answer_is_wrong: bool,
}

/// A tier is reached when the lower tier is held, the drill streak is at
/// least `drill_streak` and `exam_passes` questions of this tier were passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TierRule {
    pub drill_streak: u32,
    pub exam_passes: u32,
}

/// Bayesian Knowledge Tracing parameters (OATutor's defaults).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BktParams {
    pub prior: f64,
    pub learn: f64,
    pub guess: f64,
    pub slip: f64,
    pub mastered_at: f64,
}

/// A unit's own BKT parameters (OATutor keeps one set per skill): the fields
/// given replace the workflow's `mastery.bkt`, the others are inherited.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BktOverride {
    pub prior: Option<f64>,
    pub learn: Option<f64>,
    pub guess: Option<f64>,
    pub slip: Option<f64>,
    pub mastered_at: Option<f64>,
}

impl BktParams {
    /// These parameters with a unit's overrides applied.
    pub fn overridden_by(&self, unit: Option<&BktOverride>) -> BktParams {
        let Some(o) = unit else {
            return self.clone();
        };
        BktParams {
            prior: o.prior.unwrap_or(self.prior),
            learn: o.learn.unwrap_or(self.learn),
            guess: o.guess.unwrap_or(self.guess),
            slip: o.slip.unwrap_or(self.slip),
            mastered_at: o.mastered_at.unwrap_or(self.mastered_at),
        }
    }
}

/// IRT-lite ability tracking (`engine::mastery::irt`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IrtSettings {
    /// Starting ability in \[0,1\].
    pub initial_ability: f64,
    /// Elo step size.
    pub k: f64,
    /// Success probability that next-item difficulty aims for.
    pub target_success: f64,
    /// How far a request for a harder (or easier) item moves its
    /// difficulty, on the \[0,1\] scale.
    pub request_step: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModeSettings {
    pub guided: GuidedMode,
    pub teach_me: TeachMeMode,
    pub clarify_doubts: ClarifyMode,
    pub exam: ExamMode,
    pub problem_set: ProblemSetMode,
    pub survey: SurveyMode,
}

impl ModeSettings {
    /// Whether threads may be created in `mode`.
    pub fn enabled(&self, mode: Mode) -> bool {
        match mode {
            Mode::Guided => self.guided.enabled,
            Mode::TeachMe => self.teach_me.enabled,
            Mode::ClarifyDoubts => self.clarify_doubts.enabled,
            Mode::Exam => self.exam.enabled,
            Mode::ProblemSet => self.problem_set.enabled,
            Mode::Survey => self.survey.enabled,
        }
    }

    /// The prompt template of `mode`'s welcome message.
    pub fn welcome_prompt(&self, mode: Mode) -> &str {
        match mode {
            Mode::Guided => &self.guided.welcome_prompt,
            Mode::TeachMe => &self.teach_me.welcome_prompt,
            Mode::ClarifyDoubts => &self.clarify_doubts.welcome_prompt,
            Mode::Exam => &self.exam.welcome_prompt,
            Mode::ProblemSet => &self.problem_set.welcome_prompt,
            Mode::Survey => &self.survey.welcome_prompt,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GuidedMode {
    pub enabled: bool,
    /// Prompt template of the welcome message.
    pub welcome_prompt: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TeachMeMode {
    pub enabled: bool,
    /// Prompt template of the welcome message.
    pub welcome_prompt: String,
    pub max_replans: u32,
    /// Plan used when a unit has none and no planner LLM is configured.
    pub default_plan: Vec<StepKind>,
    /// Correct answers that complete a check or practice step.
    pub step_correct_to_complete: u32,
    /// Wrong answers in one step that block it (and trigger a replan).
    pub step_failures_to_block: u32,
    /// Turns the lesson goes on after the plan is complete, before the
    /// closing reply.
    pub extension_turns: u32,
    /// Prompt template of the message added when the plan completes
    /// (`{{unit_title}}`, `{{learned}}`).
    pub completion_prompt: String,
    /// Prompt template of the message added instead when the plan ends
    /// with steps still blocked (`{{unit_title}}`, `{{learned}}`,
    /// `{{to_review}}`).
    pub review_prompt: String,
    /// Routing category the closing replies answer as.
    pub closing_category: String,
    /// Routing category the reply answers as when a struggling student's
    /// plan is rewritten (the question they kept missing is dropped).
    pub replan_category: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClarifyMode {
    pub enabled: bool,
    /// Prompt template of the welcome message.
    pub welcome_prompt: String,
    /// The student's latest earlier question sessions on the course
    /// summarised into a new session's context.
    pub past_discussions: u32,
    /// Routing category a question is answered as.
    pub answer_category: String,
    /// Routing category of the recap that closes the session.
    pub closing_category: String,
    /// Routing category of every reply once the session has ended.
    pub after_category: String,
    /// Short replies that end the session when they answer the tutor's
    /// "anything else?" ("no", "no thanks").
    pub declines: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExamMode {
    pub enabled: bool,
    /// Prompt template of the welcome message.
    pub welcome_prompt: String,
    pub question_count: u32,
    pub difficulty_mix: DifficultyMix,
    pub feedback: ExamFeedbackMode,
    /// Credit for a `close` answer.
    pub partial_credit: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DifficultyMix {
    pub easy: f64,
    pub medium: f64,
    pub hard: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProblemSetMode {
    pub enabled: bool,
    /// Prompt template of the welcome message.
    pub welcome_prompt: String,
    /// Wrong attempts after which a problem counts as struggling.
    pub struggling_attempts: u32,
    /// Scaffolding depth beyond which the teacher is alerted (INTERVENE).
    pub intervene_scaffold_depth: u32,
    /// Minutes on one problem before skipping is offered.
    pub skip_offer_minutes: u32,
    /// Turns of the previous problem kept when moving on (hybrid memory).
    pub memory_turns_kept: u32,
    /// Whether a correct answer waits for the teach-back before advancing.
    pub wait_for_teach_back: bool,
    /// Fewest and most problems a caller's set may have.
    pub min_problems: u32,
    pub max_problems: u32,
    /// Minutes without a message after which a session is over, as abandoned.
    pub session_ttl_minutes: u32,
    /// Routing category the reply answers as when a problem is solved and
    /// the session moves on (the next problem follows the reply).
    pub solved_category: String,
    /// Routing category the reply answers as when the student has replied
    /// to the teach-back of a solved problem and the session moves on: it
    /// thanks them whatever they said ("I don't know" earns no praise).
    pub explained_category: String,
    /// Routing category the reply answers as when a problem is skipped.
    pub skipped_category: String,
    /// Routing categories that ask to skip the problem ("skip", "next one").
    pub skip_categories: Vec<String>,
    /// Prompt templates of the texts the mode adds to a reply: the next
    /// problem (`{{number}}`, `{{total}}`, `{{problem}}`), the end of the
    /// session (`{{summary}}`, `{{focus}}`), the offer to skip and the
    /// teacher alert.
    pub next_problem_prompt: String,
    pub complete_prompt: String,
    pub skip_offer_prompt: String,
    pub intervene_prompt: String,
}

/// How answers are checked by code, never by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GradingSettings {
    /// A wrong number is `close` when it is within
    /// max(`close_min_difference`, `close_relative` × |expected|).
    pub close_relative: f64,
    pub close_min_difference: f64,
    /// `close_min_difference` counts only for expected values at least
    /// this large: below 1 a floor of 0.3 would call 1/2 close to 3/11.
    pub close_min_difference_from: f64,
    /// A decimal that rounds a non-terminating expected value (1/3 as 0.33,
    /// 9π as 28.3) is correct with this many significant figures ...
    pub rounding_min_significant: u32,
    /// ... or this many decimal places.
    pub rounding_min_decimals: u32,
    /// Points at which two expressions are compared when they have variables.
    pub equivalence_points: u32,
}

/// Pacing directive thresholds (average mastery in \[0,1\]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PacingSettings {
    pub accelerate_min_mastery: f64,
    /// Fast track: this share of concepts at `fast_track_mastery` or more.
    pub fast_track_share: f64,
    pub fast_track_mastery: f64,
    pub simplify_max_mastery: f64,
    pub consolidate_min_mastery: f64,
    pub consolidate_max_mastery: f64,
    pub consolidate_min_wrong: u32,
    /// Graded answers looked at for the trend (the older half against the newer).
    pub trend_window: u32,
    /// Change in the share of right answers that counts as improving or declining.
    pub trend_margin: f64,
}

/// Student style thresholds (how much and how the student writes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StyleSettings {
    pub quiet_max_words: f64,
    pub expressive_min_words: f64,
    /// Messages looked at for disengagement.
    pub disengagement_window: u32,
    /// Last message shorter than this share of the first ...
    pub disengagement_ratio: f64,
    /// ... and at most this many words.
    pub disengagement_max_words: u32,
}

/// The categories an online check may name: OpenAI's moderation
/// categories and the safety LLM call's.
pub const ONLINE_CATEGORIES: &[&str] = &[
    "harassment",
    "harassment/threatening",
    "hate",
    "hate/threatening",
    "illicit",
    "illicit/violent",
    "self-harm",
    "self-harm/intent",
    "self-harm/instructions",
    "sexual",
    "sexual/minors",
    "violence",
    "violence/graphic",
    "self_harm",
    "abuse",
    "personal_details",
    "other",
];

/// The category of a message an online check flagged under a category
/// the workflow does not list.
pub const OTHER_CATEGORY: &str = "other";

/// The region whose help resources are used when the configured one has none.
pub const DEFAULT_REGION: &str = "default";

/// The safety gate: categories of messages that are not
/// tutored as usual, how they are recognised, and what the tutor does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SafetySettings {
    /// Also ask the moderation provider, when the runtime configuration has one.
    pub moderation: bool,
    /// Also ask the safety LLM call (a judge prompted with `prompts.safety`).
    pub llm_judge: bool,
    /// Named word lists that patterns use as `{name}`.
    pub vocabulary: BTreeMap<String, Vec<String>>,
    /// Patterns of ordinary talk that reuses risky words ("this problem is
    /// killing me"); what they match is set aside before categories match.
    pub ordinary: Vec<String>,
    /// In order of precedence: when several match, the first one answers.
    pub categories: Vec<SafetyCategorySettings>,
    /// Help lines shown with a category that asks for them, by region
    /// (the runtime configuration's `safety.region`); `default` otherwise.
    pub help_resources: BTreeMap<String, Vec<crate::model::HelpResource>>,
    /// What is added after repeated flags in one session.
    pub escalation: EscalationSettings,
    /// Said when an online check flags a category no category lists.
    pub moderation_response: String,
    /// The learned layer, which reads what no rule matched.
    pub classifier: Option<SafetyClassifierSettings>,
}

/// The label of an example message that is to be tutored as usual.
pub const ORDINARY_LABEL: &str = "ordinary";

/// The classifier the gate trains from labelled example messages, and how
/// sure it must be before it acts. It never names a category: a message it
/// finds likely enough to belong to an escalating one gets the `check_in`
/// category's response (a gentle "are you okay?"), since a guess must not
/// read as an accusation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SafetyClassifierSettings {
    /// A `.tsv` file in `workflows/`: `label<TAB>message` lines, the label
    /// a category id or `ordinary`.
    pub examples: String,
    /// The category whose response and alerting a flagged message gets.
    pub check_in: String,
    /// The least probability, summed over the escalating categories, at
    /// which a message is flagged (above 0, below 1).
    pub at: f64,
    /// The examples, read from their file when the bundle is loaded.
    #[serde(skip)]
    pub labelled: Arc<[SafetyExample]>,
}

/// One labelled example message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SafetyExample {
    pub label: String,
    pub message: String,
}

/// One kind of message the gate recognises, and what happens then.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SafetyCategorySettings {
    pub id: String,
    #[serde(default)]
    pub description: String,
    /// What the tutor says.
    pub response: String,
    /// The response in a given mode (by mode name), e.g. during an exam.
    #[serde(default)]
    pub response_by_mode: BTreeMap<String, String>,
    /// `pause`: the response is the whole turn; `continue`: it comes
    /// before the tutor's usual reply.
    #[serde(default)]
    pub tutoring: SafetyTutoring,
    /// Record an `intervention.needed` alert for the student's teachers.
    #[serde(default)]
    pub alert: bool,
    /// Counts towards the session's escalation.
    #[serde(default)]
    pub escalates: bool,
    /// Show the region's help resources with the response.
    #[serde(default)]
    pub help_resources: bool,
    /// Names of the moderation provider's or the safety LLM's categories
    /// that mean this one (`self-harm/intent`, `self_harm`, ...).
    #[serde(default)]
    pub online: Vec<String>,
    /// Words and phrases, matched as written (after normalising both).
    #[serde(default)]
    pub terms: Vec<String>,
    /// Regular expressions over the normalised message; `{name}` is a
    /// vocabulary list, `{gap}` up to three words.
    #[serde(default)]
    pub patterns: Vec<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SafetyTutoring {
    /// The safety response replaces tutoring for this turn.
    #[default]
    Pause,
    /// The safety response is a short note; tutoring goes on.
    Continue,
}

/// The "talk to a trusted adult" escalation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EscalationSettings {
    /// Flags (in escalating categories) in one session that trigger it.
    pub after_flags: u32,
    pub text: String,
    /// The text in a given mode (by mode name).
    pub text_by_mode: BTreeMap<String, String>,
}

/// Leaked internal language (policy field names, prompt labels, talk of
/// "the student") removed from tutor text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SanitizeSettings {
    /// Regular expressions; a sentence matching one is dropped.
    pub patterns: Vec<String>,
    /// Said instead when nothing is left.
    pub fallback_text: String,
}

/// Model settings per LLM call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmCalls {
    pub tutor: LlmCallSettings,
    pub safety: LlmCallSettings,
    pub drill_grading: LlmCallSettings,
    pub exam_evaluation: LlmCallSettings,
    pub planner: LlmCallSettings,
    pub summary: LlmCallSettings,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LlmCallSettings {
    /// Model name for the configured provider; empty uses the provider's default.
    pub model: String,
    pub temperature: f64,
    pub max_tokens: u32,
    pub timeout_ms: u64,
    /// For providers with reasoning controls.
    pub reasoning_effort: Option<ReasoningEffort>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    Low,
    Medium,
    High,
}

/// Which prompt template each LLM call uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptNames {
    pub tutor_system: String,
    pub tutor_policy: String,
    pub tutor_context: String,
    pub tutor_input: String,
    pub drill_grading: String,
    pub exam_evaluation: String,
    pub planner: String,
    pub summary: String,
    pub safety: String,
}

mod defaults {
    pub fn token_budget() -> u32 {
        3000
    }
    pub fn history_messages() -> u32 {
        10
    }
}

impl Default for PolicySettings {
    fn default() -> Self {
        PolicySettings {
            weights: ScoreWeights::default(),
            intent_mix: IntentMix::default(),
            recency_window_hours: 72.0,
            tier_need: TierNeed::default(),
            drill_evidence: DrillEvidence::default(),
            primary_target_min_confidence: 0.55,
            clarify_min_confidence: 0.25,
            prereq_min_tier: MasteryTier::Bronze,
            blocker_evidence: BlockerEvidence::WeakOnly,
            placement: PlacementSettings::default(),
            advance_from_mastered: true,
            units_in_progress_cap: 5,
            candidates: CandidateCaps::default(),
            scoped: ScopedCaps::default(),
            stuck: StuckRule::default(),
            exam_ready_streak: 2,
            blocker: BlockerChoice::default(),
            constraints: ConstraintSettings::default(),
            exam_lockout_hours: 24.0,
            exam_card_hours: 24.0,
        }
    }
}

impl Default for PlacementSettings {
    fn default() -> Self {
        PlacementSettings {
            known_by_mastery: true,
            weak_below: 0.5,
        }
    }
}

impl Default for ScoreWeights {
    fn default() -> Self {
        ScoreWeights {
            intent: 0.35,
            recency: 0.15,
            in_progress: 0.15,
            tier_need: 0.20,
            drill_evidence: 0.15,
            mastery_gap: 0.0,
        }
    }
}

impl Default for IntentMix {
    fn default() -> Self {
        IntentMix {
            mapped: 0.7,
            focus: 0.3,
        }
    }
}

impl Default for TierNeed {
    fn default() -> Self {
        TierNeed {
            none: 1.0,
            bronze: 0.7,
            silver: 0.4,
            gold: 0.1,
        }
    }
}

impl Default for DrillEvidence {
    fn default() -> Self {
        DrillEvidence {
            streak_one: 0.5,
            full_streak: 2,
        }
    }
}

impl Default for CandidateCaps {
    fn default() -> Self {
        CandidateCaps {
            top_mapped: 3,
            in_progress: 3,
        }
    }
}

impl Default for ScopedCaps {
    fn default() -> Self {
        ScopedCaps {
            max_units: 6,
            top_mapped: 2,
            in_progress: 2,
        }
    }
}

impl Default for StuckRule {
    fn default() -> Self {
        StuckRule {
            min_attempts: 2,
            max_streak: 0,
        }
    }
}

impl Default for ConstraintSettings {
    fn default() -> Self {
        ConstraintSettings {
            max_concept_words: 170,
            max_worked_examples: 1,
            drill_max_steps: 2,
            max_key_ideas: 3,
        }
    }
}

impl Default for MasterySettings {
    fn default() -> Self {
        MasterySettings {
            bronze: TierRule {
                drill_streak: 2,
                exam_passes: 1,
            },
            silver: TierRule {
                drill_streak: 0,
                exam_passes: 1,
            },
            gold: TierRule {
                drill_streak: 0,
                exam_passes: 1,
            },
            bkt: BktParams::default(),
            hint_before_answer_is_wrong: true,
        }
    }
}

impl Default for TierRule {
    fn default() -> Self {
        TierRule {
            drill_streak: 0,
            exam_passes: 1,
        }
    }
}

impl Default for BktParams {
    fn default() -> Self {
        BktParams {
            prior: 0.1,
            learn: 0.1,
            guess: 0.1,
            slip: 0.1,
            mastered_at: 0.95,
        }
    }
}

impl Default for IrtSettings {
    fn default() -> Self {
        IrtSettings {
            initial_ability: 0.5,
            k: 0.1,
            target_success: 0.75,
            request_step: 0.25,
        }
    }
}

impl Default for GuidedMode {
    fn default() -> Self {
        GuidedMode {
            enabled: true,
            welcome_prompt: "welcome_guided".to_owned(),
        }
    }
}

impl Default for TeachMeMode {
    fn default() -> Self {
        TeachMeMode {
            enabled: true,
            welcome_prompt: "welcome_teach_me".to_owned(),
            max_replans: 3,
            default_plan: vec![
                StepKind::Explain,
                StepKind::Check,
                StepKind::Explain,
                StepKind::Practice,
            ],
            step_correct_to_complete: 2,
            step_failures_to_block: 3,
            extension_turns: 10,
            completion_prompt: "teach_me_complete".to_owned(),
            review_prompt: "teach_me_review".to_owned(),
            closing_category: "wrap_up".to_owned(),
            replan_category: "stuck".to_owned(),
        }
    }
}

impl Default for ClarifyMode {
    fn default() -> Self {
        ClarifyMode {
            enabled: true,
            welcome_prompt: "welcome_clarify_doubts".to_owned(),
            past_discussions: 5,
            answer_category: "clarify_answer".to_owned(),
            closing_category: "clarify_close".to_owned(),
            after_category: "clarify_after".to_owned(),
            declines: Vec::new(),
        }
    }
}

impl Default for ExamMode {
    fn default() -> Self {
        ExamMode {
            enabled: true,
            welcome_prompt: "welcome_exam".to_owned(),
            question_count: 7,
            difficulty_mix: DifficultyMix::default(),
            feedback: ExamFeedbackMode::Immediate,
            partial_credit: 0.5,
        }
    }
}

impl Default for DifficultyMix {
    fn default() -> Self {
        DifficultyMix {
            easy: 0.3,
            medium: 0.5,
            hard: 0.2,
        }
    }
}

/// Surveys: the questionnaires are in `workflows/surveys/`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SurveyMode {
    pub enabled: bool,
    /// Prompt template of the welcome message (`{{survey_title}}`).
    pub welcome_prompt: String,
}

impl Default for SurveyMode {
    fn default() -> Self {
        SurveyMode {
            enabled: true,
            welcome_prompt: "welcome_survey".to_owned(),
        }
    }
}

impl Default for ProblemSetMode {
    fn default() -> Self {
        ProblemSetMode {
            enabled: true,
            welcome_prompt: "welcome_problem_set".to_owned(),
            struggling_attempts: 3,
            intervene_scaffold_depth: 3,
            skip_offer_minutes: 10,
            memory_turns_kept: 3,
            wait_for_teach_back: true,
            min_problems: 5,
            max_problems: 10,
            session_ttl_minutes: 30,
            solved_category: "problem_solved".to_owned(),
            explained_category: "problem_explained".to_owned(),
            skipped_category: "problem_skipped".to_owned(),
            skip_categories: vec!["next_item".to_owned(), "move_on".to_owned()],
            next_problem_prompt: "problem_set_next".to_owned(),
            complete_prompt: "problem_set_complete".to_owned(),
            skip_offer_prompt: "problem_set_skip_offer".to_owned(),
            intervene_prompt: "problem_set_intervene".to_owned(),
        }
    }
}

impl Default for GradingSettings {
    fn default() -> Self {
        GradingSettings {
            close_relative: 0.2,
            close_min_difference: 0.3,
            close_min_difference_from: 1.0,
            rounding_min_significant: 3,
            rounding_min_decimals: 2,
            equivalence_points: 8,
        }
    }
}

impl Default for PacingSettings {
    fn default() -> Self {
        PacingSettings {
            accelerate_min_mastery: 0.8,
            fast_track_share: 0.6,
            fast_track_mastery: 0.7,
            simplify_max_mastery: 0.4,
            consolidate_min_mastery: 0.4,
            consolidate_max_mastery: 0.65,
            consolidate_min_wrong: 2,
            trend_window: 6,
            trend_margin: 0.2,
        }
    }
}

impl Default for StyleSettings {
    fn default() -> Self {
        StyleSettings {
            quiet_max_words: 5.0,
            expressive_min_words: 25.0,
            disengagement_window: 4,
            disengagement_ratio: 0.4,
            disengagement_max_words: 5,
        }
    }
}

impl Default for SafetySettings {
    fn default() -> Self {
        SafetySettings {
            moderation: true,
            llm_judge: false,
            vocabulary: BTreeMap::new(),
            ordinary: Vec::new(),
            categories: Vec::new(),
            help_resources: BTreeMap::new(),
            escalation: EscalationSettings::default(),
            moderation_response: "Let's keep our chat about maths. If something is worrying you, please talk to a trusted adult."
                .to_owned(),
            classifier: None,
        }
    }
}

impl Default for EscalationSettings {
    fn default() -> Self {
        EscalationSettings {
            after_flags: 2,
            text: "This is the second time something like this has come up, so please \
                   talk to a trusted adult today: a parent, a teacher or your school counsellor."
                .to_owned(),
            text_by_mode: BTreeMap::new(),
        }
    }
}

impl Default for LlmCalls {
    fn default() -> Self {
        let call = |max_tokens, timeout_ms| LlmCallSettings {
            max_tokens,
            timeout_ms,
            ..LlmCallSettings::default()
        };
        LlmCalls {
            tutor: call(900, 20_000),
            safety: call(100, 3_000),
            drill_grading: call(300, 8_000),
            exam_evaluation: call(300, 8_000),
            planner: call(800, 15_000),
            summary: call(600, 15_000),
        }
    }
}

impl Default for LlmCallSettings {
    fn default() -> Self {
        LlmCallSettings {
            model: String::new(),
            temperature: 0.3,
            max_tokens: 800,
            timeout_ms: 15_000,
            reasoning_effort: None,
        }
    }
}

impl Workflow {
    pub fn category(&self, id: &str) -> Option<&Category> {
        self.categories.iter().find(|c| c.id == id)
    }
}

/// Named weights with their YAML paths, for range validation.
pub(crate) fn unit_interval_fields(w: &Workflow) -> Vec<(&'static [&'static str], f64)> {
    let p = &w.policy;
    let m = &w.mastery;
    let mut fields: Vec<(&'static [&'static str], f64)> = vec![
        (&["policy", "weights", "intent"], p.weights.intent),
        (&["policy", "weights", "recency"], p.weights.recency),
        (&["policy", "weights", "in_progress"], p.weights.in_progress),
        (&["policy", "weights", "tier_need"], p.weights.tier_need),
        (
            &["policy", "weights", "drill_evidence"],
            p.weights.drill_evidence,
        ),
        (&["policy", "weights", "mastery_gap"], p.weights.mastery_gap),
        (&["policy", "intent_mix", "mapped"], p.intent_mix.mapped),
        (&["policy", "intent_mix", "focus"], p.intent_mix.focus),
        (&["policy", "tier_need", "none"], p.tier_need.none),
        (&["policy", "tier_need", "bronze"], p.tier_need.bronze),
        (&["policy", "tier_need", "silver"], p.tier_need.silver),
        (&["policy", "tier_need", "gold"], p.tier_need.gold),
        (
            &["policy", "drill_evidence", "streak_one"],
            p.drill_evidence.streak_one,
        ),
        (
            &["policy", "primary_target_min_confidence"],
            p.primary_target_min_confidence,
        ),
        (
            &["policy", "clarify_min_confidence"],
            p.clarify_min_confidence,
        ),
        (
            &["policy", "placement", "weak_below"],
            p.placement.weak_below,
        ),
        (&["mastery", "bkt", "prior"], m.bkt.prior),
        (&["mastery", "bkt", "learn"], m.bkt.learn),
        (&["mastery", "bkt", "guess"], m.bkt.guess),
        (&["mastery", "bkt", "slip"], m.bkt.slip),
        (&["mastery", "bkt", "mastered_at"], m.bkt.mastered_at),
        (&["irt", "initial_ability"], w.irt.initial_ability),
        (&["irt", "k"], w.irt.k),
        (&["irt", "target_success"], w.irt.target_success),
        (&["irt", "request_step"], w.irt.request_step),
        (
            &["modes", "exam", "difficulty_mix", "easy"],
            w.modes.exam.difficulty_mix.easy,
        ),
        (
            &["modes", "exam", "difficulty_mix", "medium"],
            w.modes.exam.difficulty_mix.medium,
        ),
        (
            &["modes", "exam", "difficulty_mix", "hard"],
            w.modes.exam.difficulty_mix.hard,
        ),
        (
            &["modes", "exam", "partial_credit"],
            w.modes.exam.partial_credit,
        ),
        (
            &["style", "disengagement_ratio"],
            w.style.disengagement_ratio,
        ),
        (&["grading", "close_relative"], w.grading.close_relative),
    ];
    let pacing = &w.pacing;
    fields.extend([
        (
            &["pacing", "accelerate_min_mastery"][..],
            pacing.accelerate_min_mastery,
        ),
        (&["pacing", "fast_track_share"][..], pacing.fast_track_share),
        (
            &["pacing", "fast_track_mastery"][..],
            pacing.fast_track_mastery,
        ),
        (
            &["pacing", "simplify_max_mastery"][..],
            pacing.simplify_max_mastery,
        ),
        (
            &["pacing", "consolidate_min_mastery"][..],
            pacing.consolidate_min_mastery,
        ),
        (
            &["pacing", "consolidate_max_mastery"][..],
            pacing.consolidate_max_mastery,
        ),
        (&["pacing", "trend_margin"][..], pacing.trend_margin),
    ]);
    fields
}
