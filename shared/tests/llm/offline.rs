//! The offline tutor: for every policy, context and message it returns a
//! reply the policy accepts (the fallback's rules, checked here directly),
//! reads like a tutor (no internal names), is deterministic for a seed and
//! varies across seeds, and follows the question phase.

use crate::llm_support;

use std::collections::BTreeSet;

use proptest::prelude::*;
use regex::Regex;
use tutorflow::content::Bundle;
use tutorflow::content::course::Unit;
use tutorflow::engine::reply::fallback::{self, ValidationContext};
use tutorflow::llm::{OfflineDrillGrader, OfflineExamEvaluator, OfflineSafetyJudge, OfflineTutor};
use tutorflow::model::{
    CheckReply, ClientEvent, DrillGrader, DrillGradingInput, ExamAvailability, ExamEvaluationInput,
    ExamEvaluator, ExamTier, Judgement, LessonBrief, LessonStep, LlmError, LlmTutorResponse,
    MappedUnit, PacingDirective, PracticeItem, QuestionPhase, QuestionResult, QuestionState,
    SafetyInput, SafetyJudge, SafetyOutcome, StepKind, StudentIntent, Tutor, TutorAction,
    TutorTurnInput, UnderstandingSignal,
};

use llm_support::{bundle, sample_units, synthetic, turn_input};

const ACTIONS: [TutorAction; 4] = [
    TutorAction::SocraticQuestion,
    TutorAction::ConceptCard,
    TutorAction::DrillCard,
    TutorAction::ExamBlock,
];

fn tutor(bundle: &std::sync::Arc<Bundle>) -> OfflineTutor {
    OfflineTutor::new(bundle.clone(), "default")
}

/// Everything wrong with `reply`: the policy validator's violations
/// (`engine::reply::fallback`), the reply's own checks, and what an
/// offline reply must do besides (present the server's practice item,
/// invent no answer).
fn violations(bundle: &Bundle, input: &TutorTurnInput, reply: &LlmTutorResponse) -> Vec<String> {
    let offered: Vec<String> = input
        .context
        .exam_candidates
        .iter()
        .map(|c| c.question_id.clone())
        .collect();
    let context = ValidationContext {
        exam_candidates: &offered,
        max_key_ideas: bundle.workflows["default"].policy.constraints.max_key_ideas,
    };
    let mut found: Vec<String> = fallback::violations(reply, &input.policy, &context)
        .iter()
        .map(|v| format!("{v:?}"))
        .collect();
    if let Err(e) = reply.check() {
        found.push(format!("reply check: {e}"));
    }
    if let Some(card) = &reply.drill_card {
        match &input.context.practice_item {
            Some(item)
                if card.prompt == item.prompt && card.question_latex == item.question_latex => {}
            _ => found.push("the drill is not the server's practice item".into()),
        }
        if card.expected_answer.is_some() {
            found.push("an offline drill invents an expected answer".into());
        }
    }
    found
}

/// The actions that must be feasible, and those that must not, judged
/// from the input alone (so a reply that silently stops being produced
/// is caught too). `None`: no claim.
fn expected_feasible(input: &TutorTurnInput, action: TutorAction) -> Option<bool> {
    let policy = &input.policy;
    let described = |unit: &str| input.context.unit_anchors.iter().any(|a| a.unit_id == unit);
    let usable = |unit: &str| policy.scoped_unit_ids.iter().any(|u| u == unit) && described(unit);
    if !policy.allows(action) || !policy.scoped_unit_ids.iter().any(|u| described(u)) {
        return Some(false);
    }
    match action {
        TutorAction::SocraticQuestion => Some(true),
        TutorAction::ConceptCard if !policy.stuck || policy.constraints.max_concept_words == 0 => {
            Some(false)
        }
        TutorAction::ConceptCard => (policy.constraints.max_concept_words >= 40).then_some(true),
        TutorAction::DrillCard => Some(
            input
                .context
                .practice_item
                .as_ref()
                .is_some_and(|item| usable(&item.unit_id)),
        ),
        TutorAction::ExamBlock => Some(
            policy.exam_availability == ExamAvailability::Available
                && usable(&policy.focus_unit_id)
                && input.context.exam_candidates.iter().any(|c| {
                    c.difficulty_tier == policy.desired_exam_tier
                        && c.unit_ids.contains(&policy.focus_unit_id)
                }),
        ),
    }
}

