//! `tutorflow simulate` and `tutorflow test`: the shape of the lines a
//! scripted student produces, reproducibility, and how failures and script
//! problems are reported.

use std::process::{Command, Output};

use serde_json::Value;

fn tutorflow(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tutorflow"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .env_remove("TUTORFLOW_CONFIG")
        .output()
        .expect("the binary runs")
}

fn script_file(yaml: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::Builder::new()
        .suffix(".yaml")
        .tempfile()
        .expect("a temporary file");
    std::io::Write::write_all(&mut file, yaml.as_bytes()).expect("written");
    file
}

fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    keys
}

const JOURNEY: &str = "workflows/tests/bronze-after-getting-stuck.yaml";

#[test]
fn prints_one_line_per_step_with_what_each_endpoint_decided() {
    let output = tutorflow(&["simulate", "--script", JOURNEY]);
    assert!(output.status.success(), "{output:?}");
    let lines = lines(&output);
    let steps: Vec<&str> = lines.iter().map(|l| l["do"].as_str().unwrap()).collect();
    assert_eq!(
        steps,
        [
            "say",
            "event",
            "answer_drill",
            "continue",
            "answer_drill",
            "stuck",
            "event",
            "answer_drill",
            "continue",
            "answer_drill",
            "continue",
            "exam"
        ]
    );
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line["step"], i + 1);
        let at = line["at"].as_str().unwrap();
        assert!(at.starts_with(&format!("{JOURNEY}:")), "{at}");
        assert_eq!(
            keys(&line["snapshotLite"]),
            ["focus", "prereqNudge", "progress", "revisit"]
        );
    }

    let turn = &lines[5];
    assert_eq!(
        keys(turn),
        [
            "action",
            "at",
            "card",
            "category",
            "concepts",
            "counted",
            "do",
            "event",
            "mappedUnits",
            "mistakeTag",
            "origin",
            "pacing",
            "pending",
            "phase",
            "policy",
            "result",
            "scaffolding",
            "snapshotLite",
            "status",
            "step",
            "teachBack",
            "tutorText",
            "validation",
            "wrongAttempts"
        ]
    );
    assert_eq!(turn["event"], serde_json::json!({"type": "I_AM_STUCK"}));
    assert_eq!(turn["category"], "stuck");
    assert_eq!(turn["action"], "CONCEPT_CARD");
    assert_eq!(turn["card"]["type"], "CONCEPT");
    assert_eq!(turn["card"]["unitId"], "whole-numbers");
    assert_eq!(turn["origin"], "offline");
    assert_eq!(turn["validation"]["outcome"], "valid");
    assert_eq!(
        keys(&turn["policy"]),
        [
            "allowedActions",
            "ambiguous",
            "blocker",
            "examAvailability",
            "examReady",
            "focus",
            "primaryTarget",
            "stuck",
            "tier"
        ]
    );
    assert_eq!(turn["policy"]["focus"], "whole-numbers");
    assert_eq!(turn["policy"]["tier"], "bronze");
    assert_eq!(turn["policy"]["blocker"], Value::Null);
    assert!(
        turn["policy"]["allowedActions"]
            .as_array()
            .unwrap()
            .contains(&Value::from("CONCEPT_CARD"))
    );
    assert!(!turn["tutorText"].as_str().unwrap().is_empty());

    let said = &lines[0];
    assert_eq!(said["said"], "How do I subtract with borrowing?");
    assert_eq!(said["mappedUnits"][0]["unitId"], "whole-numbers");

    let drill = &lines[2];
    assert_eq!(
        keys(drill),
        [
            "answer",
            "at",
            "counted",
            "do",
            "feedback",
            "mistakeTag",
            "result",
            "snapshotLite",
            "step"
        ]
    );
    assert_eq!(drill["result"], "wrong");
    assert_eq!(drill["counted"], true);
    assert!(drill["mistakeTag"].is_string());

    let exam = &lines[11];
    assert_eq!(
        keys(exam),
        [
            "at",
            "do",
            "feedback",
            "locked",
            "lockedUntil",
            "questionId",
            "result",
            "selected",
            "snapshotLite",
            "step",
            "unitTier"
        ]
    );
    assert_eq!(exam["result"], "correct");
    assert_eq!(exam["unitTier"], "bronze");
    assert_eq!(exam["snapshotLite"]["progress"]["bronze"], 1);
    assert_eq!(lines[10]["card"]["questionId"], exam["questionId"]);
}

#[test]
fn the_same_script_gives_the_same_lines() {
    let first = tutorflow(&["simulate", "--script", JOURNEY]);
    let second = tutorflow(&["simulate", "--script", JOURNEY]);
    assert!(first.status.success(), "{first:?}");
    assert_eq!(
        String::from_utf8_lossy(&first.stdout),
        String::from_utf8_lossy(&second.stdout)
    );
}

