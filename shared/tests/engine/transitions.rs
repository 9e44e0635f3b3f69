//! State transitions, case by case: the routing categories' transitions
//! (scaffolding and teach-back, driven by the shipped categories), the
//! question lifecycle (five cases, phase progression) and the hybrid memory
//! on a problem change.

use std::path::PathBuf;

use chrono::{TimeZone, Utc};
use tutorflow::content::{Bundle, ContentSource, FsSource, Workflow};
use tutorflow::engine::session::lifecycle::{self, LifecycleCase};
use tutorflow::engine::session::scaffolding::{self, ScaffoldingContext};
use tutorflow::model::{AnswerKind, ExpectedAnswer, PendingQuestion, QuestionPhase, SessionState};

fn default_workflow() -> Workflow {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let files = runtime
        .block_on(FsSource::new(root).fetch())
        .expect("the repository holds a bundle");
    Bundle::load(&files)
        .unwrap_or_else(|d| panic!("{d}"))
        .workflows["default"]
        .clone()
}

fn question(concept: &str, text: &str, expected: &str) -> PendingQuestion {
    PendingQuestion {
        text: text.to_owned(),
        expected: Some(ExpectedAnswer {
            kind: AnswerKind::Number,
            value: expected.to_owned(),
            unit: None,
            options: Vec::new(),
            mistakes: Vec::new(),
        }),
        unit_id: "integer-operations".to_owned(),
        concept: concept.to_owned(),
        wrong_attempts: 0,
        previous_answers: Vec::new(),
        hints_used: 0,
        phase: QuestionPhase::Asked,
        asked_at: Utc.with_ymd_and_hms(2025, 1, 1, 9, 0, 0).unwrap(),
        drill_token: None,
    }
}

/// Applies the shipped category `id` to `state`.
fn route(workflow: &Workflow, state: &mut SessionState, id: &str, answer: &str) {
    let category = workflow
        .category(id)
        .unwrap_or_else(|| panic!("no category {id}"));
    scaffolding::apply_category(
        state,
        category,
        ScaffoldingContext {
            answer: Some(answer),
        },
    );
}

#[test]
fn scaffolding_and_teach_back() {
    let workflow = default_workflow();
    let mut state = SessionState {
        pending_question: Some(question("adding integers", "What is -7 + 3?", "-4")),
        ..SessionState::default()
    };
    // stuck (not scaffolding) → scaffolding on.
    route(&workflow, &mut state, "stuck", "idk");
    assert!(state.scaffolding.active);
    assert_eq!(state.scaffolding.depth, 1);
    scaffolding::set_scaffold_question(&mut state, "Where is -7 on the number line?");
    assert_eq!(
        state.scaffolding.last_question.as_deref(),
        Some("Where is -7 on the number line?")
    );
    // scaffold_progress → depth + 1.
    route(&workflow, &mut state, "scaffold_progress", "left of zero");
    route(&workflow, &mut state, "scaffold_progress", "move 3 right");
    assert_eq!(state.scaffolding.depth, 3);
    // Stuck again while scaffolding: one level further down, still on.
    route(&workflow, &mut state, "stuck", "still lost");
    assert_eq!(
        (state.scaffolding.active, state.scaffolding.depth),
        (true, 4)
    );
    // A wrong main answer counts an attempt but keeps the question.
    route(&workflow, &mut state, "wrong_operation", "-10");
    assert_eq!(
        state.pending_question.as_ref().map(|q| q.wrong_attempts),
        Some(1)
    );
    // correct (during scaffolding) → scaffolding off, teach-back on, question cleared.
    route(&workflow, &mut state, "correct", "-4");
    assert!(!state.scaffolding.active);
    assert_eq!(state.scaffolding.depth, 0);
    assert!(state.teach_back.active && state.teach_back.awaiting_explanation);
    assert!(state.pending_question.is_none());
    assert_eq!(state.last_category.as_deref(), Some("correct"));
    // The explanation → teach-back off.
    route(
        &workflow,
        &mut state,
        "explanation",
        "I started at -7 and moved 3 right",
    );
    assert!(!state.teach_back.active && !state.teach_back.awaiting_explanation);
}

#[test]
fn off_topic_count() {
    let workflow = default_workflow();
    let mut state = SessionState::default();
    route(&workflow, &mut state, "off_topic", "");
    route(&workflow, &mut state, "off_topic", "");
    assert_eq!(state.off_topic_count, 2);
    route(&workflow, &mut state, "conceptual_question", "");
    assert_eq!(state.off_topic_count, 0);
}

#[test]
fn phase_progression() {
    let workflow = default_workflow();
    let mut state = SessionState {
        pending_question: Some(question("adding integers", "What is -3 + 5?", "2")),
        ..SessionState::default()
    };
    let phases: Vec<QuestionPhase> = ["8", "-8", "-2", "3", "1"]
        .iter()
        .map(|answer| {
            route(&workflow, &mut state, "wrong_operation", answer);
            state
                .pending_question
                .as_ref()
                .expect("still pending")
                .phase
        })
        .collect();
    assert_eq!(
        phases,
        [
            QuestionPhase::Probe,
            QuestionPhase::Hint,
            QuestionPhase::Explain,
            QuestionPhase::StrategyChange,
            QuestionPhase::StrategyChange,
        ]
    );
    let pending = state.pending_question.as_ref().unwrap();
    assert_eq!(pending.wrong_attempts, 5);
    assert_eq!(pending.previous_answers, ["8", "-8", "-2", "3", "1"]);
    // A close answer is a wrong attempt too.
    route(&workflow, &mut state, "close", "2.1");
    assert_eq!(state.pending_question.as_ref().unwrap().wrong_attempts, 6);
    // Correct → clear.
    route(&workflow, &mut state, "correct", "2");
    assert!(state.pending_question.is_none());
    assert_eq!(lifecycle::phase_after(0), QuestionPhase::Asked);
    assert!(lifecycle::strategy(QuestionPhase::StrategyChange).contains("prerequisite"));
}

