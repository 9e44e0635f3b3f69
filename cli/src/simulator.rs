//! Plays a [`Script`] against the real request handler in-process: the same
//! `App::handle` every Lambda function and the local server call, with real
//! HTTP-shaped requests and a development token, so routing, auth, body
//! validation, idempotency, the turn pipeline and the store all run. The
//! store is a private in-memory SQLite database; the clock and ids are
//! deterministic, so the same script over the same content gives the same
//! lines every time (with the offline tutor; an LLM may answer differently).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use chrono::{DateTime, Duration, Utc};
use http::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use http::{HeaderMap, Method, Uri};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tutorflow::api::App;
use tutorflow::api::auth::dev_token;
use tutorflow::api::handler::{IDEMPOTENCY_HEADER, Incoming};
use tutorflow::api::routes::Function;
use tutorflow::config::{
    AuthConfig, Config, ContentSourceKind, ExamApiConfig, NotificationConfig, TranscriptionConfig,
};
use tutorflow::content::workflow::GradingSettings;
use tutorflow::content::yaml_index::Position;
use tutorflow::content::{Bundle, Diagnostic, ExamItem, FsSource};
use tutorflow::engine::drill::{self, Expected};
use tutorflow::engine::drill_grade::{self, grade_drill};
use tutorflow::engine::drill_token;
use tutorflow::engine::generate::generate;
use tutorflow::engine::rng::SplitMix64;
use tutorflow::model::{
    ClientEvent, CreateThreadRequest, CreateThreadResponse, DrillCard, DrillGradeRequest,
    DrillGradeResponse, DrillResult, ExamCard, ExamItemSource, ExamResult, GradeOutcome,
    MasteryTier, McqSubmitRequest, McqSubmitResponse, Mode, ModeState, Role, SnapshotLite,
    SupportType, SupportViewedRequest, SupportViewedResponse, TurnRequest, TurnResponse, TutorCard,
};
use tutorflow::service::{AppParts, Clock, Ids};
use tutorflow::startup::StartupError;
use tutorflow::store::{
    ContentCache, LoadError, Order, PageRequest, Retention, SqliteStore, Store,
};

use crate::script::{
    Action, Answer, ContinueWith, EventName, ExamChoice, LifecycleStep, Script, Step, default_start,
};

/// Time that passes before every step, so each has its own timestamp.
const STEP_INTERVAL_SECONDS: i64 = 30;
/// The scripted student (the `sub` of its token).
const STUDENT_ID: &str = "sim-student";
/// Secrets of the simulated deployment. They never leave the process: the
/// App reads them through the environment function handed to it.
const JWT_SECRET_VAR: &str = "TUTORFLOW_SIMULATE_JWT_SECRET";
const JWT_SECRET: &str = "tutorflow-simulate-jwt-secret";
const DRILL_SECRET_VAR: &str = "TUTORFLOW_SIMULATE_DRILL_SECRET";
const DRILL_SECRET: &str = "tutorflow-simulate-drill-secret";
/// Answers tried, after a drill's own distractors, for a wrong answer.
const WRONG_GUESSES: [&str; 4] = ["999", "0", "-1", "x = 999"];

/// What every run shares: the configuration and the content, loaded once.
pub struct Setup {
    config: Config,
    content: Arc<ContentCache>,
}

impl Setup {
    /// Reads the configuration (`file`, or only defaults and environment
    /// overrides) and the content bundle under `dir` (default: the
    /// configuration's `content.dir`). The state store, auth, exam API and
    /// notifications are the simulation's own whatever the file says; the
    /// LLM providers are the configuration's (offline by default).
    pub async fn load(file: Option<&Path>, dir: Option<&Path>) -> Result<Setup, String> {
        let mut config =
            Config::load(file, |k| std::env::var(k).ok()).map_err(|e| e.to_string())?;
        let dir: PathBuf = dir.map_or_else(|| config.content.dir.clone(), Path::to_path_buf);
        config.content.source = ContentSourceKind::Fs;
        config.content.dir = dir.clone();
        config.auth = AuthConfig {
            hs256_secret: Some(format!("env:{JWT_SECRET_VAR}")),
            ..AuthConfig::default()
        };
        config.drills.token_secret = Some(format!("env:{DRILL_SECRET_VAR}"));
        config.exam_api = ExamApiConfig::default();
        config.notifications = NotificationConfig::default();
        config.transcription = TranscriptionConfig::default();
        // One version for the whole run: content edited meanwhile is not picked up.
        let content = ContentCache::load(Arc::new(FsSource::new(&dir)), std::time::Duration::MAX)
            .await
            .map_err(|e| match e {
                LoadError::Invalid {
                    origin,
                    diagnostics,
                } => {
                    let n = diagnostics.0.len();
                    format!(
                        "the content bundle in {origin} has {n} problem{} (run `tutorflow validate`)",
                        if n == 1 { "" } else { "s" }
                    )
                }
                LoadError::Source(e) => e.to_string(),
            })?;
        let setup = Setup {
            config,
            content: Arc::new(content),
        };
        // A configuration the App cannot start with (an LLM provider
        // without its key) is reported once, here, not by every script.
        let trial_store = SqliteStore::in_memory(Retention::from_config(&setup.config.store))
            .await
            .map_err(|e| format!("cannot start the simulation's store: {e}"))?;
        setup
            .assemble(
                Arc::new(trial_store),
                Arc::new(ScriptClock(Mutex::new(default_start()))),
                Arc::new(ScriptIds::new(0)),
            )
            .map_err(|e| e.to_string())?;
        Ok(setup)
    }

