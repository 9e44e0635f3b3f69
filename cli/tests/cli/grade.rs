//! `tutorflow grade`: one answer, a batch from standard input, bad arguments.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn tutorflow(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tutorflow"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .expect("stdin is piped")
            .write_all(input.as_bytes())
            .expect("stdin takes the input");
    }
    drop(child.stdin.take());
    child.wait_with_output().expect("the binary finishes")
}

fn json_lines(output: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

#[test]
fn grades_one_answer_as_json() {
    let output = tutorflow(
        &["grade", "--expected", "9/2", "--answer", "four and a half"],
        None,
    );
    assert!(output.status.success(), "{output:?}");
    let grade = &json_lines(&output)[0];
    assert_eq!(grade["result"], "correct");
    assert_eq!(grade["extracted"], "four and a half");
    assert_eq!(grade["normalized"], "4.5");
    assert_eq!(grade["tags"], serde_json::json!([]));
    assert!(grade["reason"].as_str().is_some_and(|r| !r.is_empty()));
}

#[test]
fn grades_units_options_and_negative_values() {
    let output = tutorflow(
        &[
            "grade",
            "--expected",
            "12",
            "--unit",
            "cm",
            "--answer",
            "0.12 m",
        ],
        None,
    );
    assert_eq!(
        json_lines(&output)[0]["tags"],
        serde_json::json!(["unit_converted"])
    );
    let output = tutorflow(
        &[
            "grade",
            "--expected",
            "C",
            "--kind",
            "mcq",
            "--options",
            "3.4|330|34|3400",
            "--answer",
            "34",
        ],
        None,
    );
    assert_eq!(json_lines(&output)[0]["normalized"], "C: 34");
    let output = tutorflow(&["grade", "--expected", "-2", "--answer", "-2"], None);
    assert_eq!(json_lines(&output)[0]["result"], "correct");
}

#[test]
fn a_batch_prints_one_object_per_line_in_order() {
    let input = "kind\texpected\tanswer\toptions\n\
                 number\t3/4\t4/3\n\
                 expression\t2x+3\t3+2x\n\
                 mcq\tB\t$36\t$9|$36|$25|$54\n\
                 \tx = 4\tI think x = 4\n\
                 number\t12\tidk\n";
    let output = tutorflow(&["grade", "--batch"], Some(input));
    assert!(output.status.success(), "{output:?}");
    let results: Vec<String> = json_lines(&output)
        .iter()
        .map(|g| g["result"].as_str().unwrap_or("?").to_owned())
        .collect();
    assert_eq!(
        results,
        ["wrong", "correct", "correct", "correct", "unverifiable"]
    );
}

#[test]
fn a_bad_batch_line_is_reported_in_place_and_fails_the_run() {
    let input = "number\t1\t1\nbanana\t2\t2\nnumber\t3\nnumber\t4\t4\n";
    let output = tutorflow(&["grade", "--batch"], Some(input));
    assert_eq!(output.status.code(), Some(1));
    let lines = json_lines(&output);
    assert_eq!(lines.len(), 4, "one line out per line in");
    assert_eq!(lines[0]["result"], "correct");
    assert!(
        lines[1]["error"]
            .as_str()
            .is_some_and(|e| e.contains("unknown kind"))
    );
    assert_eq!(lines[2]["line"], 3);
    assert_eq!(lines[3]["result"], "correct");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("line 2") && stderr.contains("2 lines could not be graded"),
        "{stderr}"
    );
}

#[test]
fn bad_arguments_fail_with_a_message_not_a_panic() {
    for args in [
        vec!["grade"],
        vec!["grade", "--expected", "4"],
        vec![
            "grade",
            "--expected",
            "4",
            "--answer",
            "4",
            "--kind",
            "fraction",
        ],
        vec!["grade", "--expected", "C", "--answer", "C", "--kind", "mcq"],
        vec!["grade", "--batch", "--expected", "4"],
        vec![
            "grade",
            "--expected",
            "4",
            "--answer",
            "4",
            "--workflow",
            "nope",
        ],
    ] {
        let output = tutorflow(&args, None);
        assert!(!output.status.success(), "{args:?} should fail");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.trim().is_empty(), "{args:?}: no message");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn the_workflow_settings_can_be_used() {
    let output = tutorflow(
        &[
            "grade",
            "--expected",
            "10",
            "--answer",
            "11",
            "--workflow",
            "default",
        ],
        None,
    );
    assert!(output.status.success(), "{output:?}");
    assert_eq!(json_lines(&output)[0]["result"], "close");
}
