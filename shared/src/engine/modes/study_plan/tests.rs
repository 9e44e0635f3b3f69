use super::*;
use proptest::prelude::*;

fn settings() -> TeachMeMode {
    TeachMeMode::default()
}

fn unit() -> Unit {
    serde_yaml::from_str(
        "id: ratios\ntitle: Ratios\nanchor: Sharing an amount in a ratio\n\
             tags: [ratio]\nkey_ideas: [A ratio compares amounts, Simplify a ratio by dividing]\n\
             chunks: []\n",
    )
    .unwrap()
}

fn plan_of(kinds: &[StepKind]) -> StudyPlan {
    let drafts: Vec<StepDraft> = kinds
        .iter()
        .map(|&kind| StepDraft {
            title: format!("{kind:?}"),
            kind,
            concept: "ratio".into(),
            success_criteria: None,
        })
        .collect();
    from_drafts(&drafts, &unit(), &settings())
}

/// The first step begun, and every explain step's idea taught.
fn started(kinds: &[StepKind]) -> StudyPlan {
    let mut plan = evaluate(&plan_of(kinds), StepEvidence::Nothing, None, &settings(), 1).plan;
    for s in &mut plan.steps {
        s.progress.taught = true;
    }
    plan
}

use StepKind::{Check, Explain, Practice};

#[test]
fn the_first_message_starts_the_first_step_without_judging_it() {
    let plan = plan_of(&[Explain, Check, Practice]);
    assert_eq!(current(&plan), Some(0));
    let e = evaluate(&plan, StepEvidence::Engaged, None, &settings(), 1);
    assert_eq!(e.plan.steps[0].status, StepStatus::InProgress);
    assert_eq!(e.decision, PlanDecision::Continue);
}

#[test]
fn an_explain_step_completes_when_the_student_takes_part_and_the_next_starts() {
    let e = evaluate(
        &started(&[Explain, Check, Practice]),
        StepEvidence::Engaged,
        None,
        &settings(),
        2,
    );
    assert_eq!(e.decision, PlanDecision::Advance);
    assert_eq!(e.plan.steps[0].status, StepStatus::Completed);
    assert_eq!(e.plan.steps[1].status, StepStatus::InProgress);
    assert_eq!(current(&e.plan), Some(1));
}

#[test]
fn a_stuck_student_stays_on_an_explain_step() {
    let e = evaluate(
        &started(&[Explain, Check, Practice]),
        StepEvidence::Stuck,
        None,
        &settings(),
        2,
    );
    assert_eq!(e.decision, PlanDecision::Continue);
    assert_eq!(e.plan.steps[0].status, StepStatus::InProgress);
}

#[test]
fn a_check_step_needs_the_configured_number_of_right_answers() {
    let mut plan = started(&[Check, Explain, Practice]);
    for _ in 1..settings().step_correct_to_complete {
        plan = evaluate(&plan, StepEvidence::Correct, None, &settings(), 2).plan;
        assert_eq!(plan.steps[0].status, StepStatus::InProgress);
    }
    plan = evaluate(&plan, StepEvidence::Engaged, None, &settings(), 3).plan;
    assert_eq!(
        plan.steps[0].status,
        StepStatus::InProgress,
        "talk is not an answer"
    );
    let e = evaluate(&plan, StepEvidence::Correct, None, &settings(), 4);
    assert_eq!(e.decision, PlanDecision::Advance);
    assert_eq!(e.plan.steps[0].progress.questions_correct, 2);
}

