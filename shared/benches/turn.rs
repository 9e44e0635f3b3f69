//! The turn's own cost, without the store, the network or a model: plan
//! (safety, grading, mapping, classification, policy, retrieval, a practice
//! item), the offline tutor's reply, validation, and apply — on the shipped
//! course, mid-conversation (target: p99 under 2 ms). The cases: a
//! guided thread asked a fraction question; a teach_me lesson on its
//! check step (the study plan evaluated, previewed and updated, an item
//! generated for the step); an exam mid-way, its question on screen
//! answered (graded by code, the next question shown); and the same exam
//! with a written question on screen, marked by the offline judge (the
//! evaluation call's fallback; the call itself is network time).
//!
//! `cargo bench -p tutorflow --bench turn` prints criterion's estimates;
//! `cargo bench -p tutorflow --bench turn -- --percentiles` also times
//! 20,000 turns one by one and prints p50/p99 (`--percentiles guided`:
//! only the cases whose names contain `guided`).

use std::collections::{BTreeMap, BTreeSet};
use std::hint::black_box;
use std::sync::{Arc, LazyLock};
use std::time::Instant;

use chrono::{Duration, TimeZone, Utc};
use criterion::{Criterion, criterion_group};
use tutorflow::content::{Bundle, ContentSource, FsSource};
use tutorflow::engine::exam::lockout::LockoutStatus;
use tutorflow::engine::modes::{self, Start};
use tutorflow::engine::practice::drill_token::TokenKeys;
use tutorflow::engine::reply::fallback::{ValidationContext, validate_reply};
use tutorflow::engine::runtime::CourseRuntime;
use tutorflow::engine::turn::{self, ReplyOrigin};
use tutorflow::engine::turn_data::{TurnEnv, TurnEvent, TurnState};
use tutorflow::llm::OfflineTutor;
use tutorflow::model::{
    AnswerKind, ClientEvent, CreateThreadRequest, ExamQuestionStatus, Mode, ModeState,
    Personalization, QuestionResult, Role, SessionState, StepStatus, StudentSnapshot, Thread,
    ThreadStatus, TutorMessage,
};

struct Fixture {
    rt: CourseRuntime,
    thread: Thread,
    history: Vec<TutorMessage>,
    snapshot: StudentSnapshot,
    message: &'static str,
}

/// A teach_me lesson on fractions, its two explain steps done and its
/// first check step under way.
fn lesson() -> Fixture {
    let mut f = fixture();
    let bundle = f.rt.bundle.clone();
    let course = bundle.course("prealgebra").unwrap();
    let request: CreateThreadRequest = serde_json::from_value(serde_json::json!({
        "courseId": "prealgebra",
        "mode": "teach_me",
        "unitId": "fractions",
    }))
    .unwrap();
    let started = modes::for_mode(Mode::TeachMe)
        .start(&Start {
            bundle: &bundle,
            course,
            workflow: bundle.workflow_for(course).unwrap(),
            unit: course.unit("fractions"),
            goal: None,
            prepared: None,
            earlier: &[],
            request: &request,
            now: f.thread.created_at,
            seed: 1,
            locked_questions: &BTreeSet::new(),
            snapshot: None,
            problems: None,
            problem_set_id: None,
            personalization: &Personalization::default(),
        })
        .unwrap();
    let mut session = started.session;
    if let ModeState::TeachMe(plan) = &mut session.mode_state {
        for (i, step) in plan.steps.iter_mut().enumerate() {
            step.progress.taught = true;
            step.status = match i {
                0 | 1 => StepStatus::Completed,
                2 => StepStatus::InProgress,
                _ => StepStatus::Pending,
            };
        }
    }
    session.turn_count = 8;
    f.thread.mode = Mode::TeachMe;
    f.thread.unit_id = Some("fractions".into());
    f.thread.session = session;
    f.message = "so to simplify 6/10 I divide top and bottom by 2?";
    f
}

