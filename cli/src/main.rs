//! The `tutorflow` command for content teams and developers.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod generate;
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
    /// Generate practice items from a skill blueprint, as JSON lines.
    ///
    /// Without --reveal each line is what a student's app receives (no
    /// answer); --reveal adds the answer, the distractors and the parameters.
    /// Items are deterministic: the same blueprint, difficulty and seed give
    /// the same item.
    Generate(generate::Args),
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Validate(args) => validate::run(args).await,
        Command::Generate(args) => generate::run(args).await,
    }
}
