//! `tutorflow policy` end to end, on a small bundle built in a temporary
//! directory from the repository's workflows, blueprints and prompts plus a
//! three-unit course (so it does not depend on the shipped course).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

const COURSE: &str = "\
id: mini
title: Mini course
entry_unit: counting
units:
  - id: counting
    requires: []
  - id: adding
    requires: [counting]
  - id: equations
    requires: [adding]
";

fn unit_yaml(id: &str, title: &str, exam: &str) -> String {
    format!(
        "id: {id}\n\
         title: {title}\n\
         anchor: All about {title}.\n\
         key_ideas: [\"One idea about {title}.\"]\n\
         chunks:\n  - {{id: intro, section: Intro, text: \"Text about {title}.\"}}\n\
         {exam}"
    )
}

const EXAM: &str = "\
exam:
  - {id: EQ-B1, tier: bronze, stem: \"Solve x + 1 = 3.\", options: [\"1\", \"2\"], answer: B, memo: \"Subtract 1.\"}
  - {id: EQ-B2, tier: bronze, stem: \"Solve x + 2 = 3.\", options: [\"1\", \"2\"], answer: A, memo: \"Subtract 2.\"}
  - {id: EQ-S1, tier: silver, stem: \"Solve 2x = 4.\", options: [\"2\", \"8\"], answer: A, memo: \"Divide by 2.\"}
";

/// The bundle, in a directory that lives as long as the returned guard.
fn bundle() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_dir(&repo_root().join("workflows"), &root.join("workflows"));
    copy_dir(
        &repo_root().join("workflows/blueprints"),
        &root.join("workflows/blueprints"),
    );
    copy_dir(&repo_root().join("prompts"), &root.join("prompts"));
    let course = root.join("workflows/courses/mini");
    std::fs::create_dir_all(course.join("units")).unwrap();
    std::fs::write(course.join("course.yaml"), COURSE).unwrap();
    for (id, title, exam) in [
        ("counting", "Counting", ""),
        ("adding", "Adding", ""),
        ("equations", "Equations", EXAM),
    ] {
        std::fs::write(
            course.join(format!("units/{id}.yaml")),
            unit_yaml(id, title, exam),
        )
        .unwrap();
    }
    dir
}

fn tutorflow(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tutorflow"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

fn policy(bundle: &Path, extra: &[&str], stdin: Option<&str>) -> Output {
    let dir = bundle.to_str().unwrap();
    let mut args = vec![
        "policy",
        "--dir",
        dir,
        "--course",
        "mini",
        "--now",
        "2026-03-01T10:00:00Z",
    ];
    args.extend_from_slice(extra);
    tutorflow(&args, stdin)
}

fn success(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

fn failure(output: &Output) -> String {
    assert!(!output.status.success(), "should have failed");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "panicked: {stderr}");
    stderr
}

/// Everything held below `equations`, with a drill streak on it: exam-ready.
const READY_SNAPSHOT: &str = r#"{
  "studentId": "s1",
  "courseId": "mini",
  "focusUnitId": "equations",
  "unitsInProgress": ["equations"],
  "unitProgress": {
    "counting": {"status": "mastered", "masteryTier": "gold", "lastTouchedAt": null,
      "drill": {"attempts": 2, "correct": 2, "streakCorrect": 2},
      "exam": {"passedByTier": {"bronze": 1, "silver": 1, "gold": 1}}, "confusionTags": {}},
    "adding": {"status": "in_progress", "masteryTier": "bronze", "lastTouchedAt": "2026-03-01T08:00:00Z",
      "drill": {"attempts": 2, "correct": 2, "streakCorrect": 2},
      "exam": {"passedByTier": {"bronze": 1, "silver": 0, "gold": 0}}, "confusionTags": {}},
    "equations": {"status": "in_progress", "masteryTier": "none", "lastTouchedAt": "2026-03-01T09:00:00Z",
      "drill": {"attempts": 3, "correct": 2, "streakCorrect": 2},
      "exam": {"passedByTier": {"bronze": 0, "silver": 0, "gold": 0}}, "confusionTags": {}}
  },
  "examTouched": {},
  "revisitQueue": {},
  "lastTurnAnalysis": null,
  "lastTurnAt": null
}"#;

#[test]
fn help_documents_every_option() {
    let output = tutorflow(&["policy", "--help"], None);
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    for flag in [
        "--course",
        "--snapshot",
        "--mapped",
        "--now",
        "--locked",
        "--passed",
        "--dir",
        "UNIT:CONF",
        "QID:UNTIL",
        "candidates",
    ] {
        assert!(help.contains(flag), "help does not mention {flag}:\n{help}");
    }
}

#[test]
fn a_new_student_asking_about_equations_is_taught_equations() {
    let dir = bundle();
    let json = success(&policy(dir.path(), &["--mapped", "equations:0.9"], None));
    let p = &json["policy"];
    // Units never worked on are unknown, not missing: nothing blocks.
    assert_eq!(p["primaryTargetUnitId"], "equations");
    assert_eq!(p["prereqBlockingUnitId"], serde_json::Value::Null);
    assert_eq!(p["focusUnitId"], "equations");
    assert_eq!(p["turnId"], "cli");
    assert_eq!(json["trace"]["blockerChain"], serde_json::json!([]));
    let candidates = json["candidates"].as_array().unwrap();
    assert!(candidates.iter().any(|c| c["unitId"] == "equations"));
    for c in candidates {
        let score = c["score"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&score));
        assert!(c["components"]["intent"].is_number());
    }
    assert_eq!(json["snapshotLite"]["progress"]["total"], 3);
}

#[test]
fn lockouts_decide_exam_availability() {
    let dir = bundle();
    let snapshot = dir.path().join("ready.json");
    std::fs::write(&snapshot, READY_SNAPSHOT).unwrap();
    let snapshot = snapshot.to_str().unwrap();

    let json = success(&policy(
        dir.path(),
        &[
            "--snapshot",
            snapshot,
            "--locked",
            "EQ-B1:2026-03-02T10:00:00Z",
        ],
        None,
    ));
    assert_eq!(json["policy"]["examReady"], true);
    assert_eq!(json["policy"]["examAvailability"], "available");
    assert!(
        json["policy"]["allowedActions"]
            .as_array()
            .unwrap()
            .contains(&Value::from("EXAM_BLOCK"))
    );
    assert_eq!(
        json["exam"]["availableQuestionIds"],
        serde_json::json!(["EQ-B2"])
    );

    let json = success(&policy(
        dir.path(),
        &[
            "--snapshot",
            snapshot,
            "--locked",
            "EQ-B1:2026-03-02T10:00:00Z",
            "--passed",
            "EQ-B2",
        ],
        None,
    ));
    assert_eq!(json["policy"]["examAvailability"], "locked");
    assert_eq!(json["policy"]["examNextEligibleAt"], "2026-03-02T10:00:00Z");

    // The snapshot can come from standard input too.
    let json = success(&policy(
        dir.path(),
        &["--snapshot", "-"],
        Some(READY_SNAPSHOT),
    ));
    assert_eq!(json["policy"]["focusUnitId"], "equations");
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = bundle();
    let d = dir.path().to_str().unwrap();

    let unknown = failure(&tutorflow(
        &["policy", "--dir", d, "--course", "calculus"],
        None,
    ));
    assert!(
        unknown.contains("course `calculus` does not exist"),
        "{unknown}"
    );
    assert!(
        unknown.contains("mini"),
        "lists the known courses: {unknown}"
    );

    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"studentId\": ").unwrap();
    let malformed = failure(&policy(
        dir.path(),
        &["--snapshot", broken.to_str().unwrap()],
        None,
    ));
    assert!(
        malformed.contains("is not a student snapshot"),
        "{malformed}"
    );

    let missing = failure(&policy(
        dir.path(),
        &["--snapshot", "/no/such/file.json"],
        None,
    ));
    assert!(
        missing.contains("cannot read /no/such/file.json"),
        "{missing}"
    );

    let other_course = READY_SNAPSHOT.replace("\"mini\"", "\"other\"");
    let wrong = failure(&policy(
        dir.path(),
        &["--snapshot", "-"],
        Some(&other_course),
    ));
    assert!(wrong.contains("for course `other`"), "{wrong}");

    for (flag, value, words) in [
        ("--mapped", "equations", "is not UNIT:CONFIDENCE"),
        ("--mapped", "equations:high", "is not a number"),
        ("--mapped", "equations:1.5", "not between 0 and 1"),
        ("--mapped", ":0.5", "no unit id"),
        ("--locked", "EQ-B1", "is not QUESTION_ID:UNTIL"),
        ("--locked", "EQ-B1:tomorrow", "not an RFC 3339 time"),
        ("--now", "yesterday", "not an RFC 3339 time"),
    ] {
        let stderr = failure(&tutorflow(
            &["policy", "--dir", d, "--course", "mini", flag, value],
            None,
        ));
        assert!(stderr.contains(flag), "{flag} {value}: {stderr}");
        assert!(stderr.contains(words), "{flag} {value}: {stderr}");
    }

    std::fs::write(
        dir.path().join("workflows/courses/mini/units/adding.yaml"),
        "id: adding\ntitle: [",
    )
    .unwrap();
    let invalid = failure(&policy(dir.path(), &[], None));
    assert!(invalid.contains("is not valid"), "{invalid}");
    assert!(invalid.contains("adding.yaml"), "{invalid}");
}
