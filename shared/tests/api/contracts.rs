//! The reference JSON examples of the app API and the n8n/LMS webhook parse
//! into the contracts and serialize back to the same JSON.

use std::path::PathBuf;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tutorflow::model::*;

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/contracts")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn round_trip<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(name: &str) -> T {
    let original = fixture(name);
    let parsed: T = serde_json::from_value(original.clone())
        .unwrap_or_else(|e| panic!("{name} does not parse: {e}"));
    let written = serde_json::to_value(&parsed).unwrap();
    assert_eq!(written, original, "{name} changed on the way back");
    let reparsed: T = serde_json::from_value(written).unwrap();
    assert_eq!(reparsed, parsed);
    parsed
}

#[test]
fn tutor_policy_round_trips() {
    let policy: TutorPolicy = round_trip("tutor_policy.json");
    assert_eq!(policy.prereq_blocking_unit_id.as_deref(), Some("ALG-00"));
    assert_eq!(
        policy.allowed_actions,
        vec![TutorAction::SocraticQuestion, TutorAction::DrillCard]
    );
    assert_eq!(policy.desired_exam_tier, ExamTier::Bronze);
    assert_eq!(policy.constraints.max_concept_words, 170);
}

#[test]
fn student_snapshot_round_trips() {
    let snapshot: StudentSnapshot = round_trip("student_snapshot.json");
    let unit = &snapshot.unit_progress["ALG-01"];
    assert_eq!(unit.mastery_tier, MasteryTier::Bronze);
    assert_eq!(unit.drill.attempts, 3);
    assert_eq!(unit.exam.passed_by_tier.get(ExamTier::Bronze), 1);
    assert_eq!(unit.confusion_tags["inverse_operations"], 2);
    assert_eq!(
        snapshot.revisit_queue["EX-2019-ALG-14"].tier,
        ExamTier::Bronze
    );
    assert_eq!(snapshot.tier_of("ALG-01"), MasteryTier::Bronze);
    assert_eq!(snapshot.tier_of("never-touched"), MasteryTier::None);
}

#[test]
fn tutor_message_with_drill_card_round_trips() {
    let message: TutorMessage = round_trip("tutor_message.json");
    match message.card {
        Some(TutorCard::Drill(card)) => assert_eq!(card.question_latex, "2x+3=11"),
        other => panic!("expected a drill card, got {other:?}"),
    }
}

#[test]
fn llm_tutor_response_round_trips() {
    let reply: LlmTutorResponse = round_trip("llm_tutor_response.json");
    assert_eq!(reply.action, TutorAction::DrillCard);
    assert_eq!(reply.turn_analysis.student_intent, StudentIntent::Solve);
}

