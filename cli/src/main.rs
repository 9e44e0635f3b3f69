//! The `tutorflow` command for content teams and developers.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bundle;
mod classify;
mod grade;
mod validate;

#[derive(Parser)]
#[command(
    name = "tutorflow",
    version,
    about = "Adaptive tutoring backend: tools for content and development"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a content bundle: workflows, courses, blueprints and prompts.
    ///
    /// Prints a one-line summary and exits 0 when everything is valid;
    /// otherwise prints every problem as path:line:column: message and exits 1.
    Validate(validate::Args),
    /// Grade a student's answer by code, as the tutor does.
    ///
    /// Prints one JSON object: result (correct, close, wrong or
    /// unverifiable), extracted, normalized, tags and reason. With --batch,
    /// grades tab-separated lines from standard input, one JSON object each.
    Grade(grade::Args),
    /// Put a student message in one of a workflow's routing categories.
    ///
    /// Prints the chosen category, the intent (from --intent, the LLM's
    /// reading, or offline heuristics), the code grade of the answer when a
    /// question is pending, and every category with the signals that
    /// matched or why it did not apply.
    Classify(classify::Args),
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Validate(args) => validate::run(args).await,
        Command::Grade(args) => grade::run(args).await,
        Command::Classify(args) => classify::run(args).await,
    }
}