/// What the student must never read: unsubstituted placeholders, ids,
/// action and category names, and anything the workflow's sanitizer drops.
fn leaks(bundle: &Bundle, units: &[Unit], text: &str) -> Vec<String> {
    let workflow = &bundle.workflows["default"];
    let mut found = Vec::new();
    if text.contains("{{") || text.contains("}}") {
        found.push("a placeholder".into());
    }
    // An id that is an ordinary word ("integers") may appear in any sentence;
    // ids shaped like identifiers must not.
    for unit in units {
        let word_like = unit.id.chars().all(|c| c.is_ascii_lowercase());
        if !word_like && text.contains(&unit.id) {
            found.push(format!("unit id {}", unit.id));
        }
    }
    for name in ACTIONS.map(|a| a.as_str()) {
        if text.contains(name) {
            found.push(name.to_owned());
        }
    }
    for category in &workflow.categories {
        if category.id.contains('_') && text.contains(&category.id) {
            found.push(format!("category {}", category.id));
        }
    }
    for pattern in &workflow.sanitize.patterns {
        if Regex::new(pattern).unwrap().is_match(text) {
            found.push(format!("sanitized pattern {pattern}"));
        }
    }
    found
}

#[derive(Debug, Clone)]
struct Scenario {
    units: Vec<usize>,
    scoped: Vec<usize>,
    focus: usize,
    blocker: Option<usize>,
    allowed: Vec<TutorAction>,
    stuck: bool,
    exam_ready: bool,
    tier: ExamTier,
    exam_candidates: bool,
    availability: ExamAvailability,
    practice: Option<usize>,
    event: usize,
    category: usize,
    question: Option<(usize, QuestionPhase, bool)>,
    intent: StudentIntent,
    max_words: u32,
    max_examples: u32,
    seed: u64,
}

fn scenario(pool: usize) -> impl Strategy<Value = Scenario> {
    let phases = prop::sample::select(vec![
        QuestionPhase::Asked,
        QuestionPhase::Probe,
        QuestionPhase::Hint,
        QuestionPhase::Explain,
        QuestionPhase::StrategyChange,
    ]);
    let intents = prop::sample::select(vec![
        StudentIntent::Answer,
        StudentIntent::Solve,
        StudentIntent::Question,
        StudentIntent::Explain,
        StudentIntent::Check,
        StudentIntent::Stuck,
        StudentIntent::OffTopic,
        StudentIntent::Done,
        StudentIntent::Unknown,
    ]);
    (
        prop::sample::subsequence((0..pool).collect::<Vec<_>>(), 1..=pool.min(4)),
        prop::collection::vec(any::<bool>(), pool),
        (
            any::<prop::sample::Index>(),
            prop::option::of(any::<prop::sample::Index>()),
        ),
        prop::sample::subsequence(ACTIONS.to_vec(), 0..=4),
        (
            any::<bool>(),
            any::<bool>(),
            prop::sample::select(ExamTier::ALL.to_vec()),
            any::<bool>(),
            prop::sample::select(vec![
                ExamAvailability::Available,
                ExamAvailability::Available,
                ExamAvailability::Locked,
                ExamAvailability::None,
            ]),
        ),
        (
            prop::option::of(any::<prop::sample::Index>()),
            0usize..5,
            0usize..12,
        ),
        prop::option::of((any::<prop::sample::Index>(), phases, any::<bool>())),
        (
            intents,
            prop::sample::select(vec![0u32, 12, 40, 170]),
            0u32..2,
            any::<u64>(),
        ),
    )
        .prop_map(
            |(
                units,
                in_scope,
                (focus, blocker),
                allowed,
                (stuck, ready, tier, candidates, availability),
                (practice, event, category),
                question,
                (intent, words, examples, seed),
            )| {
                let scoped: Vec<usize> = units.iter().copied().filter(|u| in_scope[*u]).collect();
                Scenario {
                    focus: units[focus.index(units.len())],
                    blocker: blocker.map(|b| units[b.index(units.len())]),
                    practice: practice.map(|p| units[p.index(units.len())]),
                    question: question
                        .map(|(q, phase, overlaps)| (units[q.index(units.len())], phase, overlaps)),
                    scoped,
                    units,
                    allowed,
                    stuck,
                    exam_ready: ready,
                    tier,
                    exam_candidates: candidates,
                    availability,
                    event,
                    category,
                    intent,
                    max_words: words,
                    max_examples: examples,
                    seed,
                }
            },
        )
}

