//! The policy's reference examples (the JSON in tests/fixtures/contracts)
//! and every input → response trigger, as table tests over synthetic
//! courses. Triggers are named by input: A for a turn (A1 a confident
//! mapping, A2 a missing prerequisite, A3 an ambiguous mapping, A4 stuck by
//! evidence, A5 exam-ready), B for a graded drill (B1 right, B2 wrong), C
//! for exam events (C1 a passed question, C2 a failed one or a viewed memo).

use crate::policy_support;

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use policy_support::*;
use serde_json::{Value, json};
use tutorflow::content::{Course, Workflow};
use tutorflow::engine::exam::lockout::{LockoutStatus, NoLockouts};
use tutorflow::engine::mastery::evidence::{
    DrillGraded, ExamSubmitted, SupportViewed, TransitionContext, apply_drill_graded,
    apply_exam_submitted, apply_hint_before_answer, apply_support_viewed, apply_turn,
};
use tutorflow::engine::policy::{
    MoveOn, PolicyInput, PolicyOutcome, StudentRequest, TargetReason, compute_policy,
    exam_questions_to_check,
};
use tutorflow::engine::reply::fallback::{
    FallbackRule, FallbackTarget, ValidationContext, Verdict, Violation, validate_reply,
};
use tutorflow::engine::snapshot_lite::build_snapshot_lite;
use tutorflow::model::*;

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/../tests/fixtures/contracts/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The reference examples' DAG: ALG-00 → ALG-01 → ALG-02, with the entry
/// unit ENTRY-00.
fn reference_course() -> Course {
    let mut c = course(&[
        ("ENTRY-00", &[]),
        ("ALG-00", &[]),
        ("ALG-01", &["ALG-00"]),
        ("ALG-02", &["ALG-01"]),
    ]);
    c.units.get_mut("ALG-00").unwrap().title = "Inverse Operations".into();
    c.units.get_mut("ALG-01").unwrap().title = "Linear Equations".into();
    c
}

/// The reference StudentSnapshot example.
fn reference_snapshot() -> StudentSnapshot {
    serde_json::from_value(fixture("student_snapshot.json")).unwrap()
}

fn reference_now() -> DateTime<Utc> {
    "2026-03-01T10:05:00Z".parse().unwrap()
}

/// The strict blocker rule: every prerequisite below the tier blocks,
/// worked on or not. The reference trigger examples are written for it.
fn any_missing_rule() -> Workflow {
    workflow_with("policy: {blocker_evidence: any_missing}")
}

fn policy_at(
    course: &Course,
    snapshot: &StudentSnapshot,
    mapped_units: &[MappedUnit],
    now: DateTime<Utc>,
    lockouts: &BTreeMap<String, LockoutStatus>,
) -> PolicyOutcome {
    let workflow = any_missing_rule();
    let input = PolicyInput {
        snapshot,
        course,
        workflow: &workflow,
        mapped_units,
        now,
        turn_id: "turn-1",
        request: StudentRequest::None,
    };
    compute_policy(&input, lockouts).expect("a course with units")
}

fn policy(
    course: &Course,
    snapshot: &StudentSnapshot,
    mapped_units: &[MappedUnit],
) -> PolicyOutcome {
    policy_at(course, snapshot, mapped_units, now(), &BTreeMap::new())
}

fn reply(action: TutorAction, target: &str) -> LlmTutorResponse {
    let mut value = json!({
        "mapped_units": [],
        "action": action,
        "target_unit_id": target,
        "tutor_text": "What is the first step?",
        "turn_analysis": {
            "student_intent": "solve",
            "understanding_signal": "uncertain",
            "suggested_prereq_units": []
        }
    });
    match action {
        TutorAction::SocraticQuestion => {}
        TutorAction::ConceptCard => {
            value["concept_card"] = json!({"key_ideas": ["Undo the operation on x."]});
        }
        TutorAction::DrillCard => {
            value["drill_card"] = json!({"prompt": "Solve for x", "question_latex": "x+3=5"});
        }
        TutorAction::ExamBlock => {}
    }
    serde_json::from_value(value).unwrap()
}

fn exam_reply(target: &str, question_id: &str, tier: ExamTier) -> LlmTutorResponse {
    let mut r = reply(TutorAction::SocraticQuestion, target);
    r.action = TutorAction::ExamBlock;
    r.exam_suggestion = Some(LlmExamSuggestion {
        question_id: question_id.to_owned(),
        difficulty_tier: tier,
    });
    r
}

fn verdict(outcome: &PolicyOutcome, reply: &LlmTutorResponse) -> Verdict {
    let workflow = workflow();
    validate_reply(
        reply,
        &outcome.policy,
        &ValidationContext::new(outcome, &workflow),
    )
}

use TutorAction::{ConceptCard, DrillCard, ExamBlock, SocraticQuestion};

// ---------------------------------------------------------------------------
// The reference examples
// ---------------------------------------------------------------------------

