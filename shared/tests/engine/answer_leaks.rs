//! No pending answer reaches the tutor's prompt or the student, over the
//! whole shipped content: every exam question with its card on screen and
//! a drill from every blueprint family, each with students asking outright,
//! asking for help and restating the question. A stand-in model that quotes
//! the worked solution has its reply replaced.
//!
//! What counts as stating the answer is checked here independently of the
//! guard: the answer as written, standing on its own.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use tutorflow::content::{Bundle, ContentSource, Course, ExamItem, FsSource};
use tutorflow::engine::exam::cards;
use tutorflow::engine::exam::lockout::LockoutStatus;
use tutorflow::engine::practice::drill_token::TokenKeys;
use tutorflow::engine::practice::{drill, drill_grade};
use tutorflow::engine::reply::fallback::{Verdict, Violation};
use tutorflow::engine::runtime::CourseRuntime;
use tutorflow::engine::turn::{self, ReplyOrigin};
use tutorflow::engine::turn_data::{Plan, TurnEnv, TurnEvent, TurnState};
use tutorflow::llm::OfflineTutor;
use tutorflow::llm::prompt::tutor_prompt;
use tutorflow::model::{
    CallUsage, ClientEvent, LlmDrillCard, LlmTutorResponse, Mode, PendingQuestion, Personalization,
    QuestionPhase, Reply, SessionState, StudentSnapshot, Thread, ThreadStatus, TutorAction,
};

const DRILL_KEY: &[u8] = b"leak-test-drill-key-0123456789ab";

static TOKEN_KEYS: std::sync::LazyLock<TokenKeys> =
    std::sync::LazyLock::new(|| TokenKeys::single(DRILL_KEY).unwrap());

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 11, 0, 0).unwrap()
}

fn runtime() -> CourseRuntime {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let files = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(FsSource::new(root).fetch())
        .unwrap();
    let bundle = Arc::new(Bundle::load(&files).unwrap());
    CourseRuntime::new(bundle, "prealgebra").unwrap()
}

fn thread(session: SessionState) -> Thread {
    Thread {
        thread_id: "leak-thread".into(),
        student_id: "leak-student".into(),
        course_id: "prealgebra".into(),
        mode: Mode::Guided,
        status: ThreadStatus::Active,
        goal: None,
        unit_id: None,
        title: None,
        preview: None,
        paused_at: None,
        ended_at: None,
        created_at: now() - Duration::hours(1),
        updated_at: now() - Duration::hours(1),
        session,
    }
}

/// Whether `text` states `answer` on its own: not inside a longer number
/// or word. An answer the question itself contains cannot be told apart
/// and is not checked.
fn states(text: &str, answer: &str, question: &str) -> bool {
    let answer = answer.trim();
    if answer.is_empty() || question.contains(answer) {
        return false;
    }
    let lower = text.to_lowercase();
    let answer = answer.to_lowercase();
    let part_of_token = |c: Option<char>| {
        c.is_some_and(|c| c.is_alphanumeric() || c == '.' || c == '/' || c == ',')
    };
    lower.match_indices(&answer).any(|(at, m)| {
        let before = lower[..at].chars().next_back();
        let mut after = lower[at + m.len()..].chars();
        let next = after.next();
        // A sentence's full stop after the answer still ends it.
        let next_is_token = match next {
            // "3.5", "1,200" and a range "12-15" are other numbers.
            Some('.') | Some(',') | Some('-') => after.next().is_some_and(|c| c.is_ascii_digit()),
            other => part_of_token(other),
        };
        // A sign written against the digits makes another number (-18 is
        // not 18), and so does a whole number before a fraction (1 1/2).
        let mixed = answer.contains('/')
            && before == Some(' ')
            && lower[..at]
                .trim_end()
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_digit());
        !part_of_token(before) && before != Some('-') && !mixed && !next_is_token
    })
}

struct Turn {
    plan: Plan,
    prompt: String,
    shown: String,
    decision: turn::Decision,
}

