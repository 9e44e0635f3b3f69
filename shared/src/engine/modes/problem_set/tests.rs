use chrono::{DateTime, Duration, Utc};
use proptest::prelude::*;

use super::*;
use crate::model::{GradeOutcome, MasterySignal, ProblemProgress, ProgressionAction};

fn settings() -> ProblemSetMode {
    ProblemSetMode::default()
}

fn facts() -> TurnFacts {
    TurnFacts {
        grade: None,
        stuck: false,
        scaffold_step: false,
        scaffold_depth: 0,
        explained: false,
        asks: false,
        skip: false,
        minutes_on_problem: 0,
    }
}

fn graded(g: GradeOutcome) -> TurnFacts {
    TurnFacts {
        grade: Some(g),
        ..facts()
    }
}

use GradeOutcome::{Close, Correct, Wrong};
use MasterySignal::{Learned, Mastered, Struggling, Stuck};
use ProgressionAction::{Advance, Continue, Intervene, Skip};

/// A row: progress before, the message, then the signal, the action and
/// whether skipping is offered.
type Row = (
    &'static str,
    ProblemProgress,
    TurnFacts,
    Option<MasterySignal>,
    ProgressionAction,
    bool,
);

/// The progression table, row by row: progress before, the message, then the
/// signal, the action and whether skipping is offered.
#[test]
fn the_progression_rules() {
    let p = ProblemProgress::default;
    let wrong_twice = ProblemProgress {
        attempts: 2,
        wrong_attempts: 2,
        ..p()
    };
    let scaffolded = ProblemProgress {
        scaffold_depth: 3,
        hints_used: 3,
        ..p()
    };
    let solved = ProblemProgress {
        attempts: 2,
        wrong_attempts: 1,
        solved: true,
        signal: Some(Learned),
        ..p()
    };
    let stuck_alerted = ProblemProgress {
        scaffold_depth: 4,
        intervened: true,
        skip_offered: true,
        signal: Some(Stuck),
        ..p()
    };
    let rows: Vec<Row> = vec![
        (
            "right first time",
            p(),
            graded(Correct),
            Some(Mastered),
            Advance,
            false,
        ),
        (
            "right after wrong tries waits for the teach-back",
            wrong_twice.clone(),
            graded(Correct),
            Some(Learned),
            Continue,
            false,
        ),
        (
            "right after scaffolding waits for the teach-back",
            scaffolded.clone(),
            graded(Correct),
            Some(Learned),
            Continue,
            false,
        ),
        (
            "one wrong answer",
            p(),
            graded(Wrong),
            None,
            Continue,
            false,
        ),
        (
            "a close answer counts as a wrong try",
            wrong_twice.clone(),
            graded(Close),
            Some(Struggling),
            Continue,
            false,
        ),
        (
            "the third wrong answer is struggling",
            wrong_twice.clone(),
            graded(Wrong),
            Some(Struggling),
            Continue,
            false,
        ),
        (
            "the teach-back is given",
            solved.clone(),
            TurnFacts {
                explained: true,
                ..facts()
            },
            Some(Learned),
            Advance,
            false,
        ),
        (
            "anything but a question after solving moves on",
            solved.clone(),
            facts(),
            Some(Learned),
            Advance,
            false,
        ),
        (
            "a question after solving is answered first",
            solved.clone(),
            TurnFacts {
                asks: true,
                ..facts()
            },
            Some(Learned),
            Continue,
            false,
        ),
        (
            "stuck at depth 3 is not yet stuck",
            p(),
            TurnFacts {
                stuck: true,
                scaffold_depth: 3,
                ..facts()
            },
            None,
            Continue,
            false,
        ),
        (
            "deeper than 3 intervenes",
            scaffolded.clone(),
            TurnFacts {
                stuck: true,
                scaffold_depth: 4,
                ..facts()
            },
            Some(Stuck),
            Intervene,
            false,
        ),
        (
            "the teacher is alerted once",
            stuck_alerted.clone(),
            TurnFacts {
                stuck: true,
                scaffold_depth: 5,
                ..facts()
            },
            Some(Stuck),
            Continue,
            false,
        ),
        (
            "asking to skip skips",
            p(),
            TurnFacts {
                skip: true,
                ..facts()
            },
            None,
            Skip,
            false,
        ),
        (
            "a stuck problem can be skipped",
            stuck_alerted,
            TurnFacts {
                skip: true,
                ..facts()
            },
            Some(Stuck),
            Skip,
            false,
        ),
        (
            "ten minutes on a problem offers a skip",
            p(),
            TurnFacts {
                minutes_on_problem: 10,
                ..graded(Wrong)
            },
            None,
            Continue,
            true,
        ),
        (
            "nine minutes does not",
            p(),
            TurnFacts {
                minutes_on_problem: 9,
                ..graded(Wrong)
            },
            None,
            Continue,
            false,
        ),
        (
            "the skip is offered once",
            ProblemProgress {
                skip_offered: true,
                ..p()
            },
            TurnFacts {
                minutes_on_problem: 30,
                ..facts()
            },
            None,
            Continue,
            false,
        ),
    ];
    for (name, progress, facts, signal, action, offer) in rows {
        let d = decide(&progress, &facts, &settings());
        assert_eq!(
            (d.signal, d.action, d.offer_skip),
            (signal, action, offer),
            "{name}"
        );
    }
}

