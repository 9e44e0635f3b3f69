//! Validation of the tutor LLM's reply against the policy, and the
//! deterministic fallback (no retries, no second chances: an invalid reply
//! is replaced at once, so a turn costs one model call at most).
//!
//! [`validate_reply`] runs every check and reports every violation, in a
//! fixed order; any violation replaces the reply's action by the fallback:
//! a SOCRATIC_QUESTION when the policy allows it (always, for a policy from
//! [`crate::engine::policy::compute_policy`]), else a DRILL_CARD, aimed at
//! the prerequisite blocker when there is one in scope, else at the focus.
//! The fallback's words and card are written elsewhere (the offline tutor);
//! this module only decides the action and the target, and records why.

use serde::{Deserialize, Serialize};

use crate::content::Workflow;
use crate::engine::policy::PolicyOutcome;
use crate::model::{
    ExamAvailability, ExamTier, LlmConceptCard, LlmDrillCard, LlmExamSuggestion, LlmTutorResponse,
    TutorAction, TutorPolicy,
};

/// What the reply is checked against besides the policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidationContext<'a> {
    /// CONTEXT.examCandidates: the exam questions the LLM was offered
    /// (attemptable now, at the desired tier).
    pub exam_candidates: &'a [String],
    /// Most key ideas on a concept card (`policy.constraints.max_key_ideas`).
    pub max_key_ideas: u32,
}

impl<'a> ValidationContext<'a> {
    /// The context of a policy outcome: its available exam questions.
    pub fn new(outcome: &'a PolicyOutcome, workflow: &Workflow) -> Self {
        ValidationContext {
            exam_candidates: &outcome.exam.available_question_ids,
            max_key_ideas: workflow.policy.constraints.max_key_ideas,
        }
    }
}

/// The reply is used as is, or replaced by a fallback.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Verdict {
    Valid,
    Fallback(Fallback),
}

impl Verdict {
    pub fn is_valid(&self) -> bool {
        matches!(self, Verdict::Valid)
    }

    /// The action and target the turn goes on with.
    pub fn decision<'r>(&'r self, reply: &'r LlmTutorResponse) -> (TutorAction, &'r str) {
        match self {
            Verdict::Valid => (reply.action, &reply.target_unit_id),
            Verdict::Fallback(f) => (f.action, &f.target_unit_id),
        }
    }
}

/// The deterministic replacement of an invalid (or unparseable) reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fallback {
    pub action: TutorAction,
    pub target_unit_id: String,
    /// Which fallback rule chose the action.
    pub rule: FallbackRule,
    /// Which fallback rule chose the target.
    pub target_rule: FallbackTarget,
    /// Every check the reply failed, in checking order.
    pub violations: Vec<Violation>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FallbackRule {
    /// The preferred fallback: the policy allows a Socratic question.
    SocraticQuestion,
    /// The policy does not allow a Socratic question but allows a drill.
    DrillCard,
    /// The policy allows neither (only a hand-made policy can): a Socratic
    /// question anyway, the one action that needs no card and shows nothing
    /// the policy guards.
    ForcedSocraticQuestion,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FallbackTarget {
    /// The prerequisite blocker (in scope).
    Blocker,
    Focus,
}

/// A card payload of the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CardKind {
    ConceptCard,
    DrillCard,
    ExamSuggestion,
}

/// One failed check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum Violation {
    /// The reply was not valid JSON of the expected shape.
    UnparseableReply,
    ActionNotAllowed {
        action: TutorAction,
    },
    TargetOutOfScope {
        target_unit_id: String,
    },
    /// A Socratic question with nothing to ask.
    EmptyTutorText,
    /// The action's card is absent.
    MissingCard {
        action: TutorAction,
    },
    /// A card that does not belong to the action.
    UnexpectedCard {
        card: CardKind,
    },
    ConceptCardWhenNotStuck,
    NoKeyIdeas,
    TooManyKeyIdeas {
        count: usize,
        max: u32,
    },
    TooManyWorkedExamples {
        count: u32,
        max: u32,
    },
    /// A worked example without a problem or a final answer.
    IncompleteWorkedExample,
    ConceptTooLong {
        words: usize,
        max: u32,
    },
    /// A drill with neither a prompt nor a question.
    EmptyDrill,
    /// The drill has more separate parts than `drillMaxSteps` allows.
    DrillTooManySteps {
        parts: usize,
        max: u32,
    },
    ExamNotAvailable {
        availability: ExamAvailability,
    },
    ExamQuestionNotOffered {
        question_id: String,
    },
    ExamTierMismatch {
        tier: ExamTier,
        desired: ExamTier,
    },
    /// The exam candidates belong to the focus unit; the block must target it.
    ExamTargetNotFocus {
        target_unit_id: String,
    },
    /// The reply states an answer still waiting to be graded.
    RevealsPendingAnswer {
        /// Whose answer: `exam question EX-1`, `practice item`, ...
        owner: String,
    },
    /// A mapped unit's confidence outside \[0, 1\] (NaN is logged as null).
    MappedConfidenceOutOfRange {
        unit_id: String,
        confidence: f64,
    },
}

