//! The survey mode: a questionnaire from `workflows/surveys/` asked one
//! question at a time, in order, with the survey's skip logic. Nothing is
//! scored and no tutor model is called: the mode writes its replies itself
//! (the question, its options or scale, a thank-you), so what a student
//! reads is what the teacher wrote.
//!
//! - `start` shows the welcome, the survey's introduction and the first
//!   question.
//! - `plan` reads the message as the answer to the question on screen (an
//!   option's number, id or label; a number on the scale; free text; or
//!   "skip" for an optional question), and writes the reply: the next
//!   question, the same one again with what a valid answer looks like, or
//!   the closing words with the answers read back.
//! - `apply` commits the same step; the survey's answers are the session's
//!   state and its summary, never evidence about any unit.
//!
//! A survey with a time limit stops taking answers once the clock the
//! turn is handed passes it: the next message is told so, and the survey
//! ends with what was answered. Ending the thread ends it the same way.

use chrono::{DateTime, Duration, Utc};

use crate::content::Bundle;
use crate::content::survey::{self, Questionnaire, SurveyQuestion};
use crate::engine::modes::{
    Ended, Ending, InvalidParam, ModeBlock, ModePlan, ModeTurn, Outcome, SessionMode, Start,
    StartError, Started, welcome,
};
use crate::engine::policy::PolicyOutcome;
use crate::engine::turn_data::{Interpreted, Plan, TurnEvent};
use crate::model::{
    ClientEvent, LlmTutorResponse, Mode, ModeState, OutboundEvent, OutboundEventKind, Scaffolding,
    SessionState, StudentIntent, SurveyAnswer, SurveyAnswerView, SurveyOptionView,
    SurveyQuestionKind, SurveyQuestionView, SurveyScaleView, SurveySession, SurveyView, TeachBack,
    Thread, ThreadStatus, TutorAction, UnderstandingSignal,
};

/// The survey mode.
pub struct Survey;

impl SessionMode for Survey {
    fn check(&self, start: &Start<'_>) -> Result<(), InvalidParam> {
        chosen(start).map(|_| ())
    }

    fn check_event(
        &self,
        thread: &Thread,
        bundle: &Bundle,
        event: &ClientEvent,
        said: Option<&str>,
    ) -> Result<(), InvalidParam> {
        let (question_id, answering) = match event {
            ClientEvent::SurveyAnswer { question_id } => (question_id, true),
            ClientEvent::SurveySkip { question_id } => (question_id, false),
            _ => return Ok(()),
        };
        let Some(session) = survey_of(&thread.session) else {
            return Ok(());
        };
        let field = "clientEvent.questionId";
        let survey = survey_for(bundle, Some(&session.survey_id))?;
        let Some((_, question)) = survey.question(question_id) else {
            return Err(InvalidParam {
                field,
                detail: format!("survey `{}` has no question `{question_id}`", survey.id),
            });
        };
        match session.current_question_id.as_deref() {
            None => {
                return Err(InvalidParam {
                    field,
                    detail: "this survey is finished: there is no question to answer".into(),
                });
            }
            Some(current) if current != question_id => {
                return Err(InvalidParam {
                    field,
                    detail: format!(
                        "question `{question_id}` is not the one being asked (`{current}`)"
                    ),
                });
            }
            Some(_) => {}
        }
        if !answering {
            return match question.required {
                true => Err(InvalidParam {
                    field,
                    detail: format!(
                        "question `{question_id}` must be answered; it cannot be skipped"
                    ),
                }),
                false => Ok(()),
            };
        }
        let text = said.map(str::trim).filter(|t| !t.is_empty());
        let Some(text) = text else {
            return Err(InvalidParam {
                field: "messageText",
                detail: format!("the answer to `{question_id}` is missing"),
            });
        };
        survey::read_answer(question, text)
            .map(|_| ())
            .map_err(|why| InvalidParam {
                field: "messageText",
                detail: format!("`{text}` is not an answer to `{question_id}`: {why}"),
            })
    }

