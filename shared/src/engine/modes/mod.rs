//! Session modes. A thread's mode is fixed when it is created, and a mode
//! differs from the others in three steps only, each pure:
//! - `start`: what creating a thread in the mode sets up, and the welcome;
//! - `plan`: given the turn's shared reading of the message (safety,
//!   grading, category, mapped units) and the policy, what this turn may
//!   do — the actions allowed, the item to ask, the prompt's mode block;
//! - `apply`: the mode's own state update once the reply is decided.
//!
//! Every other stage of a turn (reading the message, the policy, retrieval,
//! the prompt, the one tutor call, validation and fallback, the updates
//! every mode shares, the commit) is written once in
//! [`crate::engine::turn`], which calls the thread's mode through
//! [`for_mode`] and names no mode itself. No mode imports the turn: what a
//! mode is handed (the event, the state as read, the reading of the
//! message, the plan) is in [`crate::engine::turn_data`], below both, and
//! the contract it implements is here. What a mode keeps between
//! turns lives in the session's [`ModeState`](crate::model::ModeState),
//! saved and versioned with the rest of the thread.
//!
//! [`for_mode`] is the registry: every mode a thread can be created in has
//! its entry (a course may still switch a mode off in its workflow).

pub mod clarify_doubts;
pub mod exam;
pub mod exam_select;
pub mod guided;
pub mod problem_set;
pub mod study_plan;
pub mod survey;
pub mod teach_me;

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use crate::content::{Bundle, Course, Unit, Workflow};
use crate::engine::exam::judge::{Judging, WrittenMark};
use crate::engine::policy::PolicyOutcome;
use crate::engine::practice::drill::IssuedDrill;
use crate::engine::runtime::CourseRuntime;
use crate::engine::turn_data::{Interpreted, Plan, TurnEnv, TurnEvent, TurnState};
use crate::model::{
    ClarifyBrief, ClientEvent, CreateThreadRequest, LessonBrief, LlmStudyPlan, LlmTutorResponse,
    Mode, OutboundEvent, PlannerInput, ProblemBrief, ProblemInput, SessionState, StudentSnapshot,
    Thread, TutorLanguage, TutorMessage,
};

/// A mode's own steps of the turn pipeline.
pub trait SessionMode: Sync {
    /// The one LLM call creating a thread in this mode needs, if any: the
    /// caller makes it and hands its reply to [`SessionMode::start`] in
    /// [`Start::prepared`].
    fn start_call(&self, _start: &Start<'_>) -> Option<StartCall> {
        None
    }

    /// How many of the student's latest earlier threads in this mode on
    /// the course a new thread builds on: the caller reads them into
    /// [`Start::earlier`].
    fn earlier_sessions(&self, _start: &Start<'_>) -> usize {
        0
    }

    /// Whether `start` draws questions from the course's exam bank, and so
    /// needs to know which ones the student is locked out of.
    fn draws_from_bank(&self) -> bool {
        false
    }

    /// The creation parameters that are the mode's own, checked before
    /// anything is set up (a 422 naming the field otherwise).
    fn check(&self, _start: &Start<'_>) -> Result<(), InvalidParam> {
        Ok(())
    }

    /// A turn's card event checked against the thread before anything is
    /// read or applied: what it names must be there to act on (a 422
    /// naming the field otherwise). `said` is the message sent with it.
    fn check_event(
        &self,
        _thread: &Thread,
        _bundle: &Bundle,
        _event: &ClientEvent,
        _said: Option<&str>,
    ) -> Result<(), InvalidParam> {
        Ok(())
    }