/// Checks `reply` against `policy` and `ctx`; any violation gives the fallback.
pub fn validate_reply(
    reply: &LlmTutorResponse,
    policy: &TutorPolicy,
    ctx: &ValidationContext<'_>,
) -> Verdict {
    let found = violations(reply, policy, ctx);
    if found.is_empty() {
        Verdict::Valid
    } else {
        Verdict::Fallback(fallback(policy, found))
    }
}

/// The fallback for `policy`, recording `violations` (e.g.
/// `vec![Violation::UnparseableReply]` when the reply did not parse).
pub fn fallback(policy: &TutorPolicy, violations: Vec<Violation>) -> Fallback {
    let (action, rule) = if policy.allows(TutorAction::SocraticQuestion) {
        (
            TutorAction::SocraticQuestion,
            FallbackRule::SocraticQuestion,
        )
    } else if policy.allows(TutorAction::DrillCard) {
        (TutorAction::DrillCard, FallbackRule::DrillCard)
    } else {
        (
            TutorAction::SocraticQuestion,
            FallbackRule::ForcedSocraticQuestion,
        )
    };
    let blocker = policy
        .prereq_blocking_unit_id
        .as_ref()
        .filter(|b| policy.scoped_unit_ids.contains(b));
    let (target_unit_id, target_rule) = match blocker {
        Some(b) => (b.clone(), FallbackTarget::Blocker),
        None => (policy.focus_unit_id.clone(), FallbackTarget::Focus),
    };
    Fallback {
        action,
        target_unit_id,
        rule,
        target_rule,
        violations,
    }
}

/// Every check `reply` fails, in a fixed order.
pub fn violations(
    reply: &LlmTutorResponse,
    policy: &TutorPolicy,
    ctx: &ValidationContext<'_>,
) -> Vec<Violation> {
    let mut found = Vec::new();
    if !policy.allows(reply.action) {
        found.push(Violation::ActionNotAllowed {
            action: reply.action,
        });
    }
    if !policy.scoped_unit_ids.contains(&reply.target_unit_id) {
        found.push(Violation::TargetOutOfScope {
            target_unit_id: reply.target_unit_id.clone(),
        });
    }
    check_cards(reply, &mut found);
    match reply.action {
        TutorAction::SocraticQuestion => {
            if reply.tutor_text.trim().is_empty() {
                found.push(Violation::EmptyTutorText);
            }
        }
        TutorAction::ConceptCard => {
            if !policy.stuck {
                found.push(Violation::ConceptCardWhenNotStuck);
            }
            if let Some(card) = &reply.concept_card {
                check_concept(card, policy, ctx, &mut found);
            }
        }
        TutorAction::DrillCard => {
            if let Some(card) = &reply.drill_card {
                check_drill(card, policy, &mut found);
            }
        }
        TutorAction::ExamBlock => {
            if let Some(exam) = &reply.exam_suggestion {
                check_exam(exam, &reply.target_unit_id, policy, ctx, &mut found);
            }
        }
    }
    for m in &reply.mapped_units {
        if !(0.0..=1.0).contains(&m.confidence) {
            found.push(Violation::MappedConfidenceOutOfRange {
                unit_id: m.unit_id.clone(),
                confidence: m.confidence,
            });
        }
    }
    found
}

/// The action's card is present and no other card is.
fn check_cards(reply: &LlmTutorResponse, found: &mut Vec<Violation>) {
    let cards = [
        (CardKind::ConceptCard, reply.concept_card.is_some()),
        (CardKind::DrillCard, reply.drill_card.is_some()),
        (CardKind::ExamSuggestion, reply.exam_suggestion.is_some()),
    ];
    let expected = match reply.action {
        TutorAction::SocraticQuestion => None,
        TutorAction::ConceptCard => Some(CardKind::ConceptCard),
        TutorAction::DrillCard => Some(CardKind::DrillCard),
        TutorAction::ExamBlock => Some(CardKind::ExamSuggestion),
    };
    for (card, present) in cards {
        if Some(card) == expected && !present {
            found.push(Violation::MissingCard {
                action: reply.action,
            });
        } else if Some(card) != expected && present {
            found.push(Violation::UnexpectedCard { card });
        }
    }
}

