//! `tutorflow simulate --script FILE.yaml`: plays a scripted student and
//! prints one JSON line per step.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::script;
use crate::simulator::{SetupArgs, Simulation};

const AFTER_HELP: &str = "\
Each line: step, at (path:line:column), do (the step's key), then
  turns (say, event, stuck, answer_in_chat, continue): category, action,
    card, origin, validation, policy {focus, primaryTarget, blocker, tier,
    allowedActions, stuck, examReady}, result/counted/mistakeTag (an answer
    graded this turn), pending, scaffolding, teachBack, pacing, plan
    {step, stepsCompleted, blocked, replans, complete, extensionTurns}
    (teach_me), problemSet {action, signal, problem, completed, ended}
    (problem_set), tutorText
  answer_drill: answer, result, counted, mistakeTag, feedback
  exam: questionId, selected, result, unitTier, locked, lockedUntil, feedback
  view_memo: questionId, locked, lockedUntil
  wait: now
  pause, resume, end: status, pausedAt, endedAt, problemSet, tutorText
and snapshotLite (turns, answer_drill, exam, view_memo). A turn step that
expects `refused:` prints the API's refusal {status, title, detail}. The script format is in the README
(\"Simulating a student\"); `expect:` blocks are ignored here and checked by
`tutorflow test`.

Example:
  tutorflow simulate --script workflows/tests/bronze-whole-numbers.yaml";

#[derive(clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// The script to play.
    #[arg(long, value_name = "FILE.yaml")]
    script: PathBuf,
    #[command(flatten)]
    setup: SetupArgs,
}

pub async fn run(args: Args) -> ExitCode {
    let Some(setup) = args.setup.load().await else {
        return ExitCode::FAILURE;
    };
    let path = args.script.display().to_string();
    let text = match std::fs::read_to_string(&args.script) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: cannot read {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let script = match script::parse(&path, &text, &setup.bundle()) {
        Ok(script) => script,
        Err(problems) => {
            for problem in &problems {
                eprintln!("{problem}");
            }
            return ExitCode::FAILURE;
        }
    };
    let mut simulation = match Simulation::start(&setup, &script).await {
        Ok(simulation) => simulation,
        Err(e) => {
            eprintln!("{}", e.diagnostic(&path));
            return ExitCode::FAILURE;
        }
    };
    let stdout = std::io::stdout();
    for step in &script.steps {
        let line = match simulation.step(step).await {
            Ok(line) => line,
            Err(e) => {
                eprintln!("{}", e.diagnostic(&path));
                return ExitCode::FAILURE;
            }
        };
        let written = serde_json::to_string(&line)
            .map_err(std::io::Error::other)
            .and_then(|json| {
                let mut out = stdout.lock();
                writeln!(out, "{json}")?;
                out.flush()
            });
        if let Err(e) = written {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