/// The reference TutorPolicy example from the reference StudentSnapshot and
/// a message mapped to ALG-01 at 0.92. Every field agrees with the example
/// JSON (kept as it was given) except two, where it contradicts the
/// policy's own rules: the focus is the blocker ALG-00 (A2: the focus
/// shifts to the prerequisite; the JSON's stuck=false and
/// desiredExamTier=bronze only hold for ALG-00, since ALG-01 is bronze with
/// a broken streak), so it also leads the scoped list; and examAvailability
/// is `none` because the focus is not exam-ready.
#[test]
fn the_reference_policy_example() {
    let outcome = policy_at(
        &reference_course(),
        &reference_snapshot(),
        &mapped(&[("ALG-01", 0.92)]),
        reference_now(),
        &BTreeMap::new(),
    );
    let p = &outcome.policy;
    let example: TutorPolicy = serde_json::from_value(fixture("tutor_policy.json")).unwrap();
    assert_eq!(p.primary_target_unit_id, example.primary_target_unit_id);
    assert_eq!(p.prereq_blocking_unit_id, example.prereq_blocking_unit_id);
    assert_eq!(p.allowed_actions, example.allowed_actions);
    assert_eq!(p.stuck, example.stuck);
    assert_eq!(p.exam_ready, example.exam_ready);
    assert_eq!(p.desired_exam_tier, example.desired_exam_tier);
    assert_eq!(p.constraints, example.constraints);
    assert_eq!(p.focus_unit_id, "ALG-00");
    assert_eq!(p.scoped_unit_ids, vec!["ALG-00", "ALG-01"]);
    assert_eq!(p.exam_availability, ExamAvailability::None);
    assert_eq!(p.turn_id, "turn-1");
    assert_eq!(
        outcome.trace.target_reason,
        TargetReason::Mapped { confidence: 0.92 }
    );

    // The reference LLM reply example (a drill on ALG-01) obeys this policy.
    let example_reply: LlmTutorResponse =
        serde_json::from_value(fixture("llm_tutor_response.json")).unwrap();
    assert_eq!(verdict(&outcome, &example_reply), Verdict::Valid);
}

/// The reference SnapshotLite example, reproduced exactly from the
/// reference snapshot grown to 12 bronze, 4 silver and 1 gold units in a
/// 40-unit course, with two locked revisit questions.
#[test]
fn the_reference_snapshot_lite_example() {
    let mut edges: Vec<(String, Vec<String>)> = vec![
        ("ENTRY-00".into(), vec![]),
        ("ALG-00".into(), vec![]),
        ("ALG-01".into(), vec!["ALG-00".into()]),
        ("ALG-02".into(), vec!["ALG-01".into()]),
    ];
    edges.extend((0..36).map(|i| (format!("X-{i:02}"), vec!["ENTRY-00".to_owned()])));
    let borrowed: Vec<(&str, Vec<&str>)> = edges
        .iter()
        .map(|(u, r)| (u.as_str(), r.iter().map(String::as_str).collect()))
        .collect();
    let pairs: Vec<(&str, &[&str])> = borrowed.iter().map(|(u, r)| (*u, r.as_slice())).collect();
    let mut c = course(&pairs);
    c.units.get_mut("ALG-00").unwrap().title = "Inverse Operations".into();
    c.units.get_mut("ALG-01").unwrap().title = "Linear Equations".into();

    let mut s = reference_snapshot();
    for i in 0..11 {
        progress(&mut s, &format!("X-{i:02}"), MasteryTier::Bronze, 2, 2);
    }
    for i in 11..15 {
        progress(&mut s, &format!("X-{i:02}"), MasteryTier::Silver, 2, 2);
    }
    progress(&mut s, "X-15", MasteryTier::Gold, 2, 2);
    s.revisit_queue.insert(
        "EX-2019-ALG-15".into(),
        RevisitEntry {
            unit_id: "ALG-01".into(),
            tier: ExamTier::Bronze,
            reason: Some(RevisitReason::Failed),
            added_at: None,
        },
    );
    let first: DateTime<Utc> = "2026-03-02T10:00:00Z".parse().unwrap();
    let lockouts: BTreeMap<String, LockoutStatus> = [
        ("EX-2019-ALG-14", first),
        ("EX-2019-ALG-15", first + Duration::hours(3)),
    ]
    .into_iter()
    .map(|(q, until)| (q.to_owned(), LockoutStatus::Locked { until }))
    .collect();

    let lite = build_snapshot_lite(&s, &c, &any_missing_rule(), &lockouts, reference_now());
    assert_eq!(
        serde_json::to_value(&lite).unwrap(),
        fixture("snapshot_lite.json")
    );
}

// ---------------------------------------------------------------------------
// Input A — /turn
// ---------------------------------------------------------------------------

/// A: fractions (entry) → percentages; fractions gold, a fresh student otherwise.
fn a_course() -> Course {
    with_exam(
        course(&[
            ("fractions", &[]),
            ("decimals", &["fractions"]),
            ("percentages", &["fractions", "decimals"]),
        ]),
        "percentages",
        &[
            ("pct-b1", ExamTier::Bronze),
            ("pct-b2", ExamTier::Bronze),
            ("pct-s1", ExamTier::Silver),
        ],
    )
}

