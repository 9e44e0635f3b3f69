//! `tutorflow safety`: which safety category messages fall in, and which
//! rule decided — for whoever edits the workflow's safety section.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;
use tutorflow::engine::safety::{SafetyGate, normalize};

use crate::{bundle, safety_cv};

#[derive(clap::Args)]
pub struct Args {
    /// The workflow whose safety section to use (a file stem in workflows/).
    #[arg(long, default_value = "default")]
    workflow: String,
    /// Messages to check; without any, one message per line of standard input.
    #[arg(allow_hyphen_values = true)]
    messages: Vec<String>,
    /// Print JSON lines instead of text.
    #[arg(long)]
    json: bool,
    /// Bundle root holding workflows/ and prompts/.
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    /// Instead of checking messages, score the classifier's examples by
    /// k-fold cross-validation (5 folds unless given), to choose its
    /// thresholds from.
    #[arg(long, value_name = "FOLDS", num_args = 0..=1, default_missing_value = "5")]
    cross_validate: Option<usize>,
}

pub async fn run(args: Args) -> ExitCode {
    let workflow = match bundle::load_workflow(&args.dir, &args.workflow).await {
        Ok(w) => w,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(folds) = args.cross_validate {
        return match safety_cv::report(&workflow, folds) {
            Ok(report) => {
                print!("{report}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        };
    }
    let gate = SafetyGate::new(&workflow);
    let messages: Vec<String> = if args.messages.is_empty() {
        std::io::stdin()
            .lock()
            .lines()
            .map_while(Result::ok)
            .filter(|l| !l.trim().is_empty())
            .collect()
    } else {
        args.messages
    };
    for message in &messages {
        let hit = gate.classify(message);
        if args.json {
            println!(
                "{}",
                json!({
                    "message": message,
                    "normalized": normalize(message),
                    "category": hit.as_ref().map(|h| &h.category),
                    "rule": hit.as_ref().map(|h| &h.rule_id),
                    "tutoring": hit.as_ref().map(|h| if h.pauses_tutoring() { "pause" } else { "continue" }),
                    "alert": hit.as_ref().is_some_and(|h| h.notify_teacher),
                })
            );
        } else {
            match &hit {
                Some(h) => println!("{}\t{}\t{message}", h.category, h.rule_id),
                None => println!("-\t-\t{message}"),
            }
        }
    }
    ExitCode::SUCCESS
}