#[test]
fn seeds_and_start_times_come_from_the_script() {
    let script = script_file(
        "course: prealgebra\nseed: 42\nnow: 2026-05-04T10:00:00Z\nsteps:\n  \
         - event: REQUEST_DRILL\n    unit: whole-numbers\n  - view_memo: true\n",
    );
    let path = script.path().to_str().unwrap();
    let output = tutorflow(&["simulate", "--script", path]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let played = lines(&output);
    assert_eq!(played.len(), 1, "the first step ran, the second could not");
    assert_eq!(played[0]["card"]["type"], "DRILL");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.trim(),
        format!("{path}:7:5: `view_memo` needs an exam card, but the tutor has not shown one yet")
    );

    let wait = script_file(
        "course: prealgebra\nnow: 2026-05-04T10:00:00Z\nsteps:\n  - wait: 2d\n  - wait: 90s\n",
    );
    let output = tutorflow(&["simulate", "--script", wait.path().to_str().unwrap()]);
    let waited = lines(&output);
    assert_eq!(waited[0]["now"], "2026-05-06T10:00:00Z");
    assert_eq!(waited[1]["now"], "2026-05-06T10:01:30Z");
}

#[test]
fn script_problems_are_reported_where_they_are_written() {
    let script = script_file(
        "course: prealgebra\nsteps:\n  - say: hi\n    expect: {category: stuk}\n  \
         - event: REQUEST_DRILL\n    unit: fractoins\n",
    );
    let path = script.path().to_str().unwrap();
    let output = tutorflow(&["simulate", "--script", path]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(output.stdout.is_empty(), "nothing runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let problems: Vec<&str> = stderr.lines().collect();
    assert_eq!(problems.len(), 2, "{stderr}");
    assert!(
        problems[0].starts_with(&format!(
            "{path}:4:24: category `stuk` is not in this course"
        )),
        "{stderr}"
    );
    assert!(
        problems[1].starts_with(&format!(
            "{path}:6:11: unit `fractoins` is not in this course"
        )),
        "{stderr}"
    );
}

#[test]
fn an_api_refusal_stops_the_run_at_its_step() {
    // A question that was just failed is locked: answering it again is refused.
    let script = script_file(
        "course: prealgebra\nsteps:\n  - event: REQUEST_DRILL\n  - answer_drill: correct\n  \
         - continue: drill\n  - answer_drill: correct\n  - continue: drill\n  \
         - exam: fail\n  - exam: pass\n",
    );
    let path = script.path().to_str().unwrap();
    let output = tutorflow(&["simulate", "--script", path]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(lines(&output).len(), 6);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!(
            "{path}:9:5: the API refused this step (409 Conflict): this question is locked until "
        )),
        "{stderr}"
    );
}

#[test]
fn workflow_tests_pass_and_fail_with_the_failing_expectation() {
    let passing = tutorflow(&["test", "workflows/tests"]);
    assert!(passing.status.success(), "{passing:?}");
    let report = String::from_utf8_lossy(&passing.stdout);
    assert!(report.contains(&format!("ok    {JOURNEY}: ")), "{report}");
    assert!(report.trim_end().ends_with(" failed"), "{report}");
    assert!(report.contains(" 0 failed"), "{report}");

    let failing = script_file(
        "name: expects too much\ncourse: prealgebra\nsteps:\n  \
         - say: How do I subtract with borrowing?\n    \
         expect: {category: conceptual_question, action: EXAM_BLOCK, allowed_includes: EXAM_BLOCK}\n",
    );
    let path = failing.path().to_str().unwrap();
    let output = tutorflow(&["test", JOURNEY, path]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report = String::from_utf8_lossy(&output.stdout);
    let report: Vec<&str> = report.lines().collect();
    assert_eq!(
        report[1..],
        [
            format!("FAIL  {path}: expects too much").as_str(),
            format!(
                "      {path}:5:45: step 1 (say): expected action `EXAM_BLOCK`, got `SOCRATIC_QUESTION`"
            )
            .as_str(),
            format!(
                "      {path}:5:65: step 1 (say): expected the allowed actions to include \
                 EXAM_BLOCK; they are SOCRATIC_QUESTION, DRILL_CARD"
            )
            .as_str(),
            "2 tests: 1 passed, 1 failed",
        ]
    );
}

#[test]
fn missing_tests_and_broken_scripts_fail_the_run() {
    let output = tutorflow(&["test", "workflows/no-such-tests"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).trim(),
        "error: workflows/no-such-tests does not exist"
    );

    let broken = script_file("course: prealgebra\nsteps:\n  - answer_drill: correct\n");
    let path = broken.path().to_str().unwrap();
    let output = tutorflow(&["test", path]);
    assert_eq!(output.status.code(), Some(1));
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        report.contains(&format!(
            "      {path}:3:5: step 1 (answer_drill): `answer_drill` answers the last drill \
             card, but the tutor has not shown one yet"
        )),
        "{report}"
    );
}

#[test]
fn a_configuration_the_app_cannot_start_with_is_reported_once() {
    let mut config = tempfile::Builder::new()
        .suffix(".toml")
        .tempfile()
        .expect("a temporary file");
    std::io::Write::write_all(&mut config, b"[llm]\ntutor = \"openai\"\n").expect("written");
    let output = Command::new(env!("CARGO_BIN_EXE_tutorflow"))
        .args(["test", "--config", config.path().to_str().unwrap()])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .env_remove("TUTORFLOW_OPENAI_API_KEY")
        .output()
        .expect("the binary runs");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(output.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).trim(),
        "error: LLM setup: llm.openai.api_key is required: a call uses this provider"
    );
}