#[test]
fn a1_confident_mapping_with_prerequisites_held_allows_drills() {
    let c = a_course();
    let mut s = snapshot("fractions");
    progress(&mut s, "fractions", MasteryTier::Gold, 4, 4);
    progress(&mut s, "decimals", MasteryTier::Bronze, 2, 2);
    let outcome = policy(&c, &s, &mapped(&[("percentages", 0.9)]));
    let p = &outcome.policy;
    assert_eq!(p.primary_target_unit_id, "percentages");
    assert_eq!(p.focus_unit_id, "percentages");
    assert_eq!(p.prereq_blocking_unit_id, None);
    assert_eq!(p.allowed_actions, vec![SocraticQuestion, DrillCard]);
    assert!(!p.exam_ready, "no drill streak yet");
    assert!(p.scoped_unit_ids.starts_with(&["percentages".to_owned()]));
    assert!(verdict(&outcome, &reply(DrillCard, "percentages")).is_valid());
    assert!(verdict(&outcome, &reply(SocraticQuestion, "percentages")).is_valid());

    // "exam may become allowed after readiness": two correct drills in a row.
    progress(&mut s, "percentages", MasteryTier::None, 2, 2);
    let ready = policy(&c, &s, &mapped(&[("percentages", 0.9)]));
    assert!(ready.policy.exam_ready);
    assert!(ready.policy.allows(ExamBlock));
}

#[test]
fn a2_confident_mapping_with_a_missing_prerequisite_shifts_the_focus() {
    let c = a_course();
    let mut s = snapshot("fractions");
    progress(&mut s, "fractions", MasteryTier::Gold, 4, 4);
    let outcome = policy(&c, &s, &mapped(&[("percentages", 0.9)]));
    let p = &outcome.policy;
    assert_eq!(p.primary_target_unit_id, "percentages");
    assert_eq!(p.prereq_blocking_unit_id.as_deref(), Some("decimals"));
    assert_eq!(p.focus_unit_id, "decimals");
    assert_eq!(p.allowed_actions, vec![SocraticQuestion, DrillCard]);
    assert_eq!(p.scoped_unit_ids[..2], ["decimals", "percentages"]);
    // "Response: Drill Card on prereq (or Socratic)".
    assert!(verdict(&outcome, &reply(DrillCard, "decimals")).is_valid());
    assert!(verdict(&outcome, &reply(SocraticQuestion, "decimals")).is_valid());
}

#[test]
fn a2_a_chain_of_missing_prerequisites_is_followed_to_the_start() {
    let c = a_course();
    let s = snapshot("fractions");
    let outcome = policy(&c, &s, &mapped(&[("percentages", 0.9)]));
    assert_eq!(outcome.trace.blocker_chain, vec!["fractions"]);
    assert_eq!(outcome.policy.focus_unit_id, "fractions");

    // percentages lists fractions first; with decimals listed first, the
    // chain goes percentages → decimals → fractions.
    let mut c2 = c.clone();
    c2.requires.insert(
        "percentages".into(),
        vec!["decimals".into(), "fractions".into()],
    );
    let outcome = policy(&c2, &s, &mapped(&[("percentages", 0.9)]));
    assert_eq!(outcome.trace.blocker_chain, vec!["decimals", "fractions"]);
    assert_eq!(
        outcome.policy.prereq_blocking_unit_id.as_deref(),
        Some("fractions")
    );
}

#[test]
fn a2_the_blocker_rule_can_prefer_the_highest_priority_prerequisite() {
    let c = course(&[
        ("start", &[]),
        ("area", &["start"]),
        ("angles", &["start"]),
        ("geometry", &["area", "angles"]),
    ]);
    let mut s = snapshot("start");
    progress(&mut s, "start", MasteryTier::Gold, 2, 2);
    // angles was worked on an hour ago and is in progress: it scores higher.
    progress(&mut s, "angles", MasteryTier::None, 1, 1);
    s.unit_progress.get_mut("angles").unwrap().last_touched_at = Some(hours_ago(1));
    s.units_in_progress = vec!["angles".into()];
    let first = policy(&c, &s, &mapped(&[("geometry", 0.9)]));
    assert_eq!(first.policy.focus_unit_id, "area", "first listed");

    let w = workflow_with("policy: {blocker: highest_priority, blocker_evidence: any_missing}");
    let input = PolicyInput {
        snapshot: &s,
        course: &c,
        workflow: &w,
        mapped_units: &mapped(&[("geometry", 0.9)]),
        now: now(),
        turn_id: "t",
        request: StudentRequest::None,
    };
    let best = compute_policy(&input, &NoLockouts).unwrap();
    assert_eq!(best.policy.focus_unit_id, "angles");
    let score = |u: &str| {
        best.candidates
            .iter()
            .find(|c| c.unit_id == u)
            .unwrap()
            .score
    };
    assert!(score("angles") > score("area"));
}