fn build(bundle: &Bundle, pool: &[Unit], s: &Scenario) -> TutorTurnInput {
    let chosen: Vec<Unit> = s.units.iter().map(|&u| pool[u].clone()).collect();
    let mut input = turn_input(&chosen);
    let id = |u: usize| pool[u].id.clone();
    let policy = &mut input.policy;
    policy.focus_unit_id = id(s.focus);
    policy.primary_target_unit_id = id(s.focus);
    policy.prereq_blocking_unit_id = s.blocker.map(id);
    policy.scoped_unit_ids = s.scoped.iter().map(|&u| id(u)).collect();
    policy.allowed_actions = s.allowed.clone();
    policy.stuck = s.stuck;
    policy.exam_ready = s.exam_ready;
    policy.desired_exam_tier = s.tier;
    policy.exam_availability = s.availability;
    policy.constraints.max_concept_words = s.max_words;
    policy.constraints.max_worked_examples = s.max_examples;
    if !s.exam_candidates {
        input.context.exam_candidates.clear();
    }
    input.context.practice_item = s.practice.map(|u| PracticeItem {
        unit_id: id(u),
        prompt: "Solve for x".into(),
        question_latex: "4x = 36".into(),
        options: None,
    });
    input.context.client_event = match s.event {
        0 => ClientEvent::None,
        1 => ClientEvent::RequestDrill { unit_id: None },
        2 => ClientEvent::DrillContinue {
            unit_id: None,
            last_result: None,
        },
        3 => ClientEvent::IAmStuck { unit_id: None },
        _ => ClientEvent::ExamContinue {
            unit_id: None,
            question_id: None,
            result: None,
        },
    };
    let categories = &bundle.workflows["default"].categories;
    input.category.id = categories
        .get(s.category)
        .map_or_else(|| "a_category_without_phrases".to_owned(), |c| c.id.clone());
    input.question = s.question.map(|(u, phase, overlaps)| QuestionState {
        // Sometimes the very problem the unit's worked example solves.
        text: match (&pool[u].worked_example, overlaps) {
            (Some(example), true) => example.problem.clone(),
            _ => "What is 6 × 7?".into(),
        },
        unit_id: id(u),
        concept: "practice".into(),
        phase,
        wrong_attempts: 2,
        hints_used: 1,
        previous_answers: vec!["41".into()],
        help: Default::default(),
    });
    if let Some((_, phase, _)) = s.question {
        input.category.phase = phase;
    }
    input.reading.intent = s.intent;
    input.reading.mapped_units = vec![MappedUnit {
        unit_id: id(s.focus),
        confidence: 0.8,
    }];
    input.seed = s.seed;
    input
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

    /// The sample course's units plus synthetic ones, any policy, category,
    /// event and question: a reply the policy validator accepts, in clean
    /// words, for every allowed action the context has material for — and
    /// for no other — and its own choice is one of them.
    #[test]
    fn every_allowed_action_gets_a_policy_valid_reply(s in scenario(sample_units(&bundle()).len())) {
        let bundle = bundle();
        let pool = sample_units(&bundle);
        let input = build(&bundle, &pool, &s);
        let tutor = tutor(&bundle);
        let feasible = tutor.feasible_actions(&input);
        for action in ACTIONS {
            if let Some(expected) = expected_feasible(&input, action) {
                prop_assert_eq!(feasible.contains(&action), expected, "{:?}", action);
            }
            match tutor.reply_with(&input, action) {
                Ok(reply) => {
                    prop_assert!(feasible.contains(&action));
                    prop_assert_eq!(reply.action, action);
                    let found = violations(&bundle, &input, &reply);
                    prop_assert!(found.is_empty(), "{:?}: {:?}\n{:?}", action, found, reply);
                    let leaked = leaks(&bundle, &pool, &reply.tutor_text);
                    prop_assert!(leaked.is_empty(), "{:?}: {}", leaked, reply.tutor_text);
                }
                Err(LlmError::InvalidInput(_)) => prop_assert!(!feasible.contains(&action)),
                Err(other) => prop_assert!(false, "{:?}", other),
            }
        }
        match tutor.reply(&input) {
            Ok(reply) => {
                prop_assert!(feasible.contains(&reply.action));
                prop_assert!(violations(&bundle, &input, &reply).is_empty());
                prop_assert_eq!(tutor.reply(&input).unwrap(), reply, "not deterministic");
            }
            Err(LlmError::InvalidInput(_)) => prop_assert!(feasible.is_empty()),
            Err(other) => prop_assert!(false, "{:?}", other),
        }
    }
}

