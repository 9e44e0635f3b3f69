//! Words of a workflow that are not prompt templates: the texts of the
//! tutor prompt's dynamic signals (pacing, student style, mode rules) and
//! the offline tutor's phrasebook. Content teams edit them in the workflow
//! YAML; validation checks every phrase's placeholders. Both default to
//! empty so a workflow can be parsed without them, but a bundle only
//! validates when they are written out (there is no built-in wording).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{Mode, PacingDirective, QuestionPhase, TutorLanguage, Verbosity};

/// Texts the tutor prompt's `{{pacing_directive}}`, `{{student_style}}` and
/// `{{mode_rules}}` are filled with (the dynamic signals, `engine::policy::signals`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptSignals {
    pub pacing: PacingTexts,
    pub style: StyleTexts,
    pub mode_rules: ModeTexts,
    /// Where a planned lesson is, after the mode's rules.
    #[serde(default)]
    pub lesson: LessonTexts,
    /// Where a question session is, after the mode's rules.
    #[serde(default)]
    pub clarify: ClarifyTexts,
    /// Where a problem set is, after the mode's rules.
    #[serde(default)]
    pub problem: ProblemTexts,
}

/// The question session texts: `discussed` may use `{{concepts}}`, `past`
/// `{{past}}`; `closing` and `complete` say what this reply does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClarifyTexts {
    pub discussed: String,
    pub past: String,
    pub closing: String,
    pub complete: String,
}

/// The problem set texts: `current` may use `{{number}}`, `{{total}}` and
/// `{{problem}}`, `hint` `{{hint}}`; `finishing` is said when the problem is
/// done and the next one follows the reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProblemTexts {
    pub current: String,
    pub hint: String,
    pub finishing: String,
}

/// The lesson texts; `step` may use `{{number}}`, `{{total}}`, `{{kind}}`,
/// `{{title}}`, `{{concept}}` and `{{success_criteria}}`, the others no
/// placeholder. `simplify` and `accelerate` follow `step` when the turn's
/// pacing is SIMPLIFY or ACCELERATE: what the pacing means for the step.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LessonTexts {
    pub step: String,
    pub complete: String,
    pub closing: String,
    #[serde(default)]
    pub simplify: String,
    #[serde(default)]
    pub accelerate: String,
}

impl LessonTexts {
    /// The placeholders the `step` text may use.
    pub const STEP_PLACEHOLDERS: [&'static str; 6] = [
        "number",
        "total",
        "kind",
        "title",
        "concept",
        "success_criteria",
    ];

