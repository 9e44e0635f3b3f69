//! The safety gate's settings: its categories and how each is recognised
//! and answered, the learned classifier, the escalation, and the
//! sanitizer of tutor text.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

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
    "someone_at_risk",
    "personal_details",
    "other",
];

/// The category of a message an online check flagged under a category
/// the workflow does not list.
pub const OTHER_CATEGORY: &str = "other";

/// The region whose help resources are used when the configured one has none.
pub const DEFAULT_REGION: &str = "default";

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
    /// The category is about someone other than the student ("my friend
    /// wants to kill herself"): what its rules match is set aside before
    /// the categories listed above it are tried, so that those, about the
    /// student themself, answer only for what the student says of
    /// themself ("... and I want to die too"). Those categories read this
    /// category's id where its match was, so a pattern of theirs can
    /// answer for the student saying the same of themself:
    /// "someone_at_risk {gap}(so do i|me too)".
    #[serde(default)]
    pub someone_else: bool,
    /// For a category about someone else: more patterns, by the kind of
    /// risk they describe (`abuse`: "my friend gets hit at home"). The
    /// categories above read `<id>_<kind>` where one of these matched
    /// (`someone_at_risk_abuse`) and the plain id where a term or one of
    /// `patterns` did, so the student's own category follows the kind:
    /// "my friend gets hit at home and so do i" is the student's abuse,
    /// "my friend wants to die and so do i" their self-harm.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub patterns_by_kind: BTreeMap<String, Vec<String>>,
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