/// Every allowed action, a question pending, stuck: the base of the cases below.
fn everything_allowed(units: &[Unit]) -> TutorTurnInput {
    let mut input = turn_input(units);
    input.policy.allowed_actions = ACTIONS.to_vec();
    input
}

#[tokio::test]
async fn the_offline_tutor_is_a_tutor_and_costs_nothing() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let reply = tutor(&bundle).decide(&turn_input(&units)).await.unwrap();
    assert_eq!(reply.usage.provider, "offline");
    assert_eq!((reply.usage.input_tokens, reply.usage.attempts), (0, 0));
    assert_eq!(reply.value.action, TutorAction::SocraticQuestion);
    assert!(
        reply.value.tutor_text.ends_with('?'),
        "{}",
        reply.value.tutor_text
    );
}

#[test]
fn phrasing_varies_with_the_seed_and_repeats_for_the_same_seed() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let tutor = tutor(&bundle);
    let texts: BTreeSet<String> = (0..40)
        .map(|seed| {
            let mut input = turn_input(&units);
            input.seed = seed;
            tutor.reply(&input).unwrap().tutor_text
        })
        .collect();
    assert!(texts.len() >= 4, "{texts:#?}");
    let input = turn_input(&units);
    assert_eq!(tutor.reply(&input).unwrap(), tutor.reply(&input).unwrap());
}

#[test]
fn a_correct_answer_is_celebrated_with_a_teach_back() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let phrases = &bundle.workflows["default"].offline_tutor;
    let mut input = turn_input(&units);
    input.category.id = "correct".into();
    input.reading.intent = StudentIntent::Answer;
    input.student.message_text = Some("x = 7".into());
    let reply = tutor(&bundle).reply(&input).unwrap();
    assert_eq!(reply.action, TutorAction::SocraticQuestion);
    let text = &reply.tutor_text;
    assert!(
        phrases.reactions["correct"]
            .say
            .iter()
            .any(|p| text.starts_with(p.as_str())),
        "{text}"
    );
    assert!(
        phrases
            .moves
            .teach_back
            .iter()
            .any(|p| text.ends_with(p.as_str())),
        "{text}"
    );
    assert_eq!(
        reply.turn_analysis.understanding_signal,
        UnderstandingSignal::Confident
    );
    assert_eq!(reply.turn_analysis.answer_text.as_deref(), Some("x = 7"));
}

