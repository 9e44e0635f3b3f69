//! `tutorflow test [PATH...]`: plays workflow test scripts and checks each
//! step's `expect:` against what happened.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tutorflow::content::Diagnostic;

use crate::script::{self, Script};
use crate::simulator::{Setup, SetupArgs, Simulation};

/// Where a bundle keeps its workflow tests.
const TESTS_DIR: &str = "workflows/tests";

#[derive(clap::Args)]
pub struct Args {
    /// Test files, or directories searched for *.yaml files
    /// [default: workflows/tests under the bundle root].
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    setup: SetupArgs,
}

pub async fn run(args: Args) -> ExitCode {
    let Some(setup) = args.setup.load().await else {
        return ExitCode::FAILURE;
    };
    let roots = if args.paths.is_empty() {
        vec![args.setup.dir.unwrap_or_default().join(TESTS_DIR)]
    } else {
        args.paths
    };
    let files = match test_files(&roots) {
        Ok(files) if files.is_empty() => {
            let searched: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
            eprintln!(
                "error: no workflow tests (*.yaml) in {}",
                searched.join(", ")
            );
            return ExitCode::FAILURE;
        }
        Ok(files) => files,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    let (mut passed, mut failed) = (0, 0);
    for file in &files {
        let path = file.display().to_string();
        let outcome = match std::fs::read_to_string(file) {
            Ok(text) => match script::parse(&path, &text, &setup.bundle()) {
                Ok(script) => run_test(&setup, &script).await,
                Err(problems) => Outcome {
                    name: path.clone(),
                    steps: 0,
                    failures: problems,
                },
            },
            Err(e) => Outcome {
                name: path.clone(),
                steps: 0,
                failures: vec![Diagnostic::new(&path, 1, 1, format!("cannot read: {e}"))],
            },
        };
        if outcome.failures.is_empty() {
            passed += 1;
            println!("ok    {path}: {} ({} steps)", outcome.name, outcome.steps);
        } else {
            failed += 1;
            println!("FAIL  {path}: {}", outcome.name);
            for failure in &outcome.failures {
                println!("      {failure}");
            }
        }
    }
    println!(
        "{} test{}: {passed} passed, {failed} failed",
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    );
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

struct Outcome {
    name: String,
    steps: usize,
    failures: Vec<Diagnostic>,
}

/// Plays `script`, checking every expectation; a step that cannot be played
/// ends the test there.
async fn run_test(setup: &Setup, script: &Script) -> Outcome {
    let mut outcome = Outcome {
        name: script.name.clone(),
        steps: script.steps.len(),
        failures: Vec::new(),
    };
    let mut simulation = match Simulation::start(setup, script).await {
        Ok(simulation) => simulation,
        Err(e) => {
            outcome.failures.push(e.diagnostic(&script.path));
            return outcome;
        }
    };
    for step in &script.steps {
        let context = format!("step {} ({})", step.number, step.name());
        let line = match simulation.step(step).await {
            Ok(line) => line.to_value(),
            Err(e) => {
                let mut d = e.diagnostic(&script.path);
                d.message = format!("{context}: {}", d.message);
                outcome.failures.push(d);
                return outcome;
            }
        };
        for expectation in &step.expect {
            if let Err(message) = expectation.check(&line) {
                outcome.failures.push(Diagnostic::new(
                    &script.path,
                    expectation.at.line,
                    expectation.at.column,
                    format!("{context}: {message}"),
                ));
            }
        }
    }
    outcome
}

/// The files named, and the *.yaml / *.yml files under the directories
/// named, each directory's in name order.
fn test_files(roots: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for root in roots {
        if root.is_dir() {
            collect(root, &mut files)?;
        } else if root.is_file() {
            files.push(root.clone());
        } else {
            return Err(format!("{} does not exist", root.display()));
        }
    }
    Ok(files)
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    paths.sort();
    for path in paths {
        if path.is_dir() {
            collect(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            files.push(path);
        }
    }
    Ok(())
}
