//! The token estimate against the real OpenAI encodings (tiktoken's
//! o200k_base and cl100k_base, a dev-dependency only): on the shipped
//! prompts, content, fixtures, golden schemas and rendered tutor prompts it
//! never under-counts o200k and over-counts by at most MAX_OVERESTIMATE.

use crate::llm_support;

use std::path::Path;

use tutorflow::llm::prompt::tutor_prompt;
use tutorflow::llm::tokens::{MAX_OVERESTIMATE, estimate};
use tutorflow::model::{HistoryMessage, Role};

use llm_support::{bundle, repo_root, sample_units, turn_input};

fn files_under(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            out.push((path.display().to_string(), text));
        }
    }
}

/// Everything a prompt is made of, and whole rendered prompts.
fn corpus() -> Vec<(String, String)> {
    let root = repo_root();
    let mut texts = Vec::new();
    for dir in [
        "prompts",
        "workflows",
        "tests/fixtures/contracts",
        "shared/tests/golden",
    ] {
        files_under(&root.join(dir), &mut texts);
    }
    texts.push((
        "README.md".into(),
        std::fs::read_to_string(root.join("README.md")).unwrap(),
    ));
    let bundle = bundle();
    let units = sample_units(&bundle);
    let mut workflow = bundle.workflows["default"].clone();
    workflow.token_budget = 200_000;
    for category in &workflow.categories {
        let mut input = turn_input(&units);
        input.category.id = category.id.clone();
        input.history = vec![
            HistoryMessage {
                role: Role::Assistant,
                text: "What would you do first to solve 3x = 21?".into(),
            },
            HistoryMessage {
                role: Role::Student,
                text: "divide by 3 so x=7 🙂".into(),
            },
        ];
        let prompt = tutor_prompt(&bundle.prompts, &workflow, &input).unwrap();
        for (i, message) in prompt.messages.iter().enumerate() {
            texts.push((
                format!("prompt {} message {i}", category.id),
                message.content.clone(),
            ));
        }
    }
    texts
}

#[test]
fn the_estimate_bounds_the_real_count_from_above() {
    let o200k = tiktoken_rs::o200k_base().unwrap();
    let cl100k = tiktoken_rs::cl100k_base().unwrap();
    let mut worst = (f64::MAX, 0.0_f64);
    let mut report = Vec::new();
    for (name, text) in corpus() {
        let real = o200k.encode_with_special_tokens(&text).len();
        if real < 20 {
            continue;
        }
        let old = cl100k.encode_with_special_tokens(&text).len();
        let estimated = f64::from(estimate(&text));
        let ratio = estimated / real as f64;
        worst = (worst.0.min(ratio), worst.1.max(ratio));
        report.push(format!(
            "{ratio:.2} (cl100k {:.2}) {real:>6} {name}",
            estimated / old as f64
        ));
        assert!(
            estimated >= real as f64,
            "{name}: estimate {estimated} under the real count {real}"
        );
        // cl100k splits Spanish words finer than o200k, which the
        // estimate follows; the bound that matters (o200k) holds above.
        let cl100k_floor = if name.ends_with("_es.txt") {
            0.85
        } else {
            0.95
        };
        assert!(
            estimated >= cl100k_floor * old as f64,
            "{name}: estimate {estimated} well under cl100k's {old}"
        );
        assert!(
            ratio <= MAX_OVERESTIMATE,
            "{name}: estimate {estimated} is {ratio:.2} times the real count {real}"
        );
    }
    report.sort();
    println!(
        "{}\nratio range {:.2}..{:.2}",
        report.join("\n"),
        worst.0,
        worst.1
    );
}