#[test]
fn wrong_answers_escalate_with_the_question_phase() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let unit = &units[0];
    let phrases = &bundle.workflows["default"].offline_tutor.reactions["wrong_operation"];
    let mut seen = Vec::new();
    for phase in [
        QuestionPhase::Probe,
        QuestionPhase::Hint,
        QuestionPhase::Explain,
        QuestionPhase::StrategyChange,
    ] {
        let mut input = everything_allowed(&units);
        input.category.id = "wrong_operation".into();
        input.category.phase = phase;
        input.question = Some(QuestionState {
            text: "Solve x + 5 = 11.".into(),
            unit_id: unit.id.clone(),
            concept: "inverse".into(),
            phase,
            wrong_attempts: 1,
            hints_used: 0,
            previous_answers: vec!["16".into()],
            help: Default::default(),
        });
        let reply = tutor(&bundle).reply(&input).unwrap();
        assert_eq!(reply.action, TutorAction::SocraticQuestion, "{phase:?}");
        assert_eq!(reply.target_unit_id, unit.id);
        // The reply is one of this phase's phrases, rendered.
        let openings = phrases.by_phase[&phase]
            .iter()
            .map(|p| p.split("{{").next().unwrap().trim());
        assert!(
            openings
                .clone()
                .any(|start| reply.tutor_text.starts_with(start)),
            "{phase:?}: {}",
            reply.tutor_text
        );
        seen.push(reply.tutor_text);
    }
    let distinct: BTreeSet<&String> = seen.iter().collect();
    assert_eq!(distinct.len(), 4, "{seen:#?}");
}

#[test]
fn an_explanation_never_works_the_pending_problem() {
    let bundle = bundle();
    let mut unit = synthetic(
        "synthetic-eq-9",
        "Equations",
        &["Undo what is done to x."],
        Some(("Solve 3x = 21.", &["Divide both sides by 3."], "x = 7")),
    );
    unit.chunks[0].text = "In 3x = 21, divide both sides by 3 to get x = 7. That is all.".into();
    let units = vec![unit];
    for seed in 0..30 {
        let mut input = everything_allowed(&units);
        input.seed = seed;
        input.category.id = "wrong_operation".into();
        input.category.phase = QuestionPhase::Explain;
        input.question = Some(QuestionState {
            text: "Solve 3x = 21.".into(),
            unit_id: units[0].id.clone(),
            concept: "division".into(),
            phase: QuestionPhase::Explain,
            wrong_attempts: 2,
            hints_used: 1,
            previous_answers: vec!["63".into()],
            help: Default::default(),
        });
        let reply = tutor(&bundle).reply(&input).unwrap();
        assert!(!reply.tutor_text.contains("x = 7"), "{}", reply.tutor_text);
        // Stuck on that problem: the concept card leaves its worked example out.
        input.policy.stuck = true;
        let card = tutor(&bundle)
            .reply_with(&input, TutorAction::ConceptCard)
            .unwrap()
            .concept_card
            .unwrap();
        assert!(card.worked_example.is_none());
    }
}

#[test]
fn stuck_students_get_the_concept_card_and_requested_drills_the_practice_item() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let mut input = everything_allowed(&units);
    input.policy.stuck = true;
    input.category.id = "stuck".into();
    let reply = tutor(&bundle).reply(&input).unwrap();
    assert_eq!(reply.action, TutorAction::ConceptCard);
    let card = reply.concept_card.unwrap();
    assert_eq!(card.key_ideas, units[0].key_ideas);
    assert_eq!(
        card.worked_example.unwrap().problem_latex,
        units[0].worked_example.as_ref().unwrap().problem
    );

    let mut input = everything_allowed(&units);
    input.context.client_event = ClientEvent::RequestDrill { unit_id: None };
    input.context.practice_item = Some(PracticeItem {
        unit_id: units[0].id.clone(),
        prompt: "Solve for x".into(),
        question_latex: "x - 8 = 3".into(),
        options: None,
    });
    let reply = tutor(&bundle).reply(&input).unwrap();
    assert_eq!(reply.action, TutorAction::DrillCard);
    assert_eq!(reply.drill_card.unwrap().question_latex, "x - 8 = 3");
}