    fn start(&self, start: &Start<'_>) -> Result<Started, StartError> {
        let survey = chosen(start).map_err(|e| StartError(e.detail))?;
        let first = survey
            .questions
            .first()
            .ok_or_else(|| StartError(format!("survey `{}` has no questions", survey.id)))?;
        let session = SurveySession {
            survey_id: survey.id.clone(),
            current_question_id: Some(first.id.clone()),
            answers: Vec::new(),
            skipped: Vec::new(),
            started_at: start.now,
            finished_at: None,
            ends_at: survey
                .time_limit_minutes
                .map(|m| start.now + Duration::minutes(i64::from(m))),
            timed_out: false,
        };
        let hello = welcome(start, Mode::Survey)?;
        let mut text = format!("{hello}\n\n{}", survey.title.trim());
        let intro = survey.intro.trim();
        if !intro.is_empty() {
            text.push_str(&format!("\n{intro}"));
        }
        if let Some(m) = survey.time_limit_minutes {
            text.push_str(&format!(
                "\nYou have {m} minutes; after that the survey ends with what you've answered."
            ));
        }
        text.push_str(&format!("\n\n{}", ask(survey, first)));
        Ok(Started {
            welcome: text,
            session: SessionState {
                mode_state: ModeState::Survey(session),
                ..SessionState::default()
            },
        })
    }

    fn plan(
        &self,
        turn: &ModeTurn<'_>,
        event: &TurnEvent,
        read: &Interpreted,
        mut policy: PolicyOutcome,
    ) -> ModePlan {
        let step = survey_of(&turn.state.thread.session).map(|session| {
            advance(
                &turn.rt.bundle,
                session,
                event,
                read.said.as_deref(),
                turn.env.now,
            )
        });
        let p = &mut policy.policy;
        p.allowed_actions = vec![TutorAction::SocraticQuestion];
        p.prereq_blocking_unit_id = None;
        p.stuck = false;
        p.exam_ready = false;
        p.exam_availability = crate::model::ExamAvailability::None;
        p.exam_next_eligible_at = None;
        policy.exam.available_question_ids.clear();
        let target = p.focus_unit_id.clone();
        ModePlan {
            policy,
            practice: None,
            block: ModeBlock::default(),
            category: None,
            judging: None,
            reply: step.map(|step| {
                LlmTutorResponse::said(
                    target,
                    step.text,
                    StudentIntent::Answer,
                    UnderstandingSignal::default(),
                )
            }),
        }
    }

    fn apply(
        &self,
        turn: &ModeTurn<'_>,
        plan: &Plan,
        _reply: &LlmTutorResponse,
        outcome: &mut Outcome<'_>,
    ) {
        let before_session = &turn.state.thread.session;
        let Some(before) = survey_of(before_session) else {
            return;
        };
        let event = plan.event();
        let step = advance(
            &turn.rt.bundle,
            before,
            &event,
            plan.said.as_deref(),
            turn.env.now,
        );
        let session = &mut outcome.thread.session;
        // A survey's answers are its own state: not answers to a tutor's
        // question, not evidence about any unit.
        session.pending_question = None;
        session.scaffolding = Scaffolding::default();
        session.teach_back = TeachBack::default();
        session.learning = before_session.learning.clone();
        session.recent_outcomes = before_session.recent_outcomes.clone();
        if step.session.current_question_id.is_none() {
            outcome.thread.status = ThreadStatus::Completed;
            if before.current_question_id.is_some() {
                outcome.events.push(session_completed(&step.session));
            }
        }
        outcome.thread.session.mode_state = ModeState::Survey(step.session);
    }

    /// A survey the student ends stops where it is, with what was
    /// answered (as one past its time limit does).
    fn end(&self, ending: &mut Ending<'_>) -> Ended {
        let Some(before) = survey_of(&ending.thread.session) else {
            return Ended::default();
        };
        if before.current_question_id.is_none() {
            return Ended::default();
        }
        let mut session = before.clone();
        let timed_out = stop(&mut session, ending.now);
        let text = if timed_out {
            "Time was up for this survey, so it ends with what you had answered. Thank you!"
        } else {
            "The survey ends here; the answers you gave are saved. Thank you!"
        };
        let events = vec![session_completed(&session)];
        ending.thread.session.mode_state = ModeState::Survey(session);
        Ended {
            text: Some(text.into()),
            events,
        }
    }
}

/// The `session.completed` notification of a finished survey: how it
/// ended and how much was answered, not the answers themselves (they are
/// the student's words, read in the thread's summary).
pub fn session_completed(session: &SurveySession) -> OutboundEvent {
    OutboundEvent {
        kind: OutboundEventKind::SessionCompleted,
        data: serde_json::json!({
            "mode": "survey",
            "survey": {
                "surveyId": session.survey_id,
                "answered": session.answers.len(),
                "skipped": session.skipped.len(),
                "timedOut": session.timed_out,
                "startedAt": session.started_at,
                "finishedAt": session.finished_at,
            },
        }),
    }
}

