//! `tutorflow validate [DIR]`.

use std::path::PathBuf;
use std::process::ExitCode;

use tutorflow::content::{Bundle, ContentSource, Diagnostics, FsSource};

#[derive(clap::Args)]
pub struct Args {
    /// Bundle root (holding workflows/ and prompts/) or its workflows/ directory.
    #[arg(default_value = ".")]
    dir: PathBuf,
}

pub async fn run(args: Args) -> ExitCode {
    let source = FsSource::new(&args.dir);
    let files = match source.fetch().await {
        Ok(files) => files,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match Bundle::validate(&files) {
        Ok(bundle) => {
            let s = bundle.summary();
            println!(
                "ok: {} workflow{}, {} course{}, {} units, {} exam questions, {} blueprints, {} prompts (version {})",
                s.workflows,
                plural(s.workflows),
                s.courses,
                plural(s.courses),
                s.units,
                s.exam_items,
                s.blueprints,
                s.prompts,
                &bundle.version[..12]
            );
            ExitCode::SUCCESS
        }
        Err(diagnostics) => {
            print_problems(&source, &diagnostics);
            ExitCode::FAILURE
        }
    }
}

/// Prints every problem as `path:line:column: message`, paths as given on
/// the command line, then a count.
pub fn print_problems(source: &FsSource, diagnostics: &Diagnostics) {
    let root = source.root().display().to_string();
    let prefix = if root == "." || root.is_empty() {
        String::new()
    } else {
        format!("{}/", root.trim_end_matches('/'))
    };
    for d in &diagnostics.0 {
        println!("{prefix}{d}");
    }
    let n = diagnostics.0.len();
    eprintln!("{n} problem{} found in {}", plural(n), source.describe());
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
