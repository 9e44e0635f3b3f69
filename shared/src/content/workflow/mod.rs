//! A tutoring workflow (`workflows/*.yaml`): routing categories, policy
//! weights, mastery rules, mode settings, safety, LLM settings and prompts.
//!
//! Every section has the reference values as defaults, so a workflow file
//! only needs to state what it changes; the shipped `default.yaml` spells
//! it all out.
//!
//! The `Workflow` itself is here; each group of its sections, types and
//! defaults together, has a file of its own: `routing` (categories and
//! their transitions), `policy`, `mastery`, `modes`, `reading` (grading,
//! pacing and style), `safety` and `llm`.

mod llm;
mod mastery;
mod modes;
mod policy;
mod reading;
mod routing;
mod safety;

pub use llm::{LlmCallSettings, LlmCalls, PromptNames, ReasoningEffort};
pub use mastery::{BktOverride, BktParams, IrtSettings, MasterySettings, TierRule};
pub use modes::{
    ClarifyMode, DifficultyMix, ExamMode, GuidedMode, ModeSettings, ProblemSetMode, SurveyMode,
    TeachMeMode,
};
pub use policy::{
    BlockerChoice, BlockerEvidence, CandidateCaps, ConstraintSettings, DrillEvidence, IntentMix,
    PlacementSettings, PolicySettings, ScopedCaps, ScoreWeights, StuckRule, TierNeed,
};
pub use reading::{GradingSettings, PacingSettings, StyleSettings};
pub use routing::{BeyondCourse, Category, Detection, Phrase, Transition};
pub use safety::{
    DEFAULT_REGION, EscalationSettings, ONLINE_CATEGORIES, ORDINARY_LABEL, OTHER_CATEGORY,
    SafetyCategorySettings, SafetyClassifierSettings, SafetyExample, SafetySettings,
    SafetyTutoring, SanitizeSettings,
};

use serde::{Deserialize, Serialize};

use super::tutor_text::{OfflinePhrases, PromptSignals};

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

mod defaults {
    pub fn token_budget() -> u32 {
        3000
    }
    pub fn history_messages() -> u32 {
        10
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
