//! `tutorflow generate`, run as a user would: JSON lines, reproducible by
//! seed, nothing that gives the answer away unless --reveal, and clear
//! messages with a non-zero exit for bad arguments — never a panic.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn bundle_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn tutorflow(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_tutorflow"))
        .arg("generate")
        .args(args)
        .arg("--dir")
        .arg(bundle_dir())
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    output
}

fn lines(output: &Output) -> Vec<Value> {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn prints_reproducible_json_lines() {
    let args = [
        "--blueprint",
        "MATH.ARITH.ADD.2DIGIT",
        "--seed",
        "5",
        "--count",
        "3",
    ];
    let first = tutorflow(&args);
    let items = lines(&first);
    assert_eq!(items.len(), 3);
    assert_eq!(
        first.stdout,
        tutorflow(&args).stdout,
        "same seed, same items"
    );
    let seeds: Vec<u64> = items.iter().map(|i| i["seed"].as_u64().unwrap()).collect();
    assert_eq!(seeds, [5, 6, 7]);
    for item in &items {
        assert_eq!(item["blueprintId"], "MATH.ARITH.ADD.2DIGIT");
        assert!(
            item["questionLatex"].as_str().unwrap().contains('+'),
            "{item}"
        );
        assert!(!item["stem"].as_str().unwrap().is_empty());
        assert_eq!(item["options"].as_array().unwrap().len(), 4);
        assert_eq!(item["targetDifficulty"], 0.5);
    }
}

#[test]
fn without_reveal_nothing_gives_the_answer_away() {
    let args = [
        "--blueprint",
        "MATH.ALG.EQ.TWOSTEP",
        "--seed",
        "11",
        "--difficulty",
        "0.6",
    ];
    let client = &lines(&tutorflow(&args))[0];
    for hidden in [
        "answer",
        "answerIndex",
        "distractors",
        "parameters",
        "scenario",
    ] {
        assert!(client.get(hidden).is_none(), "{hidden} leaked: {client}");
    }
    // A typed item shows no options either: they include the answer.
    assert!(client.get("options").is_none(), "{client}");
    let mut reveal_args = args.to_vec();
    reveal_args.push("--reveal");
    let revealed = &lines(&tutorflow(&reveal_args))[0];
    assert_eq!(revealed["stem"], client["stem"]);
    let answer = revealed["answer"]["text"].as_str().unwrap();
    assert!(answer.starts_with("x = "), "{answer}");
    assert!(
        !client.to_string().contains(answer),
        "{client} contains {answer}"
    );
    let index = revealed["answerIndex"].as_u64().unwrap() as usize;
    assert_eq!(revealed["options"][index], answer);
    assert!(revealed["parameters"]["x"].is_string());
}

#[test]
fn a_random_seed_is_shown_and_reproduces_the_item() {
    let first = &lines(&tutorflow(&[
        "--blueprint",
        "MATH.FRAC.SIMPLIFY",
        "--difficulty",
        "0.9",
    ]))[0];
    let seed = first["seed"].as_u64().unwrap().to_string();
    let again = &lines(&tutorflow(&[
        "--blueprint",
        "MATH.FRAC.SIMPLIFY",
        "--difficulty",
        "0.9",
        "--seed",
        &seed,
    ]))[0];
    assert_eq!(first, again);
}

#[test]
fn bad_arguments_are_explained() {
    for (args, words) in [
        (
            vec![
                "--blueprint",
                "MATH.ARITH.ADD.2DIGIT",
                "--difficulty",
                "1.5",
            ],
            "between 0 and 1",
        ),
        (
            vec![
                "--blueprint",
                "MATH.ARITH.ADD.2DIGIT",
                "--difficulty",
                "hard",
            ],
            "not a number",
        ),
        (
            vec![
                "--blueprint",
                "MATH.ARITH.ADD.2DIGIT",
                "--difficulty",
                "NaN",
            ],
            "between 0 and 1",
        ),
        (
            vec!["--blueprint", "MATH.ARITH.ADD.2DIGIT", "--count", "0"],
            "--count",
        ),
        (
            vec!["--blueprint", "MATH.ARITH.ADD.2DIGIT", "--seed=-3"],
            "--seed",
        ),
        (
            vec!["--blueprint", "MATH.ARITH.ADD.2DIGIT", "--seed", "-3"],
            "'-3'",
        ),
        (vec!["--difficulty", "0.5"], "--blueprint"),
    ] {
        let output = tutorflow(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&output).contains(words),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn an_unknown_blueprint_lists_the_known_ones() {
    let output = tutorflow(&["--blueprint", "MATH.ARITH.ADD.3DIGIT"]);
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.contains("no blueprint `MATH.ARITH.ADD.3DIGIT`"),
        "{message}"
    );
    assert!(message.contains("MATH.ARITH.ADD.2DIGIT"), "{message}");
}

#[test]
fn an_invalid_bundle_shows_its_problems() {
    let dir = tempfile::tempdir().unwrap();
    let copy = |from: &str| {
        let to = dir.path().join(from);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(bundle_dir().join(from), &to).unwrap();
    };
    copy("workflows/default.yaml");
    for entry in std::fs::read_dir(bundle_dir().join("prompts")).unwrap() {
        copy(&format!(
            "prompts/{}",
            entry.unwrap().file_name().to_string_lossy()
        ));
    }
    let broken = dir.path().join("workflows/blueprints/add.yaml");
    std::fs::create_dir_all(broken.parent().unwrap()).unwrap();
    let text = std::fs::read_to_string(bundle_dir().join("workflows/blueprints/add-2digit.yaml"))
        .unwrap()
        .replace("value: \"a + b\"", "value: \"a + q\"");
    std::fs::write(&broken, text).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_tutorflow"))
        .args(["generate", "--blueprint", "MATH.ARITH.ADD.2DIGIT", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.contains("workflows/blueprints/add.yaml:"),
        "{message}"
    );
    assert!(message.contains("`q`"), "{message}");
    let missing = Command::new(env!("CARGO_BIN_EXE_tutorflow"))
        .args(["generate", "--blueprint", "X", "--dir", "/no/such/bundle"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).starts_with("error:"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tutorflow"))
        .args([
            "generate",
            "--blueprint",
            "MATH.INT.ADDSUB",
            "--seed",
            "1",
            "--count",
            "100000",
            "--dir",
        ])
        .arg(bundle_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with('{'));
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!stderr(&output).contains("panicked"));
}