#[test]
fn a3_an_ambiguous_mapping_only_allows_a_socratic_clarifier() {
    let c = a_course();
    let mut s = snapshot("fractions");
    progress(&mut s, "fractions", MasteryTier::Bronze, 3, 0);
    let outcome = policy(&c, &s, &mapped(&[("percentages", 0.4), ("decimals", 0.3)]));
    let p = &outcome.policy;
    assert_eq!(p.primary_target_unit_id, "fractions", "stays on the focus");
    assert_eq!(outcome.trace.target_reason, TargetReason::SnapshotFocus);
    assert!(outcome.trace.ambiguous_mapping);
    assert_eq!(p.allowed_actions, vec![SocraticQuestion]);
    assert!(p.stuck, "flags are still reported");
    // The weakly mapped units are in scope, so the tutor can ask which one.
    assert!(p.scoped_unit_ids.contains(&"percentages".to_owned()));
    assert!(verdict(&outcome, &reply(SocraticQuestion, "fractions")).is_valid());
    // A card is overridden by a Socratic question on the focus.
    let Verdict::Fallback(f) = verdict(&outcome, &reply(DrillCard, "fractions")) else {
        panic!("a drill must fall back");
    };
    assert_eq!(f.action, SocraticQuestion);
    assert_eq!(f.rule, FallbackRule::SocraticQuestion);
    assert_eq!(f.target_unit_id, "fractions");
    assert_eq!(f.target_rule, FallbackTarget::Focus);
    assert_eq!(
        f.violations,
        vec![Violation::ActionNotAllowed { action: DrillCard }]
    );

    // Below clarify_min_confidence it is noise, not ambiguity.
    let noise = policy(&c, &s, &mapped(&[("percentages", 0.1)]));
    assert!(!noise.trace.ambiguous_mapping);
    assert!(noise.policy.allows(DrillCard));
    // A weak mapping to the unit already in focus is not ambiguous either.
    let same = policy(&c, &s, &mapped(&[("fractions", 0.4)]));
    assert!(!same.trace.ambiguous_mapping);
}

#[test]
fn a4_stuck_by_evidence_allows_a_concept_card() {
    let c = a_course();
    let mut s = snapshot("fractions");
    progress(&mut s, "fractions", MasteryTier::None, 2, 0);
    let outcome = policy(&c, &s, &[]);
    let p = &outcome.policy;
    assert!(p.stuck);
    assert_eq!(
        p.allowed_actions,
        vec![SocraticQuestion, DrillCard, ConceptCard]
    );
    assert!(verdict(&outcome, &reply(ConceptCard, "fractions")).is_valid());
    // "Concept Card → Drill": the drill is allowed too.
    assert!(verdict(&outcome, &reply(DrillCard, "fractions")).is_valid());

    // One attempt, or a streak, is not stuck; nor is a concept card allowed.
    for (attempts, streak) in [(1, 0), (3, 1)] {
        progress(&mut s, "fractions", MasteryTier::None, attempts, streak);
        let outcome = policy(&c, &s, &[]);
        assert!(
            !outcome.policy.stuck,
            "{attempts} attempts, streak {streak}"
        );
        let v = verdict(&outcome, &reply(ConceptCard, "fractions"));
        let Verdict::Fallback(f) = v else {
            panic!("a concept card needs a stuck student")
        };
        assert!(f.violations.contains(&Violation::ConceptCardWhenNotStuck));
    }
}

#[test]
fn a5_exam_ready_and_available_allows_an_exam_block_at_the_desired_tier() {
    let c = a_course();
    let mut s = snapshot("percentages");
    progress(&mut s, "fractions", MasteryTier::Gold, 4, 4);
    progress(&mut s, "decimals", MasteryTier::Gold, 4, 4);
    progress(&mut s, "percentages", MasteryTier::None, 3, 2);
    let workflow = workflow();
    let input = PolicyInput {
        snapshot: &s,
        course: &c,
        workflow: &workflow,
        mapped_units: &[],
        now: now(),
        turn_id: "t",
        request: StudentRequest::None,
    };
    assert_eq!(
        exam_questions_to_check(&input).unwrap(),
        vec!["pct-b1", "pct-b2"]
    );
    let locked = |until| LockoutStatus::Locked { until };
    let one_locked: BTreeMap<String, LockoutStatus> =
        [("pct-b1".to_owned(), locked(now() + Duration::hours(20)))].into();
    let outcome = policy_at(&c, &s, &[], now(), &one_locked);
    let p = &outcome.policy;
    assert!(p.exam_ready);
    assert_eq!(p.desired_exam_tier, ExamTier::Bronze);
    assert_eq!(p.exam_availability, ExamAvailability::Available);
    assert!(p.allows(ExamBlock));
    assert_eq!(outcome.exam.available_question_ids, vec!["pct-b2"]);
    assert!(
        verdict(
            &outcome,
            &exam_reply("percentages", "pct-b2", ExamTier::Bronze)
        )
        .is_valid()
    );

    // The locked question, a question of another tier, the wrong tier.
    let Verdict::Fallback(f) = verdict(
        &outcome,
        &exam_reply("percentages", "pct-b1", ExamTier::Bronze),
    ) else {
        panic!("a locked question must fall back");
    };
    assert_eq!(
        f.violations,
        vec![Violation::ExamQuestionNotOffered {
            question_id: "pct-b1".into()
        }]
    );
    let Verdict::Fallback(f) = verdict(
        &outcome,
        &exam_reply("percentages", "pct-s1", ExamTier::Silver),
    ) else {
        panic!("a silver question must fall back");
    };
    assert!(f.violations.contains(&Violation::ExamTierMismatch {
        tier: ExamTier::Silver,
        desired: ExamTier::Bronze
    }));

    // Every bronze question locked: no exam block, and when it reopens.
    let soon = now() + Duration::hours(2);
    let all_locked: BTreeMap<String, LockoutStatus> = [
        ("pct-b1".to_owned(), locked(now() + Duration::hours(20))),
        ("pct-b2".to_owned(), locked(soon)),
    ]
    .into();
    let outcome = policy_at(&c, &s, &[], now(), &all_locked);
    assert_eq!(outcome.policy.exam_availability, ExamAvailability::Locked);
    assert_eq!(outcome.policy.exam_next_eligible_at, Some(soon));
    assert!(!outcome.policy.allows(ExamBlock));
    // Once the lock has run out, the question is available again.
    let later = policy_at(&c, &s, &[], soon, &all_locked);
    assert_eq!(later.policy.exam_availability, ExamAvailability::Available);

    // At bronze the desired tier is silver.
    progress(&mut s, "percentages", MasteryTier::Bronze, 3, 2);
    let silver = policy(&c, &s, &[]);
    assert_eq!(silver.policy.desired_exam_tier, ExamTier::Silver);
    assert_eq!(silver.exam.available_question_ids, vec!["pct-s1"]);
}