#[test]
fn llm_exam_suggestion_accepts_seed_spelling() {
    let suggestion: LlmExamSuggestion =
        serde_json::from_str(r#"{"question_id":"EX-1","difficultyTier":"silver"}"#).unwrap();
    assert_eq!(suggestion.difficulty_tier, ExamTier::Silver);
}

#[test]
fn turn_request_round_trips() {
    let request: TurnRequest = round_trip("turn_request.json");
    assert_eq!(request.client_event, ClientEvent::None);
}

#[test]
fn every_client_event_round_trips() {
    let events: Vec<ClientEvent> = round_trip("client_events.json");
    assert_eq!(events.len(), 7);
    assert!(matches!(
        events[2],
        ClientEvent::DrillContinue {
            last_result: Some(DrillResult::Correct),
            ..
        }
    ));
    assert!(matches!(events[6], ClientEvent::IAmStuck { .. }));
}

#[test]
fn snapshot_lite_round_trips() {
    let lite: SnapshotLite = round_trip("snapshot_lite.json");
    assert_eq!(lite.progress.total, 40);
}

#[test]
fn exam_requests_round_trip() {
    let viewed: SupportViewedRequest = round_trip("support_viewed_request.json");
    assert_eq!(viewed.support_type, SupportType::Memo);
    let submit: McqSubmitRequest = round_trip("mcq_submit_request.json");
    assert_eq!(submit.selected_option, "B");
    let grade: DrillGradeRequest = round_trip("drill_grade_request.json");
    assert_eq!(grade.response_time_ms, Some(8200));
}

/// A client may not say whether its MCQ answer was right (the server
/// decides), nor send the drill's text, so those fields are refused by name.
#[test]
fn client_verdicts_are_refused() {
    let err = serde_json::from_value::<McqSubmitRequest>(fixture(
        "refused_mcq_submit_with_client_verdict.json",
    ))
    .unwrap_err();
    assert!(err.to_string().contains("isCorrect"), "{err}");
    let err = serde_json::from_value::<DrillGradeRequest>(fixture(
        "refused_drill_grade_with_drill_text.json",
    ))
    .unwrap_err();
    assert!(err.to_string().contains("courseId"), "{err}");
}

#[test]
fn unknown_fields_and_event_types_are_refused() {
    let err = serde_json::from_str::<TurnRequest>(r#"{"messageTxt":"hi"}"#).unwrap_err();
    assert!(err.to_string().contains("messageTxt"), "{err}");
    let err =
        serde_json::from_str::<ClientEvent>(r#"{"type":"REQUEST_DRILL","unit":"A"}"#).unwrap_err();
    assert!(err.to_string().contains("unit"), "{err}");
    let err = serde_json::from_str::<ClientEvent>(r#"{"type":"TELEPORT"}"#).unwrap_err();
    assert!(err.to_string().contains("TELEPORT"), "{err}");
}

#[test]
fn webhook_shapes_round_trip() {
    let request: WebhookTurnRequest = round_trip("webhook_turn_request.json");
    assert_eq!(request.current_problem.unwrap().correct_answer, "2");
    let response: WebhookTurnResponse = round_trip("webhook_turn_response.json");
    assert_eq!(response.session_status.action, ProgressionAction::Advance);
}

#[test]
fn session_state_survives_storage() {
    let mut session = SessionState {
        turn_count: 4,
        last_category: Some("close".into()),
        ..SessionState::default()
    };
    session.pending_question = Some(PendingQuestion {
        text: "What is 3/4 + 1/8?".into(),
        expected: Some(ExpectedAnswer {
            kind: AnswerKind::Number,
            value: "7/8".into(),
            unit: None,
            options: vec![],
            mistakes: Vec::new(),
        }),
        unit_id: "FRAC-ADD".into(),
        concept: "adding fractions".into(),
        wrong_attempts: 1,
        previous_answers: vec!["4/12".into()],
        hints_used: 0,
        phase: QuestionPhase::Probe,
        asked_at: "2026-03-01T10:00:00Z".parse().unwrap(),
        drill_token: None,
    });
    session.scaffolding = Scaffolding {
        active: true,
        depth: 2,
        last_question: Some("What is a common denominator of 4 and 8?".into()),
        step_expects: None,
    };
    let json = serde_json::to_string(&session).unwrap();
    assert!(json.contains("\"pendingQuestion\""), "{json}");
    let back: SessionState = serde_json::from_str(&json).unwrap();
    assert_eq!(back, session);
    // Older records without the newer fields still load.
    let sparse: SessionState = serde_json::from_str(r#"{"turnCount":2}"#).unwrap();
    assert_eq!(sparse.turn_count, 2);
    assert!(sparse.pending_question.is_none());
}

/// A thread as the store held it before sessions had a mode state (it
/// still carries the per-mode fields of that time, always empty) loads as
/// a guided thread with everything else as it was.
#[test]
fn a_thread_stored_before_mode_state_loads_as_guided() {
    let stored = fixture("stored_thread_before_mode_state.json");
    let thread: Thread = serde_json::from_value(stored.clone())
        .unwrap_or_else(|e| panic!("the stored thread does not load: {e}"));
    assert_eq!(thread.mode, Mode::Guided);
    assert_eq!(thread.session.mode_state, ModeState::Guided);
    assert_eq!(thread.session.turn_count, 6);
    assert_eq!(
        thread.session.last_category.as_deref(),
        Some("conceptual_question")
    );
    let pending = thread.session.pending_question.as_ref().unwrap();
    assert_eq!(pending.unit_id, "whole-numbers");
    assert_eq!(pending.text, "Does that make sense?");

    // Saved again, it says its mode state and drops the old fields.
    let written = serde_json::to_value(&thread).unwrap();
    assert_eq!(
        written["session"]["modeState"],
        serde_json::json!({"mode": "guided"})
    );
    for old in ["studyPlan", "exam", "problemSet"] {
        assert!(
            written["session"].get(old).is_none(),
            "{old} is still written"
        );
    }
    let mut expected = stored;
    let session = expected["session"].as_object_mut().unwrap();
    for old in ["studyPlan", "exam", "problemSet"] {
        session.remove(old);
    }
    session.insert("modeState".into(), serde_json::json!({"mode": "guided"}));
    assert_eq!(written, expected);
}

/// A mode's state is saved tagged with its mode and loads back the same.
#[test]
fn mode_state_round_trips_tagged_with_its_mode() {
    let session = SessionState {
        turn_count: 2,
        mode_state: ModeState::TeachMe(StudyPlan {
            unit_id: "fractions".into(),
            steps: vec![PlanStep {
                step_id: "s1".into(),
                title: "What a fraction is".into(),
                kind: StepKind::Explain,
                concept: "fractions".into(),
                success_criteria: None,
                status: StepStatus::InProgress,
                progress: StepProgress::default(),
            }],
            plan_version: 1,
            replan_count: 0,
            max_replans: 3,
            extension_turns: 0,
            replans: vec![ReplanRecord {
                turn: 4,
                reason: "blocked".into(),
            }],
            last_pacing: Some(PacingDirective::Accelerate),
        }),
        ..SessionState::default()
    };
    let json = serde_json::to_value(&session).unwrap();
    assert_eq!(json["modeState"]["mode"], "teach_me");
    assert_eq!(json["modeState"]["steps"][0]["status"], "in_progress");
    let back: SessionState = serde_json::from_value(json).unwrap();
    assert_eq!(back, session);
}