    /// An App over `store` with the simulation's clock and ids.
    fn assemble(
        &self,
        store: Arc<dyn Store>,
        clock: Arc<ScriptClock>,
        ids: Arc<ScriptIds>,
    ) -> Result<App, StartupError> {
        App::assemble(
            AppParts {
                config: self.config.clone(),
                store,
                content: self.content.clone(),
                clock,
                ids,
            },
            &env,
        )
    }

    pub fn bundle(&self) -> Arc<Bundle> {
        self.content.current()
    }
}

fn env(name: &str) -> Option<String> {
    match name {
        JWT_SECRET_VAR => Some(JWT_SECRET.to_owned()),
        DRILL_SECRET_VAR => Some(DRILL_SECRET.to_owned()),
        other => std::env::var(other).ok(),
    }
}

/// A clock that moves only when the script says.
struct ScriptClock(Mutex<DateTime<Utc>>);

impl ScriptClock {
    /// Moves the clock on; `None` past the end of representable time.
    fn advance(&self, by: Duration) -> Option<DateTime<Utc>> {
        let mut now = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *now = now.checked_add_signed(by)?;
        Some(*now)
    }
}

impl Clock for ScriptClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Ids numbered in order and seeds drawn from the script's seed.
struct ScriptIds {
    next: AtomicU64,
    seeds: Mutex<SplitMix64>,
}

impl ScriptIds {
    fn new(seed: u64) -> Self {
        ScriptIds {
            next: AtomicU64::new(0),
            seeds: Mutex::new(SplitMix64::new(seed)),
        }
    }
}

