//! `tutorflow policy`: what the tutor would do next for a student, and why.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use chrono::{DateTime, Utc};
use tutorflow::content::{Bundle, ContentSource, FsSource};
use tutorflow::engine::exam::lockout::LockoutStatus;
use tutorflow::engine::policy::{PolicyInput, StudentRequest, compute_policy};
use tutorflow::engine::snapshot_lite::build_snapshot_lite;
use tutorflow::model::{MappedUnit, StudentSnapshot};

const EXAMPLES: &str = "\
Output (JSON):
  policy        the TutorPolicy the LLM would be given
  candidates    every unit scored this turn, best first, with each normalised
                component of its priority score
  exam          the focus unit's exam candidates at the desired tier and
                which of them can be attempted now
  trace         why: how the target was chosen, the chain of missing
                prerequisites, whether the mapping was ambiguous, ignored units
  snapshotLite  the summary the app would show

Examples:
  tutorflow policy --course prealgebra
  tutorflow policy --course prealgebra --snapshot student.json \\
      --mapped one-step-equations:0.9,inverse-operations:0.3 \\
      --now 2026-03-01T10:00:00Z \\
      --locked EX-OSE-B1:2026-03-02T10:00:00Z --passed EX-OSE-B2";

#[derive(clap::Args)]
#[command(after_long_help = EXAMPLES)]
pub struct Args {
    /// Course id (its directory under workflows/courses/).
    #[arg(long, value_name = "COURSE_ID")]
    course: String,

    /// The student's snapshot (StudentSnapshot JSON, as stored); `-` reads
    /// standard input. Without it: a new student at the course's entry unit.
    #[arg(long, value_name = "FILE.json")]
    snapshot: Option<PathBuf>,

    /// Units the student's message maps to, with confidences in [0, 1].
    #[arg(
        long,
        value_name = "UNIT:CONF,...",
        value_delimiter = ',',
        value_parser = parse_mapped
    )]
    mapped: Vec<MappedUnit>,

    /// When the turn happens (RFC 3339) [default: the current time].
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    now: Option<DateTime<Utc>>,

    /// Exam questions locked until a time (RFC 3339); others are available.
    #[arg(
        long,
        value_name = "QID:UNTIL,...",
        value_delimiter = ',',
        value_parser = parse_locked
    )]
    locked: Vec<(String, DateTime<Utc>)>,

    /// Exam questions the student has already passed.
    #[arg(long, value_name = "QID,...", value_delimiter = ',')]
    passed: Vec<String>,

    /// Bundle root (holding workflows/ and prompts/) or its workflows/ directory.
    #[arg(long, value_name = "DIR", default_value = ".")]
    dir: PathBuf,

    /// Turn id written into the policy.
    #[arg(long, value_name = "ID", default_value = "cli")]
    turn_id: String,
}

pub async fn run(args: Args) -> ExitCode {
    match policy_json(args).await {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn policy_json(args: Args) -> Result<String, String> {
    let source = FsSource::new(&args.dir);
    let files = source.fetch().await.map_err(|e| e.to_string())?;
    let bundle = Bundle::load(&files).map_err(|diagnostics| {
        let mut message = format!(
            "the content bundle in {} is not valid ({} problem{}; run `tutorflow validate` for all):",
            source.describe(),
            diagnostics.0.len(),
            if diagnostics.0.len() == 1 { "" } else { "s" }
        );
        for d in diagnostics.0.iter().take(5) {
            message.push_str(&format!("\n  {d}"));
        }
        message
    })?;
    let course = bundle.course(&args.course).ok_or_else(|| {
        let known: Vec<&str> = bundle.courses.keys().map(String::as_str).collect();
        format!(
            "course `{}` does not exist in {} (courses: {})",
            args.course,
            source.describe(),
            if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            }
        )
    })?;
    let workflow = bundle.workflow_for(course).ok_or_else(|| {
        format!(
            "course `{}` uses workflow `{}`, which does not exist",
            course.id, course.workflow
        )
    })?;
    let snapshot = match &args.snapshot {
        None => StudentSnapshot::new("cli-student", &course.id, &course.entry_unit),
        Some(path) => read_snapshot(path)?,
    };
    if snapshot.course_id != course.id {
        return Err(format!(
            "the snapshot is for course `{}`, not `{}`",
            snapshot.course_id, course.id
        ));
    }
    let mut lockouts: BTreeMap<String, LockoutStatus> = args
        .locked
        .into_iter()
        .map(|(question, until)| (question, LockoutStatus::Locked { until }))
        .collect();
    for question in args.passed {
        lockouts.insert(question, LockoutStatus::Passed);
    }
    let now = args.now.unwrap_or_else(Utc::now);
    let input = PolicyInput {
        snapshot: &snapshot,
        course,
        workflow,
        mapped_units: &args.mapped,
        now,
        turn_id: &args.turn_id,
        request: StudentRequest::None,
    };
    let outcome = compute_policy(&input, &lockouts).map_err(|e| e.to_string())?;
    let lite = build_snapshot_lite(&snapshot, course, workflow, &lockouts, now);
    let mut json = serde_json::to_value(&outcome).map_err(|e| e.to_string())?;
    json["snapshotLite"] = serde_json::to_value(&lite).map_err(|e| e.to_string())?;
    serde_json::to_string_pretty(&json).map_err(|e| e.to_string())
}

fn read_snapshot(path: &PathBuf) -> Result<StudentSnapshot, String> {
    let shown = path.display();
    let text = if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read the snapshot from standard input: {e}"))?;
        text
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?
    };
    serde_json::from_str(&text).map_err(|e| format!("{shown} is not a student snapshot: {e}"))
}

/// `UNIT:CONF`, split at the last colon.
fn parse_mapped(text: &str) -> Result<MappedUnit, String> {
    let (unit, confidence) = text
        .rsplit_once(':')
        .ok_or_else(|| format!("`{text}` is not UNIT:CONFIDENCE"))?;
    let unit = unit.trim();
    if unit.is_empty() {
        return Err(format!("`{text}` has no unit id before the colon"));
    }
    let confidence: f64 = confidence
        .trim()
        .parse()
        .map_err(|_| format!("`{confidence}` in `{text}` is not a number"))?;
    if !(0.0..=1.0).contains(&confidence) {
        return Err(format!(
            "confidence {confidence} in `{text}` is not between 0 and 1"
        ));
    }
    Ok(MappedUnit {
        unit_id: unit.to_owned(),
        confidence,
    })
}

fn parse_time(text: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(text.trim())
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| format!("`{text}` is not an RFC 3339 time such as 2026-03-01T10:00:00Z ({e})"))
}

/// `QID:UNTIL`, split at the first colon (the time has colons of its own).
fn parse_locked(text: &str) -> Result<(String, DateTime<Utc>), String> {
    let (question, until) = text
        .split_once(':')
        .ok_or_else(|| format!("`{text}` is not QUESTION_ID:UNTIL"))?;
    let question = question.trim();
    if question.is_empty() {
        return Err(format!("`{text}` has no question id before the colon"));
    }
    Ok((question.to_owned(), parse_time(until)?))
}