// ---------------------------------------------------------------------------
// Input B — /drill/grade, Input C — exam events
// ---------------------------------------------------------------------------

fn ctx<'a>(c: &'a Course, w: &'a Workflow) -> TransitionContext<'a> {
    TransitionContext {
        course: c,
        workflow: w,
        now: now(),
    }
}

fn drill(unit: &str, correct: bool, tag: Option<&str>) -> DrillGraded {
    DrillGraded {
        unit_id: unit.into(),
        correct,
        mistake_tag: tag.map(str::to_owned),
        first_attempt: true,
    }
}

#[test]
fn b1_a_correct_drill_updates_counters_and_never_tags() {
    let c = a_course();
    let w = workflow();
    let mut s = snapshot("fractions");
    let effect = apply_drill_graded(
        &mut s,
        &ctx(&c, &w),
        &drill("fractions", true, Some("slip")),
    )
    .unwrap();
    let p = &s.unit_progress["fractions"];
    assert_eq!(
        p.drill,
        DrillCounters {
            attempts: 1,
            correct: 1,
            streak_correct: 1
        }
    );
    assert!(p.confusion_tags.is_empty());
    assert_eq!(effect.rejected_mistake_tag.as_deref(), Some("slip"));
    assert_eq!(p.status, UnitStatus::InProgress);
    assert_eq!(p.last_touched_at, Some(now()));
    assert!(p.mastery_probability.unwrap() > w.mastery.bkt.prior);
    assert_eq!(s.units_in_progress, vec!["fractions"]);
}

/// OATutor's reading of a hint: asked for before any answer, it is a wrong
/// first attempt for BKT; the streak and tier are left alone. A workflow
/// can turn it off.
#[test]
fn b1_a_hint_before_answering_is_a_wrong_first_attempt_for_bkt() {
    let c = a_course();
    let w = workflow();
    let mut s = snapshot("fractions");
    apply_drill_graded(&mut s, &ctx(&c, &w), &drill("fractions", true, None)).unwrap();
    let before = s.unit_progress["fractions"].clone();
    let after = apply_hint_before_answer(&mut s, &ctx(&c, &w), "fractions").unwrap();
    let p = &s.unit_progress["fractions"];
    assert!(after < before.mastery_probability.unwrap(), "{after}");
    assert_eq!(p.drill, before.drill);
    assert_eq!(p.mastery_tier, before.mastery_tier);
    assert_eq!(
        apply_hint_before_answer(&mut s, &ctx(&c, &w), "nowhere"),
        None
    );

    let mut off = workflow();
    off.mastery.hint_before_answer_is_wrong = false;
    let mut s = snapshot("fractions");
    assert_eq!(
        apply_hint_before_answer(&mut s, &ctx(&c, &off), "fractions"),
        None
    );
    assert!(!s.unit_progress.contains_key("fractions"));
}