/// One turn with `message`, the reply from `tutor_reply` (the offline
/// tutor when `None`).
fn run(
    rt: &CourseRuntime,
    session: &SessionState,
    snapshot: &StudentSnapshot,
    message: &str,
    tutor_reply: Option<LlmTutorResponse>,
) -> Turn {
    let lockouts: BTreeMap<String, LockoutStatus> = BTreeMap::new();
    let personalization = Personalization::default();
    let env = TurnEnv {
        now: now(),
        turn_id: "leak-turn",
        seed: 7,
        token_keys: &TOKEN_KEYS,
        drill_ttl: Duration::hours(24),
        lockouts: &lockouts,
        personalization: &personalization,
        safety_region: "default",
    };
    let thread = thread(session.clone());
    let state = TurnState {
        thread: &thread,
        history: &[],
        snapshot,
    };
    let event = TurnEvent {
        message_text: Some(message.to_owned()),
        message_latex: None,
        client_event: ClientEvent::None,
    };
    let plan = turn::plan(rt, state, &event, &env).unwrap();
    // Room for every piece of context: nothing is cut that could hide a leak.
    let mut roomy = rt.workflow().clone();
    roomy.token_budget = 200_000;
    let prompt = tutor_prompt(&rt.bundle.prompts, &roomy, &plan.input)
        .unwrap()
        .messages
        .iter()
        .map(|m| m.content.clone())
        .collect::<Vec<_>>()
        .join("\n");
    // A new practice item is another question: its numbers may coincide
    // with a pending answer without saying anything about it.
    let prompt = match &plan.input.context.practice_item {
        Some(item) => {
            let written = serde_json::to_string(item).unwrap();
            assert!(
                prompt.contains(&written),
                "the practice item is in the prompt as JSON"
            );
            prompt.replace(&written, "{}")
        }
        None => prompt,
    };
    let offline = OfflineTutor::new(rt.bundle.clone(), "default");
    let (result, origin) = match tutor_reply {
        Some(reply) => (reply, ReplyOrigin::Llm),
        None => (offline.reply(&plan.input).unwrap(), ReplyOrigin::Offline),
    };
    let result = Ok(Reply {
        value: result,
        usage: CallUsage::offline(),
    });
    let decision = turn::decide(
        rt.workflow(),
        &plan,
        &result,
        &event.client_event,
        &offline,
        origin,
    );
    let applied = turn::apply(
        rt,
        state,
        &plan,
        Some((&decision.reply, decision.origin)),
        &env,
    )
    .unwrap();
    let shown = applied
        .messages
        .iter()
        .filter(|m| m.role == tutorflow::model::Role::Assistant)
        .map(|m| m.text.clone())
        .collect::<Vec<_>>()
        .join("\n");
    Turn {
        plan,
        prompt,
        shown,
        decision,
    }
}

fn correct_option(course: &Course, question_id: &str) -> (String, String) {
    let (_, item) = course.exam_item(question_id).unwrap();
    let answer = item.options[item.option_index(&item.answer).unwrap()].clone();
    (answer, item.stem.clone())
}