#[test]
fn repeated_failures_block_the_step_and_replan_with_a_smaller_step() {
    let mut plan = started(&[Explain, Check, Practice]);
    plan = evaluate(&plan, StepEvidence::Engaged, None, &settings(), 2).plan;
    for _ in 1..settings().step_failures_to_block {
        plan = evaluate(&plan, StepEvidence::Wrong, None, &settings(), 3).plan;
    }
    let e = evaluate(&plan, StepEvidence::Wrong, None, &settings(), 5);
    assert!(matches!(e.decision, PlanDecision::Replan(_)));
    assert_eq!(e.plan.replan_count, 1);
    assert_eq!(e.plan.replans[0].turn, 5);
    let kinds: Vec<StepKind> = e.plan.steps.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [Explain, Explain, Check, Practice]);
    assert_eq!(e.plan.steps[0].status, StepStatus::Completed, "kept");
    assert_eq!(
        e.plan.steps[1].status,
        StepStatus::InProgress,
        "the smaller step"
    );
    assert_eq!(e.plan.steps[2].status, StepStatus::Pending, "tried again");
    assert_eq!(e.plan.steps[2].progress, StepProgress::default());
}

#[test]
fn an_explain_step_waits_to_be_taught_and_never_blocks() {
    let mut plan = evaluate(
        &plan_of(&[Explain, Check, Practice]),
        StepEvidence::Nothing,
        None,
        &settings(),
        1,
    )
    .plan;
    plan = evaluate(&plan, StepEvidence::Engaged, None, &settings(), 2).plan;
    assert_eq!(
        plan.steps[0].status,
        StepStatus::InProgress,
        "not taught yet"
    );
    plan.steps[0].progress.taught = true;
    for turn in 3..10 {
        plan = evaluate(&plan, StepEvidence::Wrong, None, &settings(), turn).plan;
    }
    assert_eq!(plan.steps[0].status, StepStatus::InProgress);
    assert_eq!(plan.replan_count, 0);
    plan = evaluate(&plan, StepEvidence::Engaged, None, &settings(), 10).plan;
    assert_eq!(plan.steps[0].status, StepStatus::Completed);
}

#[test]
fn a_step_blocked_again_is_retried_without_a_second_smaller_step() {
    let mut plan = started(&[Check, Practice, Practice]);
    let block = |mut plan: StudyPlan| {
        for _ in 0..settings().step_failures_to_block {
            plan = evaluate(&plan, StepEvidence::Wrong, None, &settings(), 2).plan;
        }
        plan
    };
    plan = block(plan);
    assert_eq!(plan.steps.len(), 4);
    plan.steps[0].progress.taught = true;
    plan = evaluate(&plan, StepEvidence::Engaged, None, &settings(), 3).plan;
    assert_eq!(plan.steps[1].status, StepStatus::InProgress);
    plan = block(plan);
    assert_eq!(plan.replan_count, 2);
    assert_eq!(plan.steps.len(), 4, "no second smaller step");
    assert_eq!(plan.steps[1].status, StepStatus::InProgress, "tried again");
}

#[test]
fn a_full_plan_makes_room_but_keeps_its_last_step() {
    let mut plan = started(&[Check, Check, Check, Explain, Practice]);
    for _ in 0..settings().step_failures_to_block {
        plan = evaluate(&plan, StepEvidence::Wrong, None, &settings(), 2).plan;
    }
    let kinds: Vec<StepKind> = plan.steps.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [Explain, Check, Check, Check, Practice]);

    let mut plan = started(&[Explain, Explain, Explain, Check, Practice]);
    for turn in 2..5 {
        plan = evaluate(&plan, StepEvidence::Engaged, None, &settings(), turn).plan;
    }
    for _ in 0..settings().step_failures_to_block {
        plan = evaluate(&plan, StepEvidence::Wrong, None, &settings(), 6).plan;
    }
    let kinds: Vec<StepKind> = plan.steps.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [Explain, Explain, Explain, Check, Practice],
        "no room: retried"
    );
    assert_eq!(plan.replan_count, 1);
}

#[test]
fn once_the_replans_are_used_a_blocked_step_stays_blocked_and_the_lesson_moves_on() {
    let mut plan = started(&[Check, Check, Practice]);
    plan.replan_count = plan.max_replans;
    for _ in 0..settings().step_failures_to_block {
        plan = evaluate(&plan, StepEvidence::Wrong, None, &settings(), 2).plan;
    }
    assert_eq!(plan.steps[0].status, StepStatus::Blocked);
    assert_eq!(plan.steps[1].status, StepStatus::InProgress);
    assert_eq!(plan.replan_count, plan.max_replans);
}

