//! `tutorflow sweep`: one run of the idle sweep against the configured
//! store, as an operator runs it. What it ends is checked end to end in the
//! library's problem-set tests; here, the command's output and exit codes.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn sweep(store: &std::path::Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tutorflow"))
        .arg("sweep")
        .args(extra)
        .env("TUTORFLOW_SQLITE_PATH", store)
        .env("TUTORFLOW_CONTENT_DIR", repo_root())
        .env_remove("TUTORFLOW_CONFIG")
        .output()
        .unwrap()
}

#[test]
fn a_sweep_of_a_fresh_store_ends_nothing_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let output = sweep(&dir.path().join("state.sqlite"), &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        report,
        serde_json::json!({"checked": 0, "expired": 0, "failed": 0, "more": false})
    );
}

#[test]
fn a_missing_configuration_file_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere.toml");
    let output = sweep(
        &dir.path().join("state.sqlite"),
        &["--config", missing.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("nowhere.toml"), "{stderr}");
    assert!(output.stdout.is_empty());
}
