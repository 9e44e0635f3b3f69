//! `tutorflow classify`: the chosen category and why, from the shipped
//! workflow; bad arguments fail with a message.

use std::process::{Command, Output, Stdio};

fn tutorflow(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tutorflow"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .output()
        .expect("the binary runs")
}

fn question_file(json: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().expect("a temporary file");
    std::io::Write::write_all(&mut file, json.as_bytes()).expect("written");
    file
}

#[test]
fn prints_the_category_and_why() {
    let file = question_file(r#"{"text": "Solve 2x + 3 = 11.", "expected": "x = 4"}"#);
    let path = file.path().to_str().unwrap();
    let output = tutorflow(&[
        "classify",
        "--workflow",
        "default",
        "--message",
        "I think x = 7",
        "--pending-question",
        path,
    ]);
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.starts_with("category: wrong_operation"), "{text}");
    assert!(text.contains("answer graded by code: wrong"), "{text}");
    assert!(
        text.contains("+ wrong_operation (priority 70): grade wrong"),
        "{text}"
    );
    assert!(text.contains("grade: {\"result\":\"wrong\""), "{text}");
}

#[test]
fn states_and_the_llm_reading_can_be_given() {
    let output = tutorflow(&[
        "classify",
        "--workflow",
        "default",
        "--message",
        "because I halved it",
        "--teach-back",
        "--json",
    ]);
    assert!(output.status.success(), "{output:?}");
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(value["category"], "explanation");
    assert_eq!(value["classification"]["intent_source"], "heuristics");

    let file = question_file(
        r#"{"text": "What is 10% of 340?", "expected": {"kind": "mcq", "value": "C", "options": ["3.4", "330", "34", "3400"]}, "concept": "percentages", "wrongAttempts": 1}"#,
    );
    let output = tutorflow(&[
        "classify",
        "--workflow",
        "default",
        "--message",
        "thirty four",
        "--intent",
        "answer",
        "--pending-question",
        file.path().to_str().unwrap(),
        "--json",
    ]);
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(value["category"], "correct");
    assert_eq!(value["grade"]["normalized"], "C: 34");
    assert_eq!(value["classification"]["intent_source"], "llm");
}

#[test]
fn bad_arguments_fail_with_a_message() {
    let missing = tutorflow(&["classify", "--workflow", "default"]);
    let unknown_workflow = tutorflow(&["classify", "--workflow", "nope", "--message", "hi"]);
    let bad_intent = tutorflow(&[
        "classify",
        "--workflow",
        "default",
        "--message",
        "hi",
        "--intent",
        "maybe",
    ]);
    let lone_answer = tutorflow(&[
        "classify",
        "--workflow",
        "default",
        "--message",
        "hi",
        "--answer-text",
        "4",
    ]);
    let no_file = tutorflow(&[
        "classify",
        "--workflow",
        "default",
        "--message",
        "hi",
        "--pending-question",
        "/nonexistent.json",
    ]);
    let typo = question_file(r#"{"text": "q", "expect": "4"}"#);
    let bad_file = tutorflow(&[
        "classify",
        "--workflow",
        "default",
        "--message",
        "hi",
        "--pending-question",
        typo.path().to_str().unwrap(),
    ]);
    for (name, output, words) in [
        ("missing message", missing, "--message"),
        ("unknown workflow", unknown_workflow, "no workflow `nope`"),
        ("bad intent", bad_intent, "unknown intent"),
        ("answer text alone", lone_answer, "--intent"),
        ("missing file", no_file, "nonexistent.json"),
        ("typo in the file", bad_file, "expect"),
    ] {
        assert!(!output.status.success(), "{name} should fail");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(words), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
}

#[test]
fn a_reader_that_stops_early_is_no_error() {
    // `tutorflow classify ... | head`: the reader is gone before the
    // command writes.
    let mut child = Command::new(env!("CARGO_BIN_EXE_tutorflow"))
        .args(["classify", "--workflow", "default", "--message", "idk"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("it ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