impl Ids for ScriptIds {
    fn new_id(&self) -> String {
        format!("sim-{:04}", self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn seed(&self) -> u64 {
        self.seeds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .next_u64()
    }
}

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

/// One output line: the step, what happened, and the student's summary.
#[derive(Debug, Serialize)]
pub struct Line {
    pub step: usize,
    /// `path:line:column` of the step in the script.
    pub at: String,
    #[serde(rename = "do")]
    pub action: &'static str,
    #[serde(flatten)]
    pub outcome: Outcome,
}

impl Line {
    /// The line as JSON, for expectations to read.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Outcome {
    Turn(Box<TurnOutcome>),
    Drill(DrillOutcome),
    Exam(ExamOutcome),
    Memo(MemoOutcome),
    Wait(WaitOutcome),
    Lifecycle(LifecycleOutcome),
    Refused(RefusedOutcome),
}

/// A turn, with its policy chain from the stored turn log.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnOutcome {
    #[serde(skip_serializing_if = "Option::is_none")]
    said: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    event: Option<ClientEvent>,
    /// The units the message (and the previous turn's reading) mapped to.
    mapped_units: Value,
    /// The routing category (absent when a safety rule answered).
    category: Value,
    action: Value,
    card: Option<CardSummary>,
    /// `offline`, `llm` or `fallback`.
    origin: Value,
    validation: Value,
    #[serde(rename = "override", skip_serializing_if = "Value::is_null")]
    override_rule: Value,
    #[serde(skip_serializing_if = "Value::is_null")]
    safety_rule: Value,
    policy: PolicySummary,
    /// Code grade of the answer to the pending question, if one was graded.
    result: Value,
    /// For a drill answered in the chat: whether it was evidence, and its tag.
    counted: Value,
    mistake_tag: Value,
    /// The thread's state after the turn.
    pending: bool,
    /// The pending question's lifecycle phase and wrong answers so far.
    phase: Value,
    wrong_attempts: Value,
    scaffolding: bool,
    teach_back: bool,
    /// The pacing directive the reply was written under.
    pacing: Value,
    /// A lesson's study plan after the turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    plan: Option<PlanSummary>,
    /// The thread's status after the turn (`active`, `paused`, `completed`).
    status: tutorflow::model::ThreadStatus,
    /// How many concepts the session has discussed.
    concepts: usize,
    /// A problem set after the turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    problem_set: Option<ProblemSetSummary>,
    tutor_text: String,
    snapshot_lite: SnapshotLite,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PlanSummary {
    /// The current step's kind; `none` once the plan is complete.
    step: &'static str,
    steps_completed: u32,
    blocked: u32,
    replans: u32,
    complete: bool,
    extension_turns: u32,
}

impl PlanSummary {
    fn of(plan: &tutorflow::model::StudyPlanView) -> PlanSummary {
        use tutorflow::model::{StepKind, StepStatus};
        let step = plan
            .steps
            .iter()
            .find(|s| Some(&s.step_id) == plan.current_step_id.as_ref())
            .map_or("none", |s| match s.kind {
                StepKind::Explain => "explain",
                StepKind::Check => "check",
                StepKind::Practice => "practice",
            });
        PlanSummary {
            step,
            steps_completed: plan.steps_completed,
            blocked: plan
                .steps
                .iter()
                .filter(|s| s.status == StepStatus::Blocked)
                .count() as u32,
            replans: plan.replans_used,
            complete: plan.complete,
            extension_turns: plan.extension_turns,
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ProblemSetSummary {
    /// What the session did after the turn.
    action: Value,
    /// The mastery signal of the problem this turn worked on (`none` yet).
    signal: Value,
    /// The problem now being worked on, from 1 (past the last once done).
    problem: u32,
    completed: u32,
    /// `completed`, `abandoned` or `none` while the session runs.
    ended: Value,
}

impl ProblemSetSummary {
    fn of(view: &tutorflow::model::ProblemSetView, worked_on: usize) -> ProblemSetSummary {
        let word = |v: Value| match v {
            Value::Null => Value::from("none"),
            v => v,
        };
        ProblemSetSummary {
            action: json!(view.last_action),
            signal: word(json!(view.problems.get(worked_on).and_then(|p| p.signal))),
            problem: view.current_problem_index + 1,
            completed: view.problems_completed,
            ended: word(json!(view.ended)),
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PolicySummary {
    focus: Value,
    primary_target: Value,
    blocker: Value,
    /// The desired exam tier.
    tier: Value,
    allowed_actions: Value,
    /// No confident mapping but a plausible one: only a clarifying question.
    ambiguous: Value,
    stuck: Value,
    exam_ready: Value,
    exam_availability: Value,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CardSummary {
    #[serde(rename = "type")]
    kind: &'static str,
    unit_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    question: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    question_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tier: Option<tutorflow::model::ExamTier>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DrillOutcome {
    answer: String,
    result: GradeOutcome,
    counted: bool,
    mistake_tag: Option<String>,
    feedback: String,
    snapshot_lite: SnapshotLite,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExamOutcome {
    question_id: String,
    selected: String,
    /// `correct` or `wrong`.
    result: GradeOutcome,
    /// The question's unit's tier after the answer.
    unit_tier: MasteryTier,
    locked: bool,
    locked_until: Option<DateTime<Utc>>,
    feedback: String,
    snapshot_lite: SnapshotLite,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoOutcome {
    question_id: String,
    locked: bool,
    locked_until: Option<DateTime<Utc>>,
    snapshot_lite: SnapshotLite,
}

#[derive(Debug, Serialize)]
pub struct WaitOutcome {
    now: DateTime<Utc>,
}

/// A pause, resume or end: the thread's status after it and what the
/// session said (an ended one's summary).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleOutcome {
    status: tutorflow::model::ThreadStatus,
    paused_at: Option<DateTime<Utc>>,
    ended_at: Option<DateTime<Utc>>,
    /// A problem set after it.
    #[serde(skip_serializing_if = "Option::is_none")]
    problem_set: Option<ProblemSetSummary>,
    tutor_text: String,
}

/// A step the API refused, as the step expected (`refused:`).
#[derive(Debug, Serialize)]
pub struct RefusedOutcome {
    refused: Refusal,
}

#[derive(Debug, Serialize)]
struct Refusal {
    status: u16,
    title: String,
    detail: String,
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

/// The API refused a request.
struct Refused {
    status: u16,
    title: String,
    detail: String,
}

impl Refused {
    /// The refusal of `what` ("this step"), reported at `at`.
    fn at(self, at: Position, what: &str) -> StepError {
        StepError {
            at,
            message: format!(
                "the API refused {what} ({} {}): {}",
                self.status, self.title, self.detail
            ),
        }
    }
}

impl<'s> Simulation<'s> {
    /// A fresh deployment (empty store) and a new thread for the script's
    /// course and mode.
    pub async fn start(setup: &Setup, script: &'s Script) -> Result<Simulation<'s>, StepError> {
        let at = script.thread_at;
        let fail = |message: String| StepError { at, message };
        let store: Arc<dyn Store> = Arc::new(
            SqliteStore::in_memory(Retention::from_config(&setup.config.store))
                .await
                .map_err(|e| fail(format!("cannot start the simulation's store: {e}")))?,
        );
        let clock = Arc::new(ScriptClock(Mutex::new(script.start)));
        let ids = Arc::new(ScriptIds::new(script.seed));
        let app = setup
            .assemble(store.clone(), clock.clone(), ids)
            .map_err(|e| fail(format!("cannot start the simulation: {e}")))?;
        // Beyond a century a token never expires in any script; it keeps time in range.
        const CENTURY_SECONDS: u64 = 100 * 365 * 86_400;
        let drill_ttl =
            Duration::seconds(setup.config.drills.token_ttl_seconds.min(CENTURY_SECONDS) as i64);
        let bundle = setup.bundle();
        let grading = bundle
            .course(&script.course)
            .and_then(|c| bundle.workflow_for(c))
            .map(|w| w.grading.clone())
            .unwrap_or_default();
        let mut simulation = Simulation {
            script,
            app,
            store,
            bundle,
            clock,
            bearer: format!(
                "Bearer {}",
                dev_token(
                    JWT_SECRET,
                    STUDENT_ID,
                    std::time::Duration::from_secs(12 * 3600)
                )
            ),
            drill_ttl,
            grading,
            thread_id: String::new(),
            last_drill: None,
            last_drill_result: None,
            last_exam: None,
            last_exam_result: None,
            problem_index: 0,
        };
        let created: CreateThreadResponse = simulation
            .post(
                "/threads",
                &CreateThreadRequest {
                    course_id: script.course.clone(),
                    mode: script.mode,
                    goal: None,
                    unit_id: script.unit.clone(),
                    problems: None,
                    units: None,
                    question_count: script.question_count,
                    feedback: script.feedback,
                    selection: None,
                    time_limit_minutes: script.time_limit_minutes,
                    problem_set_id: script.problem_set.clone(),
                    survey_id: script.survey.clone(),
                    student: script.student.clone(),
                },
                Function::Turn,
                "create",
            )
            .await
            .map_err(|r| r.at(at, "to create the thread"))?;
        simulation.thread_id = created.thread_id;
        Ok(simulation)
    }

    /// Plays one step and describes what happened.
    pub async fn step(&mut self, step: &Step) -> Result<Line, StepError> {
        let passing = match step.action {
            Action::Wait(duration) => duration,
            _ => Duration::seconds(STEP_INTERVAL_SECONDS),
        };
        let now = self
            .clock
            .advance(passing)
            .ok_or_else(|| self.error(step, "the script's clock ran past the year 262000"))?;
        let outcome = match &step.action {
            Action::Say(text) => {
                self.turn(step, Some(text.clone()), ClientEvent::None)
                    .await?
            }
            Action::Event { event, unit } => {
                let unit_id = unit.clone();
                let event = match event {
                    EventName::RequestDrill => ClientEvent::RequestDrill { unit_id },
                    EventName::IAmStuck => ClientEvent::IAmStuck { unit_id },
                    EventName::DrillContinue => ClientEvent::DrillContinue {
                        unit_id,
                        last_result: None,
                    },
                    EventName::ExamContinue => ClientEvent::ExamContinue {
                        unit_id,
                        question_id: None,
                        result: None,
                    },
                };
                self.turn(step, None, event).await?
            }
            Action::Stuck { unit } => {
                let event = ClientEvent::IAmStuck {
                    unit_id: unit.clone(),
                };
                self.turn(step, None, event).await?
            }
            Action::AnswerInChat(answer) if self.script.mode == Mode::Exam => {
                let text = self.exam_answer(step, answer).await?;
                self.turn(step, Some(text), ClientEvent::None).await?
            }
            Action::AnswerInChat(answer) => {
                let text = self.drill_answer(step, answer)?;
                self.turn(step, Some(text), ClientEvent::None).await?
            }
            Action::Continue { with, unit } => {
                let event = self.continue_event(step, *with, unit.clone())?;
                self.turn(step, None, event).await?
            }
            Action::AnswerDrill(answer) => self.answer_drill(step, answer).await?,
            Action::Exam(choice) => self.exam(step, *choice).await?,
            Action::ViewMemo => self.view_memo(step).await?,
            Action::Wait(_) => Outcome::Wait(WaitOutcome { now }),
            Action::Lifecycle(change) => self.lifecycle(step, *change).await?,
        };
        Ok(Line {
            step: step.number,
            at: format!("{}:{}:{}", self.script.path, step.at.line, step.at.column),
            action: step.name(),
            outcome,
        })
    }

    fn error(&self, step: &Step, message: impl Into<String>) -> StepError {
        StepError {
            at: step.at,
            message: message.into(),
        }
    }

    async fn turn(
        &mut self,
        step: &Step,
        said: Option<String>,
        event: ClientEvent,
    ) -> Result<Outcome, StepError> {
        let request = TurnRequest {
            course_id: None,
            message_text: said.clone(),
            message_latex: None,
            client_event: event.clone(),
            client_turn_id: None,
        };
        let path = format!("/threads/{}/turn", self.thread_id);
        let response: TurnResponse = match self
            .post(&path, &request, Function::Turn, &step.number.to_string())
            .await
        {
            Ok(response) => response,
            // A refusal the step expects is what happened, not the end of the run.
            Err(refused) if step.expect.iter().any(|e| e.expects_refusal()) => {
                return Ok(Outcome::Refused(RefusedOutcome {
                    refused: Refusal {
                        status: refused.status,
                        title: refused.title,
                        detail: refused.detail,
                    },
                }));
            }
            Err(refused) => return Err(refused.at(step.at, "this step")),
        };
        let now = self.clock.now();
        let logs = self
            .store
            .list_turn_logs(
                &self.thread_id,
                Order::NewestFirst,
                &PageRequest::first(1),
                now,
            )
            .await
            .map_err(|e| self.error(step, format!("cannot read the turn log: {e}")))?;
        let entry = logs
            .items
            .into_iter()
            .find(|log| log.turn_id == response.turn_id)
            .map(|log| log.entry)
            .ok_or_else(|| {
                self.error(step, format!("turn {} left no turn log", response.turn_id))
            })?;
        let mut card = None;
        let mut tutor_text = Vec::new();
        for message in response
            .messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
        {
            tutor_text.push(message.text.trim().to_owned());
            card = message.card.as_ref().map(|c| self.shown(c, now)).or(card);
        }
        let chat_drill = &entry["chatDrill"];
        if let Some(grade) = entry["grade"]["result"].as_str()
            && !chat_drill.is_null()
        {
            self.last_drill_result = Some(if grade == "correct" {
                DrillResult::Correct
            } else {
                DrillResult::Incorrect
            });
        }
        let policy = &entry["policy"];
        let validation = match &entry["validation"] {
            Value::Null => Value::Null,
            verdict => json!({
                "outcome": verdict["outcome"],
                "rule": verdict["rule"],
                "violations": verdict["violations"],
            }),
        };
        Ok(Outcome::Turn(Box::new(TurnOutcome {
            said,
            event: (event != ClientEvent::None).then_some(event),
            mapped_units: rounded_confidences(&entry["mappedUnits"]),
            category: entry["category"].clone(),
            action: entry["action"].clone(),
            card,
            origin: entry["origin"].clone(),
            validation,
            override_rule: entry["override"].clone(),
            safety_rule: entry["safetyRule"].clone(),
            policy: PolicySummary {
                focus: policy["focusUnitId"].clone(),
                primary_target: policy["primaryTargetUnitId"].clone(),
                blocker: policy["prereqBlockingUnitId"].clone(),
                tier: policy["desiredExamTier"].clone(),
                allowed_actions: policy["allowedActions"].clone(),
                ambiguous: policy["trace"]["ambiguousMapping"].clone(),
                stuck: policy["stuck"].clone(),
                exam_ready: policy["examReady"].clone(),
                exam_availability: policy["examAvailability"].clone(),
            },
            result: entry["grade"]["result"].clone(),
            counted: chat_drill["counted"].clone(),
            mistake_tag: chat_drill["confusionTag"].clone(),
            pending: response.state.pending_question.is_some(),
            phase: response
                .state
                .pending_question
                .as_ref()
                .map_or(Value::Null, |q| json!(q.phase)),
            wrong_attempts: response
                .state
                .pending_question
                .as_ref()
                .map_or(Value::Null, |q| json!(q.wrong_attempts)),
            scaffolding: response.state.scaffolding_active,
            teach_back: response.state.teach_back_active,
            pacing: entry["pacing"].clone(),
            plan: response.state.study_plan.as_ref().map(PlanSummary::of),
            status: response.state.status,
            concepts: response.state.concepts_discussed.len(),
            problem_set: response.state.problem_set.as_ref().map(|view| {
                let summary = ProblemSetSummary::of(view, self.problem_index);
                self.problem_index = view.current_problem_index as usize;
                summary
            }),
            tutor_text: tutor_text.join("\n"),
            snapshot_lite: response.snapshot_lite,
        })))
    }

    /// Remembers a card the student can act on next, and summarises it.
    fn shown(&mut self, card: &TutorCard, now: DateTime<Utc>) -> CardSummary {
        match card {
            TutorCard::Concept(c) => CardSummary {
                kind: "CONCEPT",
                unit_id: c.unit_id.clone(),
                question: None,
                question_id: None,
                tier: None,
            },
            TutorCard::Drill(d) => {
                self.last_drill = Some(Shown {
                    card: d.clone(),
                    at: now,
                });
                self.last_drill_result = None;
                CardSummary {
                    kind: "DRILL",
                    unit_id: d.unit_id.clone(),
                    question: Some(format!("{} {}", d.prompt, d.question_latex)),
                    question_id: None,
                    tier: None,
                }
            }
            TutorCard::Exam(e) => {
                self.last_exam = Some(e.clone());
                self.last_exam_result = None;
                CardSummary {
                    kind: "EXAM",
                    unit_id: e.unit_id.clone(),
                    question: Some(e.stem.clone()),
                    question_id: Some(e.question_id.clone()),
                    tier: Some(e.tier),
                }
            }
        }
    }

    fn continue_event(
        &self,
        step: &Step,
        with: ContinueWith,
        unit: Option<String>,
    ) -> Result<ClientEvent, StepError> {
        Ok(match with {
            ContinueWith::Drill => {
                let shown = self.last_drill.as_ref().ok_or_else(|| {
                    self.error(
                        step,
                        "`continue: drill` presses \"next\" on a drill card, but the tutor has not shown one yet",
                    )
                })?;
                ClientEvent::DrillContinue {
                    unit_id: unit.or_else(|| Some(shown.card.unit_id.clone())),
                    last_result: self.last_drill_result,
                }
            }
            ContinueWith::Exam => {
                let card = self.last_exam.as_ref().ok_or_else(|| {
                    self.error(
                        step,
                        "`continue: exam` presses \"next\" on an exam card, but the tutor has not shown one yet",
                    )
                })?;
                ClientEvent::ExamContinue {
                    unit_id: unit.or_else(|| Some(card.unit_id.clone())),
                    question_id: Some(card.question_id.clone()),
                    result: self.last_exam_result,
                }
            }
        })
    }

    /// The text a student answers the last drill card with.
    fn drill_answer(&self, step: &Step, answer: &Answer) -> Result<String, StepError> {
        if let Answer::Text(text) = answer {
            return Ok(text.clone());
        }
        let (_, expected) = self.last_drill_expected(step)?;
        self.answer_to(step, &expected, answer, "drill")
    }

    /// An answer of the kind asked for to `expected`, found by grading.
    fn answer_to(
        &self,
        step: &Step,
        expected: &Expected,
        answer: &Answer,
        what: &str,
    ) -> Result<String, StepError> {
        let grading = &self.grading;
        let (found, kind) = match answer {
            Answer::Text(text) => return Ok(text.clone()),
            Answer::Correct => (
                Some(correct_answer(expected))
                    .filter(|a| grade_drill(expected, a, grading).outcome == GradeOutcome::Correct),
                "correct",
            ),
            Answer::Wrong => (wrong_answer(expected, grading), "wrong"),
            Answer::Close => (close_answer(expected, grading), "close"),
        };
        found.ok_or_else(|| {
            self.error(
                step,
                format!(
                    "cannot make a {kind} answer for this {what} (write the answer text instead)"
                ),
            )
        })
    }

    /// An answer to the exam question on screen, read from the thread's
    /// state (the API never shows it).
    async fn exam_answer(&self, step: &Step, answer: &Answer) -> Result<String, StepError> {
        if let Answer::Text(text) = answer {
            return Ok(text.clone());
        }
        let record = self
            .store
            .get_thread(&self.thread_id, 0)
            .await
            .map_err(|e| self.error(step, format!("cannot read the thread: {e}")))?
            .ok_or_else(|| self.error(step, "the thread is gone"))?;
        let ModeState::Exam(exam) = record.thread.session.mode_state else {
            return Err(self.error(step, "the thread is not an exam"));
        };
        let question = exam
            .questions
            .get(exam.current_index as usize)
            .filter(|_| !exam.finished())
            .ok_or_else(|| self.error(step, "the exam has no question on screen"))?;
        let expected = match &question.source {
            ExamItemSource::Blueprint {
                blueprint_id,
                seed,
                target_difficulty,
            } => {
                let blueprint = self.bundle.blueprints.get(blueprint_id).ok_or_else(|| {
                    self.error(step, format!("blueprint `{blueprint_id}` is gone"))
                })?;
                let item = generate(blueprint, *target_difficulty, *seed)
                    .map_err(|e| self.error(step, e.to_string()))?;
                Expected::Generated(Box::new(item))
            }
            ExamItemSource::Bank { .. } => Expected::Authored {
                prompt: question.prompt.clone(),
                question_latex: String::new(),
                expected_answer: question.expected.value.clone(),
            },
        };
        if let (ExamItemSource::Bank { .. }, Answer::Wrong) = (&question.source, answer) {
            let right = &question.expected.value;
            return question
                .options
                .iter()
                .find(|o| *o != right)
                .cloned()
                .ok_or_else(|| self.error(step, "the question has one option"));
        }
        self.answer_to(step, &expected, answer, "exam question")
    }

    /// The last drill card's token and what it expects, regenerated from
    /// the token as the drill-grade endpoint does.
    fn last_drill_expected(&self, step: &Step) -> Result<(String, Expected), StepError> {
        let shown = self.last_drill.as_ref().ok_or_else(|| {
            self.error(
                step,
                format!(
                    "`{}` answers the last drill card, but the tutor has not shown one yet",
                    step.name()
                ),
            )
        })?;
        let token = shown
            .card
            .drill_token
            .clone()
            .ok_or_else(|| self.error(step, "the last drill card has no drill token"))?;
        // Checked as of when the card was shown: an expired token is the
        // API's to refuse, so a script can test that too.
        let verified = drill_token::verify(
            &token,
            &drill_token::TokenKeys::single(DRILL_SECRET.as_bytes())
                .map_err(|e| self.error(step, e.to_string()))?,
            &self.thread_id,
            shown.at,
            self.drill_ttl,
        )
        .map_err(|e| self.error(step, format!("the drill token does not verify: {e}")))?;
        let expected = drill::expected(&verified, &self.bundle.blueprints)
            .map_err(|e| self.error(step, e.to_string()))?;
        Ok((token, expected))
    }

    async fn answer_drill(&mut self, step: &Step, answer: &Answer) -> Result<Outcome, StepError> {
        let text = self.drill_answer(step, answer)?;
        let (token, _) = self.last_drill_expected(step)?;
        let path = format!("/threads/{}/drill/grade", self.thread_id);
        let graded: DrillGradeResponse = self
            .post(
                &path,
                &DrillGradeRequest {
                    drill_token: token,
                    student_answer: text.clone(),
                    response_time_ms: None,
                },
                Function::DrillGrade,
                &step.number.to_string(),
            )
            .await
            .map_err(|r| r.at(step.at, "this step"))?;
        self.last_drill_result = Some(if graded.is_correct {
            DrillResult::Correct
        } else {
            DrillResult::Incorrect
        });
        Ok(Outcome::Drill(DrillOutcome {
            answer: text,
            result: graded.result,
            counted: graded.counted,
            mistake_tag: graded.common_mistake_tag,
            feedback: graded.feedback_text,
            snapshot_lite: graded.snapshot_lite,
        }))
    }

    fn last_exam(&self, step: &Step) -> Result<(ExamCard, &ExamItem), StepError> {
        let card = self.last_exam.clone().ok_or_else(|| {
            self.error(
                step,
                format!(
                    "`{}` needs an exam card, but the tutor has not shown one yet",
                    step.name()
                ),
            )
        })?;
        let item = self
            .bundle
            .course(&self.script.course)
            .and_then(|c| c.exam_item(&card.question_id))
            .map(|(_, item)| item)
            .ok_or_else(|| {
                self.error(
                    step,
                    format!(
                        "exam question `{}` is not in the course's bank",
                        card.question_id
                    ),
                )
            })?;
        Ok((card, item))
    }

    async fn exam(&mut self, step: &Step, choice: ExamChoice) -> Result<Outcome, StepError> {
        let (card, item) = self.last_exam(step)?;
        let correct = item.option_index(&item.answer);
        let selected = match choice {
            ExamChoice::Pass => correct,
            ExamChoice::Fail => (0..item.options.len()).find(|i| Some(*i) != correct),
        }
        .map(ExamItem::option_id)
        .ok_or_else(|| {
            self.error(
                step,
                format!(
                    "exam question `{}` has no {} option",
                    card.question_id,
                    if choice == ExamChoice::Pass {
                        "correct"
                    } else {
                        "wrong"
                    }
                ),
            )
        })?;
        let path = format!("/threads/{}/exam/mcq-submit", self.thread_id);
        let submitted: McqSubmitResponse = self
            .post(
                &path,
                &McqSubmitRequest {
                    question_id: card.question_id.clone(),
                    selected_option: selected.clone(),
                    course_id: None,
                    unit_id: Some(card.unit_id.clone()),
                    difficulty_tier: Some(card.tier),
                },
                Function::ExamSubmit,
                &step.number.to_string(),
            )
            .await
            .map_err(|r| r.at(step.at, "this step"))?;
        self.last_exam_result = Some(if submitted.is_correct {
            ExamResult::Passed
        } else {
            ExamResult::Locked
        });
        Ok(Outcome::Exam(ExamOutcome {
            question_id: submitted.question_id,
            selected,
            result: if submitted.is_correct {
                GradeOutcome::Correct
            } else {
                GradeOutcome::Wrong
            },
            unit_tier: submitted.mastery_tier,
            locked: submitted.locked_until.is_some(),
            locked_until: submitted.locked_until,
            feedback: submitted.feedback_text,
            snapshot_lite: submitted.snapshot_lite,
        }))
    }

    /// Pauses, resumes or ends the thread as the app's buttons would.
    async fn lifecycle(
        &mut self,
        step: &Step,
        change: LifecycleStep,
    ) -> Result<Outcome, StepError> {
        let path = format!("/threads/{}/{}", self.thread_id, change.key());
        let response: Value = self
            .post(&path, &json!({}), Function::Turn, &step.number.to_string())
            .await
            .map_err(|r| r.at(step.at, "this step"))?;
        let unexpected = |what: &str| {
            self.error(
                step,
                format!("the {} reply has no {what}: {response}", change.key()),
            )
        };
        let status =
            serde_json::from_value(response["status"].clone()).map_err(|_| unexpected("status"))?;
        let at = |field: &str| serde_json::from_value(response[field].clone()).ok();
        let problem_set = match &response["state"]["problemSet"] {
            Value::Null => None,
            view => {
                let view: tutorflow::model::ProblemSetView =
                    serde_json::from_value(view.clone()).map_err(|_| unexpected("problem set"))?;
                Some(ProblemSetSummary::of(&view, self.problem_index))
            }
        };
        let tutor_text: Vec<&str> = response["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "assistant")
            .filter_map(|m| m["text"].as_str())
            .map(str::trim)
            .collect();
        Ok(Outcome::Lifecycle(LifecycleOutcome {
            status,
            paused_at: at("pausedAt"),
            ended_at: at("endedAt"),
            problem_set,
            tutor_text: tutor_text.join("\n"),
        }))
    }

    async fn view_memo(&mut self, step: &Step) -> Result<Outcome, StepError> {
        let (card, _) = self.last_exam(step)?;
        let path = format!("/threads/{}/exam/support-viewed", self.thread_id);
        let viewed: SupportViewedResponse = self
            .post(
                &path,
                &SupportViewedRequest {
                    question_id: card.question_id.clone(),
                    support_type: SupportType::Memo,
                    course_id: None,
                    unit_id: Some(card.unit_id.clone()),
                },
                Function::SupportViewed,
                &step.number.to_string(),
            )
            .await
            .map_err(|r| r.at(step.at, "this step"))?;
        Ok(Outcome::Memo(MemoOutcome {
            question_id: viewed.question_id,
            locked: viewed.locked_until.is_some(),
            locked_until: viewed.locked_until,
            snapshot_lite: viewed.snapshot_lite,
        }))
    }

    /// POSTs `body` as the student's app would, through the handler of
    /// `function`, and reads the reply.
    async fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
        function: Function,
        idempotency_key: &str,
    ) -> Result<T, Refused> {
        let internal = |detail: String| Refused {
            status: 0,
            title: "simulation error".to_owned(),
            detail,
        };
        let uri: Uri = path
            .parse()
            .map_err(|e| internal(format!("bad path {path}: {e}")))?;
        let body = serde_json::to_vec(body).map_err(|e| internal(e.to_string()))?;
        let mut headers = HeaderMap::new();
        let header = |value: &str| {
            HeaderValue::from_str(value).map_err(|e| internal(format!("header {value}: {e}")))
        };
        headers.insert(AUTHORIZATION, header(&self.bearer)?);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            IDEMPOTENCY_HEADER,
            header(&format!("sim-step-{idempotency_key}"))?,
        );
        let response = self
            .app
            .handle(
                Incoming {
                    method: Method::POST,
                    uri,
                    headers,
                    body: Bytes::from(body),
                    request_id: format!("sim-request-{idempotency_key}"),
                    authorizer_claims: None,
                },
                Some(function),
            )
            .await;
        let status = response.status();
        let bytes = response.into_body();
        if !status.is_success() {
            let problem: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            return Err(Refused {
                status: status.as_u16(),
                title: problem["title"]
                    .as_str()
                    .or(status.canonical_reason())
                    .unwrap_or("error")
                    .to_owned(),
                detail: problem["detail"].as_str().unwrap_or_default().to_owned(),
            });
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| internal(format!("unexpected reply to {path}: {e}")))
    }
}

/// Mapped units with confidences to three decimals: the previous turn's
/// reading is weighted, which leaves float noise nobody needs to read.
fn rounded_confidences(mapped: &Value) -> Value {
    let mut mapped = mapped.clone();
    if let Some(units) = mapped.as_array_mut() {
        for unit in units {
            if let Some(c) = unit["confidence"].as_f64() {
                unit["confidence"] = json!((c * 1000.0).round() / 1000.0);
            }
        }
    }
    mapped
}

/// What the grader compares a drill answer with.
fn correct_answer(expected: &Expected) -> String {
    match expected {
        Expected::Generated(item) => drill_grade::expected_answer(item).value,
        Expected::Authored {
            expected_answer, ..
        } => expected_answer.clone(),
    }
}

/// A number near the right answer that grades as close.
fn close_answer(expected: &Expected, grading: &GradingSettings) -> Option<String> {
    let value: f64 = correct_answer(expected).trim().parse().ok()?;
    [1.0, -1.0, 0.1 * value, -0.1 * value, 0.5, -0.5, 2.0]
        .into_iter()
        .map(|d| {
            let near = value + d;
            if near.fract() == 0.0 {
                format!("{}", near as i64)
            } else {
                format!("{near}")
            }
        })
        .find(|a| grade_drill(expected, a, grading).outcome == GradeOutcome::Close)
}

/// A wrong answer that grades as wrong (not close): a distractor with a
/// mistake tag if there is one, so the line shows the tag.
fn wrong_answer(expected: &Expected, grading: &GradingSettings) -> Option<String> {
    let mut candidates: Vec<String> = Vec::new();
    if let Expected::Generated(item) = expected {
        let (tagged, untagged): (Vec<_>, Vec<_>) = item
            .distractors
            .iter()
            .partition(|d| d.mistake_tag.is_some());
        candidates.extend(tagged.into_iter().chain(untagged).map(|d| d.text.clone()));
    }
    candidates.extend(WRONG_GUESSES.iter().map(|g| (*g).to_owned()));
    candidates
        .into_iter()
        .find(|c| grade_drill(expected, c, grading).outcome == GradeOutcome::Wrong)
}