#[test]
fn without_waiting_for_the_teach_back_a_learned_problem_moves_on_at_once() {
    let s = ProblemSetMode {
        wait_for_teach_back: false,
        ..settings()
    };
    let helped = ProblemProgress {
        hints_used: 1,
        ..ProblemProgress::default()
    };
    let d = decide(&helped, &graded(Correct), &s);
    assert_eq!((d.signal, d.action), (Some(Learned), Advance));
}

fn at(minutes: i64) -> DateTime<Utc> {
    DateTime::<Utc>::UNIX_EPOCH + Duration::minutes(minutes)
}

fn set_of(n: usize) -> ProblemSetState {
    ProblemSetState {
        problems: (1..=n)
            .map(|i| {
                entry(
                    &format!("p{i}"),
                    &format!("What is {i} + {i}?"),
                    &(2 * i).to_string(),
                    None,
                    &[],
                )
            })
            .collect(),
        ..ProblemSetState::default()
    }
}

#[test]
fn a_new_problem_is_pending_with_fresh_attempts_and_an_ended_set_has_none() {
    let mut state = set_of(2);
    let mut session = SessionState::default();
    session.scaffolding.active = true;
    session.scaffolding.depth = 3;
    let first = begin_problem(&mut state, &mut session, 1, at(0)).unwrap();
    assert_eq!(first.problem_id, "p2");
    let q = session.pending_question.as_ref().unwrap();
    assert_eq!((q.text.as_str(), q.wrong_attempts), ("What is 2 + 2?", 0));
    assert_eq!(q.expected.as_ref().unwrap().value, "4");
    assert!(!session.scaffolding.active);
    assert_eq!(current(&state), Some(1));
    assert!(begin_problem(&mut state, &mut session, 2, at(0)).is_none());
    assert_eq!(current(&state), None);
}

#[test]
fn the_report_counts_signals_accuracy_time_and_names_what_to_practise() {
    let mut state = set_of(4);
    let outcome = [
        (ProblemStatus::Completed, Some(Mastered), 1, 0, true, 2),
        (ProblemStatus::Completed, Some(Learned), 3, 2, true, 6),
        (ProblemStatus::Skipped, Some(Stuck), 1, 5, false, 10),
        (ProblemStatus::InProgress, None, 0, 0, false, 0),
    ];
    for (p, (status, signal, attempts, hints, solved, minutes)) in
        state.problems.iter_mut().zip(outcome)
    {
        p.status = status;
        p.progress.signal = signal;
        p.progress.attempts = attempts;
        p.progress.hints_used = hints;
        p.progress.solved = solved;
        p.progress.started_at = Some(at(0));
        p.progress.finished_at = (status != ProblemStatus::InProgress).then(|| at(minutes));
    }
    state.problems[2].unit_id = Some("integer-operations".into());
    let report = end_session(&mut state, SessionEnd::Abandoned, at(1), |u| {
        (u == "integer-operations").then(|| "Operations with integers".to_owned())
    });
    assert_eq!(state.ended, Some(SessionEnd::Abandoned));
    assert_eq!(
        (
            report.problems_total,
            report.problems_completed,
            report.mastered,
            report.learned,
            report.stuck,
            report.skipped
        ),
        (4, 3, 1, 1, 1, 1)
    );
    // 2 right answers out of 5 graded; 1 of 4 attempted problems mastered.
    assert_eq!((report.accuracy, report.mastery_rate), (0.4, 0.25));
    assert_eq!(report.time_on_task_seconds, (2 + 6 + 10 + 1) * 60);
    assert_eq!(report.hints_used, 7);
    assert_eq!(
        report.suggested_focus,
        vec![
            "Operations with integers".to_owned(),
            "problems like \"What is 4 + 4?\"".to_owned()
        ]
    );
    assert_eq!(state.report.as_ref(), Some(&report));
}