/// Stops the survey taking answers at `now`, or at its time limit if that
/// came first; whether the limit stopped it.
fn stop(session: &mut SurveySession, now: DateTime<Utc>) -> bool {
    let timed_out = session.ends_at.is_some_and(|end| now >= end);
    session.current_question_id = None;
    session.timed_out = timed_out;
    session.finished_at = Some(match session.ends_at {
        Some(end) if timed_out => end,
        _ => now,
    });
    timed_out
}

/// The survey a session runs, if it is a survey's.
pub fn survey_of(session: &SessionState) -> Option<&SurveySession> {
    match &session.mode_state {
        ModeState::Survey(s) => Some(s),
        _ => None,
    }
}

/// The survey a new thread answers: the one named, else the check-in of
/// the unit asked for, else the bundle's only survey.
fn chosen<'b>(start: &Start<'b>) -> Result<&'b Questionnaire, InvalidParam> {
    let bundle = start.bundle;
    if start.request.survey_id.is_some() {
        return survey_for(bundle, start.request.survey_id.as_deref());
    }
    let for_unit = start
        .unit
        .and_then(|unit| bundle.surveys.values().find(|s| s.units.contains(&unit.id)));
    let only = (bundle.surveys.len() == 1)
        .then(|| bundle.surveys.values().next())
        .flatten();
    for_unit
        .or(only)
        .map_or_else(|| survey_for(bundle, None), Ok)
}

fn survey_for<'b>(bundle: &'b Bundle, id: Option<&str>) -> Result<&'b Questionnaire, InvalidParam> {
    let field = "surveyId";
    let Some(id) = id else {
        return Err(InvalidParam {
            field,
            detail: format!("name the survey to answer; surveys: {}", known(bundle)),
        });
    };
    bundle.surveys.get(id).ok_or_else(|| InvalidParam {
        field,
        detail: format!("there is no survey `{id}`; surveys: {}", known(bundle)),
    })
}