#[test]
fn no_exam_answer_reaches_the_prompt_or_the_student_while_its_card_is_open() {
    let rt = runtime();
    let course = rt.course();
    let mut checked = 0;
    let mut masked = 0;
    for unit in course.units.values() {
        for item in unit.exam.iter().filter(|q| !q.is_written()) {
            let mut session = SessionState::default();
            cards::record_shown(&mut session, &item.id, now() - Duration::minutes(2));
            let mut snapshot =
                StudentSnapshot::new("leak-student", "prealgebra", &course.entry_unit);
            snapshot.units_in_progress = vec![unit.id.clone()];
            let (answer, stem) = correct_option(course, &item.id);
            for message in [
                item.stem.clone(),
                "what is the answer to this exam question?".to_owned(),
                format!("I'm stuck, can you show me how to do {}?", unit.title),
                format!("can you explain {} to me?", unit.title),
            ] {
                let turn = run(&rt, &session, &snapshot, &message, None);
                assert!(
                    !states(&turn.prompt, &answer, &stem),
                    "{}: the prompt states the answer `{answer}` after {message:?}:\n{}",
                    item.id,
                    turn.prompt
                );
                assert!(
                    !states(&turn.shown, &answer, &stem),
                    "{}: the reply states the answer `{answer}` after {message:?}:\n{}",
                    item.id,
                    turn.shown
                );
                if turn.plan.input.context.unit_anchors.iter().any(|a| {
                    a.anchor_text.contains(answer_guard_mask())
                        || a.key_ideas.iter().any(|k| k.contains(answer_guard_mask()))
                }) || turn
                    .plan
                    .input
                    .context
                    .unit_content_chunks
                    .iter()
                    .any(|c| c.text.contains(answer_guard_mask()))
                {
                    masked += 1;
                }
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 4 * 90,
        "every shipped exam question: {checked} turns"
    );
    assert!(
        masked > 0,
        "some unit text works an exam answer out and is masked"
    );
}

fn answer_guard_mask() -> &'static str {
    tutorflow::engine::reply::answer_guard::MASK
}

/// A model that quotes the question's worked solution has its reply
/// replaced, and the turn log says why.
#[test]
fn a_reply_quoting_the_worked_solution_is_replaced() {
    let rt = runtime();
    let course = rt.course();
    let mut replaced = 0;
    for unit in course.units.values() {
        for item in unit.exam.iter().filter(|q| !q.is_written()) {
            let (answer, stem) = correct_option(course, &item.id);
            if stem.contains(answer.trim()) {
                continue;
            }
            let mut session = SessionState::default();
            cards::record_shown(&mut session, &item.id, now() - Duration::minutes(2));
            let snapshot = StudentSnapshot::new("leak-student", "prealgebra", &unit.id);
            let offline = OfflineTutor::new(rt.bundle.clone(), "default");
            // A valid reply in every other way, with the memo in its words.
            let probe = run(&rt, &session, &snapshot, "can you help me?", None);
            let mut leaky = offline.reply(&probe.plan.input).unwrap();
            leaky.tutor_text = format!(
                "Here is how it goes: {} So the answer is {answer}.",
                item.memo.trim()
            );
            let turn = run(&rt, &session, &snapshot, "can you help me?", Some(leaky));
            assert!(
                !states(&turn.shown, &answer, &stem),
                "{}: {}",
                item.id,
                turn.shown
            );
            assert_eq!(turn.decision.origin, ReplyOrigin::Fallback, "{}", item.id);
            let Verdict::Fallback(f) = &turn.decision.verdict else {
                panic!("{}: the verdict is a fallback", item.id);
            };
            assert!(
                f.violations.iter().any(|v| matches!(
                    v,
                    Violation::RevealsPendingAnswer { owner } if owner.contains(&item.id)
                )),
                "{}: {:?}",
                item.id,
                f.violations
            );
            replaced += 1;
        }
    }
    assert!(replaced >= 80, "{replaced} exam questions probed");
}

/// A drill of every blueprint family pending in the chat: no prompt or
/// reply states its answer, however the student asks.
#[test]
fn no_drill_answer_reaches_the_prompt_or_the_student_while_it_is_pending() {
    let rt = runtime();
    let course = rt.course();
    let mut families = 0;
    for blueprint in rt.bundle.blueprints.values() {
        let Some(unit) = course
            .units
            .values()
            .find(|u| u.blueprints.contains(&blueprint.id))
        else {
            continue;
        };
        for seed in 1..=3u64 {
            let issued = drill::issue_generated(
                drill::DrillRequest {
                    blueprint,
                    fingerprint: blueprint.fingerprint(),
                    target_difficulty: 0.5,
                    seed,
                    themes: &[],
                },
                &unit.id,
                "leak-thread",
                now() - Duration::minutes(1),
                &TOKEN_KEYS,
            )
            .unwrap();
            let expected = drill_grade::expected_answer(&issued.item);
            let question = format!("{} {}", issued.card.prompt, issued.card.question_latex);
            let session = SessionState {
                pending_question: Some(PendingQuestion {
                    text: question.clone(),
                    expected: Some(expected.clone()),
                    unit_id: unit.id.clone(),
                    concept: format!("drill {seed}"),
                    wrong_attempts: 0,
                    previous_answers: Vec::new(),
                    hints_used: 0,
                    phase: QuestionPhase::Asked,
                    asked_at: now() - Duration::minutes(1),
                    drill_token: issued.card.drill_token.clone(),
                }),
                ..SessionState::default()
            };
            let mut snapshot = StudentSnapshot::new("leak-student", "prealgebra", &unit.id);
            snapshot.units_in_progress = vec![unit.id.clone()];
            // A multiple-choice answer may be stored as its option's id.
            let answer = (0..expected.options.len())
                .find(|&i| ExamItem::option_id(i).eq_ignore_ascii_case(expected.value.trim()))
                .map_or(expected.value.clone(), |i| expected.options[i].clone());
            for message in [
                "what's the answer?",
                "I'm stuck",
                "can you show me the first step?",
                "I don't get it, just tell me",
            ] {
                let turn = run(&rt, &session, &snapshot, message, None);
                assert!(
                    !states(&turn.prompt, &answer, &question),
                    "{} (seed {seed}): the prompt states `{answer}` after {message:?}:\n{}",
                    blueprint.id,
                    turn.prompt
                );
                assert!(
                    !states(&turn.shown, &answer, &question),
                    "{} (seed {seed}): the reply states `{answer}` after {message:?}:\n{}",
                    blueprint.id,
                    turn.shown
                );
            }
        }
        families += 1;
    }
    assert!(families >= 15, "{families} blueprint families");
}

/// The server's new practice item is guarded in a reply that shows it; a
/// reply without it may say the same number for its own reasons (a worked
/// example of the student's own problem can land on it).
#[test]
fn a_practice_item_is_guarded_only_where_it_is_shown() {
    let rt = runtime();
    let snapshot = StudentSnapshot::new("leak-student", "prealgebra", &rt.course().entry_unit);
    let session = SessionState::default();
    let message = "give me a practice question";
    let probe = run(&rt, &session, &snapshot, message, None);
    let issued = probe
        .plan
        .practice
        .as_ref()
        .expect("a practice item is offered");
    let answer = drill_grade::expected_answer(&issued.item).value;
    let offline = OfflineTutor::new(rt.bundle.clone(), "default");
    let mut with_card = offline.reply(&probe.plan.input).unwrap();
    with_card.action = TutorAction::DrillCard;
    with_card.concept_card = None;
    with_card.drill_card = Some(LlmDrillCard {
        prompt: issued.card.prompt.clone(),
        question_latex: issued.card.question_latex.clone(),
        expected_answer: None,
    });
    with_card.tutor_text = format!("Try this one. The answer is {answer}.");
    let mut without_card = with_card.clone();
    without_card.action = TutorAction::SocraticQuestion;
    without_card.drill_card = None;

    let shown = run(&rt, &session, &snapshot, message, Some(with_card));
    let Verdict::Fallback(f) = &shown.decision.verdict else {
        panic!("a reply stating the shown item's answer is replaced");
    };
    assert!(
        f.violations.iter().any(|v| matches!(
            v,
            Violation::RevealsPendingAnswer { owner } if owner == "practice item"
        )),
        "{:?}",
        f.violations
    );
    let not_shown = run(&rt, &session, &snapshot, message, Some(without_card));
    assert_eq!(
        not_shown.decision.origin,
        ReplyOrigin::Llm,
        "{}",
        not_shown.shown
    );
}

/// A written exam answer is judged by the evaluation call, whose request
/// holds that question's model answer and rubric and nothing of any other
/// question; the tutor's prompt (composed, though an exam turn never sends
/// it) holds none of the exam's answers or rubrics; and a deferred exam's
/// reply says nothing of the mark, whichever verdict comes back.
#[test]
fn a_judged_exam_answer_reaches_only_the_evaluation_call() {
    use tutorflow::engine::exam::judge::WrittenMark;
    use tutorflow::engine::modes::{self, Start};
    use tutorflow::model::{CreateThreadRequest, ExamQuestionStatus, JudgedBy, QuestionResult};
    let rt = runtime();
    let bundle = rt.bundle.clone();
    let course = rt.course();
    for (written_id, unit_id) in [
        ("EX-WHN-W1", "whole-numbers"),
        ("EX-FAD-W1", "fraction-addition"),
    ] {
        for feedback in ["immediate", "deferred"] {
            let request: CreateThreadRequest = serde_json::from_value(serde_json::json!({
                "courseId": "prealgebra", "mode": "exam", "unitId": unit_id,
                "questionCount": 4, "feedback": feedback,
            }))
            .unwrap();
            let started = modes::for_mode(Mode::Exam)
                .start(&Start {
                    bundle: &bundle,
                    course,
                    workflow: rt.workflow(),
                    unit: course.unit(unit_id),
                    goal: None,
                    prepared: None,
                    earlier: &[],
                    request: &request,
                    now: now() - Duration::minutes(5),
                    seed: 11,
                    locked_questions: &Default::default(),
                    snapshot: None,
                    problems: None,
                    problem_set_id: None,
                    personalization: &Personalization::default(),
                })
                .unwrap();
            let mut session = started.session;
            let tutorflow::model::ModeState::Exam(exam) = &mut session.mode_state else {
                panic!("an exam");
            };
            // The written question on screen as question 2, question 1 answered.
            let (_, item) = course.exam_item(written_id).unwrap();
            exam.questions[0].status = ExamQuestionStatus::Answered;
            exam.questions[0].result = Some(QuestionResult::Correct);
            exam.questions[0].credit = 1.0;
            let q = &mut exam.questions[1];
            q.prompt = item.stem.clone();
            q.question_latex.clear();
            q.options.clear();
            q.expected.kind = tutorflow::model::AnswerKind::Text;
            q.expected.value = item.answer.clone();
            q.correct_answer = item.answer.clone();
            q.explanation = item.memo.clone();
            q.rubric = item.rubric.clone();
            q.shown_at = Some(now() - Duration::minutes(1));
            exam.current_index = 1;
            let others: Vec<_> = exam
                .questions
                .iter()
                // The draw may hold the written question too: it is the
                // one put on screen here.
                .filter(|o| o.number != 2 && o.prompt != item.stem)
                .cloned()
                .collect();
            let mut thread = thread(session);
            thread.mode = Mode::Exam;
            let snapshot = StudentSnapshot::new("leak-student", "prealgebra", unit_id);
            let lockouts: BTreeMap<String, LockoutStatus> = BTreeMap::new();
            let personalization = Personalization::default();
            let env = TurnEnv {
                now: now(),
                turn_id: "leak-turn",
                seed: 7,
                token_keys: &TOKEN_KEYS,
                drill_ttl: Duration::hours(24),
                lockouts: &lockouts,
                personalization: &personalization,
                safety_region: "default",
            };
            let state = TurnState {
                thread: &thread,
                history: &[],
                snapshot: &snapshot,
            };
            let event = TurnEvent {
                message_text: Some("I think you just add them all up".into()),
                message_latex: None,
                client_event: ClientEvent::None,
            };
            let mut plan = turn::plan(&rt, state, &event, &env).unwrap();
            let judging = plan.judging.clone().expect("the answer is judged");
            let sent = serde_json::to_string(&judging.request.input).unwrap();
            assert!(sent.contains(&item.stem.replace('"', "\\\"")) || sent.contains("worked out"));
            for o in &others {
                // Another question as shown, and its answer (beyond a
                // number this question's own text may also hold).
                let shown = format!("{} {}", o.prompt, o.question_latex);
                assert!(
                    !sent.contains(shown.trim()),
                    "{written_id}: question {} sent: {shown}",
                    o.number
                );
                let own = format!("{} {}", item.stem, item.answer);
                assert!(
                    own.contains(&o.correct_answer) || !sent.contains(&o.correct_answer),
                    "{written_id}: question {}'s answer {} sent",
                    o.number,
                    o.correct_answer
                );
            }
            let mut roomy = rt.workflow().clone();
            roomy.token_budget = 200_000;
            let prompt = tutor_prompt(&rt.bundle.prompts, &roomy, &plan.input)
                .unwrap()
                .messages
                .iter()
                .map(|m| m.content.clone())
                .collect::<Vec<_>>()
                .join("\n");
            assert!(
                !prompt.contains(&item.answer),
                "{written_id}: model answer in the tutor prompt"
            );
            for p in &item.rubric {
                assert!(
                    !prompt.contains(&p.point),
                    "{written_id}: rubric in the tutor prompt"
                );
            }
            if feedback == "deferred" {
                for result in [
                    QuestionResult::Correct,
                    QuestionResult::Partial,
                    QuestionResult::Incorrect,
                ] {
                    let request = judging.request.clone();
                    turn::judged(
                        &rt,
                        state,
                        &mut plan,
                        &request,
                        WrittenMark {
                            result,
                            feedback: "Marked.".into(),
                            by: JudgedBy::Model,
                        },
                        &env,
                    );
                    let said = &plan.scripted.as_ref().unwrap().tutor_text;
                    assert!(said.starts_with("Answer to question 2 recorded."), "{said}");
                    for telling in ["correct", "close", "not quite", "Marked", &item.answer] {
                        assert!(!said.contains(telling), "{written_id}: {telling} in {said}");
                    }
                }
            }
        }
    }
}
