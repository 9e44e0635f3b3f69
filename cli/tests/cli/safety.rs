//! `tutorflow safety`: the gate's verdict on messages from the shipped
//! workflow (rules first, then the classifier's check-in), and the
//! classifier's cross-validation report.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn tutorflow(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tutorflow"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child
        .stdin
        .take()
        .expect("a standard input")
        .write_all(input.as_bytes())
        .expect("written");
    child.wait_with_output().expect("the binary finishes")
}

#[test]
fn a_rule_decides_first_and_maths_goes_through() {
    let output = tutorflow(&["safety"], "i want to kill myself\nwhat is 3/4 of 12\n");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("self_harm\tself_harm/"), "{text}");
    assert!(lines[1].starts_with("-\t-\t"), "{text}");
}

#[test]
fn cross_validation_reports_precision_recall_and_thresholds() {
    let output = tutorflow(&["safety", "--cross-validate", "4"], "");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.starts_with("4-fold cross-validation over "), "{text}");
    assert!(
        text.contains("label              examples  precision  recall"),
        "{text}"
    );
    for label in ["self_harm", "abuse", "concern", "ordinary"] {
        assert!(
            text.lines().any(|l| l.starts_with(label)),
            "{label}: {text}"
        );
    }
    assert!(text.contains("precision of the check-in:"), "{text}");
    assert!(text.contains("By threshold"), "{text}");
}
