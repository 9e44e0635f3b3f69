//! `tutorflow grade`: grade one answer, or a spreadsheet of answers.

use std::io::{self, BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use tutorflow::content::workflow::GradingSettings;
use tutorflow::engine::grading::{self, Grade};
use tutorflow::model::{AnswerKind, ExpectedAnswer};

use crate::bundle;

#[derive(Clone, Copy, clap::ValueEnum)]
enum Kind {
    Number,
    Expression,
    Equation,
    Mcq,
    Text,
}

impl From<Kind> for AnswerKind {
    fn from(kind: Kind) -> Self {
        match kind {
            Kind::Number => AnswerKind::Number,
            Kind::Expression => AnswerKind::Expression,
            Kind::Equation => AnswerKind::Equation,
            Kind::Mcq => AnswerKind::Mcq,
            Kind::Text => AnswerKind::Text,
        }
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// The expected answer (`4`, `x = 4`, `2x + 3`, `12 cm`; for mcq the
    /// correct option's text, letter or number).
    #[arg(long, required_unless_present = "batch", allow_hyphen_values = true)]
    expected: Option<String>,
    /// What the student typed.
    #[arg(long, required_unless_present = "batch", allow_hyphen_values = true)]
    answer: Option<String>,
    /// How to check the answer; inferred from the expected answer when omitted.
    #[arg(long, value_enum)]
    kind: Option<Kind>,
    /// Multiple-choice options, separated by `|`.
    #[arg(long)]
    options: Option<String>,
    /// The unit the answer is expected in.
    #[arg(long)]
    unit: Option<String>,
    /// The question's text, to notice an answer that only repeats it.
    #[arg(long)]
    question: Option<String>,
    /// Read tab-separated lines `kind<TAB>expected<TAB>answer[<TAB>options
    /// separated by |[<TAB>unit]]` from standard input; print one JSON
    /// object per line, in order. An empty kind is inferred; a first line
    /// starting with `kind` is a header and is skipped.
    #[arg(long, conflicts_with_all = ["expected", "answer", "kind", "options", "unit", "question"])]
    batch: bool,
    /// Use the grading settings of this workflow (default: the built-in ones).
    #[arg(long)]
    workflow: Option<String>,
    /// Bundle root holding workflows/, for --workflow.
    #[arg(long, default_value = ".")]
    dir: PathBuf,
}

fn split_options(options: &str) -> Vec<String> {
    options
        .split('|')
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .map(str::to_owned)
        .collect()
}

fn expected_answer(
    kind: Option<AnswerKind>,
    value: &str,
    options: Vec<String>,
    unit: Option<String>,
) -> ExpectedAnswer {
    ExpectedAnswer {
        kind: kind.unwrap_or_else(|| grading::infer_kind(value, &options)),
        value: value.to_owned(),
        unit: unit.filter(|u| !u.trim().is_empty()),
        options,
        mistakes: Vec::new(),
    }
}

fn print(out: &mut impl Write, grade: &Grade) -> io::Result<()> {
    let line = serde_json::to_string(grade).map_err(io::Error::other)?;
    writeln!(out, "{line}")
}

pub async fn run(args: Args) -> ExitCode {
    let settings = match &args.workflow {
        Some(name) => match bundle::load_workflow(&args.dir, name).await {
            Ok(workflow) => workflow.grading,
            Err(message) => {
                eprintln!("error: {message}");
                return ExitCode::FAILURE;
            }
        },
        None => GradingSettings::default(),
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    if args.batch {
        return batch(&settings, io::stdin().lock(), &mut out);
    }
    let (Some(expected), Some(answer)) = (&args.expected, &args.answer) else {
        eprintln!("error: --expected and --answer are required without --batch");
        return ExitCode::FAILURE;
    };
    let options = args
        .options
        .as_deref()
        .map(split_options)
        .unwrap_or_default();
    let kind = args.kind.map(AnswerKind::from);
    if kind == Some(AnswerKind::Mcq) && options.is_empty() {
        eprintln!("error: --kind mcq needs --options 'A|B|C'");
        return ExitCode::FAILURE;
    }
    let expected = expected_answer(kind, expected, options, args.unit.clone());
    let grade = grading::grade(&expected, answer, args.question.as_deref(), &settings);
    match print(&mut out, &grade) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn parse_kind(field: &str) -> Result<Option<AnswerKind>, String> {
    Ok(Some(match field.trim().to_lowercase().as_str() {
        "" => return Ok(None),
        "number" => AnswerKind::Number,
        "expression" => AnswerKind::Expression,
        "equation" => AnswerKind::Equation,
        "mcq" => AnswerKind::Mcq,
        "text" => AnswerKind::Text,
        other => {
            return Err(format!(
                "unknown kind `{other}` (expected number, expression, equation, mcq or text)"
            ));
        }
    }))
}

/// One batch line as an expected answer and the student's answer.
fn parse_line(line: &str) -> Result<(ExpectedAnswer, String), String> {
    let fields: Vec<&str> = line.split('\t').collect();
    if !(3..=5).contains(&fields.len()) {
        return Err(format!(
            "expected 3 to 5 tab-separated fields (kind, expected, answer, options, unit), found {}",
            fields.len()
        ));
    }
    let kind = parse_kind(fields[0])?;
    let options = fields.get(3).map(|o| split_options(o)).unwrap_or_default();
    if kind == Some(AnswerKind::Mcq) && options.is_empty() {
        return Err("an mcq line needs its options in the fourth field, separated by |".to_owned());
    }
    if fields[1].trim().is_empty() {
        return Err("the expected answer is empty".to_owned());
    }
    let unit = fields.get(4).map(|u| u.to_string());
    Ok((
        expected_answer(kind, fields[1], options, unit),
        fields[2].to_owned(),
    ))
}

fn batch(settings: &GradingSettings, input: impl BufRead, out: &mut impl Write) -> ExitCode {
    let mut problems = 0;
    for (n, line) in input.lines().enumerate() {
        let number = n + 1;
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                eprintln!("error: line {number}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let line = line.trim_end_matches('\r');
        if number == 1 && line.to_lowercase().starts_with("kind\t") {
            continue;
        }
        let written = match parse_line(line) {
            Ok((expected, answer)) => {
                print(out, &grading::grade(&expected, &answer, None, settings))
            }
            Err(message) => {
                problems += 1;
                eprintln!("line {number}: {message}");
                let error = serde_json::json!({"line": number, "error": message});
                writeln!(out, "{error}")
            }
        };
        if let Err(e) = written {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    }
    if problems > 0 {
        eprintln!(
            "{problems} line{} could not be graded",
            if problems == 1 { "" } else { "s" }
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