#[test]
fn b2_wrong_drills_count_tag_from_grading_and_make_the_student_stuck() {
    let c = a_course();
    let w = workflow();
    let mut s = snapshot("fractions");
    apply_drill_graded(&mut s, &ctx(&c, &w), &drill("fractions", true, None)).unwrap();
    let first = apply_drill_graded(
        &mut s,
        &ctx(&c, &w),
        &drill("fractions", false, Some("slip")),
    )
    .unwrap();
    assert_eq!(first.confusion_tag.as_deref(), Some("slip"));
    // A tag outside the unit's fixed list is not recorded.
    let second = apply_drill_graded(
        &mut s,
        &ctx(&c, &w),
        &drill("fractions", false, Some("made_up")),
    )
    .unwrap();
    assert_eq!(second.confusion_tag, None);
    assert_eq!(second.rejected_mistake_tag.as_deref(), Some("made_up"));
    let p = &s.unit_progress["fractions"];
    assert_eq!(
        p.drill,
        DrillCounters {
            attempts: 3,
            correct: 1,
            streak_correct: 0
        }
    );
    assert_eq!(p.confusion_tags, BTreeMap::from([("slip".to_owned(), 1)]));
    assert!(policy(&c, &s, &[]).policy.stuck, "wrong repeatedly → stuck");

    // A repeat attempt at the same drill is not evidence.
    let before = s.unit_progress["fractions"].clone();
    let repeat = DrillGraded {
        first_attempt: false,
        ..drill("fractions", false, Some("slip"))
    };
    let effect = apply_drill_graded(&mut s, &ctx(&c, &w), &repeat).unwrap();
    assert!(!effect.counted);
    let after = &s.unit_progress["fractions"];
    assert_eq!(after.drill, before.drill);
    assert_eq!(after.confusion_tags, before.confusion_tags);
    assert_eq!(after.mastery_probability, before.mastery_probability);
}

#[test]
fn c1_a_passed_exam_question_counts_and_can_raise_the_tier() {
    let c = a_course();
    let w = workflow();
    let mut s = snapshot("percentages");
    progress(&mut s, "fractions", MasteryTier::Gold, 4, 4);
    progress(&mut s, "decimals", MasteryTier::Gold, 4, 4);
    progress(&mut s, "percentages", MasteryTier::None, 2, 2);
    s.revisit_queue.insert(
        "pct-b1".into(),
        RevisitEntry {
            unit_id: "percentages".into(),
            tier: ExamTier::Bronze,
            reason: Some(RevisitReason::Failed),
            added_at: Some(hours_ago(30)),
        },
    );
    let passed = ExamSubmitted {
        question_id: "pct-b1".into(),
        unit_id: "percentages".into(),
        tier: ExamTier::Bronze,
        correct: true,
    };
    let effect = apply_exam_submitted(&mut s, &ctx(&c, &w), &passed).unwrap();
    assert_eq!(effect.tier_before, MasteryTier::None);
    assert_eq!(effect.tier_after, MasteryTier::Bronze);
    let p = &s.unit_progress["percentages"];
    assert_eq!(p.exam.passed_by_tier.get(ExamTier::Bronze), 1);
    assert_eq!(p.mastery_tier, MasteryTier::Bronze);
    assert!(s.exam_touched["pct-b1"]);
    assert!(
        s.revisit_queue.is_empty(),
        "a pass leaves the revisit queue"
    );

    // Next turn: the desired tier moves on to silver.
    assert_eq!(
        policy(&c, &s, &[]).policy.desired_exam_tier,
        ExamTier::Silver
    );
    // Passing silver then gold masters the unit.
    for (q, tier) in [("pct-s1", ExamTier::Silver), ("pct-g1", ExamTier::Gold)] {
        let event = ExamSubmitted {
            question_id: q.into(),
            unit_id: "percentages".into(),
            tier,
            correct: true,
        };
        apply_exam_submitted(&mut s, &ctx(&c, &w), &event).unwrap();
    }
    assert_eq!(s.unit_progress["percentages"].status, UnitStatus::Mastered);
    assert!(!s.units_in_progress.contains(&"percentages".to_owned()));
}

#[test]
fn c2_a_failed_question_or_a_viewed_memo_joins_the_revisit_queue() {
    let c = a_course();
    let w = workflow();
    let mut s = snapshot("percentages");
    let failed = ExamSubmitted {
        question_id: "pct-b1".into(),
        unit_id: "percentages".into(),
        tier: ExamTier::Bronze,
        correct: false,
    };
    let effect = apply_exam_submitted(&mut s, &ctx(&c, &w), &failed).unwrap();
    assert_eq!(effect.tier_after, MasteryTier::None);
    assert_eq!(
        s.revisit_queue["pct-b1"],
        RevisitEntry {
            unit_id: "percentages".into(),
            tier: ExamTier::Bronze,
            reason: Some(RevisitReason::Failed),
            added_at: Some(now()),
        }
    );
    let viewed = SupportViewed {
        question_id: "pct-b2".into(),
        unit_id: "percentages".into(),
        tier: ExamTier::Bronze,
    };
    apply_support_viewed(&mut s, &ctx(&c, &w), &viewed).unwrap();
    assert_eq!(
        s.revisit_queue["pct-b2"].reason,
        Some(RevisitReason::SupportViewed)
    );
    assert!(s.exam_touched["pct-b2"]);

    // The exam system locks both for 24 h: the summary shows it.
    let until = now() + Duration::hours(24);
    let lockouts: BTreeMap<String, LockoutStatus> = ["pct-b1", "pct-b2"]
        .into_iter()
        .map(|q| (q.to_owned(), LockoutStatus::Locked { until }))
        .collect();
    let lite = build_snapshot_lite(&s, &c, &w, &lockouts, now());
    assert_eq!(lite.revisit.locked_count, 2);
    assert_eq!(lite.revisit.next_eligible_at, Some(until));
    assert_eq!(lite.revisit.next_question_id.as_deref(), Some("pct-b1"));
    // Once unlocked, the question queued first is next.
    let later = build_snapshot_lite(&s, &c, &w, &lockouts, until);
    assert_eq!(later.revisit.locked_count, 0);
    assert_eq!(later.revisit.next_question_id.as_deref(), Some("pct-b1"));

    // A question of the bank given with the wrong unit or tier is refused.
    let wrong_tier = ExamSubmitted {
        tier: ExamTier::Gold,
        ..failed
    };
    assert!(apply_exam_submitted(&mut s, &ctx(&c, &w), &wrong_tier).is_err());
}

