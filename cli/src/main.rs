//! The `tutorflow` command for content teams and developers.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod policy;
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
    /// Show the tutor's policy for a student: what it may do next, and why.
    ///
    /// Computes the deterministic policy (seed 004) from a student snapshot,
    /// the units a message maps to, exam lockouts and the course's workflow,
    /// and prints it as JSON with every candidate unit's score.
    Policy(policy::Args),
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Validate(args) => validate::run(args).await,
        Command::Policy(args) => policy::run(args).await,
    }
}