/// Key ideas (at least one, at most `max_key_ideas`), worked examples and
/// the word count of everything on the card against `maxConceptWords`.
fn check_concept(
    card: &LlmConceptCard,
    policy: &TutorPolicy,
    ctx: &ValidationContext<'_>,
    found: &mut Vec<Violation>,
) {
    let ideas = card
        .key_ideas
        .iter()
        .filter(|i| !i.trim().is_empty())
        .count();
    if ideas == 0 {
        found.push(Violation::NoKeyIdeas);
    }
    if card.key_ideas.len() > ctx.max_key_ideas as usize {
        found.push(Violation::TooManyKeyIdeas {
            count: card.key_ideas.len(),
            max: ctx.max_key_ideas,
        });
    }
    let max_examples = policy.constraints.max_worked_examples;
    let examples = u32::from(card.worked_example.is_some());
    if examples > max_examples {
        found.push(Violation::TooManyWorkedExamples {
            count: examples,
            max: max_examples,
        });
    }
    let mut words: usize = card.key_ideas.iter().map(|i| word_count(i)).sum();
    if let Some(example) = &card.worked_example {
        if example.problem_latex.trim().is_empty() || example.final_answer_latex.trim().is_empty() {
            found.push(Violation::IncompleteWorkedExample);
        }
        words += word_count(&example.problem_latex) + word_count(&example.final_answer_latex);
        words += example
            .steps_latex
            .iter()
            .flatten()
            .map(|s| word_count(s))
            .sum::<usize>();
    }
    let max_words = policy.constraints.max_concept_words;
    if words > max_words as usize {
        found.push(Violation::ConceptTooLong {
            words,
            max: max_words,
        });
    }
}

/// Steps cannot be counted from LaTeX, but separate parts can: every line
/// (a newline or a LaTeX `\\`) or `;`-separated item of the question is at
/// least one step, so more parts than `drillMaxSteps` is too long for sure.
fn check_drill(card: &LlmDrillCard, policy: &TutorPolicy, found: &mut Vec<Violation>) {
    if card.prompt.trim().is_empty() && card.question_latex.trim().is_empty() {
        found.push(Violation::EmptyDrill);
    }
    let parts = card
        .question_latex
        .split("\\\\")
        .flat_map(|line| line.split(['\n', ';']))
        .filter(|part| !part.trim().is_empty())
        .count();
    let max = policy.constraints.drill_max_steps;
    if parts > max as usize {
        found.push(Violation::DrillTooManySteps { parts, max });
    }
}

fn check_exam(
    exam: &LlmExamSuggestion,
    target_unit_id: &str,
    policy: &TutorPolicy,
    ctx: &ValidationContext<'_>,
    found: &mut Vec<Violation>,
) {
    if policy.exam_availability != ExamAvailability::Available {
        found.push(Violation::ExamNotAvailable {
            availability: policy.exam_availability,
        });
    }
    if !ctx.exam_candidates.contains(&exam.question_id) {
        found.push(Violation::ExamQuestionNotOffered {
            question_id: exam.question_id.clone(),
        });
    }
    if exam.difficulty_tier != policy.desired_exam_tier {
        found.push(Violation::ExamTierMismatch {
            tier: exam.difficulty_tier,
            desired: policy.desired_exam_tier,
        });
    }
    if target_unit_id != policy.focus_unit_id {
        found.push(Violation::ExamTargetNotFocus {
            target_unit_id: target_unit_id.to_owned(),
        });
    }
}

fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        LlmMappedUnit, LlmTurnAnalysis, LlmWorkedExample, PolicyConstraints, StudentIntent,
        UnderstandingSignal,
    };

    fn policy() -> TutorPolicy {
        TutorPolicy {
            turn_id: "t".into(),
            focus_unit_id: "pre".into(),
            primary_target_unit_id: "goal".into(),
            prereq_blocking_unit_id: Some("pre".into()),
            scoped_unit_ids: vec!["pre".into(), "goal".into()],
            allowed_actions: vec![
                TutorAction::SocraticQuestion,
                TutorAction::DrillCard,
                TutorAction::ConceptCard,
                TutorAction::ExamBlock,
            ],
            stuck: true,
            exam_ready: true,
            desired_exam_tier: ExamTier::Bronze,
            exam_availability: ExamAvailability::Available,
            exam_next_eligible_at: None,
            constraints: PolicyConstraints {
                max_concept_words: 12,
                max_worked_examples: 1,
                drill_max_steps: 2,
            },
        }
    }

    fn reply(action: TutorAction, target: &str) -> LlmTutorResponse {
        LlmTutorResponse {
            mapped_units: Vec::new(),
            action,
            target_unit_id: target.into(),
            tutor_text: "Which operation undoes adding 3?".into(),
            concept_card: None,
            drill_card: None,
            exam_suggestion: None,
            question_asked: None,
            advance: false,
            turn_analysis: LlmTurnAnalysis {
                student_intent: StudentIntent::Solve,
                understanding_signal: UnderstandingSignal::Uncertain,
                suggested_prereq_units: Vec::new(),
                answer_text: None,
                answer_correct: None,
                misconceptions_detected: Vec::new(),
            },
        }
    }

    fn drill(question: &str) -> LlmDrillCard {
        LlmDrillCard {
            prompt: "Solve".into(),
            question_latex: question.into(),
            expected_answer: None,
        }
    }

    fn concept(ideas: &[&str], example: Option<(&str, &str)>) -> LlmConceptCard {
        LlmConceptCard {
            key_ideas: ideas.iter().map(|i| (*i).to_owned()).collect(),
            worked_example: example.map(|(p, a)| LlmWorkedExample {
                problem_latex: p.into(),
                final_answer_latex: a.into(),
                steps_latex: Some(vec!["subtract 3".into()]),
            }),
        }
    }

    const OFFERED: &[String] = &[];

    fn check(reply: &LlmTutorResponse, policy: &TutorPolicy) -> Vec<Violation> {
        let offered = vec!["Q1".to_owned()];
        violations(
            reply,
            policy,
            &ValidationContext {
                exam_candidates: &offered,
                max_key_ideas: 3,
            },
        )
    }

    #[test]
    fn a_reply_within_the_policy_is_valid() {
        let p = policy();
        assert!(check(&reply(TutorAction::SocraticQuestion, "pre"), &p).is_empty());
        let mut d = reply(TutorAction::DrillCard, "goal");
        d.drill_card = Some(drill("2x+3=11"));
        assert!(check(&d, &p).is_empty());
        let mut c = reply(TutorAction::ConceptCard, "pre");
        c.concept_card = Some(concept(&["Undo it."], Some(("x+3=5", "x=2"))));
        assert!(check(&c, &p).is_empty());
        let mut e = reply(TutorAction::ExamBlock, "pre");
        e.exam_suggestion = Some(LlmExamSuggestion {
            question_id: "Q1".into(),
            difficulty_tier: ExamTier::Bronze,
        });
        assert!(check(&e, &p).is_empty());
    }

    #[test]
    fn actions_targets_and_cards_are_checked() {
        let mut p = policy();
        p.allowed_actions = vec![TutorAction::SocraticQuestion];
        p.stuck = false;
        let mut r = reply(TutorAction::ConceptCard, "elsewhere");
        r.drill_card = Some(drill("x=1"));
        r.tutor_text = String::new();
        assert_eq!(
            check(&r, &p),
            vec![
                Violation::ActionNotAllowed {
                    action: TutorAction::ConceptCard
                },
                Violation::TargetOutOfScope {
                    target_unit_id: "elsewhere".into()
                },
                Violation::MissingCard {
                    action: TutorAction::ConceptCard
                },
                Violation::UnexpectedCard {
                    card: CardKind::DrillCard
                },
                Violation::ConceptCardWhenNotStuck,
            ]
        );
        let mut s = reply(TutorAction::SocraticQuestion, "pre");
        s.tutor_text = "  ".into();
        s.mapped_units = vec![LlmMappedUnit {
            unit_id: "pre".into(),
            confidence: 1.2,
        }];
        assert_eq!(
            check(&s, &policy()),
            vec![
                Violation::EmptyTutorText,
                Violation::MappedConfidenceOutOfRange {
                    unit_id: "pre".into(),
                    confidence: 1.2
                }
            ]
        );
    }

    #[test]
    fn concept_cards_respect_their_limits() {
        let mut p = policy();
        p.constraints.max_worked_examples = 0;
        let mut r = reply(TutorAction::ConceptCard, "pre");
        r.concept_card = Some(concept(
            &["one two three", "four five six", "seven", "eight nine ten"],
            Some(("x+3=5", " ")),
        ));
        assert_eq!(
            check(&r, &p),
            vec![
                Violation::TooManyKeyIdeas { count: 4, max: 3 },
                Violation::TooManyWorkedExamples { count: 1, max: 0 },
                Violation::IncompleteWorkedExample,
                Violation::ConceptTooLong { words: 13, max: 12 },
            ]
        );
        r.concept_card = Some(concept(&[" "], None));
        assert_eq!(check(&r, &p), vec![Violation::NoKeyIdeas]);
    }

    #[test]
    fn drills_with_too_many_parts_are_refused() {
        let p = policy();
        let mut r = reply(TutorAction::DrillCard, "pre");
        r.drill_card = Some(drill("x+1=2 \\\\ 2x=4 \\\\ x/3=1"));
        assert_eq!(
            check(&r, &p),
            vec![Violation::DrillTooManySteps { parts: 3, max: 2 }]
        );
        r.drill_card = Some(drill("a=1; b=2\nc=3"));
        assert_eq!(
            check(&r, &p),
            vec![Violation::DrillTooManySteps { parts: 3, max: 2 }]
        );
        r.drill_card = Some(LlmDrillCard {
            prompt: String::new(),
            question_latex: String::new(),
            expected_answer: None,
        });
        assert_eq!(check(&r, &p), vec![Violation::EmptyDrill]);
    }

    #[test]
    fn exam_blocks_must_use_an_offered_question_on_the_focus() {
        let mut p = policy();
        p.exam_availability = ExamAvailability::Locked;
        let mut r = reply(TutorAction::ExamBlock, "goal");
        r.exam_suggestion = Some(LlmExamSuggestion {
            question_id: "Q9".into(),
            difficulty_tier: ExamTier::Gold,
        });
        assert_eq!(
            check(&r, &p),
            vec![
                Violation::ExamNotAvailable {
                    availability: ExamAvailability::Locked
                },
                Violation::ExamQuestionNotOffered {
                    question_id: "Q9".into()
                },
                Violation::ExamTierMismatch {
                    tier: ExamTier::Gold,
                    desired: ExamTier::Bronze
                },
                Violation::ExamTargetNotFocus {
                    target_unit_id: "goal".into()
                },
            ]
        );
        let ctx = ValidationContext {
            exam_candidates: OFFERED,
            max_key_ideas: 3,
        };
        assert!(!validate_reply(&r, &p, &ctx).is_valid());
    }

    #[test]
    fn the_fallback_prefers_a_socratic_question_on_the_blocker() {
        let mut p = policy();
        let f = fallback(&p, vec![Violation::UnparseableReply]);
        assert_eq!(
            (f.action, f.rule, f.target_unit_id.as_str(), f.target_rule),
            (
                TutorAction::SocraticQuestion,
                FallbackRule::SocraticQuestion,
                "pre",
                FallbackTarget::Blocker
            )
        );
        p.allowed_actions = vec![TutorAction::DrillCard];
        p.prereq_blocking_unit_id = None;
        let f = fallback(&p, Vec::new());
        assert_eq!(
            (f.action, f.rule, f.target_rule),
            (
                TutorAction::DrillCard,
                FallbackRule::DrillCard,
                FallbackTarget::Focus
            )
        );
        p.allowed_actions.clear();
        assert_eq!(
            fallback(&p, Vec::new()).rule,
            FallbackRule::ForcedSocraticQuestion
        );
    }

    #[test]
    fn verdicts_serialize_for_the_turn_log() {
        let mut p = policy();
        p.allowed_actions = vec![TutorAction::SocraticQuestion];
        let mut r = reply(TutorAction::DrillCard, "pre");
        r.drill_card = Some(drill("x=1"));
        let verdict = validate_reply(
            &r,
            &p,
            &ValidationContext {
                exam_candidates: OFFERED,
                max_key_ideas: 3,
            },
        );
        assert_eq!(verdict.decision(&r), (TutorAction::SocraticQuestion, "pre"));
        assert_eq!(
            serde_json::to_value(&verdict).unwrap(),
            serde_json::json!({
                "outcome": "fallback",
                "action": "SOCRATIC_QUESTION",
                "targetUnitId": "pre",
                "rule": "socratic_question",
                "targetRule": "blocker",
                "violations": [{"rule": "action_not_allowed", "action": "DRILL_CARD"}]
            })
        );
        assert_eq!(
            serde_json::to_value(Verdict::Valid).unwrap(),
            serde_json::json!({"outcome": "valid"})
        );
    }
}