#[test]
fn five_lifecycle_cases() {
    let mut state = SessionState::default();
    // 3. New question, none pending → tracked.
    let first = question("adding integers", "What is -3 + 5?", "2");
    assert_eq!(
        lifecycle::ask(&mut state, first.clone()),
        LifecycleCase::NewQuestion
    );
    assert_eq!(state.pending_question.as_ref(), Some(&first));
    // 1. Wrong answer on the pending question → attempts up, phase up, kept.
    assert_eq!(
        lifecycle::record_wrong_attempt(&mut state, "8"),
        Some(QuestionPhase::Probe)
    );
    assert_eq!(state.pending_question.as_ref().unwrap().text, first.text);
    // 5. Same-concept follow-up while pending → the original lifecycle goes on.
    let follow_up = question(
        "Adding Integers ",
        "Where do you land from -3 after 5 steps right?",
        "2",
    );
    assert_eq!(
        lifecycle::ask(&mut state, follow_up.clone()),
        LifecycleCase::SameConceptFollowUp
    );
    let pending = state.pending_question.as_ref().unwrap();
    assert_eq!(
        (pending.wrong_attempts, pending.phase),
        (1, QuestionPhase::Probe)
    );
    assert_eq!(pending.previous_answers, ["8"]);
    assert_eq!(pending.text, follow_up.text);
    assert_eq!(pending.asked_at, first.asked_at);
    // 4. New question on a different concept while pending → replaced.
    let other = question("multiplying integers", "What is (-3) x (-5)?", "15");
    assert_eq!(
        lifecycle::ask(&mut state, other.clone()),
        LifecycleCase::ReplacedOtherConcept
    );
    assert_eq!(state.pending_question.as_ref(), Some(&other));
    // 2. Correct answer → cleared, and the next question tracked.
    let next = question("dividing integers", "What is -18 / 3?", "-6");
    assert_eq!(
        lifecycle::answer_correct(&mut state, Some(next.clone())),
        LifecycleCase::Correct
    );
    assert_eq!(state.pending_question.as_ref(), Some(&next));
    assert_eq!(
        lifecycle::answer_correct(&mut state, None),
        LifecycleCase::Correct
    );
    assert!(state.pending_question.is_none());
    // No pending question: nothing to record.
    assert_eq!(lifecycle::record_wrong_attempt(&mut state, "3"), None);
}

#[test]
fn previous_answers_are_bounded() {
    let mut state = SessionState {
        pending_question: Some(question("c", "q", "1")),
        ..SessionState::default()
    };
    let long = "9".repeat(5000);
    for _ in 0..40 {
        lifecycle::record_wrong_attempt(&mut state, &long);
    }
    let pending = state.pending_question.unwrap();
    assert_eq!(
        pending.previous_answers.len(),
        lifecycle::MAX_PREVIOUS_ANSWERS
    );
    assert!(
        pending
            .previous_answers
            .iter()
            .all(|a| a.chars().count() <= 201)
    );
    assert_eq!(pending.wrong_attempts, 40);
}

#[derive(Debug, PartialEq)]
struct Turn {
    problem: &'static str,
    message: &'static str,
}

#[test]
fn hybrid_memory_on_a_problem_change() {
    let turns: Vec<Turn> = [
        ("p1", "hi"),
        ("p1", "idk"),
        ("p1", "left of zero"),
        ("p1", "-4"),
        ("p1", "I moved right"),
        ("p2", "is it -10?"),
        ("p2", "-10"),
    ]
    .into_iter()
    .map(|(problem, message)| Turn { problem, message })
    .collect();
    let memory = scaffolding::hybrid_memory(&turns, |t| t.problem, "p2", 3, 15);
    let shown: Vec<(&str, bool)> = memory
        .iter()
        .map(|m| (m.turn.message, m.previous_problem))
        .collect();
    assert_eq!(
        shown,
        [
            ("left of zero", true),
            ("-4", true),
            ("I moved right", true),
            ("is it -10?", false),
            ("-10", false),
        ]
    );
    // The limit drops the oldest first.
    let memory = scaffolding::hybrid_memory(&turns, |t| t.problem, "p2", 3, 3);
    assert_eq!(
        memory.first().map(|m| m.turn.message),
        Some("I moved right")
    );
    // A problem just started: only the previous problem's last turns.
    let memory = scaffolding::hybrid_memory(&turns, |t| t.problem, "p3", 3, 15);
    assert_eq!(memory.len(), 3);
    assert!(memory.iter().all(|m| m.previous_problem));

    // The per-problem state starts afresh.
    let workflow = default_workflow();
    let mut state = SessionState {
        pending_question: Some(question("adding integers", "What is -7 + 3?", "-4")),
        ..SessionState::default()
    };
    route(&workflow, &mut state, "stuck", "idk");
    route(&workflow, &mut state, "wrong_operation", "-10");
    route(&workflow, &mut state, "correct", "-4");
    let next = question("subtracting integers", "What is -4 - 6?", "-10");
    scaffolding::start_problem(&mut state, next.clone());
    assert_eq!(state.pending_question, Some(next));
    assert!(!state.scaffolding.active && !state.teach_back.active);
}
