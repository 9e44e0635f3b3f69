//! `tutorflow classify`: which routing category a message falls in, and why.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use tutorflow::engine::grading;
use tutorflow::engine::interpret::classify::{self, MessageReading};
use tutorflow::engine::interpret::mapping::UnitMapper;
use tutorflow::model::{
    AnswerKind, ExpectedAnswer, PendingQuestion, QuestionPhase, Scaffolding, SessionState,
    StudentIntent, TeachBack,
};

use crate::bundle;

#[derive(clap::Args)]
pub struct Args {
    /// The workflow whose categories to use (a file stem in workflows/).
    #[arg(long)]
    workflow: String,
    /// The student's message.
    #[arg(long, allow_hyphen_values = true)]
    message: String,
    /// A JSON file with the question the tutor is waiting on: at least
    /// `{"text": "...", "expected": "x = 4"}`; `expected` may also be
    /// `{"kind": "mcq", "value": "B", "options": [...], "unit": "cm"}`, and
    /// any pending-question field (`concept`, `wrongAttempts`, `phase`…) may
    /// be given.
    #[arg(long, value_name = "FILE.json")]
    pending_question: Option<PathBuf>,
    /// Scaffolding is active.
    #[arg(long)]
    scaffolding: bool,
    /// Teach-back is active (awaiting an explanation).
    #[arg(long)]
    teach_back: bool,
    /// The LLM's reading of the message (answer, question, stuck, explain,
    /// check, solve, off_topic, done, unknown); without it the offline
    /// heuristics decide.
    #[arg(long)]
    intent: Option<String>,
    /// The answer the LLM read in the message.
    #[arg(long, allow_hyphen_values = true)]
    answer_text: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Bundle root holding workflows/ and prompts/.
    #[arg(long, default_value = ".")]
    dir: PathBuf,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ExpectedField {
    Value(String),
    Full(ExpectedFile),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExpectedFile {
    kind: Option<AnswerKind>,
    value: String,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    options: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct QuestionFile {
    text: String,
    #[serde(default)]
    expected: Option<ExpectedField>,
    #[serde(default)]
    unit_id: String,
    #[serde(default)]
    concept: String,
    #[serde(default)]
    wrong_attempts: u32,
    #[serde(default)]
    previous_answers: Vec<String>,
    #[serde(default)]
    hints_used: u32,
    #[serde(default)]
    phase: QuestionPhase,
    #[serde(default)]
    asked_at: Option<DateTime<Utc>>,
}

fn read_question(path: &PathBuf) -> Result<PendingQuestion, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file: QuestionFile =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let expected = file.expected.map(|field| {
        let (kind, value, unit, options) = match field {
            ExpectedField::Value(value) => (None, value, None, Vec::new()),
            ExpectedField::Full(f) => (f.kind, f.value, f.unit, f.options),
        };
        ExpectedAnswer {
            kind: kind.unwrap_or_else(|| grading::infer_kind(&value, &options)),
            value,
            unit,
            options,
            mistakes: Vec::new(),
        }
    });
    Ok(PendingQuestion {
        text: file.text,
        expected,
        unit_id: file.unit_id,
        concept: file.concept,
        wrong_attempts: file.wrong_attempts,
        previous_answers: file.previous_answers,
        hints_used: file.hints_used,
        phase: file.phase,
        asked_at: file.asked_at.unwrap_or_else(Utc::now),
        drill_token: None,
    })
}

fn parse_intent(text: &str) -> Result<StudentIntent, String> {
    serde_json::from_value(serde_json::Value::String(text.to_lowercase())).map_err(|_| {
        format!(
            "unknown intent `{text}` (expected answer, solve, question, explain, check, stuck, off_topic, done or unknown)"
        )
    })
}

pub async fn run(args: Args) -> ExitCode {
    match classify_message(&args).await {
        Ok(output) => match writeln!(io::stdout().lock(), "{output}") {
            Ok(()) => ExitCode::SUCCESS,
            // A closed pipe (`| head`) is the reader's choice, not a failure.
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn classify_message(args: &Args) -> Result<String, String> {
    let reading = match &args.intent {
        Some(intent) => Some(MessageReading {
            intent: parse_intent(intent)?,
            answer_text: args.answer_text.clone(),
        }),
        None if args.answer_text.is_some() => {
            return Err("--answer-text is the LLM's reading: give --intent with it".to_owned());
        }
        None => None,
    };
    let pending_question = args
        .pending_question
        .as_ref()
        .map(read_question)
        .transpose()?;
    let workflow = bundle::load_workflow(&args.dir, &args.workflow).await?;
    let session = SessionState {
        pending_question,
        scaffolding: Scaffolding {
            active: args.scaffolding,
            depth: u32::from(args.scaffolding),
            last_question: None,
            step_expects: None,
        },
        teach_back: TeachBack {
            active: args.teach_back,
            awaiting_explanation: args.teach_back,
        },
        ..SessionState::default()
    };
    let interpretation = classify::interpret(
        &workflow,
        &session,
        &args.message,
        reading.as_ref(),
        // Without a course nothing says whether the message is about it;
        // a greeting is one whatever the course.
        classify::MessageKind {
            unrelated: false,
            greeting: UnitMapper::is_greeting(&args.message),
            acknowledgement: UnitMapper::is_acknowledgement(&args.message),
            after_safety_help: false,
            names_a_unit: false,
            topic_only: false,
        },
    );
    if args.json {
        let value = serde_json::json!({
            "category": interpretation.classification.category,
            "classification": interpretation.classification,
            "grade": interpretation.grade,
        });
        return serde_json::to_string_pretty(&value).map_err(|e| e.to_string());
    }
    let mut text = interpretation.classification.explain();
    if let Some(grade) = &interpretation.grade {
        let result = serde_json::to_string(grade).map_err(|e| e.to_string())?;
        text.push_str(&format!("\ngrade: {result}"));
    }
    Ok(text)
}