#[test]
fn accelerate_skips_a_later_check_or_practice_and_the_last_only_when_next() {
    let mut plan = started(&[Check, Explain, Practice, Practice]);
    plan.steps[0].progress.questions_correct = 1;
    plan.steps[0].progress.attempts = 1;
    let e = evaluate(
        &plan,
        StepEvidence::Correct,
        Some(PacingDirective::Accelerate),
        &settings(),
        3,
    );
    assert!(matches!(e.decision, PlanDecision::Replan(ref r) if r.contains("skipped")));
    assert_eq!(
        e.plan.steps[1].status,
        StepStatus::InProgress,
        "taught this turn"
    );
    assert_eq!(e.plan.steps[2].status, StepStatus::Completed, "skipped");
    assert_eq!(e.plan.steps[2].progress.attempts, 0);
    assert_eq!(e.plan.steps[3].status, StepStatus::Pending);

    let mut short = started(&[Check, Explain, Practice]);
    short.steps[0].progress.questions_correct = 1;
    let e = evaluate(
        &short,
        StepEvidence::Correct,
        Some(PacingDirective::Accelerate),
        &settings(),
        3,
    );
    assert_eq!(
        e.decision,
        PlanDecision::Advance,
        "only the last practice is left"
    );

    let mut ending = started(&[Explain, Check, Practice]);
    ending.steps[0].status = StepStatus::Completed;
    ending.steps[1].status = StepStatus::InProgress;
    ending.steps[1].progress.questions_correct = 1;
    ending.steps[1].progress.attempts = 1;
    let e = evaluate(
        &ending,
        StepEvidence::Correct,
        Some(PacingDirective::Accelerate),
        &settings(),
        6,
    );
    assert!(matches!(e.decision, PlanDecision::Replan(ref r) if r.contains("skipped")));
    assert_eq!(e.plan.steps[2].status, StepStatus::Completed, "skipped");
    assert!(e.completed_now, "the lesson goes on to its extension");
    let steady = evaluate(&ending, StepEvidence::Correct, None, &settings(), 6);
    assert_eq!(
        steady.decision,
        PlanDecision::Advance,
        "no skip without ACCELERATE"
    );
}

#[test]
fn a_step_asks_from_the_blueprints_about_its_topic() {
    let skills = [
        "Arithmetic > Addition: add two 2-digit numbers, carrying where needed".to_owned(),
        "Arithmetic > Subtraction: subtract whole numbers, borrowing where needed".to_owned(),
    ];
    assert_eq!(closest_skills("Adding with carrying", &skills), [0]);
    assert_eq!(
        closest_skills("column subtraction with borrowing", &skills),
        [1]
    );
    assert_eq!(
        closest_skills("place value", &skills),
        [0, 1],
        "no match: any"
    );
    assert_eq!(closest_skills("needed", &skills), [0, 1], "a tie: either");
}

#[test]
fn completing_the_last_step_completes_the_plan_once() {
    let mut plan = started(&[Explain, Explain, Explain]);
    for turn in 2..=3 {
        plan = evaluate(&plan, StepEvidence::Engaged, None, &settings(), turn).plan;
    }
    let e = evaluate(&plan, StepEvidence::Engaged, None, &settings(), 4);
    assert!(e.completed_now);
    assert!(is_complete(&e.plan));
    let after = evaluate(&e.plan, StepEvidence::Engaged, None, &settings(), 5);
    assert!(!after.completed_now);
    assert_eq!(after.decision, PlanDecision::Continue);
}