    /// A new thread: the session state the mode starts from, and its welcome.
    fn start(&self, start: &Start<'_>) -> Result<Started, StartError>;

    /// What this turn may do, given what the student sent, the shared
    /// reading of it and the policy.
    fn plan(
        &self,
        turn: &ModeTurn<'_>,
        event: &TurnEvent,
        read: &Interpreted,
        policy: PolicyOutcome,
    ) -> ModePlan;

    /// The reply to a turn whose plan asked for an answer to be judged
    /// ([`ModePlan::judging`]), written again with the evaluation call's
    /// `verdict`. Pure, like `plan`: `plan.judging` holds the request.
    fn judged(
        &self,
        _turn: &ModeTurn<'_>,
        _plan: &Plan,
        _verdict: &WrittenMark,
    ) -> Option<LlmTutorResponse> {
        None
    }

    /// The student ends the thread (`POST /threads/{id}/end`) before the
    /// mode finished it: the mode closes its own state as its own finish
    /// would (an exam is scored, a problem set reports), and says what that
    /// adds to the conversation and sends to the integration. Called once:
    /// ending a completed thread changes nothing.
    fn end(&self, _ending: &mut Ending<'_>) -> Ended {
        Ended::default()
    }

    /// The student resumes the thread after `paused_for` paused: the mode
    /// takes that time off the clocks it keeps of the student's work (see
    /// docs/architecture.md, "Pausing"). Most modes keep none.
    fn resumed(&self, _thread: &mut Thread, _paused_for: chrono::Duration) {}

    /// The mode's own update once the reply is decided, after the updates
    /// every mode shares. Not called when a safety response replaced the
    /// tutor's reply: nothing else happens on such a turn.
    fn apply(
        &self,
        turn: &ModeTurn<'_>,
        plan: &Plan,
        reply: &LlmTutorResponse,
        outcome: &mut Outcome<'_>,
    );

    /// How long the mode's sessions may go without a message before
    /// [`expire`](Self::expire) ends them; `None` for modes whose threads
    /// never expire. Some exactly for the modes whose
    /// [`Mode::expires_when_idle`] is true (a test holds the two equal).
    fn idle_limit(&self, _workflow: &Workflow) -> Option<chrono::Duration> {
        None
    }

    /// Ends `thread` if the mode's sessions expire and it has been idle
    /// past that time at `now`. Most modes' threads never expire.
    fn expire(
        &self,
        _thread: &mut Thread,
        _course: &Course,
        _workflow: &Workflow,
        _now: chrono::DateTime<chrono::Utc>,
    ) -> Option<Expired> {
        None
    }
}

/// A session the student ends, as its mode sees it: the thread (already
/// completed, with its end time) and the student's record, to close and
/// update as the mode's own finish would.
pub struct Ending<'a> {
    pub course: &'a Course,
    pub workflow: &'a Workflow,
    pub now: DateTime<Utc>,
    pub thread: &'a mut Thread,
    pub snapshot: &'a mut StudentSnapshot,
}

/// What ending a session adds, committed with it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ended {
    /// The thread's last message (a recap, the report), if the mode has one.
    pub text: Option<String>,
    /// Notifications for the integration, sent once the end is committed.
    pub events: Vec<OutboundEvent>,
}

/// A session a mode ended for being idle too long.
#[derive(Debug, Clone, PartialEq)]
pub struct Expired {
    /// Said in the conversation: why it ended and what was done.
    pub notice: String,
    /// Notifications for the integration (the session's report).
    pub events: Vec<OutboundEvent>,
}

/// The mode that runs threads of `mode`.
pub fn for_mode(mode: Mode) -> &'static dyn SessionMode {
    match mode {
        Mode::Guided => &guided::Guided,
        Mode::TeachMe => &teach_me::TeachMe,
        Mode::ClarifyDoubts => &clarify_doubts::ClarifyDoubts,
        Mode::Exam => &exam::Exam,
        Mode::ProblemSet => &problem_set::ProblemSet,
        Mode::Survey => &survey::Survey,
    }
}

/// What a thread is created from, checked by the caller: the unit is the
/// course's and the goal within limits.
pub struct Start<'a> {
    pub bundle: &'a Bundle,
    pub course: &'a Course,
    pub workflow: &'a Workflow,
    pub unit: Option<&'a Unit>,
    pub goal: Option<&'a str>,
    /// The reply to the mode's [`SessionMode::start_call`], once made.
    pub prepared: Option<&'a StartReply>,
    /// The student's latest earlier threads in this mode on this course,
    /// newest first, as many as [`SessionMode::earlier_sessions`] asks for.
    pub earlier: &'a [Thread],
    /// The creation request as sent (a mode's own parameters).
    pub request: &'a CreateThreadRequest,
    pub now: DateTime<Utc>,
    /// Randomness handed in (an exam's choice of questions).
    pub seed: u64,
    /// Bank questions the student may not be asked now (locked after a
    /// failure or a memo view).
    pub locked_questions: &'a BTreeSet<String>,
    /// The student's record, for what a mode starts from (abilities).
    pub snapshot: Option<&'a StudentSnapshot>,
    /// Problems the caller supplied (problem_set), checked by the caller.
    pub problems: Option<&'a [ProblemInput]>,
    /// A course problem set asked for by id (problem_set), known to exist.
    pub problem_set_id: Option<&'a str>,
    /// Who the student is, checked: the welcome uses their name and language.
    pub personalization: &'a crate::model::Personalization,
}

/// A creation parameter a mode refuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {detail}")]
pub struct InvalidParam {
    /// The request's field, as sent (`questionCount`).
    pub field: &'static str,
    pub detail: String,
}

/// An LLM call a mode asks for when a thread is created.
#[derive(Debug, Clone, PartialEq)]
pub enum StartCall {
    /// A study plan from the planner.
    Plan(PlannerInput),
}

/// The reply to a [`StartCall`]: the call's value, or why there is none
/// (the mode then starts without it).
#[derive(Debug, Clone, PartialEq)]
pub enum StartReply {
    Plan(Result<LlmStudyPlan, String>),
}

/// What a new thread starts with.
#[derive(Debug, Clone, PartialEq)]
pub struct Started {
    pub session: SessionState,
    pub welcome: String,
}