#[test]
fn an_integration_problem_joins_its_session_once_and_waits_when_all_are_done() {
    let mut session = SessionState::default();
    let p = |id: &str| WebhookProblem {
        id: id.into(),
        text: format!("problem {id}"),
        correct_answer: "1".into(),
    };
    let mut state = from_webhook(&p("a"), &mut session, at(0));
    assert!(state.open);
    extend(&mut state, &mut session, &p("a"), at(1));
    assert_eq!(state.problems.len(), 1, "the same problem carries on");
    extend(&mut state, &mut session, &p("b"), at(1));
    assert_eq!(
        (state.problems.len(), current(&state)),
        (2, Some(0)),
        "queued behind the current one"
    );
    state.current_index = 2;
    extend(&mut state, &mut session, &p("c"), at(2));
    assert_eq!(
        current(&state),
        Some(2),
        "a problem sent while waiting is current at once"
    );
    assert_eq!(session.pending_question.unwrap().text, "problem c");
}

/// A thread working through `set_of(3)`, its first problem solved.
fn thread_on(state: ProblemSetState) -> Thread {
    Thread {
        thread_id: "t-set".into(),
        student_id: "s".into(),
        course_id: "prealgebra".into(),
        mode: Mode::ProblemSet,
        status: ThreadStatus::Completed,
        goal: None,
        unit_id: None,
        created_at: at(0),
        updated_at: at(4),
        title: None,
        preview: None,
        paused_at: None,
        ended_at: Some(at(5)),
        session: SessionState {
            mode_state: ModeState::ProblemSet(state),
            ..SessionState::default()
        },
    }
}

#[test]
fn a_set_the_student_ends_reports_once_as_a_finished_one_does() {
    let bundle = crate::engine::runtime::shipped_bundle();
    let course = bundle.course("prealgebra").unwrap();
    let workflow = bundle.workflow_for(course).unwrap();
    let mut state = set_of(3);
    let mut session = SessionState::default();
    begin_problem(&mut state, &mut session, 0, at(0)).unwrap();
    state.problems[0].status = ProblemStatus::Completed;
    state.problems[0].progress.solved = true;
    state.problems[0].progress.attempts = 1;
    state.problems[0].progress.signal = Some(Mastered);
    begin_problem(&mut state, &mut session, 1, at(2)).unwrap();
    let mut thread = thread_on(state);
    thread.session.pending_question = session.pending_question;
    let mut snapshot = crate::model::StudentSnapshot::new("s", "prealgebra", &course.entry_unit);
    let mut end = |thread: &mut Thread, now| {
        ProblemSet.end(&mut Ending {
            course,
            workflow,
            now,
            thread,
            snapshot: &mut snapshot,
        })
    };
    let ended = end(&mut thread, at(5));
    assert_eq!(
        ended.text.as_deref(),
        Some("This problem set is over. You finished 1 of 3 problems.")
    );
    let state = state_of(&thread.session).unwrap();
    assert_eq!(state.ended, Some(SessionEnd::Abandoned));
    let report = state.report.clone().unwrap();
    assert_eq!((report.problems_completed, report.mastered), (1, 1));
    // The notification a finished set sends, with the report as it stands.
    assert_eq!(ended.events, vec![session_completed(&report)]);
    assert_eq!(ended.events[0].kind, OutboundEventKind::SessionCompleted);
    assert_eq!(ended.events[0].data["report"]["problemsTotal"], 3);
    assert!(thread.session.pending_question.is_none());

    let kept = thread.clone();
    assert_eq!(end(&mut thread, at(9)), Ended::default(), "once");
    assert_eq!(thread, kept);
}