// ---------------------------------------------------------------------------
// Per-turn focus and units in progress
// ---------------------------------------------------------------------------

#[test]
fn after_the_blocker_is_held_the_tutor_returns_to_the_target() {
    let c = a_course();
    let w = workflow();
    let mut s = snapshot("fractions");
    progress(&mut s, "fractions", MasteryTier::Gold, 4, 4);

    let turn1 = policy(&c, &s, &mapped(&[("percentages", 0.9)]));
    assert_eq!(turn1.policy.focus_unit_id, "decimals");
    apply_turn(&mut s, &ctx(&c, &w), &turn1.policy);
    assert_eq!(s.focus_unit_id, "percentages", "the goal is remembered");
    assert_eq!(s.units_in_progress, vec!["decimals", "percentages"]);
    assert_eq!(s.last_turn_at, Some(now()));
    assert_eq!(s.unit_progress["decimals"].last_touched_at, Some(now()));

    // A message that maps to nothing: still working on decimals.
    let turn2 = policy(&c, &s, &[]);
    assert_eq!(turn2.policy.focus_unit_id, "decimals");
    assert_eq!(turn2.policy.primary_target_unit_id, "percentages");

    // decimals earns bronze: the next turn is on percentages.
    progress(&mut s, "decimals", MasteryTier::Bronze, 2, 2);
    let turn3 = policy(&c, &s, &[]);
    assert_eq!(turn3.policy.focus_unit_id, "percentages");
    assert_eq!(turn3.policy.prereq_blocking_unit_id, None);
}

#[test]
fn a_gold_focus_moves_on_to_the_next_unit() {
    let c = a_course();
    let w = workflow();
    let mut s = snapshot("fractions");
    progress(&mut s, "fractions", MasteryTier::Gold, 4, 4);
    let outcome = policy(&c, &s, &[]);
    assert_eq!(outcome.policy.primary_target_unit_id, "decimals");
    assert_eq!(
        outcome.trace.target_reason,
        TargetReason::AdvancedFromMastered {
            from: "fractions".into()
        }
    );
    apply_turn(&mut s, &ctx(&c, &w), &outcome.policy);
    assert_eq!(s.focus_unit_id, "decimals");

    let stay = workflow_with("policy: {advance_from_mastered: false}");
    let input = PolicyInput {
        snapshot: &snapshot_with_gold_fractions(),
        course: &c,
        workflow: &stay,
        mapped_units: &[],
        now: now(),
        turn_id: "t",
        request: StudentRequest::None,
    };
    let stayed = compute_policy(&input, &NoLockouts).unwrap();
    assert_eq!(stayed.policy.primary_target_unit_id, "fractions");
}

fn snapshot_with_gold_fractions() -> StudentSnapshot {
    let mut s = snapshot("fractions");
    progress(&mut s, "fractions", MasteryTier::Gold, 4, 4);
    s
}

#[test]
fn a_focus_outside_the_course_and_mapped_units_outside_it_are_handled() {
    let c = a_course();
    // The reference examples' cold-start placeholder focus.
    let s = snapshot("ENTRY-00");
    let outcome = policy(&c, &s, &mapped(&[("graphs", 0.99)]));
    assert_eq!(outcome.policy.focus_unit_id, "fractions");
    assert_eq!(
        outcome.trace.target_reason,
        TargetReason::FocusStandIn {
            snapshot_focus: "ENTRY-00".into()
        }
    );
    assert_eq!(outcome.trace.ignored_mapped_units, vec!["graphs"]);
    assert!(
        !outcome
            .policy
            .scoped_unit_ids
            .contains(&"graphs".to_owned())
    );

    // The most recent unit in progress stands in before the entry unit.
    let mut s2 = snapshot("removed-unit");
    s2.units_in_progress = vec!["gone".into(), "decimals".into()];
    let outcome = policy(&c, &s2, &[]);
    assert_eq!(outcome.policy.primary_target_unit_id, "decimals");
}

// ---------------------------------------------------------------------------
// Placement (blocker_evidence: weak_only, the default)
// ---------------------------------------------------------------------------

fn run_with(
    w: &Workflow,
    c: &Course,
    s: &StudentSnapshot,
    mapped_units: &[MappedUnit],
    request: StudentRequest,
) -> PolicyOutcome {
    let input = PolicyInput {
        snapshot: s,
        course: c,
        workflow: w,
        mapped_units,
        now: now(),
        turn_id: "t",
        request,
    };
    compute_policy(&input, &NoLockouts).unwrap()
}