    /// Each text with its key and the placeholders it may use.
    pub fn texts(&self) -> [(&'static str, &str, &'static [&'static str]); 5] {
        [
            ("step", &self.step, &Self::STEP_PLACEHOLDERS),
            ("complete", &self.complete, &[]),
            ("closing", &self.closing, &[]),
            ("simplify", &self.simplify, &[]),
            ("accelerate", &self.accelerate, &[]),
        ]
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacingTexts {
    pub turn_one: String,
    pub accelerate: String,
    pub extend: String,
    pub simplify: String,
    pub consolidate: String,
    pub steady: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StyleTexts {
    pub quiet: String,
    pub moderate: String,
    pub expressive: String,
    pub disengaged: String,
    pub emoji: String,
    pub asks_questions: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModeTexts {
    pub guided: String,
    pub teach_me: String,
    pub clarify_doubts: String,
    pub exam: String,
    pub problem_set: String,
}

impl PromptSignals {
    pub fn pacing(&self, directive: PacingDirective) -> &str {
        let p = &self.pacing;
        match directive {
            PacingDirective::TurnOne => &p.turn_one,
            PacingDirective::Accelerate => &p.accelerate,
            PacingDirective::Extend => &p.extend,
            PacingDirective::Simplify => &p.simplify,
            PacingDirective::Consolidate => &p.consolidate,
            PacingDirective::Steady => &p.steady,
        }
    }

    pub fn verbosity(&self, verbosity: Verbosity) -> &str {
        let s = &self.style;
        match verbosity {
            Verbosity::Quiet => &s.quiet,
            Verbosity::Moderate => &s.moderate,
            Verbosity::Expressive => &s.expressive,
        }
    }

    pub fn mode_rules(&self, mode: Mode) -> &str {
        let m = &self.mode_rules;
        match mode {
            Mode::Guided => &m.guided,
            Mode::TeachMe => &m.teach_me,
            Mode::ClarifyDoubts => &m.clarify_doubts,
            Mode::Exam => &m.exam,
            Mode::ProblemSet => &m.problem_set,
            // A survey writes its own replies: no tutor call, no rules.
            Mode::Survey => "",
        }
    }

    /// The mode block of a planned lesson: where it is and what this reply
    /// does, and what this turn's pacing means for the step.
    pub fn lesson(&self, lesson: &crate::model::LessonBrief, pacing: PacingDirective) -> String {
        let l = &self.lesson;
        if lesson.closing {
            return l.closing.trim().to_owned();
        }
        let Some(step) = &lesson.step else {
            return l.complete.trim().to_owned();
        };
        let kind = match step.kind {
            crate::model::StepKind::Explain => "explain",
            crate::model::StepKind::Check => "check",
            crate::model::StepKind::Practice => "practice",
        };
        let pace = match pacing {
            PacingDirective::Simplify => l.simplify.trim(),
            PacingDirective::Accelerate => l.accelerate.trim(),
            _ => "",
        };
        let text = l
            .step
            .trim()
            .replace("{{number}}", &step.number.to_string())
            .replace("{{total}}", &lesson.steps_total.to_string())
            .replace("{{kind}}", kind)
            .replace("{{title}}", &step.title)
            .replace("{{concept}}", &step.concept)
            .replace(
                "{{success_criteria}}",
                step.success_criteria
                    .as_deref()
                    .unwrap_or("the student shows they have it"),
            );
        if pace.is_empty() {
            text
        } else {
            format!("{text} {pace}")
        }
    }

    /// The mode block of a problem set: the problem worked on, the hint
    /// shown with the reply, or that the next problem follows it.
    pub fn problem(&self, problem: &crate::model::ProblemBrief) -> String {
        let t = &self.problem;
        let mut text = t
            .current
            .trim()
            .replace("{{number}}", &problem.number.to_string())
            .replace("{{total}}", &problem.total.to_string())
            .replace("{{problem}}", &problem.text);
        if problem.finishing {
            text = format!("{text}\n{}", t.finishing.trim());
        } else if let Some(hint) = &problem.hint {
            text = format!("{text}\n{}", t.hint.trim().replace("{{hint}}", hint));
        }
        text
    }

    /// The mode block of a question session: what was discussed, earlier
    /// sessions, and whether this reply closes or follows a closed session.
    pub fn clarify(&self, brief: &crate::model::ClarifyBrief) -> String {
        let c = &self.clarify;
        let mut lines = Vec::new();
        if !brief.concepts_discussed.is_empty() {
            lines.push(
                c.discussed
                    .trim()
                    .replace("{{concepts}}", &brief.concepts_discussed.join("; ")),
            );
        }
        if !brief.past_discussions.is_empty() {
            lines.push(
                c.past
                    .trim()
                    .replace("{{past}}", &brief.past_discussions.join(" | ")),
            );
        }
        if brief.complete {
            lines.push(c.complete.trim().to_owned());
        } else if brief.closing {
            lines.push(c.closing.trim().to_owned());
        }
        lines.join("\n")
    }

    /// Every text with its YAML path below `prompt_signals`, for validation.
    pub fn texts(&self) -> Vec<([&'static str; 2], &str)> {
        let (p, s, m, l) = (&self.pacing, &self.style, &self.mode_rules, &self.lesson);
        let c = &self.clarify;
        vec![
            (["pacing", "turn_one"], &p.turn_one),
            (["pacing", "accelerate"], &p.accelerate),
            (["pacing", "extend"], &p.extend),
            (["pacing", "simplify"], &p.simplify),
            (["pacing", "consolidate"], &p.consolidate),
            (["pacing", "steady"], &p.steady),
            (["style", "quiet"], &s.quiet),
            (["style", "moderate"], &s.moderate),
            (["style", "expressive"], &s.expressive),
            (["style", "disengaged"], &s.disengaged),
            (["style", "emoji"], &s.emoji),
            (["style", "asks_questions"], &s.asks_questions),
            (["mode_rules", "guided"], &m.guided),
            (["mode_rules", "teach_me"], &m.teach_me),
            (["mode_rules", "clarify_doubts"], &m.clarify_doubts),
            (["mode_rules", "exam"], &m.exam),
            (["mode_rules", "problem_set"], &m.problem_set),
            (["lesson", "step"], &l.step),
            (["lesson", "complete"], &l.complete),
            (["lesson", "closing"], &l.closing),
            (["lesson", "simplify"], &l.simplify),
            (["lesson", "accelerate"], &l.accelerate),
            (["clarify", "discussed"], &c.discussed),
            (["clarify", "past"], &c.past),
            (["clarify", "closing"], &c.closing),
            (["clarify", "complete"], &c.complete),
            (["problem", "current"], &self.problem.current),
            (["problem", "hint"], &self.problem.hint),
            (["problem", "finishing"], &self.problem.finishing),
        ]
    }
}

/// The offline tutor's phrasebook. A reply is a reaction to the message
/// (chosen by routing category, and for wrong answers by question phase)
/// followed by a move (a question, a card, a goodbye). Each entry lists
/// variants; the turn's seed picks one among those whose placeholders can
/// be filled this turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OfflinePhrases {
    /// Per routing category id.
    pub reactions: BTreeMap<String, Reaction>,
    /// For categories without an entry.
    pub default_reaction: Reaction,
    pub moves: Moves,
    /// The same phrases in other languages, entry by entry: what is not
    /// translated is said in English.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub languages: BTreeMap<TutorLanguage, PhraseTranslation>,
}

/// A phrasebook's entries in one more language.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhraseTranslation {
    /// Openings, per routing category id (`then` stays the English entry's).
    #[serde(default)]
    pub reactions: BTreeMap<String, TranslatedReaction>,
    /// Moves, by their name in `moves`.
    #[serde(default)]
    pub moves: BTreeMap<String, Vec<String>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TranslatedReaction {
    #[serde(default)]
    pub say: Vec<String>,
    #[serde(default)]
    pub by_phase: BTreeMap<QuestionPhase, Vec<String>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reaction {
    /// What the tutor does after reacting.
    pub then: FollowUp,
    /// Openings; may be empty (no opening).
    #[serde(default)]
    pub say: Vec<String>,
    /// Openings per question phase, used instead of `say` in that phase.
    #[serde(default)]
    pub by_phase: BTreeMap<QuestionPhase, Vec<String>>,
}

/// The move that follows a reaction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FollowUp {
    /// Whatever the policy suggests: a question, a drill, an exam question, a card.
    #[default]
    Continue,
    /// Ask the student to explain how they got it.
    TeachBack,
    /// Nothing more: the reaction itself asks the student to try again.
    Retry,
    /// A smaller first step (a concept card when the policy says stuck).
    Scaffold,
    /// Explain the idea, then check understanding.
    Clarify,
    /// Back to the lesson.
    Redirect,
    /// Say goodbye; no new question.
    WrapUp,
    /// Answer the question directly (a question session).
    Answer,
    /// Recap what the session discussed and say goodbye.
    Recap,
    /// The session has ended: a short reply pointing to another mode.
    AfterCompletion,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Moves {
    /// A Socratic question about the unit.
    pub ask: Vec<String>,
    /// Back to the question the student is working on.
    pub ask_pending: Vec<String>,
    pub teach_back: Vec<String>,
    pub scaffold: Vec<String>,
    /// Each further step once a problem is being worked in small steps:
    /// the step itself, without the scaffold's introduction said again.
    #[serde(default)]
    pub scaffold_next: Vec<String>,
    pub clarify: Vec<String>,
    pub redirect: Vec<String>,
    pub wrap_up: Vec<String>,
    /// Said with a concept card.
    pub concept_card: Vec<String>,
    /// Said with the card of a lesson's later idea, which holds that idea
    /// alone: the unit's card was shown for the first.
    #[serde(default)]
    pub next_idea_card: Vec<String>,
    /// Said with a drill card.
    pub drill_card: Vec<String>,
    /// Said with an exam question.
    pub exam_block: Vec<String>,
    /// Said first when the tutor turns to a prerequisite the student is missing.
    pub prerequisite: Vec<String>,
    /// Said last when the student brought a problem of their own: it is
    /// now their question to try.
    #[serde(default)]
    pub own_problem: Vec<String>,
    /// A direct answer to a question (question sessions).
    #[serde(default)]
    pub answer: Vec<String>,
    /// A problem of the student's own, worked out step by step.
    #[serde(default)]
    pub solution: Vec<String>,
    /// The recap that closes a question session.
    #[serde(default)]
    pub recap: Vec<String>,
    /// Every reply once a question session has ended.
    #[serde(default)]
    pub after_completion: Vec<String>,
    /// A lesson's idea shown through the unit's worked example, for a
    /// student stuck on it with no problem in front of them.
    #[serde(default)]
    pub example: Vec<String>,
}

/// Which phrase list a placeholder catalogue applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PhraseSlot {
    Reaction,
    Ask,
    AskPending,
    TeachBack,
    Scaffold,
    ScaffoldNext,
    Clarify,
    Redirect,
    WrapUp,
    ConceptCard,
    NextIdeaCard,
    DrillCard,
    ExamBlock,
    Prerequisite,
    OwnProblem,
    Answer,
    Solution,
    Recap,
    AfterCompletion,
    Example,
}

/// Placeholders filled from the pending item's own solution. A phrase
/// that can use them is preferred to one about the unit in general.
pub const ITEM_PLACEHOLDERS: [&str; 4] = ["next_step", "steps", "representation", "mistake"];

impl PhraseSlot {
    /// Placeholders a phrase in this slot may use.
    pub fn placeholders(self) -> &'static [&'static str] {
        match self {
            PhraseSlot::Reaction => &[
                "unit_title",
                "key_idea",
                "explanation",
                "example_problem",
                "example_steps",
                "example_answer",
                "question",
                "previous_answer",
                "next_step",
                "steps",
                "representation",
                "mistake",
                "student_name",
            ],
            PhraseSlot::Ask => &["unit_title", "key_idea", "explanation", "example_problem"],
            PhraseSlot::AskPending => &["unit_title", "question"],
            PhraseSlot::TeachBack => &["unit_title", "key_idea", "student_name"],
            PhraseSlot::Scaffold | PhraseSlot::ScaffoldNext => &[
                "unit_title",
                "key_idea",
                "question",
                "example_problem",
                "next_step",
                "representation",
            ],
            PhraseSlot::Clarify => &[
                "unit_title",
                "key_idea",
                "explanation",
                "example_problem",
                "example_steps",
                "example_answer",
            ],
            PhraseSlot::Redirect => &["unit_title", "key_idea", "question"],
            PhraseSlot::WrapUp => &["unit_title", "student_name"],
            PhraseSlot::ConceptCard | PhraseSlot::NextIdeaCard => &["unit_title"],
            PhraseSlot::DrillCard => &["unit_title", "drill_prompt"],
            PhraseSlot::ExamBlock => &["unit_title", "tier"],
            PhraseSlot::Prerequisite => &["unit_title", "prereq_title"],
            PhraseSlot::OwnProblem => &["unit_title", "own_problem", "own_step"],
            PhraseSlot::Answer => &[
                "unit_title",
                "key_idea",
                "explanation",
                "example_problem",
                "example_steps",
                "example_answer",
            ],
            PhraseSlot::Solution => &["unit_title", "own_problem", "solution_steps"],
            PhraseSlot::Recap => &["unit_title", "concepts", "student_name"],
            PhraseSlot::AfterCompletion => &["unit_title"],
            PhraseSlot::Example => &[
                "unit_title",
                "key_idea",
                "explanation",
                "example_problem",
                "example_steps",
                "example_answer",
            ],
        }
    }

    /// Placeholders that can always be filled when this slot is used; a
    /// list needs one variant using only these, so the tutor always has
    /// something to say.
    pub fn always_available(self) -> &'static [&'static str] {
        match self {
            PhraseSlot::Reaction
            | PhraseSlot::Ask
            | PhraseSlot::Clarify
            | PhraseSlot::Answer
            | PhraseSlot::Example => &["unit_title", "key_idea", "explanation"],
            PhraseSlot::Scaffold | PhraseSlot::Redirect => &["unit_title", "key_idea"],
            // A session may be closed before any question was asked.
            PhraseSlot::Recap | PhraseSlot::WrapUp => &["unit_title"],
            // Only a student who gave a name has one to be called by.
            PhraseSlot::TeachBack => &["unit_title", "key_idea"],
            other => other.placeholders(),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PhraseSlot::Reaction => "reaction",
            PhraseSlot::Ask => "ask",
            PhraseSlot::AskPending => "ask_pending",
            PhraseSlot::TeachBack => "teach_back",
            PhraseSlot::Scaffold => "scaffold",
            PhraseSlot::ScaffoldNext => "scaffold_next",
            PhraseSlot::Clarify => "clarify",
            PhraseSlot::Redirect => "redirect",
            PhraseSlot::WrapUp => "wrap_up",
            PhraseSlot::ConceptCard => "concept_card",
            PhraseSlot::NextIdeaCard => "next_idea_card",
            PhraseSlot::DrillCard => "drill_card",
            PhraseSlot::ExamBlock => "exam_block",
            PhraseSlot::Prerequisite => "prerequisite",
            PhraseSlot::OwnProblem => "own_problem",
            PhraseSlot::Answer => "answer",
            PhraseSlot::Solution => "solution",
            PhraseSlot::Recap => "recap",
            PhraseSlot::AfterCompletion => "after_completion",
            PhraseSlot::Example => "example",
        }
    }
}

impl Moves {
    fn phrases_mut(&mut self, slot: PhraseSlot) -> Option<&mut Vec<String>> {
        Some(match slot {
            PhraseSlot::Reaction => return None,
            PhraseSlot::Ask => &mut self.ask,
            PhraseSlot::AskPending => &mut self.ask_pending,
            PhraseSlot::TeachBack => &mut self.teach_back,
            PhraseSlot::Scaffold => &mut self.scaffold,
            PhraseSlot::ScaffoldNext => &mut self.scaffold_next,
            PhraseSlot::Clarify => &mut self.clarify,
            PhraseSlot::Redirect => &mut self.redirect,
            PhraseSlot::WrapUp => &mut self.wrap_up,
            PhraseSlot::ConceptCard => &mut self.concept_card,
            PhraseSlot::NextIdeaCard => &mut self.next_idea_card,
            PhraseSlot::DrillCard => &mut self.drill_card,
            PhraseSlot::ExamBlock => &mut self.exam_block,
            PhraseSlot::Prerequisite => &mut self.prerequisite,
            PhraseSlot::OwnProblem => &mut self.own_problem,
            PhraseSlot::Answer => &mut self.answer,
            PhraseSlot::Solution => &mut self.solution,
            PhraseSlot::Recap => &mut self.recap,
            PhraseSlot::AfterCompletion => &mut self.after_completion,
            PhraseSlot::Example => &mut self.example,
        })
    }

    pub fn phrases(&self, slot: PhraseSlot) -> &[String] {
        match slot {
            PhraseSlot::Ask => &self.ask,
            PhraseSlot::AskPending => &self.ask_pending,
            PhraseSlot::TeachBack => &self.teach_back,
            PhraseSlot::Scaffold => &self.scaffold,
            PhraseSlot::ScaffoldNext => &self.scaffold_next,
            PhraseSlot::Clarify => &self.clarify,
            PhraseSlot::Redirect => &self.redirect,
            PhraseSlot::WrapUp => &self.wrap_up,
            PhraseSlot::ConceptCard => &self.concept_card,
            PhraseSlot::NextIdeaCard => &self.next_idea_card,
            PhraseSlot::DrillCard => &self.drill_card,
            PhraseSlot::ExamBlock => &self.exam_block,
            PhraseSlot::Prerequisite => &self.prerequisite,
            PhraseSlot::OwnProblem => &self.own_problem,
            PhraseSlot::Answer => &self.answer,
            PhraseSlot::Solution => &self.solution,
            PhraseSlot::Recap => &self.recap,
            PhraseSlot::AfterCompletion => &self.after_completion,
            PhraseSlot::Example => &self.example,
            PhraseSlot::Reaction => &[],
        }
    }

    /// Every move slot, in YAML order.
    pub const SLOTS: [PhraseSlot; 19] = [
        PhraseSlot::Ask,
        PhraseSlot::AskPending,
        PhraseSlot::TeachBack,
        PhraseSlot::Scaffold,
        PhraseSlot::ScaffoldNext,
        PhraseSlot::Clarify,
        PhraseSlot::Redirect,
        PhraseSlot::WrapUp,
        PhraseSlot::ConceptCard,
        PhraseSlot::NextIdeaCard,
        PhraseSlot::DrillCard,
        PhraseSlot::ExamBlock,
        PhraseSlot::Prerequisite,
        PhraseSlot::OwnProblem,
        PhraseSlot::Answer,
        PhraseSlot::Solution,
        PhraseSlot::Recap,
        PhraseSlot::AfterCompletion,
        PhraseSlot::Example,
    ];
}

impl OfflinePhrases {
    /// The phrasebook as spoken in `language`: its translated entries in
    /// place of the English ones.
    pub fn in_language(&self, language: TutorLanguage) -> std::borrow::Cow<'_, OfflinePhrases> {
        let Some(translation) = self.languages.get(&language) else {
            return std::borrow::Cow::Borrowed(self);
        };
        let mut spoken = self.clone();
        for (id, translated) in &translation.reactions {
            let Some(reaction) = spoken.reactions.get_mut(id) else {
                continue;
            };
            if !translated.say.is_empty() {
                reaction.say = translated.say.clone();
            }
            for (phase, list) in &translated.by_phase {
                reaction.by_phase.insert(*phase, list.clone());
            }
        }
        for slot in Moves::SLOTS {
            if let (Some(list), Some(spoken)) = (
                translation.moves.get(slot.name()),
                spoken.moves.phrases_mut(slot),
            ) {
                *spoken = list.clone();
            }
        }
        std::borrow::Cow::Owned(spoken)
    }

    /// The reaction to a message of category `id`.
    pub fn reaction(&self, id: &str) -> &Reaction {
        self.reactions.get(id).unwrap_or(&self.default_reaction)
    }
}

impl Reaction {
    /// The openings for a reply acting in `phase`.
    pub fn openings(&self, phase: QuestionPhase) -> &[String] {
        self.by_phase.get(&phase).unwrap_or(&self.say)
    }
}

pub(crate) fn phase_name(phase: QuestionPhase) -> &'static str {
    match phase {
        QuestionPhase::Asked => "asked",
        QuestionPhase::Probe => "probe",
        QuestionPhase::Hint => "hint",
        QuestionPhase::Explain => "explain",
        QuestionPhase::StrategyChange => "strategy_change",
    }
}

/// Concepts as a phrase: `ratios, fractions and equations`.
pub fn list_in_words(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|i| lower_first(i)).collect();
    // "ratios and sharing, and equations": the last "and" stays clear.
    let last_and = if items.iter().any(|i| i.contains(" and ")) {
        ", and"
    } else {
        " and"
    };
    match items.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{}{last_and} {last}", rest.join(", ")),
    }
}

/// `Ratios` → `ratios`; a word written in capitals (`LCM`) stays as it is.
fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if !second.is_uppercase() => {
            first.to_lowercase().chain(text.chars().skip(1)).collect()
        }
        _ => text.to_owned(),
    }
}