/// The content a mode starts from is missing or does not render.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct StartError(pub String);

/// One turn as a mode sees it: the course, state as read at one moment,
/// and what the turn is computed from.
#[derive(Clone, Copy)]
pub struct ModeTurn<'a> {
    pub rt: &'a CourseRuntime,
    pub state: TurnState<'a>,
    pub env: &'a TurnEnv<'a>,
}

/// What a mode allows this turn.
pub struct ModePlan {
    /// The policy as the mode leaves it: the reply may take only its
    /// allowed actions, on its scoped units.
    pub policy: PolicyOutcome,
    /// An item generated by the server for the reply to ask.
    pub practice: Option<IssuedDrill>,
    pub block: ModeBlock,
    /// The routing category the reply answers as, in place of the one the
    /// message was read as (e.g. a lesson's closing reply).
    pub category: Option<String>,
    /// A written exam answer to be marked: the turn's one LLM call is the
    /// evaluation call, never the tutor. `reply` is then written with the
    /// offline judge's verdict, and [`SessionMode::judged`] rewrites it if
    /// the call's verdict comes back.
    pub judging: Option<Judging>,
    /// The reply, when the mode writes it itself (an exam's questions and
    /// marks): the turn then makes no tutor call.
    pub reply: Option<LlmTutorResponse>,
}

/// What the prompt's mode block says this turn, besides the mode's rules
/// (which the workflow's phrasebook holds per mode).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModeBlock {
    /// The mode's plan for the session is complete: pacing consolidates.
    pub plan_complete: bool,
    /// Where a planned lesson is.
    pub lesson: Option<LessonBrief>,
    /// Where a question session is.
    pub clarify: Option<ClarifyBrief>,
    /// The problem being worked on (its `earlierMessages` is filled in
    /// when the history is cut).
    pub problem: Option<ProblemBrief>,
    /// The hybrid memory: the history keeps only the last few
    /// messages from before the current problem.
    pub memory: Option<MemoryCut>,
}

/// Where the current problem's conversation begins, and how much of what
/// came before it the history keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryCut {
    /// The turn that presented the current problem: its messages and
    /// those before it belong to earlier problems.
    pub boundary_turn: String,
    /// Messages from earlier problems kept.
    pub keep_previous: usize,
}

/// The state a turn is writing, for a mode's own update.
pub struct Outcome<'a> {
    pub thread: &'a mut Thread,
    pub snapshot: &'a mut StudentSnapshot,
    /// This turn's new messages: the student's, then the tutor's.
    pub messages: &'a mut Vec<TutorMessage>,
    /// Notifications for the integration, sent once the turn is committed.
    pub events: &'a mut Vec<OutboundEvent>,
}

/// The welcome message, rendered from the template the workflow names for
/// `mode`.
/// In the student's language when the bundle has the welcome in it (the
/// prompt named with the language's code after `_`), else in English.
pub fn welcome(start: &Start<'_>, mode: Mode) -> Result<String, StartError> {
    let english = start.workflow.modes.welcome_prompt(mode);
    let language = start.personalization.language;
    let translated = (language != TutorLanguage::En)
        .then(|| {
            start
                .bundle
                .prompts
                .get(&format!("{english}_{}", language.as_str()))
        })
        .flatten();
    let template = translated
        .or_else(|| start.bundle.prompts.get(english))
        .ok_or_else(|| StartError("welcome prompt missing".into()))?;
    let mut values = BTreeMap::new();
    let name = start.personalization.student_name.as_deref();
    // "Hi there!" in English; elsewhere a greeting without a name.
    let nameless = if translated.is_some() { "" } else { "there" };
    values.insert("student_name", name.unwrap_or(nameless).to_owned());
    values.insert("course_title", start.course.title.clone());
    values.insert(
        "unit_title",
        start.unit.map_or(&start.course.title, |u| &u.title).clone(),
    );
    values.insert("goal", start.goal.unwrap_or("").to_owned());
    values.insert("mode", mode.as_str().to_owned());
    values.insert(
        "question_count",
        start
            .request
            .question_count
            .unwrap_or(start.workflow.modes.exam.question_count)
            .to_string(),
    );
    template
        .render(&values)
        // "¡Hola, !" when no name was given.
        .map(|t| t.replace(", !", "!").trim().to_owned())
        .map_err(|e| StartError(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The store indexes a mode's active threads for the idle sweep exactly
    /// when the mode says its sessions expire.
    #[test]
    fn the_modes_that_expire_are_the_ones_the_store_indexes() {
        let bundle = crate::engine::runtime::shipped_bundle();
        for workflow in bundle.workflows.values() {
            for mode in Mode::ALL {
                assert_eq!(
                    for_mode(mode).idle_limit(workflow).is_some(),
                    mode.expires_when_idle(),
                    "{} in {}",
                    mode.as_str(),
                    workflow.id
                );
            }
        }
    }
}
