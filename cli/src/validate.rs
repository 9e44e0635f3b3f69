//! `tutorflow validate [DIR]`.

use std::path::PathBuf;
use std::process::ExitCode;

use tutorflow::content::yaml_index::YamlIndex;
use tutorflow::content::{Bundle, ContentFiles, ContentSource, Diagnostics, FsSource};
use tutorflow::engine::reply::answer_guard;

use crate::bundle;

#[derive(clap::Args)]
pub struct Args {
    /// Bundle root (holding workflows/ and prompts/) or its workflows/ directory.
    #[arg(default_value = ".")]
    dir: PathBuf,
}

pub async fn run(args: Args) -> ExitCode {
    let Some((source, files)) = bundle::fetch(&args.dir).await else {
        return ExitCode::FAILURE;
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
            print_worked_answers(&source, &files, &bundle);
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
    let prefix = path_prefix(source);
    for d in &diagnostics.0 {
        println!("{prefix}{d}");
    }
    let n = diagnostics.0.len();
    eprintln!("{n} problem{} found in {}", plural(n), source.describe());
}

/// Warns where a unit's own text works one of its exam questions out to
/// its answer: the tutor never shows it while the card is open, but the
/// text is better reworded.
fn print_worked_answers(source: &FsSource, files: &ContentFiles, bundle: &Bundle) {
    let prefix = path_prefix(source);
    let mut warnings = 0;
    for course in bundle.courses.values() {
        for unit in course.units.values() {
            let found = answer_guard::worked_in_unit(unit);
            if found.is_empty() {
                continue;
            }
            let own_id = format!("id: {}", unit.id);
            let file = files.files.iter().find(|(path, text)| {
                path.contains("/units/") && text.lines().any(|l| l.trim_end() == own_id)
            });
            let (path, index) = match file {
                Some((path, text)) => (path.as_str(), Some(YamlIndex::build(text))),
                None => ("", None),
            };
            for w in found {
                let at = index.as_ref().map(|i| i.locate(&w.at));
                let (line, column) = at.map_or((1, 1), |p| (p.line, p.column));
                println!(
                    "{prefix}{path}:{line}:{column}: warning: exam question {} is worked out to its answer ({}) in unit `{}`'s own text; the tutor's context hides it while the card is open, but consider other numbers",
                    w.question_id, w.answer, unit.id
                );
                warnings += 1;
            }
        }
    }
    if warnings > 0 {
        eprintln!(
            "{warnings} warning{}: exam answers worked out in their unit's text",
            plural(warnings)
        );
    }
}

fn path_prefix(source: &FsSource) -> String {
    let root = source.root().display().to_string();
    if root == "." || root.is_empty() {
        String::new()
    } else {
        format!("{}/", root.trim_end_matches('/'))
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