/// A 7-question exam on whole numbers, two questions answered, the third
/// on screen and answered now; with `written`, the third is the written
/// bank question `EX-WHN-W1`.
fn exam(written: bool) -> Fixture {
    let mut f = fixture();
    let bundle = f.rt.bundle.clone();
    let course = bundle.course("prealgebra").unwrap();
    let request: CreateThreadRequest = serde_json::from_value(serde_json::json!({
        "courseId": "prealgebra",
        "mode": "exam",
        "unitId": "whole-numbers",
        "questionCount": 7,
    }))
    .unwrap();
    let started = modes::for_mode(Mode::Exam)
        .start(&Start {
            bundle: &bundle,
            course,
            workflow: bundle.workflow_for(course).unwrap(),
            unit: course.unit("whole-numbers"),
            goal: None,
            prepared: None,
            earlier: &[],
            request: &request,
            now: f.thread.created_at,
            seed: 5,
            locked_questions: &BTreeSet::new(),
            snapshot: None,
            problems: None,
            problem_set_id: None,
            personalization: &Personalization::default(),
        })
        .unwrap();
    let mut session = started.session;
    let ModeState::Exam(exam) = &mut session.mode_state else {
        panic!("an exam");
    };
    for q in &mut exam.questions[..2] {
        q.status = ExamQuestionStatus::Answered;
        q.shown_at = Some(f.thread.created_at);
        q.result = Some(QuestionResult::Correct);
        q.credit = 1.0;
    }
    exam.current_index = 2;
    let q = &mut exam.questions[2];
    q.shown_at = Some(f.thread.created_at);
    f.message = if written {
        let (_, item) = course.exam_item("EX-WHN-W1").unwrap();
        q.prompt = item.stem.clone();
        q.question_latex.clear();
        q.options.clear();
        q.expected.kind = AnswerKind::Text;
        q.expected.value = item.answer.clone();
        q.correct_answer = item.answer.clone();
        q.rubric = item.rubric.clone();
        "I add 34 and 38 back together and check that I get 72"
    } else {
        "42"
    };
    session.turn_count = 3;
    f.thread.mode = Mode::Exam;
    f.thread.unit_id = Some("whole-numbers".into());
    f.thread.session = session;
    f
}

/// The repository's content files.
fn shipped_files() -> tutorflow::content::ContentFiles {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(FsSource::new(root).fetch())
        .unwrap()
}

fn fixture() -> Fixture {
    let bundle = Arc::new(Bundle::load(&shipped_files()).unwrap());
    let rt = CourseRuntime::new(bundle, "prealgebra").unwrap();
    let at = Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap();
    let thread = Thread {
        thread_id: "bench-thread".into(),
        student_id: "bench-student".into(),
        course_id: "prealgebra".into(),
        mode: Mode::Guided,
        status: ThreadStatus::Active,
        goal: None,
        unit_id: None,
        created_at: at,
        updated_at: at,
        title: None,
        preview: None,
        paused_at: None,
        ended_at: None,
        session: SessionState {
            turn_count: 8,
            ..SessionState::default()
        },
    };
    let history = (0..10)
        .map(|i| TutorMessage {
            id: format!("m{i}"),
            thread_id: "bench-thread".into(),
            role: if i % 2 == 0 {
                Role::Student
            } else {
                Role::Assistant
            },
            text: if i % 2 == 0 {
                "I think you add the tops and the bottoms?".into()
            } else {
                "Good try! What do the denominators tell you about the size of the pieces?".into()
            },
            latex: None,
            card: None,
            card_state: None,
            event: None,
            safety: None,
            created_at: at,
        })
        .collect();
    let mut snapshot = StudentSnapshot::new("bench-student", "prealgebra", "whole-numbers");
    snapshot.units_in_progress = vec!["fraction-addition".into(), "fractions".into()];
    Fixture {
        rt,
        thread,
        history,
        snapshot,
        message: "how do I add fractions with different denominators like 2/3 + 1/4?",
    }
}

/// Derived once, as a server derives them at start-up.
static TOKEN_KEYS: LazyLock<TokenKeys> =
    LazyLock::new(|| TokenKeys::single(b"bench-drill-key-0123456789abcdef").unwrap());