/// A lesson's card follows the pacing: SIMPLIFY gives a smaller step (one
/// idea, the example kept to lean on), ACCELERATE drops the example.
#[test]
fn a_lesson_card_is_sized_by_the_pacing() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let unit = units
        .iter()
        .find(|u| u.key_ideas.len() >= 3 && u.worked_example.is_some())
        .expect("a unit with three ideas and an example");
    let card = |pacing: PacingDirective| {
        let mut input = everything_allowed(std::slice::from_ref(unit));
        input.policy.stuck = true;
        input.category.id = "stuck".into();
        input.pacing = pacing;
        input.lesson = Some(lesson_at(
            StepKind::Explain,
            &unit.key_ideas[0],
            &unit.title,
        ));
        let reply = tutor(&bundle).reply(&input).unwrap();
        assert_eq!(reply.action, TutorAction::ConceptCard);
        reply.concept_card.unwrap()
    };
    let steady = card(PacingDirective::Steady);
    assert_eq!(steady.key_ideas.len(), 3);
    assert!(steady.worked_example.is_some());

    let simplify = card(PacingDirective::Simplify);
    assert_eq!(simplify.key_ideas.len(), 1, "a smaller step");
    assert!(simplify.worked_example.is_some());

    let accelerate = card(PacingDirective::Accelerate);
    assert_eq!(accelerate.key_ideas.len(), 3);
    assert!(
        accelerate.worked_example.is_none(),
        "no example to wade through"
    );
}

/// A lesson at a step of `kind` about `concept`.
fn lesson_at(kind: StepKind, concept: &str, title: &str) -> LessonBrief {
    LessonBrief {
        step: Some(LessonStep {
            number: 1,
            title: title.to_owned(),
            kind,
            concept: concept.to_owned(),
            success_criteria: None,
        }),
        steps_total: 4,
        steps_completed: 0,
        complete: false,
        closing: false,
    }
}

/// After a right answer in a lesson's check step a student is asked to
/// explain it; one whose replies are fading gets the next item instead.
#[test]
fn a_disengaged_student_in_a_lesson_gets_an_item_not_a_teach_back() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let reply = |disengaged: bool| {
        let mut input = everything_allowed(&units);
        input.category.id = "correct".into();
        input.question = None;
        input.style.disengaged = disengaged;
        input.lesson = Some(lesson_at(StepKind::Check, &units[0].title, &units[0].title));
        input.context.practice_item = Some(PracticeItem {
            unit_id: units[0].id.clone(),
            prompt: "Solve for x".into(),
            question_latex: "x - 8 = 3".into(),
            options: None,
        });
        tutor(&bundle).reply(&input).unwrap()
    };
    assert_eq!(reply(false).action, TutorAction::SocraticQuestion);
    let fading = reply(true);
    assert_eq!(fading.action, TutorAction::DrillCard);
    assert_eq!(fading.drill_card.unwrap().question_latex, "x - 8 = 3");
}

#[test]
fn exam_ready_students_get_a_candidate_at_the_desired_tier() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let with_exam = units
        .iter()
        .find(|u| !u.exam.is_empty())
        .expect("a unit with exam items");
    let mut input = everything_allowed(std::slice::from_ref(with_exam));
    input.policy.exam_ready = true;
    for tier in ExamTier::ALL {
        input.policy.desired_exam_tier = tier;
        let reply = tutor(&bundle).reply(&input).unwrap();
        assert_eq!(reply.action, TutorAction::ExamBlock);
        let suggestion = reply.exam_suggestion.unwrap();
        assert_eq!(suggestion.difficulty_tier, tier);
        assert!(
            with_exam
                .exam
                .iter()
                .any(|q| q.id == suggestion.question_id && q.tier == tier)
        );
        assert!(
            reply.tutor_text.contains(tier.as_str()),
            "{}",
            reply.tutor_text
        );
    }
}

