//! Each session mode's settings: whether it is enabled, its welcome
//! prompt, and the numbers and routing categories it runs by.

use serde::{Deserialize, Serialize};

use crate::model::{ExamFeedbackMode, Mode, StepKind};

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

impl Default for GuidedMode {
    fn default() -> Self {
        GuidedMode {
            enabled: true,
            welcome_prompt: "welcome_guided".to_owned(),
        }
    }
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
    /// Routing category of a message that only acknowledges an answer
    /// ("ok", "thanks"): there is nothing new to answer.
    pub acknowledged_category: String,
    /// Short replies that end the session when they answer the tutor's
    /// "anything else?" ("no", "no thanks").
    pub declines: Vec<String>,
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
            acknowledged_category: "clarify_acknowledged".to_owned(),
            declines: Vec::new(),
        }
    }
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DifficultyMix {
    pub easy: f64,
    pub medium: f64,
    pub hard: f64,
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