#[test]
fn drafts_are_checked_for_size_and_for_concepts_of_the_unit() {
    let ok = |concept: &str| StepDraft {
        title: "t".into(),
        kind: Explain,
        concept: concept.into(),
        success_criteria: None,
    };
    let unit = unit();
    assert!(check_drafts(&[ok("ratios"), ok("simplify"), ok("amounts")], &unit).is_ok());
    assert!(check_drafts(&[ok("ratios"), ok("ratios")], &unit).is_err());
    assert!(check_drafts(&vec![ok("ratios"); 6], &unit).is_err());
    let err = check_drafts(&[ok("ratios"), ok("photosynthesis"), ok("ratio")], &unit).unwrap_err();
    assert_eq!((err.step, err.field), (Some(1), "concept"));
    assert!(err.to_string().contains("photosynthesis"), "{err}");
}

#[test]
fn the_default_plan_walks_the_key_ideas_and_keeps_the_bounds() {
    let mut s = settings();
    let drafts = default_drafts(&unit(), &s);
    let kinds: Vec<StepKind> = drafts.iter().map(|d| d.kind).collect();
    assert_eq!(kinds, s.default_plan);
    assert_eq!(drafts[0].concept, "A ratio compares amounts");
    assert_eq!(drafts[2].concept, "Simplify a ratio by dividing");
    assert!(check_drafts(&drafts, &unit()).is_ok());
    s.default_plan = vec![Explain];
    assert_eq!(default_drafts(&unit(), &s).len(), MIN_STEPS);
    s.default_plan = vec![Check; 9];
    assert_eq!(default_drafts(&unit(), &s).len(), MAX_STEPS);
}

fn kind() -> impl Strategy<Value = StepKind> {
    prop_oneof![Just(Explain), Just(Check), Just(Practice)]
}

fn evidence() -> impl Strategy<Value = StepEvidence> {
    prop_oneof![
        Just(StepEvidence::Correct),
        Just(StepEvidence::Wrong),
        Just(StepEvidence::Stuck),
        Just(StepEvidence::Engaged),
        Just(StepEvidence::Nothing),
    ]
}

fn pacing() -> impl Strategy<Value = Option<PacingDirective>> {
    prop_oneof![
        Just(None),
        Just(Some(PacingDirective::Accelerate)),
        Just(Some(PacingDirective::Simplify)),
    ]
}

proptest! {
    #[test]
    fn plans_keep_their_bounds_and_their_current_step(
        kinds in proptest::collection::vec(kind(), MIN_STEPS..=MAX_STEPS),
        messages in proptest::collection::vec((evidence(), pacing(), any::<bool>()), 0..60),
    ) {
        let mut plan = plan_of(&kinds);
        for (turn, (e, p, teach)) in messages.into_iter().enumerate() {
            let before = plan.clone();
            let out = evaluate(&plan, e, p, &settings(), turn as u32);
            plan = out.plan;
            // The reply may teach the step it works on.
            if teach && let Some(i) = current(&plan) {
                plan.steps[i].progress.taught = true;
            }
            prop_assert!((MIN_STEPS..=MAX_STEPS).contains(&plan.steps.len()));
            prop_assert!(plan.replan_count <= plan.max_replans);
            prop_assert_eq!(plan.replans.len() as u32, plan.replan_count);
            // Completed steps stay completed, in order.
            let done = |p: &StudyPlan| p.steps.iter()
                .filter(|s| s.status == StepStatus::Completed)
                .map(|s| s.step_id.clone()).collect::<Vec<_>>();
            let kept: Vec<String> = done(&plan);
            for id in done(&before) {
                prop_assert!(kept.contains(&id));
            }
            // At most one step in progress, and it is the current one:
            // the first that is neither completed nor blocked.
            let open: Vec<usize> = plan.steps.iter().enumerate()
                .filter(|(_, s)| matches!(s.status, StepStatus::Pending | StepStatus::InProgress))
                .map(|(i, _)| i).collect();
            prop_assert_eq!(current(&plan), open.first().copied());
            let in_progress = plan.steps.iter()
                .filter(|s| s.status == StepStatus::InProgress).count();
            prop_assert_eq!(in_progress, usize::from(!open.is_empty()));
            prop_assert_eq!(out.completed_now, !is_complete(&before) && is_complete(&plan));
        }
    }
}