fn known(bundle: &Bundle) -> String {
    if bundle.surveys.is_empty() {
        return "none".into();
    }
    bundle
        .surveys
        .keys()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Question `q` as the student reads it.
/// Whether the student asks what the questions are for ("why are you
/// asking me this?", "what's this for").
fn asks_why(said: &str) -> bool {
    let said = said.trim().to_lowercase();
    said.ends_with('?')
        || [
            "why",
            "what for",
            "whats this",
            "what's this",
            "what is this",
            "how come",
        ]
        .iter()
        .any(|start| said.starts_with(start))
}

fn ask(survey: &Questionnaire, q: &SurveyQuestion) -> String {
    let number = survey.question(&q.id).map_or(0, |(i, _)| i + 1);
    let mut text = format!(
        "Question {number} of {}: {}",
        survey.questions.len(),
        q.prompt.trim()
    );
    match q.kind {
        SurveyQuestionKind::Choice => {
            for (i, option) in q.options.iter().enumerate() {
                text.push_str(&format!("\n{}) {}", i + 1, option.label));
            }
        }
        SurveyQuestionKind::Scale => {
            if let Some(s) = &q.scale {
                text.push_str(&format!(
                    "\nAnswer with a number from {} ({}) to {} ({}).",
                    s.min, s.min_label, s.max, s.max_label
                ));
            }
        }
        SurveyQuestionKind::FreeText => {}
    }
    if !q.required {
        text.push_str("\n(You can type \"skip\" if you'd rather not answer this one.)");
    }
    text
}

/// One turn of a survey, worked out on the state as read.
struct Step {
    session: SurveySession,
    text: String,
}

fn advance(
    bundle: &Bundle,
    before: &SurveySession,
    event: &TurnEvent,
    said: Option<&str>,
    now: DateTime<Utc>,
) -> Step {
    let mut session = before.clone();
    let Some(survey) = bundle.surveys.get(&before.survey_id) else {
        session.current_question_id = None;
        session.finished_at.get_or_insert(now);
        return Step {
            session,
            text: "This survey is no longer available, so there is nothing more to answer. \
                   Thank you for your time!"
                .into(),
        };
    };
    let Some(question) = before
        .current_question_id
        .as_deref()
        .and_then(|id| survey.question(id))
        .map(|(_, q)| q)
    else {
        return Step {
            session,
            text: "This survey is finished — thank you! Your answers are saved.".into(),
        };
    };
    if stop_if_time_up(&mut session, now) {
        let minutes = session
            .ends_at
            .map_or(0, |end| (end - session.started_at).num_minutes());
        let text = format!(
            "Time's up: this survey took answers for {minutes} minutes, so that answer wasn't \
             recorded and the survey ends with what you had answered.\n\n{}",
            closing(survey, &session)
        );
        return Step { session, text };
    }
    let said = said.map(str::trim).filter(|s| !s.is_empty());
    let skipping =
        matches!(event.client_event, ClientEvent::SurveySkip { .. }) || said.is_some_and(is_skip);
    let value = if skipping {
        if question.required {
            return Step {
                session,
                text: format!(
                    "This one needs an answer, but there are no wrong answers here.\n\n{}",
                    ask(survey, question)
                ),
            };
        }
        session.skipped.push(question.id.clone());
        None
    } else {
        let Some(text) = said else {
            return Step {
                text: ask(survey, question),
                session,
            };
        };
        match survey::read_answer(question, text) {
            Ok(value) => Some(value),
            // "why are you asking me this?" is answered, not taken for a
            // wrong kind of answer.
            Err(_) if asks_why(text) => {
                return Step {
                    text: format!(
                        "It's not a test, and nothing here is marked. {}\n\n{}",
                        survey.intro.trim(),
                        ask(survey, question)
                    ),
                    session,
                };
            }
            Err(why) => {
                return Step {
                    text: format!("{why}\n\n{}", ask(survey, question)),
                    session,
                };
            }
        }
    };
    if let Some(value) = &value {
        session.answers.push(SurveyAnswer {
            question_id: question.id.clone(),
            value: value.clone(),
            answered_at: now,
        });
    }
    let next = survey.next_after(&question.id, value.as_deref());
    session.current_question_id = next.map(|q| q.id.clone());
    if next.is_none() {
        session.finished_at = Some(now);
    }
    let chosen_reply = value
        .as_deref()
        .and_then(|v| question.options.iter().find(|o| o.id == v))
        .map(|o| o.reply.trim())
        .filter(|r| !r.is_empty());
    let text = match (next, chosen_reply) {
        (Some(next), Some(reply)) => format!("{reply}\n\n{}", ask(survey, next)),
        (Some(next), None) => format!("{}\n\n{}", thanks(&session), ask(survey, next)),
        (None, Some(reply)) => format!("{reply}\n\n{}", closing(survey, &session)),
        (None, None) => closing(survey, &session),
    };
    Step { session, text }
}

/// Ends the survey if its time limit has passed at `now`; whether it did.
fn stop_if_time_up(session: &mut SurveySession, now: DateTime<Utc>) -> bool {
    session.ends_at.is_some_and(|end| now >= end) && stop(session, now)
}

fn thanks(session: &SurveySession) -> &'static str {
    const WORDS: [&str; 3] = ["Thanks!", "Got it, thank you.", "Thanks — noted."];
    WORDS[(session.answers.len() + session.skipped.len()) % WORDS.len()]
}

fn closing(survey: &Questionnaire, session: &SurveySession) -> String {
    let outro = survey.outro.trim();
    let mut text = if outro.is_empty() {
        "That's everything — thank you for answering!".to_owned()
    } else {
        outro.to_owned()
    };
    if !session.answers.is_empty() {
        text.push_str("\n\nHere is what you told me:");
        for a in &session.answers {
            if let Some((_, q)) = survey.question(&a.question_id) {
                text.push_str(&format!(
                    "\n- {} {}",
                    q.prompt.trim(),
                    survey::describe(q, &a.value)
                ));
            }
        }
    }
    text
}

