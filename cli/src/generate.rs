//! `tutorflow generate --blueprint ID [--difficulty D] [--seed N] [--count K] [--theme T]... [--reveal] [--dir DIR]`.
//!
//! Prints generated items as JSON lines. Without `--reveal` each line is
//! what a student's app receives: the wording, the LaTeX and (for
//! multiple-choice items) the options, with nothing that gives the answer
//! away. `--reveal` adds the answer, the distractors and their mistakes,
//! the scenario and the drawn parameters. `--theme` (repeatable) generates
//! for a student with those example themes, as a drill would.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tutorflow::content::blueprint::ItemFormat;
use tutorflow::content::{Bundle, ContentSource};
use tutorflow::engine::practice::generate::{Item, generate_themed};
use tutorflow::model::ExampleTheme;

use crate::bundle;

/// Most items one run prints.
const MAX_COUNT: u64 = 100_000;

#[derive(clap::Args)]
pub struct Args {
    /// Skill blueprint id, e.g. MATH.ARITH.ADD.2DIGIT.
    #[arg(long)]
    blueprint: String,
    /// Target difficulty from 0 (easiest) to 1 (hardest).
    #[arg(long, default_value_t = 0.5, value_parser = parse_difficulty)]
    difficulty: f64,
    /// Seed of the first item; the next items use the following seeds.
    /// Without it a seed is picked at random (each line shows its seed).
    #[arg(long)]
    seed: Option<u64>,
    /// How many items to print.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=MAX_COUNT))]
    count: u64,
    /// A student's example theme (sports, cooking, ...); repeat it for
    /// several, most liked first. Items are told in one the blueprint offers.
    #[arg(long = "theme", value_parser = parse_theme)]
    themes: Vec<ExampleTheme>,
    /// Include the answer, the distractors and the parameters.
    #[arg(long)]
    reveal: bool,
    /// Bundle root (holding workflows/ and prompts/) or its workflows/ directory.
    #[arg(long, default_value = ".")]
    dir: PathBuf,
}

fn parse_difficulty(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{text} is not between 0 and 1"))
    }
}

fn parse_theme(text: &str) -> Result<ExampleTheme, String> {
    ExampleTheme::named(text.trim()).ok_or_else(|| {
        let known: Vec<&str> = ExampleTheme::ALL.iter().map(|t| t.as_str()).collect();
        format!("`{text}` is not a theme (themes: {})", known.join(", "))
    })
}

pub async fn run(args: Args) -> ExitCode {
    let Some((source, files)) = bundle::fetch(&args.dir).await else {
        return ExitCode::FAILURE;
    };
    let bundle = match Bundle::load(&files) {
        Ok(bundle) => bundle,
        Err(diagnostics) => {
            eprintln!("{diagnostics}");
            eprintln!(
                "error: the content bundle in {} is not valid (run `tutorflow validate`)",
                source.describe()
            );
            return ExitCode::FAILURE;
        }
    };
    let Some(blueprint) = bundle.blueprints.get(&args.blueprint) else {
        let known: Vec<&str> = bundle.blueprints.keys().map(String::as_str).collect();
        eprintln!(
            "error: no blueprint `{}` in {} (known: {})",
            args.blueprint,
            source.describe(),
            known.join(", ")
        );
        return ExitCode::FAILURE;
    };
    let first = args.seed.unwrap_or_else(random_seed);
    let themes: Vec<&str> = args.themes.iter().map(|t| t.as_str()).collect();
    let mut out = io::stdout().lock();
    for k in 0..args.count {
        let seed = first.wrapping_add(k);
        let item = match generate_themed(blueprint, args.difficulty, seed, &themes) {
            Ok(item) => item,
            Err(e) => {
                eprintln!("error: seed {seed}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let line = if args.reveal {
            serde_json::to_value(&item).unwrap_or(Value::Null)
        } else {
            client_view(&item)
        };
        if let Err(e) = writeln!(out, "{line}") {
            // A closed pipe (`| head`) is the reader's choice, not a failure.
            if e.kind() == io::ErrorKind::BrokenPipe {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// The item as a student's app receives it.
fn client_view(item: &Item) -> Value {
    let mut view = json!({
        "blueprintId": item.blueprint_id,
        "seed": item.seed,
        "targetDifficulty": item.target_difficulty,
        "difficulty": item.difficulty,
        "format": item.format,
        "stem": item.stem,
        "questionLatex": item.question_latex,
    });
    if let Some(theme) = &item.theme {
        view["theme"] = json!(theme);
    }
    if item.format == ItemFormat::MultipleChoice {
        view["options"] = json!(item.options);
    }
    if let Some(limit) = item.time_limit_seconds {
        view["timeLimitSeconds"] = json!(limit);
    }
    view
}

fn random_seed() -> u64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    // Fold the nanoseconds into 64 bits; the generator mixes them further.
    (now as u64) ^ ((now >> 64) as u64) ^ u64::from(std::process::id()).rotate_left(32)
}
