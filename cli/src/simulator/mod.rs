//! Plays a [`Script`] against the real request handler in-process: the same
//! `App::handle` every Lambda function and the local server call, with real
//! HTTP-shaped requests and a development token, so routing, auth, body
//! validation, idempotency, the turn pipeline and the store all run. The
//! store is a private in-memory SQLite database; the clock and ids are
//! deterministic, so the same script over the same content gives the same
//! lines every time (with the offline tutor; an LLM may answer differently).

mod answers;
mod buttons;
mod deployment;
mod line;
mod request;
mod session;

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use tutorflow::api::App;
use tutorflow::content::workflow::GradingSettings;
use tutorflow::content::yaml_index::Position;
use tutorflow::content::{Bundle, Diagnostic};
use tutorflow::model::{DrillCard, DrillResult, ExamCard, ExamResult};
use tutorflow::store::Store;

use crate::script::Script;

use deployment::ScriptClock;
pub use deployment::{Setup, SetupArgs};

/// Why a step could not be played, where the script asks for it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepError {
    pub at: Position,
    pub message: String,
}

impl StepError {
    pub fn diagnostic(&self, path: &str) -> Diagnostic {
        Diagnostic::new(path, self.at.line, self.at.column, &self.message)
    }
}

/// A card the student was shown, and when.
struct Shown<T> {
    card: T,
    at: DateTime<Utc>,
}

/// One scripted student's conversation.
pub struct Simulation<'s> {
    script: &'s Script,
    app: App,
    store: Arc<dyn Store>,
    bundle: Arc<Bundle>,
    clock: Arc<ScriptClock>,
    bearer: String,
    drill_ttl: Duration,
    /// The course workflow's grading settings, to find right and wrong answers.
    grading: GradingSettings,
    thread_id: String,
    last_drill: Option<Shown<DrillCard>>,
    last_drill_result: Option<DrillResult>,
    last_exam: Option<ExamCard>,
    last_exam_result: Option<ExamResult>,
    /// The problem a problem set was on before the step.
    problem_index: usize,
}
