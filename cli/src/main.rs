//! The `tutorflow` command for content teams and developers.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bundle;
mod classify;
mod expect;
mod generate;
mod grade;
mod policy;
mod publish;
mod safety;
mod safety_cv;
mod script;
mod serve;
mod simulate;
mod simulator;
mod sweep;
mod validate;
mod workflow_tests;

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
    /// Run the whole API locally (all six functions' routes on one port).
    ///
    /// Defaults: the embedded SQLite store, the content in this directory
    /// (reloaded when files change) and the offline tutor. Prints the URL,
    /// a development token and a sample request when ready.
    Serve(serve::Args),
    /// Show the tutor's policy for a student: what it may do next, and why.
    ///
    /// Computes the deterministic policy from a student snapshot,
    /// the units a message maps to, exam lockouts and the course's workflow,
    /// and prints it as JSON with every candidate unit's score.
    Policy(policy::Args),
    /// Publish a content bundle to S3 for the functions to pick up.
    ///
    /// Validates first and refuses invalid content (printing every problem,
    /// exit 1). Uploads the files under a prefix named after the bundle's
    /// content hash, then writes manifest.json (paths, sizes, SHA-256) last,
    /// so a reader never sees a half-uploaded bundle. Credentials come from
    /// the usual AWS chain (environment, profile, role).
    Publish(publish::Args),
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
    /// Put student messages in the workflow's safety categories.
    ///
    /// For each message (arguments, or lines of standard input) prints the
    /// category (or `-`), the term or pattern that decided, and the message;
    /// --json adds the normalised text the patterns read. With
    /// --cross-validate, scores the classifier on its own examples instead.
    Safety(safety::Args),
    /// Generate practice items from a skill blueprint, as JSON lines.
    ///
    /// Without --reveal each line is what a student's app receives (no
    /// answer); --reveal adds the answer, the distractors and the parameters.
    /// Items are deterministic: the same blueprint, difficulty and seed give
    /// the same item.
    Generate(generate::Args),
    /// Play a scripted student against the real handlers, in-process.
    ///
    /// Runs every step of a YAML script (messages, button presses, drill and
    /// exam answers, memo views) through the same request handler as the
    /// functions, with a private in-memory store, a fixed clock and the
    /// offline tutor unless the configuration chooses another, and prints
    /// one JSON line per step: category, action, card, policy, validation,
    /// grading and snapshotLite.
    Simulate(simulate::Args),
    /// End the sessions left idle past their time to live, once.
    ///
    /// What the scheduled sweep does on AWS, against the configured store:
    /// each problem set without a message past `session_ttl_minutes` is
    /// closed as abandoned, with its report and `session.completed` sent.
    /// Prints what it did as JSON; exits 1 if the store could not be read.
    Sweep(sweep::Args),
    /// Run workflow tests: scripted students with expectations per step.
    ///
    /// Prints `ok` or `FAIL` per test file, every failed expectation as
    /// path:line:column: message, and exits 1 when any test fails.
    Test(workflow_tests::Args),
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Validate(args) => validate::run(args).await,
        Command::Serve(args) => serve::run(args).await,
        Command::Sweep(args) => sweep::run(args).await,
        Command::Policy(args) => policy::run(args).await,
        Command::Publish(args) => publish::run(args).await,
        Command::Grade(args) => grade::run(args).await,
        Command::Classify(args) => classify::run(args).await,
        Command::Safety(args) => safety::run(args).await,
        Command::Generate(args) => generate::run(args).await,
        Command::Simulate(args) => simulate::run(args).await,
        Command::Test(args) => workflow_tests::run(args).await,
    }
}