fn words(text: &str) -> String {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_skip(text: &str) -> bool {
    matches!(
        words(text).as_str(),
        "skip" | "pass" | "skip it" | "skip this" | "skip this one" | "i'd rather not say"
    )
}

/// What a client sees of a survey session: the question on screen (to
/// draw its options or scale) and the answers so far, read back.
pub fn view(bundle: &Bundle, session: &SurveySession) -> SurveyView {
    let survey = bundle.surveys.get(&session.survey_id);
    let question = survey
        .zip(session.current_question_id.as_deref())
        .and_then(|(survey, id)| {
            let (i, q) = survey.question(id)?;
            Some(SurveyQuestionView {
                question_id: q.id.clone(),
                number: i as u32 + 1,
                total: survey.questions.len() as u32,
                kind: q.kind,
                prompt: q.prompt.trim().to_owned(),
                required: q.required,
                options: q
                    .options
                    .iter()
                    .map(|o| SurveyOptionView {
                        id: o.id.clone(),
                        label: o.label.clone(),
                    })
                    .collect(),
                scale: q.scale.as_ref().map(|s| SurveyScaleView {
                    min: s.min,
                    max: s.max,
                    min_label: s.min_label.clone(),
                    max_label: s.max_label.clone(),
                }),
            })
        });
    SurveyView {
        survey_id: session.survey_id.clone(),
        title: survey.map_or_else(String::new, |s| s.title.clone()),
        question,
        answers: session
            .answers
            .iter()
            .map(|a| {
                let q = survey
                    .and_then(|s| s.question(&a.question_id))
                    .map(|(_, q)| q);
                SurveyAnswerView {
                    question_id: a.question_id.clone(),
                    prompt: q.map_or_else(String::new, |q| q.prompt.trim().to_owned()),
                    value: a.value.clone(),
                    answer: q.map_or_else(|| a.value.clone(), |q| survey::describe(q, &a.value)),
                }
            })
            .collect(),
        finished: session.current_question_id.is_none(),
        started_at: session.started_at,
        ends_at: session.ends_at,
        timed_out: session.timed_out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::engine::runtime::shipped_bundle as bundle;

    fn said(text: &str) -> TurnEvent {
        TurnEvent {
            message_text: Some(text.into()),
            message_latex: None,
            client_event: ClientEvent::None,
        }
    }

    fn started(bundle: &Bundle, id: &str) -> SurveySession {
        let first = bundle.surveys[id].questions[0].id.clone();
        SurveySession {
            survey_id: id.into(),
            current_question_id: Some(first),
            ..SurveySession::default()
        }
    }

    #[test]
    fn the_shipped_survey_runs_to_the_end_and_a_skip_rule_jumps() {
        let bundle = bundle();
        let survey = &bundle.surveys["fractions-confidence"];
        let mut session = started(&bundle, &survey.id);
        let mut asked = Vec::new();
        // Answer the last option of every choice ("Not yet" first, which
        // skips ahead), the lowest of every scale and a sentence to every
        // free-text question.
        while let Some(id) = session.current_question_id.clone() {
            asked.push(id.clone());
            let q = survey.question(&id).unwrap().1;
            let answer = match q.kind {
                SurveyQuestionKind::Choice => q.options.len().to_string(),
                SurveyQuestionKind::Scale => q.scale.as_ref().unwrap().min.to_string(),
                SurveyQuestionKind::FreeText => "Adding fractions with different bottoms".into(),
            };
            let step = advance(&bundle, &session, &said(&answer), Some(&answer), Utc::now());
            assert!(!step.text.is_empty());
            session = step.session;
            assert!(asked.len() <= survey.questions.len(), "loops: {asked:?}");
        }
        assert!(
            asked.len() < survey.questions.len(),
            "a rule skipped something: {asked:?}"
        );
        assert_eq!(session.answers.len(), asked.len());
    }

    fn at(minutes: i64) -> DateTime<Utc> {
        DateTime::<Utc>::UNIX_EPOCH + Duration::minutes(minutes)
    }

    /// The fractions check-in with a ten-minute limit, started at `at(0)`.
    fn limited(bundle: &Bundle) -> SurveySession {
        SurveySession {
            started_at: at(0),
            ends_at: Some(at(10)),
            ..started(bundle, "fractions-confidence")
        }
    }

    #[test]
    fn past_its_time_limit_a_survey_takes_no_answer_and_ends_with_what_was_answered() {
        let bundle = bundle();
        let session = limited(&bundle);
        let first = advance(&bundle, &session, &said("2"), Some("2"), at(9));
        assert_eq!(first.session.answers.len(), 1, "{}", first.text);
        assert_eq!(first.session.answers[0].value, "a_little");
        let late = advance(&bundle, &first.session, &said("4"), Some("4"), at(10));
        assert!(late.text.starts_with("Time's up"), "{}", late.text);
        assert!(
            late.text.contains("that answer wasn't recorded"),
            "{}",
            late.text
        );
        assert!(
            late.text.contains("A little bit"),
            "read back: {}",
            late.text
        );
        let s = &late.session;
        assert_eq!(s.answers, first.session.answers, "nothing more recorded");
        assert_eq!(s.current_question_id, None);
        assert!(s.timed_out);
        assert_eq!(s.finished_at, Some(at(10)), "it stopped at the limit");
        let after = advance(&bundle, s, &said("5"), Some("5"), at(60));
        assert_eq!(&after.session, s);
        assert!(after.text.contains("finished"), "{}", after.text);
        let v = view(&bundle, s);
        assert!(v.finished && v.timed_out && v.question.is_none());
        assert_eq!(v.ends_at, Some(at(10)));
        assert_eq!(v.started_at, at(0), "time used is shown from the start");
    }

    #[test]
    fn a_survey_without_a_limit_never_times_out() {
        let bundle = bundle();
        let session = started(&bundle, "fractions-confidence");
        let step = advance(&bundle, &session, &said("2"), Some("2"), at(100_000));
        assert_eq!(step.session.answers.len(), 1);
        assert!(!step.session.timed_out);
    }

    #[test]
    fn a_survey_the_student_ends_keeps_its_answers_once() {
        let bundle = bundle();
        let course = bundle.course("prealgebra").unwrap();
        let workflow = bundle.workflow_for(course).unwrap();
        let answered = advance(&bundle, &limited(&bundle), &said("2"), Some("2"), at(1)).session;
        let mut thread = Thread {
            thread_id: "t".into(),
            student_id: "s".into(),
            course_id: "prealgebra".into(),
            mode: Mode::Survey,
            status: ThreadStatus::Completed,
            goal: None,
            unit_id: None,
            created_at: at(0),
            updated_at: at(1),
            title: None,
            preview: None,
            paused_at: None,
            ended_at: Some(at(3)),
            session: SessionState {
                mode_state: ModeState::Survey(answered.clone()),
                ..SessionState::default()
            },
        };
        let mut snapshot = crate::model::StudentSnapshot::new("s", "prealgebra", "fractions");
        let mut end = |thread: &mut Thread, now| {
            Survey.end(&mut Ending {
                course,
                workflow,
                now,
                thread,
                snapshot: &mut snapshot,
            })
        };
        let ended = end(&mut thread, at(3));
        assert!(ended.text.unwrap().contains("saved"));
        // The integration hears of it once, without the answers' words.
        assert_eq!(ended.events.len(), 1);
        let data = &ended.events[0].data;
        assert_eq!(
            ended.events[0].kind,
            crate::model::OutboundEventKind::SessionCompleted
        );
        assert_eq!(data["mode"], "survey");
        assert_eq!(data["survey"]["answered"], answered.answers.len());
        assert_eq!(data["survey"]["timedOut"], false);
        for a in &answered.answers {
            assert!(!data.to_string().contains(&format!("\"{}\"", a.value)));
        }
        let s = survey_of(&thread.session).unwrap();
        assert_eq!(s.answers, answered.answers);
        assert_eq!(
            (s.current_question_id.clone(), s.finished_at, s.timed_out),
            (None, Some(at(3)), false)
        );
        let kept = thread.clone();
        assert_eq!(end(&mut thread, at(4)), Ended::default());
        assert_eq!(thread, kept);
        // Ended after its limit, it ended at the limit.
        thread.session.mode_state = ModeState::Survey(answered);
        end(&mut thread, at(30));
        let s = survey_of(&thread.session).unwrap();
        assert!(s.timed_out);
        assert_eq!(s.finished_at, Some(at(10)));
    }

    #[test]
    fn a_required_question_cannot_be_skipped_and_a_wrong_choice_is_asked_again() {
        let bundle = bundle();
        let session = started(&bundle, "fractions-confidence");
        let step = advance(&bundle, &session, &said("skip"), Some("skip"), Utc::now());
        assert_eq!(step.session, session);
        assert!(step.text.contains("needs an answer"), "{}", step.text);
        let step = advance(
            &bundle,
            &session,
            &said("purple"),
            Some("purple"),
            Utc::now(),
        );
        assert_eq!(step.session, session);
        assert!(
            step.text.contains("Could you pick 1, 2 or 3?"),
            "{}",
            step.text
        );
    }
}