/// One whole turn, as the service runs it between its read and its commit.
fn one_turn(f: &Fixture, lockouts: &BTreeMap<String, LockoutStatus>, seed: u64) -> usize {
    let personalization = Personalization::default();
    let now = Utc.with_ymd_and_hms(2026, 3, 1, 11, 0, 0).unwrap();
    let env = TurnEnv {
        now,
        turn_id: "bench-turn",
        seed,
        token_keys: &TOKEN_KEYS,
        drill_ttl: Duration::hours(24),
        lockouts,
        personalization: &personalization,
        safety_region: "default",
    };
    let state = TurnState {
        thread: &f.thread,
        history: &f.history,
        snapshot: &f.snapshot,
    };
    let event = TurnEvent {
        message_text: Some(f.message.into()),
        message_latex: None,
        client_event: ClientEvent::None,
    };
    let plan = turn::plan(&f.rt, state, &event, &env).unwrap();
    // A mode that writes its reply (an exam) asks no tutor.
    let reply = match &plan.scripted {
        Some(reply) => reply.clone(),
        None => OfflineTutor::new(f.rt.bundle.clone(), "default")
            .reply(&plan.input)
            .unwrap(),
    };
    let verdict = validate_reply(
        &reply,
        &plan.policy.policy,
        &ValidationContext::new(&plan.policy, f.rt.workflow()),
    );
    assert!(verdict.is_valid());
    let applied = turn::apply(
        &f.rt,
        state,
        &plan,
        Some((&reply, ReplyOrigin::Offline)),
        &env,
    )
    .unwrap();
    applied.messages.len()
}

fn bench_turn(c: &mut Criterion) {
    let lockouts = BTreeMap::new();
    for (name, f) in [
        ("turn_pipeline/offline/fraction_question", fixture()),
        ("turn_pipeline/offline/teach_me_check_step", lesson()),
        ("turn_pipeline/offline/exam_mid_answer", exam(false)),
        ("turn_pipeline/offline/exam_written_answer", exam(true)),
    ] {
        let mut seed = 0u64;
        c.bench_function(name, |b| {
            b.iter(|| {
                seed += 1;
                black_box(one_turn(&f, &lockouts, seed))
            })
        });
    }
}

/// p50 and p99 of single turns: criterion reports means and medians only.
/// Any other argument names the cases to time (all of them when none).
fn percentiles(only: &[String]) {
    // What the first turn on a course pays once per content version and
    // process (a Lambda sandbox): the bundle loaded and checked, then the
    // course's search index, unit mapper and safety gate built.
    let files = shipped_files();
    let start = Instant::now();
    let bundle = Arc::new(Bundle::load(&files).unwrap());
    let loaded = start.elapsed();
    let start = Instant::now();
    black_box(CourseRuntime::new(bundle, "prealgebra").unwrap());
    let built = start.elapsed();
    println!(
        "once per content version: bundle loaded in {:.1} ms, course runtime built in {:.1} ms",
        loaded.as_secs_f64() * 1e3,
        built.as_secs_f64() * 1e3
    );
    for (name, f) in [
        ("guided", fixture()),
        ("teach_me", lesson()),
        ("exam", exam(false)),
        ("exam_written", exam(true)),
    ] {
        if only.is_empty() || only.iter().any(|o| name.contains(o.as_str())) {
            percentiles_of(name, &f);
        }
    }
}

fn percentiles_of(name: &str, f: &Fixture) {
    let lockouts = BTreeMap::new();
    for seed in 0..500 {
        one_turn(f, &lockouts, seed);
    }
    let mut samples: Vec<f64> = (0..20_000u64)
        .map(|seed| {
            let start = Instant::now();
            black_box(one_turn(f, &lockouts, seed));
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "turn pipeline ({name}) over {} turns: p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
        samples.len(),
        at(0.50),
        at(0.99),
        at(1.0)
    );
}

criterion_group!(benches, bench_turn);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--percentiles") {
        let only: Vec<String> = args.into_iter().filter(|a| !a.starts_with('-')).collect();
        percentiles(&only);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