#[test]
fn a_missing_prerequisite_is_introduced_before_the_question() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let mut input = turn_input(&units);
    input.policy.prereq_blocking_unit_id = Some(units[1].id.clone());
    let reply = tutor(&bundle).reply(&input).unwrap();
    assert_eq!(reply.target_unit_id, units[1].id);
    assert!(
        reply.tutor_text.contains(&units[1].title),
        "{}",
        reply.tutor_text
    );
    assert_eq!(
        reply.turn_analysis.suggested_prereq_units,
        vec![units[1].id.clone()]
    );
}

#[test]
fn wrap_up_says_goodbye_without_a_new_question() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    for seed in 0..10 {
        let mut input = turn_input(&units);
        input.category.id = "wrap_up".into();
        input.seed = seed;
        let reply = tutor(&bundle).reply(&input).unwrap();
        assert!(!reply.tutor_text.contains('?'), "{}", reply.tutor_text);
    }
}

#[test]
fn nothing_feasible_is_an_error_not_an_invalid_reply() {
    let bundle = bundle();
    let units = sample_units(&bundle);
    let mut input = turn_input(&units);
    input.policy.allowed_actions = vec![TutorAction::ExamBlock];
    input.context.exam_candidates.clear();
    assert!(matches!(
        tutor(&bundle).reply(&input),
        Err(LlmError::InvalidInput(_))
    ));
    let mut input = turn_input(&units);
    input.policy.scoped_unit_ids = vec!["a-unit-nobody-described".into()];
    assert!(matches!(
        tutor(&bundle).reply(&input),
        Err(LlmError::InvalidInput(_))
    ));
    let missing = OfflineTutor::new(bundle.clone(), "no-such-workflow");
    assert!(matches!(
        missing.reply(&turn_input(&units)),
        Err(LlmError::InvalidInput(_))
    ));
}

#[tokio::test]
async fn the_other_offline_calls_defer_to_code() {
    let safety = OfflineSafetyJudge
        .judge(&SafetyInput {
            message: "I hate fractions".into(),
        })
        .await
        .unwrap();
    assert_eq!(safety.value, SafetyOutcome::NoVerdict);
    let drill = OfflineDrillGrader
        .grade(&DrillGradingInput {
            unit_title: "Equations".into(),
            prompt: "Solve".into(),
            question: "2x = 8".into(),
            expected_answer: "4".into(),
            student_answer: "x=4".into(),
            mistake_tags: vec![],
        })
        .await
        .unwrap();
    assert_eq!(drill.value, Judgement::CannotJudge);
    // A written exam answer is marked by its rubric's terms, offline.
    let input = |answer: &str| ExamEvaluationInput {
        question: "Why can't you add the bottoms of 1/4 + 1/3?".into(),
        expected_answer: "The pieces are different sizes: make a common denominator first.".into(),
        rubric: vec![
            tutorflow::model::RubricPoint {
                point: "the denominators name different sizes".into(),
                terms: vec!["size".into(), "sizes".into()],
            },
            tutorflow::model::RubricPoint {
                point: "make a common denominator".into(),
                terms: vec!["common denominator".into(), "same denominator".into()],
            },
        ],
        student_answer: answer.into(),
    };
    for (answer, want) in [
        (
            "they are different sizes so find a common denominator",
            QuestionResult::Correct,
        ),
        (
            "you need the same denominator first",
            QuestionResult::Partial,
        ),
        ("just add them", QuestionResult::Incorrect),
    ] {
        let exam = OfflineExamEvaluator.evaluate(&input(answer)).await.unwrap();
        match exam.value {
            Judgement::Judged(e) => assert_eq!(e.result, want, "{answer}: {}", e.feedback),
            other => panic!("{answer}: {other:?}"),
        }
    }
}
