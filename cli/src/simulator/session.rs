//! The runner: starting a thread and playing each step, through the turn
//! endpoint for whatever the student says or presses in the chat.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use tutorflow::api::auth::dev_token;
use tutorflow::api::routes::Function;
use tutorflow::model::{
    ClientEvent, CreateThreadRequest, CreateThreadResponse, DrillResult, Mode, Role, TurnRequest,
    TurnResponse, TutorCard,
};
use tutorflow::service::Clock;
use tutorflow::store::{Order, PageRequest, Retention, SqliteStore, Store};

use super::deployment::{JWT_SECRET, STUDENT_ID, ScriptClock, ScriptIds, Setup};
use super::line::{
    CardSummary, Line, PlanSummary, PolicySummary, ProblemSetSummary, Refusal, RefusedOutcome,
    StepOutcome, TurnOutcome, WaitOutcome, rounded_confidences,
};
use super::{Shown, Simulation, StepError};
use crate::script::{Action, ContinueWith, EventName, Script, Step};

/// Time that passes before every step, so each has its own timestamp.
const STEP_INTERVAL_SECONDS: i64 = 30;

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
            Action::Wait(_) => StepOutcome::Wait(WaitOutcome { now }),
            Action::Lifecycle(change) => self.lifecycle(step, *change).await?,
        };
        Ok(Line {
            step: step.number,
            at: format!("{}:{}:{}", self.script.path, step.at.line, step.at.column),
            action: step.name(),
            outcome,
        })
    }

    pub(super) fn error(&self, step: &Step, message: impl Into<String>) -> StepError {
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
    ) -> Result<StepOutcome, StepError> {
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
                return Ok(StepOutcome::Refused(RefusedOutcome {
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
        Ok(StepOutcome::Turn(Box::new(TurnOutcome {
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
}
