//! The session summary and the turn logs end to end over HTTP, on the
//! embedded SQLite store and on DynamoDB (moto): in a guided session, a
//! lesson and an exam, the thread state and `GET /threads/{id}/summary`
//! carry the turn timeline (what the student did, what the tutor did and
//! what came of it, the newest 30 turns), the trend of the graded answers
//! and the concepts taught; an exam's timeline shows no marks while it
//! runs. The turn logs carry each turn's stage timings and the tutor call's
//! tokens (estimated offline), as JSON and as text, never the prompt. A
//! session the student ends, in every mode, and a problem set left idle
//! past its time (noticed on the next read) close the timeline with an
//! entry saying so.

use crate::e2e_support;

use chrono::Duration;
use e2e_support::{Harness, drill_answer, wrong_answer};
use serde_json::{Value, json};
use tutorflow::store::UnitOfWork;

fn timeline(state: &Value) -> &Vec<Value> {
    state["timeline"]
        .as_array()
        .unwrap_or_else(|| panic!("a timeline: {state}"))
}

fn outcomes(state: &Value) -> Vec<String> {
    timeline(state)
        .iter()
        .map(|e| e["outcome"].as_str().unwrap().to_owned())
        .collect()
}

async fn summary(h: &Harness, student: &str, thread: &str) -> Value {
    let r = h.get(student, &format!("/threads/{thread}/summary")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

/// Asks for drills on `unit` until one is shown, and answers it in the chat.
async fn answer_a_drill(h: &Harness, student: &str, thread: &str, right: bool) -> Value {
    let ask = json!({"clientEvent": {"type": "REQUEST_DRILL", "unitId": "whole-numbers"}});
    for _ in 0..3 {
        let turn = h.turn(student, thread, ask.clone()).await;
        let Some(card) = Harness::card(&turn, "DRILL") else {
            continue;
        };
        let answer = drill_answer(thread, card["drillToken"].as_str().unwrap());
        let said = if right {
            answer
        } else {
            wrong_answer(card, &answer)
        };
        return h
            .turn(student, thread, json!({ "messageText": said }))
            .await;
    }
    panic!("no drill card in three asks");
}

async fn a_guided_session(h: &Harness) {
    let student = "summary-guided";
    let thread = h.new_thread(student).await;
    let first = h
        .turn(
            student,
            &thread,
            json!({"messageText": "I want to practise adding whole numbers"}),
        )
        .await;
    let entry = &timeline(&first["state"])[0];
    assert_eq!(entry["turn"], 1, "{entry}");
    assert!(
        entry["at"].is_string() && entry["step"].is_string(),
        "{entry}"
    );
    assert!(entry["action"].is_string(), "{entry}");
    assert_eq!(first["state"]["trend"], "steady");

    // Two wrong answers, then two right: the trend turns up.
    let mut last = Value::Null;
    for right in [false, false, true, true] {
        last = answer_a_drill(h, student, &thread, right).await;
        let newest = timeline(&last["state"]).last().unwrap().clone();
        // A wrong number near the right one may be graded close.
        let want: &[&str] = if right {
            &["right"]
        } else {
            &["wrong", "close"]
        };
        assert!(
            want.contains(&newest["outcome"].as_str().unwrap()),
            "{newest}"
        );
        assert_eq!(newest["unitId"], "whole-numbers", "{newest}");
        assert_eq!(newest["turn"], last["state"]["turnCount"], "{newest}");
    }
    let state = &last["state"];
    assert_eq!(state["trend"], "improving", "{state}");
    let turns: Vec<u64> = timeline(state)
        .iter()
        .map(|e| e["turn"].as_u64().unwrap())
        .collect();
    assert!(turns.windows(2).all(|w| w[0] < w[1]), "{turns:?}");
    assert_eq!(turns.len() as u64, state["turnCount"].as_u64().unwrap());
    let taught = state["conceptsTaught"].as_array().unwrap();
    assert!(
        taught
            .iter()
            .any(|c| c["unitId"] == "whole-numbers" && c["title"].is_string()),
        "{state}"
    );
    // Small and without the student's words: only these fields.
    for entry in timeline(state) {
        let fields = entry.as_object().unwrap();
        assert!(
            fields.keys().all(|k| {
                ["turn", "at", "step", "action", "unitId", "outcome"].contains(&k.as_str())
            }),
            "{entry}"
        );
    }

    // A drill card answered with "Check" is in the timeline too.
    let turn = h
        .turn(
            student,
            &thread,
            json!({"clientEvent": {"type": "REQUEST_DRILL", "unitId": "whole-numbers"}}),
        )
        .await;
    if let Some(card) = Harness::card(&turn, "DRILL") {
        let token = card["drillToken"].as_str().unwrap();
        h.grade(student, &thread, token, &drill_answer(&thread, token))
            .await;
        let read = h.get(student, &format!("/threads/{thread}")).await;
        let newest = timeline(&read.body["state"]).last().unwrap().clone();
        assert_eq!(newest["step"], "drill_graded", "{newest}");
        assert_eq!(newest["outcome"], "right", "{newest}");
    }

    // The summary says the same.
    let report = summary(h, student, &thread).await;
    assert_eq!(report["trend"], "improving", "{report}");
    let read = h.get(student, &format!("/threads/{thread}")).await;
    assert_eq!(report["timeline"], read.body["state"]["timeline"]);
    assert_eq!(
        report["conceptsTaught"],
        read.body["state"]["conceptsTaught"]
    );

    the_logs_show_timings_and_tokens(h, student, &thread).await;
}

async fn the_logs_show_timings_and_tokens(h: &Harness, student: &str, thread: &str) {
    let logs = h.get(student, &format!("/threads/{thread}/logs")).await;
    assert_eq!(logs.status, 200, "{}", logs.body);
    let entries = logs.body["logs"].as_array().unwrap();
    assert!(entries.len() >= 5, "{}", logs.body);
    for log in entries {
        let e = &log["entry"];
        // Committed after it was planned (and after the model call).
        let at = |field: &str| {
            chrono::DateTime::parse_from_rfc3339(log[field].as_str().unwrap()).unwrap()
        };
        assert!(at("committedAt") >= at("createdAt"), "{log}");
        let t = &e["timings"];
        for stage in [
            "leaseWaitMs",
            "loadMs",
            "planMs",
            "llmMs",
            "applyMs",
            "untilCommitMs",
        ] {
            let ms = t[stage].as_f64().unwrap_or_else(|| panic!("{stage}: {e}"));
            assert!(ms >= 0.0, "{stage}: {e}");
        }
        assert!(t["untilCommitMs"].as_f64() >= t["applyMs"].as_f64(), "{t}");
        assert!(t["commitAttempt"].as_u64().unwrap() >= 1, "{t}");
        // Offline, the tokens are the estimate of the prompt a model would
        // be sent and of its reply.
        let tokens = &e["tokens"];
        assert_eq!(tokens["estimated"], true, "{e}");
        assert!(tokens["prompt"].as_u64().unwrap() > 500, "{tokens}");
        assert!(tokens["completion"].as_u64().unwrap() > 10, "{tokens}");
    }
    let body = logs.body.to_string();
    assert!(
        !body.contains("I want to practise") && !body.contains("You are"),
        "no student text or prompt in the logs"
    );
    let (status, _, text) = h
        .get_text(student, &format!("/threads/{thread}/logs?format=text"))
        .await;
    assert_eq!(status, 200);
    let first = text.lines().next().unwrap();
    let committed = entries[0]["committedAt"].as_str().unwrap();
    let committed = chrono::DateTime::parse_from_rfc3339(committed)
        .unwrap()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    assert!(
        first.contains(&format!("(committed {committed})")),
        "{first}"
    );
    assert!(
        first.contains("ms: lease wait") && first.contains("until commit"),
        "{first}"
    );
    assert!(
        first.contains("tokens: prompt") && first.contains("(estimated)"),
        "{first}"
    );
}

async fn a_long_session_keeps_the_newest_thirty_turns(h: &Harness) {
    let student = "summary-long";
    let thread = h.new_thread(student).await;
    let mut last = Value::Null;
    for _ in 0..31 {
        last = h
            .turn(student, &thread, json!({"messageText": "what is a ratio?"}))
            .await;
    }
    let state = &last["state"];
    assert_eq!(state["turnCount"], 31);
    let kept = timeline(state);
    assert_eq!(kept.len(), 30, "{state}");
    assert_eq!(kept[0]["turn"], 2, "the oldest is dropped");
    assert_eq!(kept[29]["turn"], 31);
}

async fn a_lesson(h: &Harness) {
    let student = "summary-lesson";
    let r = h
        .post(
            student,
            "/threads",
            json!({"courseId": "prealgebra", "mode": "teach_me", "unitId": "ratios"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let thread = r.body["threadId"].as_str().unwrap().to_owned();
    assert_eq!(r.body["state"]["timeline"], json!([]), "{}", r.body);
    let mut last = Value::Null;
    for said in [
        "what is a ratio?",
        "I see, you compare two amounts",
        "I'm stuck",
    ] {
        last = h
            .turn(student, &thread, json!({ "messageText": said }))
            .await;
    }
    let state = &last["state"];
    let kept = timeline(state);
    assert_eq!(kept.len(), 3, "{state}");
    assert!(
        kept.iter().all(|e| e["unitId"].is_string()),
        "every lesson turn is about a unit: {state}"
    );
    assert_eq!(kept[2]["outcome"], "hint", "{state}");
    assert!(
        state["conceptsTaught"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["unitId"] == "ratios"),
        "{state}"
    );
    assert!(state["trend"].is_string());
    let report = summary(h, student, &thread).await;
    assert_eq!(report["timeline"], state["timeline"], "{report}");
    assert_eq!(report["conceptsTaught"], state["conceptsTaught"]);
}

async fn an_exam(h: &Harness) {
    let student = "summary-exam";
    let r = h
        .post(
            student,
            "/threads",
            json!({"courseId": "prealgebra", "mode": "exam", "units": ["whole-numbers"], "questionCount": 3}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let thread = r.body["threadId"].as_str().unwrap().to_owned();
    h.turn(student, &thread, json!({"messageText": "42"})).await;
    let skipped = h
        .turn(
            student,
            &thread,
            json!({"clientEvent": {"type": "EXAM_SKIP"}}),
        )
        .await;
    let state = &skipped["state"];
    assert_eq!(outcomes(state), ["answered", "skipped"], "{state}");
    assert_eq!(timeline(state)[1]["step"], "exam_skip", "{state}");
    assert_eq!(state["trend"], "steady", "an exam's marks are its own");
    let report = summary(h, student, &thread).await;
    assert_eq!(report["timeline"], state["timeline"], "{report}");
}

/// A thread in `mode`, created with what that mode needs.
async fn a_thread_in(h: &Harness, student: &str, mode: &str) -> String {
    let mut body = json!({"courseId": "prealgebra", "mode": mode});
    match mode {
        "teach_me" | "survey" => body["unitId"] = json!("fractions"),
        "exam" => {
            body["units"] = json!(["whole-numbers"]);
            body["questionCount"] = json!(3);
        }
        "problem_set" => {
            body["problems"] = json!([
                {"id": "a", "text": "What is 12 + 15?", "correctAnswer": "27"},
                {"id": "b", "text": "What is 7 x 8?", "correctAnswer": "56"},
                {"id": "c", "text": "What is 100 - 37?", "correctAnswer": "63"},
                {"id": "d", "text": "What is 9 + 6?", "correctAnswer": "15"},
                {"id": "e", "text": "What is -3 + 5?", "correctAnswer": "2"}
            ]);
        }
        _ => {}
    }
    let r = h.post(student, "/threads", body).await;
    assert_eq!(r.status, 201, "{mode}: {}", r.body);
    r.body["threadId"].as_str().unwrap().to_owned()
}

fn last_entry(state: &Value) -> (Value, Value, Value) {
    let last = timeline(state).last().unwrap_or_else(|| panic!("{state}"));
    (
        last["step"].clone(),
        last["outcome"].clone(),
        last["turn"].clone(),
    )
}

async fn ending_closes_the_timeline_in_every_mode(h: &Harness) {
    for mode in [
        "guided",
        "teach_me",
        "clarify_doubts",
        "exam",
        "survey",
        "problem_set",
    ] {
        let student = format!("summary-end-{mode}");
        let thread = a_thread_in(h, &student, mode).await;
        let turn = h
            .turn(
                &student,
                &thread,
                json!({"messageText": "what is a fraction?"}),
            )
            .await;
        let turns = timeline(&turn["state"]).len();
        let end = format!("/threads/{thread}/end");
        let ended = h.post(&student, &end, json!({})).await;
        assert_eq!(ended.status, 200, "{mode}: {}", ended.body);
        let state = &ended.body["state"];
        assert_eq!(timeline(state).len(), turns + 1, "{mode}: {state}");
        assert_eq!(
            last_entry(state),
            (
                json!("session_ended"),
                json!("ended"),
                turn["state"]["turnCount"].clone()
            ),
            "{mode}: {state}"
        );
        let report = summary(h, &student, &thread).await;
        assert_eq!(report["timeline"], state["timeline"], "{mode}: {report}");
        // Ending an ended session adds nothing.
        let again = h.post(&student, &end, json!({})).await;
        assert_eq!(again.status, 200, "{mode}: {}", again.body);
        assert_eq!(again.body["state"]["timeline"], state["timeline"], "{mode}");
    }
}

/// Makes `thread` look untouched for `idle`, as a student who walked away
/// would leave it.
async fn leave_idle(h: &Harness, thread: &str, idle: Duration) {
    let record = h.store.get_thread(thread, 0).await.unwrap().unwrap();
    let mut left = record.thread.clone();
    left.updated_at -= idle;
    let mut work = UnitOfWork::new();
    work.put_thread(record.update(left, Vec::new()));
    h.store.commit(work).await.unwrap();
}

async fn an_idle_problem_set_closes_as_abandoned(h: &Harness) {
    let student = "summary-idle";
    // Noticed when the summary is read...
    let thread = a_thread_in(h, student, "problem_set").await;
    h.turn(student, &thread, json!({"messageText": "27"})).await;
    leave_idle(h, &thread, Duration::hours(2)).await;
    let report = summary(h, student, &thread).await;
    assert_eq!(
        last_entry(&report),
        (json!("session_expired"), json!("abandoned"), json!(1)),
        "{report}"
    );
    let read = h.get(student, &format!("/threads/{thread}")).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(read.body["status"], "completed", "{}", read.body);
    assert_eq!(read.body["state"]["timeline"], report["timeline"]);
    let expiries = |state: &Value| {
        timeline(state)
            .iter()
            .filter(|e| e["step"] == "session_expired")
            .count()
    };
    assert_eq!(expiries(&read.body["state"]), 1, "once, however often read");

    // ...and when the thread is read back.
    let thread = a_thread_in(h, student, "problem_set").await;
    leave_idle(h, &thread, Duration::hours(2)).await;
    let read = h.get(student, &format!("/threads/{thread}")).await;
    assert_eq!(read.status, 200, "{}", read.body);
    assert_eq!(read.body["status"], "completed", "{}", read.body);
    assert_eq!(
        last_entry(&read.body["state"]),
        (json!("session_expired"), json!("abandoned"), json!(0)),
        "{}",
        read.body
    );
    assert_eq!(
        summary(h, student, &thread).await["timeline"],
        read.body["state"]["timeline"]
    );

    // A session still within its time is left as it is.
    let thread = a_thread_in(h, student, "problem_set").await;
    leave_idle(h, &thread, Duration::minutes(5)).await;
    let read = h.get(student, &format!("/threads/{thread}")).await;
    assert_eq!(read.body["status"], "active", "{}", read.body);
    assert_eq!(read.body["state"]["timeline"], json!([]), "{}", read.body);
}

#[tokio::test]
async fn sqlite_ending_or_leaving_a_session_closes_its_timeline() {
    let h = Harness::sqlite().await;
    ending_closes_the_timeline_in_every_mode(&h).await;
    an_idle_problem_set_closes_as_abandoned(&h).await;
}

#[tokio::test]
async fn aws_ending_or_leaving_a_session_closes_its_timeline() {
    if let Some(h) = Harness::aws("aws_ending_or_leaving_a_session_closes_its_timeline").await {
        ending_closes_the_timeline_in_every_mode(&h).await;
        an_idle_problem_set_closes_as_abandoned(&h).await;
    }
}

#[tokio::test]
async fn sqlite_a_guided_session() {
    a_guided_session(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn sqlite_a_long_session_keeps_the_newest_thirty_turns() {
    a_long_session_keeps_the_newest_thirty_turns(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn sqlite_a_lesson_and_an_exam() {
    let h = Harness::sqlite().await;
    a_lesson(&h).await;
    an_exam(&h).await;
}

#[tokio::test]
async fn aws_a_guided_session() {
    if let Some(h) = Harness::aws("aws_a_guided_session").await {
        a_guided_session(&h).await;
    }
}

#[tokio::test]
async fn aws_a_lesson_and_an_exam() {
    if let Some(h) = Harness::aws("aws_a_lesson_and_an_exam").await {
        a_lesson(&h).await;
        an_exam(&h).await;
    }
}