#[test]
fn a_session_expires_after_its_time_to_live() {
    let s = settings();
    assert!(!ProblemSet::expired(&s, at(0), at(30)));
    assert!(ProblemSet::expired(&s, at(0), at(31)));
}

fn arb_progress() -> impl Strategy<Value = ProblemProgress> {
    (
        0u32..6,
        0u32..6,
        0u32..7,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(attempts, wrong, depth, solved, intervened, offered)| ProblemProgress {
                attempts: attempts.max(wrong),
                wrong_attempts: wrong,
                scaffold_depth: depth,
                hints_used: depth,
                solved,
                signal: solved.then_some(if wrong == 0 && depth == 0 {
                    Mastered
                } else {
                    Learned
                }),
                intervened,
                skip_offered: offered,
                ..ProblemProgress::default()
            },
        )
}

fn arb_facts() -> impl Strategy<Value = TurnFacts> {
    (
        prop::option::of(prop_oneof![Just(Correct), Just(Wrong), Just(Close)]),
        any::<bool>(),
        0u32..8,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        0i64..40,
    )
        .prop_map(
            |(grade, stuck, depth, explained, asks, skip, minutes)| TurnFacts {
                grade,
                stuck,
                scaffold_step: false,
                scaffold_depth: depth,
                explained,
                asks,
                skip,
                minutes_on_problem: minutes,
            },
        )
}

proptest! {
    /// A problem moves on only once it is answered right (now or before),
    /// or when the student asks to skip it.
    #[test]
    fn only_a_right_answer_or_a_skip_moves_on(p in arb_progress(), f in arb_facts()) {
        let d = decide(&p, &f, &settings());
        match d.action {
            Advance => prop_assert!(p.solved || f.grade == Some(Correct)),
            Skip => prop_assert!(f.skip && !p.solved),
            Intervene | Continue => {}
        }
    }

    /// Mastered means right on the first try with no help of any kind.
    #[test]
    fn mastered_only_without_help(p in arb_progress(), f in arb_facts()) {
        let d = decide(&p, &f, &settings());
        if d.signal == Some(Mastered) && !p.solved {
            prop_assert!(p.attempts == 0 && p.wrong_attempts == 0 && p.scaffold_depth == 0 && p.hints_used == 0);
            prop_assert_eq!(d.action, Advance);
        }
    }

    /// The teacher is alerted at most once per problem, and only past the
    /// workflow's depth.
    #[test]
    fn the_teacher_is_alerted_once_and_only_when_stuck(p in arb_progress(), f in arb_facts()) {
        let d = decide(&p, &f, &settings());
        if d.action == Intervene {
            prop_assert!(!p.intervened);
            prop_assert!(p.scaffold_depth.max(f.scaffold_depth) > settings().intervene_scaffold_depth);
            prop_assert_eq!(d.signal, Some(Stuck));
        }
    }

    /// Skipping is offered at most once, and never while moving on.
    #[test]
    fn a_skip_is_offered_once_and_only_while_staying(p in arb_progress(), f in arb_facts()) {
        let d = decide(&p, &f, &settings());
        if d.offer_skip {
            prop_assert!(!p.skip_offered);
            prop_assert_eq!(d.action, Continue);
        }
    }
}

#[test]
fn time_paused_is_not_time_on_the_problem_under_way() {
    let mut state = set_of(2);
    state.problems[0].progress.started_at = Some(at(0));
    state.problems[0].progress.finished_at = Some(at(3));
    state.problems[1].progress.started_at = Some(at(3));
    let mut thread = thread_on(state);
    ProblemSet.resumed(&mut thread, Duration::minutes(45));
    let state = state_of(&thread.session).unwrap();
    // The finished problem keeps its times; the one under way counts as
    // started 45 minutes later, so the skip offer and the report see only
    // the time worked on it.
    assert_eq!(state.problems[0].progress.started_at, Some(at(0)));
    assert_eq!(state.problems[0].progress.finished_at, Some(at(3)));
    assert_eq!(state.problems[1].progress.started_at, Some(at(48)));
}