/// Six units below two-step equations, as in the shipped course.
fn equations_course() -> Course {
    course(&[
        ("whole", &[]),
        ("muldiv", &["whole"]),
        ("ops-order", &["muldiv"]),
        ("expressions", &["ops-order"]),
        ("inverse", &["expressions"]),
        ("one-step", &["inverse"]),
        ("two-step", &["one-step"]),
    ])
}

#[test]
fn a_new_student_is_taught_at_the_unit_they_asked_about() {
    let c = a_course();
    let s = snapshot("fractions");
    let outcome = run_with(
        &workflow(),
        &c,
        &s,
        &mapped(&[("percentages", 0.9)]),
        StudentRequest::None,
    );
    assert_eq!(outcome.policy.focus_unit_id, "percentages");
    assert_eq!(outcome.policy.prereq_blocking_unit_id, None);
    assert!(outcome.trace.blocker_chain.is_empty());
}

#[test]
fn a_weak_prerequisite_deep_down_is_reached_through_the_whole_chain() {
    let c = equations_course();
    let mut s = snapshot("two-step");
    // Two wrong drills on whole-number arithmetic: evidence of weakness.
    progress(&mut s, "whole", MasteryTier::None, 2, 0);
    s.unit_progress
        .get_mut("whole")
        .unwrap()
        .mastery_probability = Some(0.05);
    let outcome = run_with(
        &workflow(),
        &c,
        &s,
        &mapped(&[("two-step", 0.9)]),
        StudentRequest::None,
    );
    assert_eq!(
        outcome.trace.blocker_chain,
        vec![
            "one-step",
            "inverse",
            "expressions",
            "ops-order",
            "muldiv",
            "whole"
        ]
    );
    assert_eq!(outcome.policy.focus_unit_id, "whole");
    // Once it is held, nothing below the goal blocks.
    progress(&mut s, "whole", MasteryTier::Bronze, 2, 2);
    let outcome = run_with(
        &workflow(),
        &c,
        &s,
        &mapped(&[("two-step", 0.9)]),
        StudentRequest::None,
    );
    assert_eq!(outcome.policy.focus_unit_id, "two-step");
}

#[test]
fn a_bkt_probability_at_mastered_at_is_held_when_placement_says_so() {
    let c = a_course();
    let mut s = snapshot("fractions");
    // Three answers, the last one wrong (streak 0), but a high probability.
    progress(&mut s, "decimals", MasteryTier::None, 3, 0);
    s.unit_progress
        .get_mut("decimals")
        .unwrap()
        .mastery_probability = Some(0.97);
    let on = run_with(
        &workflow(),
        &c,
        &s,
        &mapped(&[("percentages", 0.9)]),
        StudentRequest::None,
    );
    assert_eq!(
        on.policy.focus_unit_id, "percentages",
        "BKT says decimals is known"
    );
    let off = workflow_with("policy: {placement: {known_by_mastery: false}}");
    let off = run_with(
        &off,
        &c,
        &s,
        &mapped(&[("percentages", 0.9)]),
        StudentRequest::None,
    );
    assert_eq!(
        off.policy.focus_unit_id, "decimals",
        "stuck by the drill rule"
    );
}

#[test]
fn a_prerequisite_check_a_mistake_raised_is_the_blocker_for_one_question() {
    let c = equations_course();
    let mut s = snapshot("two-step");
    s.prereq_check = Some(PrereqCheck {
        unit_id: "inverse".into(),
        from_unit_id: "two-step".into(),
        mistake_tag: "wrong_inverse".into(),
    });
    let outcome = run_with(&workflow(), &c, &s, &[], StudentRequest::None);
    assert!(outcome.trace.prereq_check);
    assert_eq!(
        outcome.policy.prereq_blocking_unit_id.as_deref(),
        Some("inverse")
    );
    // A check on a unit the goal does not need is ignored.
    let mut other = s.clone();
    other.focus_unit_id = "muldiv".into();
    let outcome = run_with(&workflow(), &c, &other, &[], StudentRequest::None);
    assert!(!outcome.trace.prereq_check);
    assert_eq!(outcome.policy.focus_unit_id, "muldiv");
}

#[test]
fn moving_on_goes_to_the_next_unit_unless_the_focus_shows_weakness() {
    let c = equations_course();
    let mut s = snapshot("one-step");
    progress(&mut s, "one-step", MasteryTier::None, 3, 3);
    s.unit_progress
        .get_mut("one-step")
        .unwrap()
        .mastery_probability = Some(0.7);
    let moved = run_with(&workflow(), &c, &s, &[], StudentRequest::MoveOn);
    assert_eq!(moved.policy.primary_target_unit_id, "two-step");
    assert_eq!(
        moved.trace.target_reason,
        TargetReason::MovedOn {
            from: "one-step".into()
        }
    );
    progress(&mut s, "one-step", MasteryTier::None, 3, 0);
    s.unit_progress
        .get_mut("one-step")
        .unwrap()
        .mastery_probability = Some(0.1);
    let stayed = run_with(&workflow(), &c, &s, &[], StudentRequest::MoveOn);
    assert_eq!(stayed.policy.primary_target_unit_id, "one-step");
    assert_eq!(
        stayed.trace.move_on,
        Some(MoveOn::NotYet {
            unit_id: "one-step".into()
        })
    );
}
