//! The turn as pure functions, the same for every mode (docs/architecture.md,
//! "The turn"); what a mode does differently comes from
//! [`crate::engine::modes`].
//!
//! [`interpret`] reads the message: the safety gate, code grading,
//! classification and unit mapping, and names the exam questions whose
//! lockout statuses the policy will read. [`plan_interpreted`] runs the
//! rest of what comes before the one LLM call: the policy, the mode's plan
//! (allowed actions, the item to ask), retrieval and the composed tutor
//! input. [`apply`] runs every step after it: the session's transitions,
//! evidence, the new pending question, the cards, the messages and the
//! mode's own update. All take state as read at one moment, so on a version
//! conflict the caller re-reads and runs them again with the same LLM reply:
//! the reply is an input and is never requested twice.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::content::workflow::{BeyondCourse, Transition};
use crate::content::{Blueprint, Bundle, Course, Unit, Workflow};
use crate::engine::answer_guard::{self, PendingAnswer};
use crate::engine::classify::{self, Interpretation};
use crate::engine::comparison;
use crate::engine::drill::{self, IssuedDrill};
use crate::engine::drill_grade::{self, DrillVerdict};
use crate::engine::drill_token::{self, TokenKeys};
use crate::engine::evidence::{self, DrillGraded, EvidenceEffect, TransitionContext};
use crate::engine::exam_cards;
use crate::engine::exam_judge::{JudgeRequest, Judging, Verdict};
use crate::engine::irt;
use crate::engine::item_help;
use crate::engine::lifecycle;
use crate::engine::lockout::{LockoutSource, LockoutStatus};
use crate::engine::mapping::{UnitMapper, UnitMatch};
use crate::engine::modes::{self, MemoryCut, ModeBlock, ModePlan, ModeTurn, Outcome, SessionMode};
use crate::engine::outside_math;
use crate::engine::place_value;
use crate::engine::policy::{
    MoveOn, PolicyError, PolicyInput, PolicyOutcome, StudentRequest, compute_policy,
};
use crate::engine::retrieve::CourseIndex;
use crate::engine::safety::{ReplyContext, SafetyGate, SafetyHit, Sanitizer};
use crate::engine::scaffolding;
use crate::engine::session_timeline;
use crate::engine::signals::{self, PacingInput, Trend};
use crate::engine::solution::Solution;
use crate::engine::student_math;
use crate::engine::thread_learning;
use crate::model::{
    AnswerKind, CategoryCue, ClientEvent, CodeReading, ConceptCard, ContentChunk, CourseBrief,
    ExamCandidate, ExamCard, ExamOption, ExpectedAnswer, GradeOutcome, HistoryMessage,
    LlmTutorResponse, MappedUnit, MasteryTier, OutboundEvent, PendingQuestion, Personalization,
    PracticeItem, ProblemBrief, QuestionPhase, QuestionState, RevisitBrief, Role, SessionState,
    SnapshotLiteForLlm, StudentInput, StudentIntent, StudentSnapshot, Thread, ThreadStatus,
    TurnAnalysis, TutorAction, TutorCard, TutorContext, TutorMessage, TutorTurnInput, UnitAnchor,
    WorkedExample,
};

/// The category of a question about maths outside the course.
pub(crate) const BEYOND_COURSE: &str = "beyond_course";
/// Units a message may map to, at most.
const MAPPED_UNITS: usize = 3;
/// Content chunks put in front of the tutor, at most (the prompt trims further).
const CONTEXT_CHUNKS: usize = 4;
/// The previous turn's reading counts a little less than this turn's words.
const PREVIOUS_READING_WEIGHT: f64 = 0.8;
/// Confidence of a unit named by a button press (e.g. "Try a drill" on a card).
const EVENT_UNIT_CONFIDENCE: f64 = 0.95;
/// Replay keys of graded drills kept per thread: tokens expire long before
/// this many more are issued in one conversation.
const GRADED_DRILLS_KEPT: usize = 200;
/// Grades kept for the pacing trend.
const RECENT_OUTCOMES_KEPT: usize = 12;
/// Student messages the style signal looks at.
const STYLE_MESSAGES: usize = 8;

/// A course's content with what is derived from it once per content
/// version: search indexes and compiled patterns.
pub struct CourseRuntime {
    pub bundle: Arc<Bundle>,
    course_id: String,
    pub index: CourseIndex,
    pub safety: SafetyGate,
    pub sanitizer: Sanitizer,
    /// The fingerprint each of the course's blueprints seals into its drill
    /// tokens: a digest of the whole blueprint, too dear to take every turn.
    blueprint_fingerprints: BTreeMap<String, [u8; 8]>,
}

impl CourseRuntime {
    /// `None` when the course or its workflow is not in the bundle.
    pub fn new(bundle: Arc<Bundle>, course_id: &str) -> Option<Self> {
        let course = bundle.course(course_id)?;
        let workflow = bundle.workflow_for(course)?;
        let mut index = CourseIndex::build(course);
        index
            .mapper
            .add_outside_topics(workflow.beyond_course.iter().map(|b| b.asks.as_slice()));
        let safety = SafetyGate::new(workflow);
        let sanitizer = Sanitizer::new(workflow);
        let blueprint_fingerprints = course
            .units
            .values()
            .flat_map(|u| &u.blueprints)
            .filter_map(|id| Some((id.clone(), bundle.blueprints.get(id)?.fingerprint())))
            .collect();
        Some(CourseRuntime {
            course_id: course_id.to_owned(),
            index,
            safety,
            sanitizer,
            blueprint_fingerprints,
            bundle,
        })
    }

    /// One of the course's blueprints and its fingerprint.
    pub fn blueprint(&self, id: &str) -> Option<(&Blueprint, [u8; 8])> {
        Some((
            self.bundle.blueprints.get(id)?,
            *self.blueprint_fingerprints.get(id)?,
        ))
    }

    pub fn course(&self) -> &Course {
        self.bundle
            .course(&self.course_id)
            .expect("checked when the runtime was built")
    }

    pub fn workflow(&self) -> &Workflow {
        self.bundle
            .workflow_for(self.course())
            .expect("checked when the runtime was built")
    }
}

/// What the student sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnEvent {
    pub message_text: Option<String>,
    pub message_latex: Option<String>,
    pub client_event: ClientEvent,
}

impl TurnEvent {
    fn student_input(&self) -> StudentInput {
        StudentInput {
            message_text: self.message_text.clone(),
            message_latex: self.message_latex.clone(),
            voice_transcript: None,
        }
    }
}

/// What a turn is computed from besides state and content: time, ids and
/// randomness handed in, lockouts prefetched by the caller.
pub struct TurnEnv<'a> {
    pub now: DateTime<Utc>,
    pub turn_id: &'a str,
    pub seed: u64,
    pub token_keys: &'a TokenKeys,
    pub drill_ttl: Duration,
    pub lockouts: &'a (dyn LockoutSource + Sync),
    pub personalization: &'a Personalization,
    /// Whose help lines a safety reply shows (the deployment's region).
    pub safety_region: &'a str,
}

/// State as read at one moment.
#[derive(Clone, Copy)]
pub struct TurnState<'a> {
    pub thread: &'a Thread,
    /// Recent messages, oldest first.
    pub history: &'a [TutorMessage],
    pub snapshot: &'a StudentSnapshot,
}

/// A drill pending in the chat, answered there instead of with "Check".
#[derive(Debug, Clone, PartialEq)]
pub struct ChatDrill {
    pub verdict: DrillVerdict,
    pub unit_id: String,
    pub replay_key: String,
    pub difficulty: Option<f64>,
    pub first_attempt: bool,
}

/// Steps 5 and 6: what the student sent, as code reads it before the
/// policy and any LLM call.
pub struct Interpreted {
    /// What the student wrote this turn, if anything.
    pub said: Option<String>,
    /// The safety gate's verdict: its category's response pauses
    /// tutoring for this turn (nothing is graded or applied) or comes
    /// before the tutor's reply.
    pub safety: Option<SafetyHit>,
    pub interpretation: Option<Interpretation>,
    /// A problem the student brought as their own, worked out once here
    /// for every later step that asks.
    pub own_problem: Option<student_math::StudentProblem>,
    /// The maths topics outside the course the message asks about (indices
    /// into the workflow's `beyond_course`), when it names one more
    /// strongly than any unit of the course: one, or two set side by side.
    pub beyond_course: Vec<usize>,
    pub category: String,
    pub mapped_units: Vec<MappedUnit>,
    /// The exam questions whose lockout statuses planning reads: the caller
    /// fetches them between [`interpret`] and [`plan_interpreted`].
    pub exam_questions: Vec<String>,
}

/// Everything decided before the LLM call.
pub struct Plan {
    /// What the student wrote this turn, if anything.
    pub said: Option<String>,
    /// The safety gate's verdict: its category's response pauses
    /// tutoring for this turn (nothing is graded or applied) or comes
    /// before the tutor's reply.
    pub safety: Option<SafetyHit>,
    pub interpretation: Option<Interpretation>,
    pub category: String,
    pub mapped_units: Vec<MappedUnit>,
    pub policy: PolicyOutcome,
    pub practice: Option<IssuedDrill>,
    pub chat_drill: Option<ChatDrill>,
    /// The tutor's input, pending answers masked.
    pub input: TutorTurnInput,
    /// Answers the reply must not state (see `engine::answer_guard`).
    pub pending_answers: Vec<PendingAnswer>,
    /// The practice item's answer: guarded only in a reply that shows the
    /// item (another reply may state the same number for other reasons).
    pub practice_answer: Option<PendingAnswer>,
    /// The answers of the exam questions the reply may show: not in the
    /// context, and never stated.
    pub exam_answers: Vec<PendingAnswer>,
    /// The reply the mode wrote itself: the turn makes no tutor call.
    pub scripted: Option<LlmTutorResponse>,
    /// A written exam answer this turn marks: the turn's one LLM call is
    /// the evaluation call on `judging.request`, and [`judged`] hands its
    /// verdict back before `apply`. Until then (and when the call fails)
    /// the offline judge's verdict stands, with the reply written for it.
    pub judging: Option<Judging>,
    /// What the pending item's own solution offers this turn (also in
    /// `input.question`), with what the step it offers works out to.
    pub item_help: item_help::TurnHelp,
}

impl Plan {
    /// The turn's event as the plan read it: what the student wrote and
    /// the card event, for a mode that replays it in `apply`.
    pub fn event(&self) -> TurnEvent {
        TurnEvent {
            message_text: self.said.clone(),
            message_latex: None,
            client_event: self.input.context.client_event.clone(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error("the tutor's reply targets unit `{0}`, which is not in the course")]
    UnknownUnit(String),
}

/// The mode that runs `thread`.
fn mode_of(thread: &Thread) -> &'static dyn SessionMode {
    modes::for_mode(thread.mode)
}

/// Steps 5 to 9 at once, for a caller that holds every lockout status.
pub fn plan(
    rt: &CourseRuntime,
    state: TurnState<'_>,
    event: &TurnEvent,
    env: &TurnEnv<'_>,
) -> Result<Plan, TurnError> {
    let read = interpret(rt, state, event, env.now, env.turn_id)?;
    plan_interpreted(rt, state, event, read, env)
}

/// Steps 5 and 6: the safety gate, then code's reading of the message
/// (grading, classification, unit mapping), and the exam questions the
/// policy will look at: the focus unit's candidates at the desired tier
/// (when exam-ready) and the revisit queue (for the summary sent back).
pub fn interpret(
    rt: &CourseRuntime,
    state: TurnState<'_>,
    event: &TurnEvent,
    now: DateTime<Utc>,
    turn_id: &str,
) -> Result<Interpreted, TurnError> {
    let workflow = rt.workflow();
    let session = &state.thread.session;
    let said = event.student_input().said();
    let safety = said.as_deref().and_then(|s| rt.safety.classify(s));
    let own_problem = own_problem(session, said.as_deref());
    // Read once: unit mapping, the outside topics and the chatter check
    // all weigh the same ranking.
    let ranked = said
        .as_deref()
        .map(|s| rt.index.mapper.rank(s))
        .unwrap_or_default();
    let beyond_course = said
        .as_deref()
        .map(|s| rt.index.mapper.outside_topics_ranked(s, &ranked))
        .unwrap_or_default();

    // A message that pauses tutoring is not graded or read for intent.
    let interpretation = match (&said, &safety) {
        (Some(_), Some(hit)) if hit.pauses_tutoring() => None,
        (Some(text), _) if own_problem.is_some() => {
            Some(classify::interpret_own_problem(workflow, session, text))
        }
        (Some(text), _) if explains_idea(session, text) => {
            Some(classify::interpret_explanation(workflow, session, text))
        }
        (Some(text), _) => Some(classify::interpret(
            workflow,
            session,
            text,
            None,
            classify::MessageKind {
                unrelated: rt.index.mapper.is_unrelated_ranked(text, &ranked),
                greeting: UnitMapper::is_greeting(text),
                names_a_unit: !ranked.is_empty(),
            },
        )),
        _ => None,
    };
    let category = forced_category(workflow, &event.client_event)
        .or_else(|| {
            beyond_course_category(
                workflow,
                beyond_course.first().copied(),
                said.as_deref(),
                interpretation.as_ref(),
            )
        })
        .or_else(|| {
            interpretation
                .as_ref()
                .map(|i| i.classification.category.clone())
        })
        .unwrap_or_else(|| workflow.default_category.clone());

    let mapped_units = map_units(rt, state.snapshot, ranked, &event.client_event);
    let mut exam_questions = crate::engine::policy::exam_questions_to_check(&PolicyInput {
        snapshot: state.snapshot,
        course: rt.course(),
        workflow,
        mapped_units: &mapped_units,
        now,
        turn_id,
        request: request_of(workflow, &category),
    })?;
    for q in state.snapshot.revisit_queue.keys() {
        if !exam_questions.contains(q) {
            exam_questions.push(q.clone());
        }
    }
    Ok(Interpreted {
        said,
        safety,
        interpretation,
        own_problem,
        beyond_course,
        category,
        mapped_units,
        exam_questions,
    })
}

/// Steps 7 to 9: the policy, what the thread's mode allows of it,
/// retrieval and the composed tutor input. `env.lockouts` must answer for
/// `read.exam_questions`.
pub fn plan_interpreted(
    rt: &CourseRuntime,
    state: TurnState<'_>,
    event: &TurnEvent,
    read: Interpreted,
    env: &TurnEnv<'_>,
) -> Result<Plan, TurnError> {
    let course = rt.course();
    let workflow = rt.workflow();
    let session = &state.thread.session;
    let mut policy = compute_policy(
        &PolicyInput {
            snapshot: state.snapshot,
            course,
            workflow,
            mapped_units: &read.mapped_units,
            now: env.now,
            turn_id: env.turn_id,
            request: request_of(workflow, &read.category),
        },
        env.lockouts,
    )?;
    stuck_on_item(&mut policy, session, state.snapshot, workflow);
    let chat_drill = chat_drill(
        rt,
        state,
        read.interpretation.as_ref(),
        read.said.as_deref(),
        env,
    );
    let turn = ModeTurn { rt, state, env };
    let ModePlan {
        policy,
        practice,
        block,
        category,
        judging,
        reply: scripted,
    } = mode_of(state.thread).plan(&turn, event, &read, policy);
    let category = category.unwrap_or(read.category);

    // The category's transitions, previewed, give the phase this reply acts in.
    let mut preview = session.clone();
    if let Some(c) = workflow.category(&category) {
        scaffolding::apply_category(
            &mut preview,
            c,
            scaffolding::TransitionContext {
                answer: read.said.as_deref(),
            },
        );
    }
    let mut input = compose(
        rt,
        state,
        event,
        env,
        &policy,
        &category,
        &preview,
        &read.mapped_units,
        read.interpretation.as_ref(),
        read.own_problem.as_ref(),
        &read.beyond_course,
        practice.as_ref(),
        block,
        scripted.is_none(),
    );
    let item_help = preview
        .pending_question
        .as_ref()
        .map(|q| {
            let grade = read
                .interpretation
                .as_ref()
                .and_then(|i| i.grade.as_ref())
                .filter(|_| {
                    session.pending_question.as_ref().map(|p| &p.asked_at) == Some(&q.asked_at)
                });
            let tags = course
                .unit(&q.unit_id)
                .map_or(&[][..], |u| u.mistake_tags.as_slice());
            item_help::for_question(
                pending_solution(rt, state.thread, q, env).as_ref(),
                q,
                read.said.as_deref(),
                grade,
                tags,
                &workflow.grading,
            )
        })
        .unwrap_or_default();
    if let Some(question) = input.question.as_mut() {
        question.help = item_help.help.clone();
    }
    let mut pending_answers = pending_answers(rt, &preview, env.now);
    // The problem the student just brought is worked with them, not
    // answered; a question session answers it outright, and a reply the
    // mode wrote (an exam's marks) does not work it at all.
    if input.clarify.is_none()
        && scripted.is_none()
        && let Some(own) = &read.own_problem
        && let Some(answer) = PendingAnswer::new("own problem", &own.text, &own.answer)
    {
        pending_answers.push(answer);
    }
    let practice_question = practice
        .as_ref()
        .map(|d| (format!("{} {}", d.card.prompt, d.card.question_latex), d));
    // The context is masked before the student has seen the practice item;
    // a reply that shows it is checked for its answer anywhere.
    let unseen_practice = practice_question.as_ref().and_then(|(q, d)| {
        PendingAnswer::for_unseen_item("practice item", q, &drill_grade::expected_answer(&d.item))
    });
    let practice_answer = practice_question.as_ref().and_then(|(q, d)| {
        PendingAnswer::for_expected("practice item", q, &drill_grade::expected_answer(&d.item))
    });
    answer_guard::mask_input(
        &mut input,
        pending_answers.iter().chain(unseen_practice.as_ref()),
    );
    let exam_answers = policy
        .exam
        .available_question_ids
        .iter()
        .filter_map(|q| PendingAnswer::for_exam(rt.course().exam_item(q)?.1))
        .collect();
    Ok(Plan {
        said: read.said,
        safety: read.safety,
        interpretation: read.interpretation,
        category,
        mapped_units: read.mapped_units,
        policy,
        practice,
        chat_drill,
        input,
        pending_answers,
        practice_answer,
        exam_answers,
        scripted,
        judging,
        item_help,
    })
}

/// The evaluation call's verdict on the answer `plan` asked to be judged,
/// handed back before `apply`: the mode writes its reply again with it.
/// A verdict on another request (the state moved on after a version
/// conflict) is not this answer's, and changes nothing.
pub fn judged(
    rt: &CourseRuntime,
    state: TurnState<'_>,
    plan: &mut Plan,
    request: &JudgeRequest,
    verdict: Verdict,
    env: &TurnEnv<'_>,
) {
    let Some(judging) = plan.judging.as_mut().filter(|j| j.request == *request) else {
        return;
    };
    judging.verdict = verdict.clone();
    let turn = ModeTurn { rt, state, env };
    if let Some(reply) = mode_of(state.thread).judged(&turn, plan, &verdict) {
        plan.scripted = Some(reply);
    }
}

/// The worked solution of the pending question, when it is a generated
/// item (regenerated from its drill token, so nothing is stored twice).
fn pending_solution(
    rt: &CourseRuntime,
    thread: &Thread,
    question: &PendingQuestion,
    env: &TurnEnv<'_>,
) -> Option<Solution> {
    // A problem the student brought (or a problem set's) is worked by code.
    let Some(token) = question.drill_token.as_deref() else {
        let problem = student_math::student_problem(&question.text)?;
        let expected = question.expected.as_ref()?;
        let first_share = problem.answer.split(" and ").next().unwrap_or_default();
        return (expected.value == first_share).then(|| student_math::own_solution(&problem));
    };
    let verified = drill_token::verify(
        token,
        env.token_keys,
        &thread.thread_id,
        env.now,
        env.drill_ttl,
    )
    .ok()?;
    match drill::expected(&verified, &rt.bundle.blueprints).ok()? {
        drill::Expected::Generated(item) => Some(Solution::of_item(&item)),
        drill::Expected::Authored { .. } => None,
    }
}

/// Stuck is judged where the student is working: drills going wrong on
/// the pending item's unit make the student stuck (a concept card may
/// follow) even when the policy's focus is another unit.
fn stuck_on_item(
    policy: &mut PolicyOutcome,
    session: &SessionState,
    snapshot: &StudentSnapshot,
    workflow: &Workflow,
) {
    let p = &mut policy.policy;
    let Some(unit) = session
        .pending_question
        .as_ref()
        .map(|q| q.unit_id.as_str())
    else {
        return;
    };
    // An ambiguous message may only be answered with a question.
    let ambiguous = !p.allowed_actions.contains(&TutorAction::DrillCard);
    if p.stuck || ambiguous || !crate::engine::policy::is_stuck(snapshot, unit, &workflow.policy) {
        return;
    }
    p.stuck = true;
    p.allowed_actions.push(TutorAction::ConceptCard);
    if !p.scoped_unit_ids.iter().any(|u| u == unit) {
        p.scoped_unit_ids.push(unit.to_owned());
    }
}

/// What the category asks of the policy.
fn request_of(workflow: &Workflow, category: &str) -> StudentRequest {
    match workflow.category(category) {
        Some(c) if c.transitions.contains(&Transition::MoveOn) => StudentRequest::MoveOn,
        _ => StudentRequest::None,
    }
}

/// The answers no reply may state this turn: the question still pending
/// once this message is read and the exam cards on screen.
fn pending_answers(
    rt: &CourseRuntime,
    preview: &SessionState,
    now: DateTime<Utc>,
) -> Vec<PendingAnswer> {
    answer_guard::pending_in_session(
        rt.course(),
        preview,
        preview.pending_question.as_ref(),
        now,
        exam_cards::lifetime(rt.workflow().policy.exam_card_hours),
    )
}

/// Whether `text` explains an idea in words right after the tutor
/// answered a "why" or "explain" ("because you make the bottoms the same
/// so the pieces are the same size").
fn explains_idea(session: &SessionState, text: &str) -> bool {
    let after_question = session.last_category.as_deref() == Some("conceptual_question");
    let lower = format!(" {} ", text.to_lowercase());
    let reasons = [
        " because ",
        " so ",
        " so that ",
        " means ",
        " that's why ",
        " thats why ",
    ]
    .iter()
    .any(|r| lower.contains(r));
    after_question && reasons && !classify::asks_something(text)
}

/// A question about maths the course does not teach: a message that asks
/// something or gives something to work out (not one that explains, "I
/// divided by the highest common factor"), unless it is a right answer or a
/// problem of the student's own.
fn beyond_course_category(
    workflow: &Workflow,
    topic: Option<usize>,
    said: Option<&str>,
    interpretation: Option<&Interpretation>,
) -> Option<String> {
    let answered = interpretation.is_some_and(|i| {
        i.classification.answer_grade == Some(GradeOutcome::Correct)
            || i.classification.intent == StudentIntent::Solve
    });
    // "perimeter of a square with sides 7cm" asks without a question word:
    // code can work it out, so it is a request too.
    let asks = said
        .is_some_and(|s| classify::asks_something(s) || outside_math::worked(s).is_some())
        || interpretation.is_some_and(|i| i.classification.intent == StudentIntent::Question);
    topic.filter(|_| asks)?;
    let category = workflow.category(BEYOND_COURSE)?;
    (!answered).then(|| category.id.clone())
}

/// A button that says what the student wants outright.
fn forced_category(workflow: &Workflow, event: &ClientEvent) -> Option<String> {
    match event {
        ClientEvent::IAmStuck { .. } => workflow
            .categories
            .iter()
            .find(|c| c.detect.intents.contains(&StudentIntent::Stuck))
            .map(|c| c.id.clone()),
        _ => None,
    }
}

pub(crate) fn event_unit(event: &ClientEvent) -> Option<&str> {
    match event {
        ClientEvent::None
        | ClientEvent::ExamAnswer { .. }
        | ClientEvent::ExamSkip { .. }
        | ClientEvent::ExamEnd
        | ClientEvent::SurveyAnswer { .. }
        | ClientEvent::SurveySkip { .. } => None,
        ClientEvent::RequestDrill { unit_id }
        | ClientEvent::DrillContinue { unit_id, .. }
        | ClientEvent::ExamContinue { unit_id, .. }
        | ClientEvent::IAmStuck { unit_id } => unit_id.as_deref(),
    }
}

/// This message's words, a unit named by a button, and the previous
/// turn's reading, merged by highest confidence.
fn map_units(
    rt: &CourseRuntime,
    snapshot: &StudentSnapshot,
    ranked: Vec<UnitMatch>,
    event: &ClientEvent,
) -> Vec<MappedUnit> {
    let mut mapped = rt.index.mapper.map_ranked(ranked, MAPPED_UNITS);
    // "Next" after practice on a prerequisite of the student's goal goes
    // back towards the goal: the policy returns to the prerequisite only
    // while it still blocks.
    let below_goal = |unit: &str| {
        matches!(event, ClientEvent::DrillContinue { .. })
            && rt
                .course()
                .ancestors(&snapshot.focus_unit_id)
                .contains(unit)
    };
    if let Some(unit) =
        event_unit(event).filter(|u| rt.course().unit(u).is_some() && !below_goal(u))
    {
        mapped.push(MappedUnit {
            unit_id: unit.to_owned(),
            confidence: EVENT_UNIT_CONFIDENCE,
        });
    }
    // Only a confident reading carries over: last turn's ambiguity must not
    // hold back this turn (a button press has no words to clear it up).
    let carries = rt.workflow().policy.primary_target_min_confidence;
    if let Some(previous) = &snapshot.last_turn_analysis {
        // A unit finished at gold is not carried on: the student moves on.
        for m in previous
            .mapped_units
            .iter()
            .filter(|m| snapshot.tier_of(&m.unit_id) != MasteryTier::Gold)
        {
            let confidence = m.confidence * PREVIOUS_READING_WEIGHT;
            if confidence >= carries {
                mapped.push(MappedUnit {
                    unit_id: m.unit_id.clone(),
                    confidence,
                });
            }
        }
    }
    let mut merged: Vec<MappedUnit> = Vec::new();
    for m in mapped {
        match merged.iter_mut().find(|x| x.unit_id == m.unit_id) {
            Some(x) => x.confidence = x.confidence.max(m.confidence),
            None => merged.push(m),
        }
    }
    merged.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then_with(|| a.unit_id.cmp(&b.unit_id))
    });
    merged.truncate(MAPPED_UNITS);
    merged
}

/// A drill pending in the chat and answered there: graded like drill-grade.
fn chat_drill(
    rt: &CourseRuntime,
    state: TurnState<'_>,
    interpretation: Option<&Interpretation>,
    said: Option<&str>,
    env: &TurnEnv<'_>,
) -> Option<ChatDrill> {
    let pending = state.thread.session.pending_question.as_ref()?;
    let token = pending.drill_token.as_deref()?;
    let answered = interpretation?
        .grade
        .as_ref()
        .is_some_and(|g| g.result != GradeOutcome::Unverifiable);
    if !answered {
        return None;
    }
    let verified = drill_token::verify(
        token,
        env.token_keys,
        &state.thread.thread_id,
        env.now,
        env.drill_ttl,
    )
    .ok()?;
    let expected = drill::expected(&verified, &rt.bundle.blueprints).ok()?;
    let verdict = drill_grade::grade_drill(&expected, said?, &rt.workflow().grading);
    let difficulty = match &expected {
        drill::Expected::Generated(item) => Some(item.difficulty),
        drill::Expected::Authored { .. } => None,
    };
    Some(ChatDrill {
        first_attempt: !state
            .thread
            .session
            .graded_drills
            .contains(&verified.replay_key),
        unit_id: verified.claims.unit_id,
        replay_key: verified.replay_key,
        difficulty,
        verdict,
    })
}

#[allow(clippy::too_many_arguments)]
fn compose(
    rt: &CourseRuntime,
    state: TurnState<'_>,
    event: &TurnEvent,
    env: &TurnEnv<'_>,
    policy: &PolicyOutcome,
    category: &str,
    preview: &SessionState,
    mapped_units: &[MappedUnit],
    interpretation: Option<&Interpretation>,
    own_problem: Option<&student_math::StudentProblem>,
    beyond_course: &[usize],
    practice: Option<&IssuedDrill>,
    block: ModeBlock,
    asks_the_tutor: bool,
) -> TutorTurnInput {
    let course = rt.course();
    let workflow = rt.workflow();
    let p = &policy.policy;
    let scoped: Vec<&Unit> = p
        .scoped_unit_ids
        .iter()
        .filter_map(|u| course.unit(u))
        .collect();
    let focus = course.unit(&p.focus_unit_id);
    let said = event.student_input().said();
    let query = said
        .clone()
        .or_else(|| focus.map(|u| u.anchor.clone()))
        .unwrap_or_default();
    // Lesson text is for the tutor's prompt: a reply the mode wrote itself
    // (an exam's marks) has no prompt to put it in.
    let chunks = if !asks_the_tutor {
        Vec::new()
    } else {
        rt.index
            .chunks_about(
                &query,
                &p.primary_target_unit_id,
                &p.scoped_unit_ids,
                CONTEXT_CHUNKS,
            )
            .into_iter()
            .filter_map(|c| {
                let unit = course.unit(&c.unit_id)?;
                Some(ContentChunk::from_unit_chunk(
                    &unit.id,
                    unit.chunks.get(c.chunk)?,
                ))
            })
            .collect()
    };
    let exam_candidates = policy
        .exam
        .available_question_ids
        .iter()
        .filter_map(|q| {
            let (unit, item) = course.exam_item(q)?;
            Some(ExamCandidate::from_item(&unit.id, item))
        })
        .collect();
    let revisit_locked: Vec<DateTime<Utc>> = state
        .snapshot
        .revisit_queue
        .keys()
        .filter_map(|q| match env.lockouts.status(q).at(env.now) {
            LockoutStatus::Locked { until } => Some(until),
            _ => None,
        })
        .collect();
    let question = preview.pending_question.as_ref();
    let pending_before = state.thread.session.pending_question.as_ref();
    // The unit the message is about (the focus may be a prerequisite).
    let unit_title = course
        .unit(&p.primary_target_unit_id)
        .or(focus)
        .map(|u| u.title.clone())
        .unwrap_or_default();
    let (history, earlier_messages) = match &block.memory {
        Some(cut) => hybrid_history(state.history, cut, workflow.history_messages as usize),
        None => (
            history_of(state.history, workflow.history_messages as usize),
            0,
        ),
    };
    let student_lines: Vec<&str> = state
        .history
        .iter()
        .filter(|m| m.role == Role::Student && m.is_conversation())
        .map(|m| m.text.as_str())
        .chain(said.as_deref())
        .collect();
    let style_lines = &student_lines[student_lines.len().saturating_sub(STYLE_MESSAGES)..];
    // A mode that sets the problems does not take up the student's own.
    let own = own_problem.filter(|_| block.problem.is_none());
    let mastery: Vec<f64> = state
        .snapshot
        .units_in_progress
        .iter()
        .filter_map(|u| state.snapshot.unit_progress.get(u)?.mastery_probability)
        .collect();
    let pacing = signals::pacing(
        &PacingInput {
            turn_number: state.thread.session.turn_count + 1,
            mastery: &mastery,
            trend: Trend::from_outcomes(&state.thread.session.recent_outcomes, &workflow.pacing),
            recent_wrong: question.map_or(0, |q| q.wrong_attempts),
            struggling: question.is_some_and(|q| q.phase >= QuestionPhase::Explain),
            plan_complete: block.plan_complete,
        },
        &workflow.pacing,
    );
    TutorTurnInput {
        course: CourseBrief {
            title: course.title.clone(),
            audience: course.audience.clone(),
        },
        mode: state.thread.mode,
        policy: p.clone(),
        context: TutorContext {
            unit_anchors: scoped.iter().map(|u| UnitAnchor::from(*u)).collect(),
            unit_content_chunks: chunks,
            exam_candidates,
            snapshot_lite: SnapshotLiteForLlm {
                focus_unit_id: p.focus_unit_id.clone(),
                focus_mastery_tier: state.snapshot.tier_of(&p.focus_unit_id),
                units_in_progress: state.snapshot.units_in_progress.clone(),
                revisit: RevisitBrief {
                    locked_count: revisit_locked.len() as u32,
                    next_eligible_at: revisit_locked.iter().min().copied(),
                },
            },
            client_event: event.client_event.clone(),
            practice_item: practice.map(|d| PracticeItem {
                unit_id: d.card.unit_id.clone(),
                prompt: d.card.prompt.clone(),
                question_latex: d.card.question_latex.clone(),
                options: d.card.options.clone(),
            }),
        },
        category: CategoryCue {
            id: category.to_owned(),
            attempt: pending_before.map_or(1, |q| q.wrong_attempts + 1),
            phase: question.map_or(QuestionPhase::Asked, |q| q.phase),
            scaffold_depth: preview.scaffolding.depth,
            unit_title,
            code_note: code_note(
                course,
                policy,
                category,
                workflow,
                interpretation,
                said.as_deref(),
                &beyond_course
                    .iter()
                    .filter_map(|&i| workflow.beyond_course.get(i))
                    .collect::<Vec<_>>(),
            ),
            own_problem: own.map(|p| p.text.clone()).unwrap_or_default(),
            own_problem_step: own.map(|p| p.first_step.clone()).unwrap_or_default(),
            misconceptions: focus
                .map(|u| {
                    u.misconceptions
                        .iter()
                        // The id first, so a reply can name what it detected.
                        .map(|m| format!("{}: {} {}", m.id, m.description.trim(), m.remedy.trim()))
                        .collect()
                })
                .unwrap_or_default(),
        },
        question: question.map(QuestionState::from),
        pacing: pacing.directive,
        style: signals::student_style(style_lines, &workflow.style).style,
        personalization: env.personalization.clone(),
        history,
        student: event.student_input(),
        reading: CodeReading {
            mapped_units: mapped_units.to_vec(),
            intent: interpretation.map_or(StudentIntent::Unknown, |i| i.classification.intent),
        },
        seed: env.seed,
        lesson: block.lesson,
        clarify: block.clarify,
        problem: block.problem.map(|p| ProblemBrief {
            earlier_messages,
            ..p
        }),
    }
}

/// What code established about this message that the reply must say: the
/// check of a worked claim ("is this right? 72 - 38 = 46") that is not an
/// answer to the pending question, or what became of a request to move on.
fn code_note(
    course: &Course,
    policy: &PolicyOutcome,
    category: &str,
    workflow: &Workflow,
    interpretation: Option<&Interpretation>,
    said: Option<&str>,
    beyond_course: &[&BeyondCourse],
) -> String {
    let title = |unit: &str| {
        course
            .unit(unit)
            .map_or(unit, |u| u.title.as_str())
            .to_owned()
    };
    let moving_on = workflow
        .category(category)
        .is_some_and(|c| c.transitions.contains(&Transition::MoveOn));
    if moving_on && let Some(outcome) = &policy.trace.move_on {
        return match outcome {
            MoveOn::Moved { .. } => format!(
                "OK, on to {}.",
                title(&policy.policy.primary_target_unit_id)
            ),
            MoveOn::NotYet { unit_id } => format!(
                "Let's get {} solid first, then we'll move on.",
                title(unit_id)
            ),
            MoveOn::NothingAfter { unit_id } => format!(
                "Nothing comes after {} that you haven't finished, so let's keep it sharp.",
                title(unit_id)
            ),
        };
    }
    // A graded answer to the pending question is the grade's to judge,
    // unless the student asked for their own working to be checked.
    let graded = interpretation
        .and_then(|i| i.classification.answer_grade)
        .is_some_and(|g| g != GradeOutcome::Unverifiable)
        && workflow
            .category(category)
            .is_none_or(|c| !c.detect.grades.is_empty());
    if category == BEYOND_COURSE
        && let Some(beyond) = beyond_course.first()
    {
        let offer = beyond
            .nearest_unit
            .as_deref()
            .and_then(|u| course.unit(u))
            .map(|u| {
                format!(
                    " It goes beyond this course; the nearest thing we cover is {}. Shall we look at that?",
                    u.title
                )
            })
            .unwrap_or_else(|| {
                " It goes beyond this course. What would you like to work on?".to_owned()
            });
        // Worked in the student's own numbers where code can; else the
        // rule of each topic asked about.
        let answer = said.and_then(outside_math::worked).unwrap_or_else(|| {
            beyond_course
                .iter()
                .map(|b| b.answer.trim())
                .collect::<Vec<_>>()
                .join(" ")
        });
        return format!("{answer}{offer}");
    }
    // A problem of their own is worked with them, not answered here.
    let own_problem =
        interpretation.is_some_and(|i| i.classification.intent == StudentIntent::Solve);
    if graded {
        return String::new();
    }
    said.and_then(student_math::claim)
        .map(|claim| claim.verdict())
        .or_else(|| said.filter(|_| !own_problem).and_then(comparison::answer))
        .or_else(|| said.and_then(place_value::answer))
        .unwrap_or_default()
}

fn history_of(messages: &[TutorMessage], keep: usize) -> Vec<HistoryMessage> {
    let said: Vec<&TutorMessage> = messages.iter().filter(|m| m.is_conversation()).collect();
    said[said.len().saturating_sub(keep)..]
        .iter()
        .map(|m| HistoryMessage {
            role: m.role,
            text: m.text.clone(),
        })
        .collect()
}

/// The hybrid memory (docs/architecture.md, problem_set): the conversation
/// since the current problem was presented, after the last `keep_previous`
/// messages from before it, cut to `keep` messages; and how many of those
/// come from before.
fn hybrid_history(
    messages: &[TutorMessage],
    cut: &MemoryCut,
    keep: usize,
) -> (Vec<HistoryMessage>, u32) {
    let said: Vec<&TutorMessage> = messages.iter().filter(|m| m.is_conversation()).collect();
    let prefix = format!("{}-", cut.boundary_turn);
    let boundary = said.iter().rposition(|m| m.id.starts_with(&prefix));
    let problem_of = |k: usize| match boundary {
        Some(b) if k <= b => "earlier",
        _ => "current",
    };
    let indexed: Vec<usize> = (0..said.len()).collect();
    let kept = scaffolding::hybrid_memory(
        &indexed,
        |k| problem_of(*k),
        "current",
        cut.keep_previous,
        keep,
    );
    let earlier = kept.iter().filter(|r| r.previous_problem).count() as u32;
    let history = kept
        .iter()
        .map(|r| HistoryMessage {
            role: said[*r.turn].role,
            text: said[*r.turn].text.clone(),
        })
        .collect();
    (history, earlier)
}

/// How the reply that [`apply`] uses was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyOrigin {
    /// The configured model's reply passed validation.
    Llm,
    /// The offline tutor (the configured provider).
    Offline,
    /// The deterministic fallback replaced an invalid or failed reply.
    Fallback,
}

/// The outcome of one turn, ready to commit.
pub struct Applied {
    pub thread: Thread,
    pub snapshot: StudentSnapshot,
    /// New messages, in order: the student's (if they wrote something), then the tutor's.
    pub messages: Vec<TutorMessage>,
    pub drill_evidence: Option<EvidenceEffect>,
    /// Notifications the mode raised, sent once the turn is committed.
    pub events: Vec<OutboundEvent>,
}

/// Steps 10 and 11: the decided reply applied to state read at one moment.
/// Pure; safe to run again on fresh state after a version conflict.
pub fn apply(
    rt: &CourseRuntime,
    state: TurnState<'_>,
    plan: &Plan,
    reply: Option<(&LlmTutorResponse, ReplyOrigin)>,
    env: &TurnEnv<'_>,
) -> Result<Applied, TurnError> {
    let course = rt.course();
    let workflow = rt.workflow();
    let mut thread = state.thread.clone();
    let mut snapshot = state.snapshot.clone();
    let mut messages = Vec::new();
    if let Some(said) = &plan.said {
        messages.push(message(
            state.thread,
            env,
            "s",
            Role::Student,
            said.clone(),
            plan.input.student.message_latex.clone(),
            None,
        ));
    }
    let session = &mut thread.session;
    session.turn_count = session.turn_count.saturating_add(1);
    // This turn read them (modes read the state as it was before the turn).
    session.card_grades.clear();
    thread.updated_at = env.now;

    // The safety gate's words for a flagged message, counted in the
    // conversation (for its escalation) and the course (for the report).
    let safety = plan.safety.as_ref().map(|hit| {
        let said = rt.safety.reply(
            hit,
            session,
            ReplyContext {
                mode: state.thread.mode,
                region: env.safety_region,
            },
        );
        SafetyGate::record(hit, session, &mut snapshot);
        said
    });
    let paused = plan.safety.as_ref().is_some_and(SafetyHit::pauses_tutoring);
    let (Some((reply, origin)), false) = (reply, paused) else {
        let (text, mark) = match safety {
            Some(s) => (s.text, Some(s.mark)),
            None => (workflow.sanitize.fallback_text.clone(), None),
        };
        let mut said = message(state.thread, env, "a", Role::Assistant, text, None, None);
        said.safety = mark;
        messages.push(said);
        record_timeline(workflow, state, plan, None, env, &mut thread);
        return Ok(Applied {
            thread,
            snapshot,
            messages,
            drill_evidence: None,
            events: Vec::new(),
        });
    };

    // Evidence from a drill answered in the chat.
    let ctx = TransitionContext {
        course,
        workflow,
        now: env.now,
    };
    let mut drill_evidence = None;
    if let Some(d) = &plan.chat_drill {
        let first_attempt = d.first_attempt && !session.graded_drills.contains(&d.replay_key);
        let effect = evidence::apply_drill_graded(
            &mut snapshot,
            &ctx,
            &DrillGraded {
                unit_id: d.unit_id.clone(),
                correct: d.verdict.is_correct(),
                mistake_tag: d.verdict.mistake_tag.clone(),
                first_attempt,
            },
        )
        .ok();
        if first_attempt && let Some(difficulty) = d.difficulty {
            record_ability(
                &mut snapshot,
                workflow,
                &d.unit_id,
                difficulty,
                d.verdict.is_correct(),
            );
        }
        remember_drill(session, &d.replay_key);
        drill_evidence = effect;
    }

    // The category's transitions (question lifecycle, scaffolding, teach-back).
    if let Some(c) = workflow.category(&plan.category) {
        scaffolding::apply_category(
            session,
            c,
            scaffolding::TransitionContext {
                answer: plan.said.as_deref(),
            },
        );
        if c.transitions.contains(&Transition::RetractGuess) {
            evidence::retract_guess(&mut snapshot, &plan.policy.policy.focus_unit_id);
        }
        if reply.action == TutorAction::SocraticQuestion {
            record_help_given(session, c, &plan.item_help);
        }
        if plan.chat_drill.is_none() && asks_for_help(c) {
            hint_before_answer(session, &mut snapshot, &ctx, state.thread, env);
        }
    }
    if origin == ReplyOrigin::Llm {
        settle_by_reading(
            session,
            state.thread.session.pending_question.as_ref(),
            plan,
            reply,
            course,
        );
    }
    track_student_problem(session, plan, course, env.now);
    thread_learning::record_turn(
        &mut session.learning,
        workflow,
        state.thread.session.pending_question.as_ref(),
        plan,
        reply,
    );
    if let Some(grade) = plan.interpretation.as_ref().and_then(|i| i.grade.as_ref())
        && grade.result != GradeOutcome::Unverifiable
    {
        session.recent_outcomes.push(grade.result);
        let excess = session
            .recent_outcomes
            .len()
            .saturating_sub(RECENT_OUTCOMES_KEPT);
        session.recent_outcomes.drain(..excess);
    }

    // The reply: its card, and the question it leaves pending.
    let target = course
        .unit(&reply.target_unit_id)
        .ok_or_else(|| TurnError::UnknownUnit(reply.target_unit_id.clone()))?;
    let text = rt.sanitizer.clean(&reply.tutor_text).text;
    let invites = workflow
        .category(&plan.category)
        .is_some_and(|c| c.transitions.contains(&Transition::InviteChoice));
    let card = match reply.action {
        TutorAction::SocraticQuestion if invites => None,
        TutorAction::SocraticQuestion => {
            let named = reply
                .question_asked
                .as_ref()
                .map(|q| rt.sanitizer.clean(&q.text).text)
                .filter(|q| !q.trim().is_empty());
            if let Some(question) = last_question(&text).or(named) {
                let llm_answer = reply
                    .question_asked
                    .as_ref()
                    .and_then(|q| q.expected_answer.as_deref());
                let expected = expected_of_question(&question, llm_answer);
                track_tutor_question(session, question, expected, target, env.now);
            }
            None
        }
        TutorAction::ConceptCard => reply.concept_card.as_ref().map(|c| {
            TutorCard::Concept(ConceptCard {
                unit_id: target.id.clone(),
                key_ideas: c.key_ideas.clone(),
                worked_example: c.worked_example.as_ref().map(|w| WorkedExample {
                    problem_latex: w.problem_latex.clone(),
                    steps_latex: w.steps_latex.clone().unwrap_or_default(),
                    final_answer_latex: w.final_answer_latex.clone(),
                }),
            })
        }),
        TutorAction::DrillCard => {
            drill_card(state.thread, reply, target, plan, env).map(|(card, question)| {
                // A new item is a new problem: its own attempts, no
                // scaffolding or teach-back carried over from the last one.
                scaffolding::start_problem(session, question);
                TutorCard::Drill(card)
            })
        }
        TutorAction::ExamBlock => reply.exam_suggestion.as_ref().and_then(|s| {
            let card = exam_card(course, &s.question_id, env)?;
            exam_cards::record_shown(session, &s.question_id, env.now);
            Some(card)
        }),
    };
    // A safety note that lets tutoring continue comes first.
    let (text, mark) = match safety {
        Some(s) => (format!("{}\n\n{text}", s.text), Some(s.mark)),
        None => (text, None),
    };
    let mut said = message(state.thread, env, "a", Role::Assistant, text, None, card);
    said.safety = mark;
    messages.push(said);

    // The snapshot: focus and units in progress, and this turn's reading.
    // Chatter about something else changes nothing the student's record shows.
    let off_topic = workflow
        .category(&plan.category)
        .is_some_and(|c| c.transitions.contains(&Transition::CountOffTopic));
    if !off_topic {
        evidence::apply_turn(&mut snapshot, &ctx, &plan.policy.policy);
    }
    let analysis = match origin {
        ReplyOrigin::Llm => TurnAnalysis {
            mapped_units: reply
                .mapped_units
                .iter()
                .filter(|m| course.unit(&m.unit_id).is_some())
                .map(|m| MappedUnit {
                    unit_id: m.unit_id.clone(),
                    confidence: m.confidence.clamp(0.0, 1.0),
                })
                .collect(),
            student_intent: reply.turn_analysis.student_intent,
            understanding_signal: reply.turn_analysis.understanding_signal,
            suggested_prereq_units: reply.turn_analysis.suggested_prereq_units.clone(),
        },
        ReplyOrigin::Offline | ReplyOrigin::Fallback => TurnAnalysis {
            mapped_units: plan.input.reading.mapped_units.clone(),
            student_intent: plan.input.reading.intent,
            understanding_signal: reply.turn_analysis.understanding_signal,
            suggested_prereq_units: Vec::new(),
        },
    };
    if !off_topic {
        snapshot.last_turn_analysis = Some(analysis);
    }
    let mut events = Vec::new();
    mode_of(state.thread).apply(
        &ModeTurn { rt, state, env },
        plan,
        reply,
        &mut Outcome {
            thread: &mut thread,
            snapshot: &mut snapshot,
            messages: &mut messages,
            events: &mut events,
        },
    );
    if thread.status == ThreadStatus::Completed && thread.ended_at.is_none() {
        thread.ended_at = Some(env.now);
    }
    record_timeline(workflow, state, plan, Some(reply), env, &mut thread);
    Ok(Applied {
        thread,
        snapshot,
        messages,
        drill_evidence,
        events,
    })
}

/// Step 10's timeline entry for this turn, in every mode alike.
fn record_timeline(
    workflow: &Workflow,
    state: TurnState<'_>,
    plan: &Plan,
    reply: Option<&LlmTutorResponse>,
    env: &TurnEnv<'_>,
    thread: &mut Thread,
) {
    let entry = session_timeline::turn_entry(
        workflow,
        &session_timeline::TurnRecord {
            turn: thread.session.turn_count,
            now: env.now,
            plan,
            pending: state.thread.session.pending_question.as_ref(),
            reply,
        },
    );
    session_timeline::record(&mut thread.session.timeline, entry);
}

/// Whether `category` is the student asking for help (stuck, a hint).
pub(crate) fn asks_for_help(category: &crate::content::workflow::Category) -> bool {
    category.transitions.iter().any(|t| {
        matches!(
            t,
            Transition::StartScaffolding | Transition::DeepenScaffolding
        )
    })
}

/// Help asked for on a drill not yet answered: a wrong first attempt for
/// BKT (when the workflow counts it so), and the drill is marked tried so
/// the answer that follows is not taken for a first attempt.
fn hint_before_answer(
    session: &mut SessionState,
    snapshot: &mut StudentSnapshot,
    ctx: &TransitionContext<'_>,
    thread: &Thread,
    env: &TurnEnv<'_>,
) {
    if !ctx.workflow.mastery.hint_before_answer_is_wrong {
        return;
    }
    let Some(token) = session
        .pending_question
        .as_ref()
        .and_then(|q| q.drill_token.as_deref())
    else {
        return;
    };
    let Ok(verified) = drill_token::verify(
        token,
        env.token_keys,
        &thread.thread_id,
        env.now,
        env.drill_ttl,
    ) else {
        return;
    };
    if session.graded_drills.contains(&verified.replay_key) {
        return;
    }
    evidence::apply_hint_before_answer(snapshot, ctx, &verified.claims.unit_id);
    remember_drill(session, &verified.replay_key);
}

/// Counts the help this turn gave from the item's solution, so the next
/// help moves on instead of repeating it. A smaller step offered to work
/// on breaks the problem down: scaffolding starts, and an answer to that
/// step is progress, not a wrong try at the problem.
fn record_help_given(
    session: &mut SessionState,
    category: &crate::content::workflow::Category,
    help: &item_help::TurnHelp,
) {
    let Some(question) = session.pending_question.as_mut() else {
        return;
    };
    let scaffolds = category.transitions.iter().any(|t| {
        matches!(
            t,
            Transition::StartScaffolding | Transition::DeepenScaffolding
        )
    });
    let hints = category
        .transitions
        .contains(&Transition::RecordWrongAttempt)
        && matches!(
            question.phase,
            QuestionPhase::Hint | QuestionPhase::StrategyChange
        );
    let offered = help.help.next_step.is_some() || help.help.representation.is_some();
    if !offered || !(scaffolds || hints) {
        return;
    }
    question.hints_used = help
        .hints_used_after
        .max(question.hints_used.saturating_add(1));
    if help.help.next_step.is_some() {
        let scaffolding = &mut session.scaffolding;
        scaffolding.active = true;
        scaffolding.depth = scaffolding.depth.max(1);
        scaffolding.step_expects = help.step_expects.clone();
    }
}

/// Updates a unit's ability estimate from one graded item.
pub fn record_ability(
    snapshot: &mut StudentSnapshot,
    workflow: &Workflow,
    unit_id: &str,
    difficulty: f64,
    correct: bool,
) {
    let progress = snapshot
        .unit_progress
        .entry(unit_id.to_owned())
        .or_default();
    progress.ability = Some(irt::update(
        progress.ability,
        &irt::Response {
            difficulty,
            correct,
            timing: None,
        },
        &workflow.irt,
    ));
}

/// Remembers a graded drill so a second answer to it is not evidence.
pub fn remember_drill(session: &mut SessionState, replay_key: &str) {
    if !session.graded_drills.iter().any(|k| k == replay_key) {
        session.graded_drills.push(replay_key.to_owned());
    }
    let excess = session
        .graded_drills
        .len()
        .saturating_sub(GRADED_DRILLS_KEPT);
    session.graded_drills.drain(..excess);
}

/// The drill card the reply shows and the question it leaves pending: the
/// server's practice item when there is one (its answer stays here), else
/// the LLM's own drill, whose answer goes into the signed token.
fn drill_card(
    thread: &Thread,
    reply: &LlmTutorResponse,
    target: &Unit,
    plan: &Plan,
    env: &TurnEnv<'_>,
) -> Option<(crate::model::DrillCard, PendingQuestion)> {
    if let Some(issued) = &plan.practice {
        let expected = drill_grade::expected_answer(&issued.item);
        let question = PendingQuestion {
            text: question_text(&issued.card.prompt, &issued.card.question_latex),
            expected: Some(expected),
            unit_id: issued.card.unit_id.clone(),
            concept: format!("drill {}", issued.item.seed),
            wrong_attempts: 0,
            previous_answers: Vec::new(),
            hints_used: 0,
            phase: QuestionPhase::Asked,
            asked_at: env.now,
            drill_token: issued.card.drill_token.clone(),
        };
        return Some((issued.card.clone(), question));
    }
    let authored = reply.drill_card.as_ref()?;
    let card = drill::issue_authored(
        authored,
        &target.id,
        &thread.thread_id,
        env.now,
        env.token_keys,
    )
    .ok()?;
    let answer = authored.expected_answer.clone()?;
    let question = PendingQuestion {
        text: question_text(&authored.prompt, &authored.question_latex),
        expected: Some(ExpectedAnswer {
            kind: crate::engine::grading::infer_kind(&answer, &[]),
            value: answer,
            unit: None,
            options: Vec::new(),
            mistakes: Vec::new(),
        }),
        unit_id: target.id.clone(),
        concept: format!("drill {}", env.turn_id),
        wrong_attempts: 0,
        previous_answers: Vec::new(),
        hints_used: 0,
        phase: QuestionPhase::Asked,
        asked_at: env.now,
        drill_token: card.drill_token.clone(),
    };
    Some((card, question))
}

/// A drill's question as one text: the prompt alone when it already
/// states the maths ("Work out 45 - 29."), else the prompt and the maths.
fn question_text(prompt: &str, latex: &str) -> String {
    let squeeze = |t: &str| t.split_whitespace().collect::<String>();
    let (prompt, latex) = (prompt.trim(), latex.trim());
    if latex.is_empty() || squeeze(prompt).contains(&squeeze(latex)) {
        prompt.to_owned()
    } else {
        format!("{prompt} {latex}")
    }
}

/// An exam block from the course bank: stem and options, never the answer.
pub fn exam_card(course: &Course, question_id: &str, env: &TurnEnv<'_>) -> Option<TutorCard> {
    let (unit, item) = course.exam_item(question_id)?;
    let locked_until = match env.lockouts.status(question_id).at(env.now) {
        LockoutStatus::Locked { until } => Some(until),
        _ => None,
    };
    Some(TutorCard::Exam(ExamCard {
        unit_id: unit.id.clone(),
        question_id: item.id.clone(),
        tier: item.tier,
        stem: item.stem.clone(),
        options: item
            .options
            .iter()
            .enumerate()
            .map(|(i, text)| ExamOption {
                id: crate::content::ExamItem::option_id(i),
                text: text.clone(),
            })
            .collect(),
        has_memo: !item.memo.trim().is_empty(),
        video_url: item.video_url.clone(),
        locked_until,
    }))
}

/// Keeps the tutor's question where it belongs. During scaffolding it is
/// the next small step, and the problem stays the pending question (the
/// student is still working towards its answer); a probe or hint about a
/// question code can grade never replaces it, so the student's next try is
/// still graded; otherwise it is tracked for its lifecycle
/// (`engine::lifecycle`).
///
/// A question with an answer code knows replaces a pending word question
/// the student has not tried yet (the tutor moved on); once they have
/// tried it, a new question is a smaller step towards it, and an answer to
/// that step is progress, not a wrong try.
fn track_tutor_question(
    session: &mut SessionState,
    question: String,
    expected: Option<ExpectedAnswer>,
    unit: &Unit,
    now: DateTime<Utc>,
) {
    let step_value = |e: &ExpectedAnswer| (e.kind == AnswerKind::Number).then(|| e.value.clone());
    let pending = session.pending_question.as_ref();
    // "Let's get back to the question. What is 12 + 15?" asks the pending
    // question again: it stays the one pending, with its own attempts.
    if pending.is_some_and(|q| restates(&q.text, &question)) {
        return;
    }
    let in_words = pending.is_some_and(|q| q.drill_token.is_none());
    let untried = pending.is_some_and(|q| q.wrong_attempts == 0);
    if session.scaffolding.active {
        scaffolding::set_scaffold_question(session, &question);
        if let Some(value) = expected.as_ref().and_then(step_value) {
            session.scaffolding.step_expects = Some(value);
        }
    } else if pending.is_none_or(|q| q.expected.is_none())
        || (in_words && untried && expected.is_some())
    {
        let mut asked = tutor_question(question, unit, now);
        asked.expected = expected;
        lifecycle::ask(session, asked);
    } else if in_words && let Some(value) = expected.as_ref().and_then(step_value) {
        session.scaffolding.active = true;
        session.scaffolding.depth = session.scaffolding.depth.max(1);
        session.scaffolding.step_expects = Some(value);
        scaffolding::set_scaffold_question(session, &question);
    }
}

/// Whether `asked` is `pending` again, in its words or inside a longer one.
fn restates(pending: &str, asked: &str) -> bool {
    let squeeze = |t: &str| -> String {
        t.chars()
            .filter(|c| c.is_alphanumeric() || "+-*/=×÷".contains(*c))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let (pending, asked) = (squeeze(pending), squeeze(asked));
    !asked.is_empty() && (pending.contains(&asked) || asked.contains(&pending))
}

/// The answer of a question the tutor asked in words: worked out by code
/// when the question states a computation ("What is 7 + 5?"), else the
/// answer the tutor model says it expects. Code's arithmetic wins over the
/// model's; a model's answer in words ("no", "the denominator") stands.
fn expected_of_question(question: &str, llm_answer: Option<&str>) -> Option<ExpectedAnswer> {
    let llm_answer = llm_answer.map(str::trim).filter(|a| !a.is_empty());
    let from_model = llm_answer.map(|a| ExpectedAnswer {
        kind: crate::engine::grading::infer_kind(a, &[]),
        value: a.to_owned(),
        unit: None,
        options: Vec::new(),
        mistakes: Vec::new(),
    });
    let model_says_words = from_model
        .as_ref()
        .is_some_and(|e| !matches!(e.kind, AnswerKind::Number | AnswerKind::Equation));
    if model_says_words {
        return from_model;
    }
    let computed = student_math::student_problem(question).map(|problem| ExpectedAnswer {
        kind: problem.answer_kind(),
        value: problem.answer,
        unit: None,
        options: Vec::new(),
        mistakes: Vec::new(),
    });
    computed.or(from_model)
}

/// Where code could not grade an answer to the pending question (it asks
/// for words, or has no answer code knows), the tutor model's reading of
/// it settles the lifecycle: a wrong answer is counted and escalates the
/// phase, a right one clears the question. It counts in the thread's own
/// record (with a misconception the model names, when the unit lists it)
/// but is never evidence of mastery: only code's grades are.
fn settle_by_reading(
    session: &mut SessionState,
    answered: Option<&PendingQuestion>,
    plan: &Plan,
    reply: &LlmTutorResponse,
    course: &Course,
) {
    let analysis = &reply.turn_analysis;
    let (Some(answered), Some(correct)) = (answered, analysis.answer_correct) else {
        return;
    };
    let code_graded = plan
        .interpretation
        .as_ref()
        .and_then(|i| i.grade.as_ref())
        .is_some_and(|g| g.result != GradeOutcome::Unverifiable);
    let is_answer = matches!(
        analysis.student_intent,
        StudentIntent::Answer | StudentIntent::Check
    );
    // Still the question the student answered, and not yet settled this turn.
    let untouched = session.pending_question.as_ref().is_some_and(|q| {
        q.asked_at == answered.asked_at && q.wrong_attempts == answered.wrong_attempts
    });
    if code_graded || !is_answer || !untouched {
        return;
    }
    let known = course.unit(&answered.unit_id).and_then(|unit| {
        analysis.misconceptions_detected.iter().find(|tag| {
            unit.mistake_tags.iter().any(|t| &t.id == *tag)
                || unit.misconceptions.iter().any(|m| &m.id == *tag)
        })
    });
    thread_learning::record_answer(
        &mut session.learning,
        &answered.unit_id,
        correct,
        false,
        known.map(String::as_str).filter(|_| !correct),
    );
    if correct {
        lifecycle::answer_correct(session, None);
    } else {
        lifecycle::record_wrong_attempt(session, plan.said.as_deref().unwrap_or(""));
    }
}

/// A problem the student brings as their own (see
/// [`student_math::own_problem`]): with a problem pending, only one they
/// ask about that is not the pending problem.
fn own_problem(session: &SessionState, said: Option<&str>) -> Option<student_math::StudentProblem> {
    let pending = session
        .pending_question
        .as_ref()
        .filter(|q| q.expected.is_some());
    match pending {
        Some(drill) if drill.drill_token.is_some() => {
            student_math::own_problem_beside_drill(said?, &drill.text)
        }
        pending => student_math::own_problem(said?, pending.map(|q| q.text.as_str())),
    }
}

/// A problem the student typed ("what is 47 + 38?", "how do I solve
/// 2x + 3 = 11?") with nothing pending becomes their question, worked out
/// by code, so their answer to it ("85") is graded rather than taken for
/// a new message. A worked claim ("72 - 38 = 46") is checked instead.
fn track_student_problem(
    session: &mut SessionState,
    plan: &Plan,
    course: &Course,
    now: DateTime<Utc>,
) {
    // A question session answers it outright: nothing is left pending.
    if plan.input.category.own_problem.is_empty() || plan.input.clarify.is_some() {
        return;
    }
    let Some(problem) = plan.said.as_deref().and_then(student_math::student_problem) else {
        return;
    };
    let unit_id = plan
        .mapped_units
        .first()
        .map_or(plan.policy.policy.focus_unit_id.as_str(), |m| {
            m.unit_id.as_str()
        });
    let Some(unit) = course.unit(unit_id) else {
        return;
    };
    let mut question = tutor_question(problem.text, unit, now);
    // A share in a ratio is answered share by share: the first is asked for.
    let answer = problem
        .answer
        .split(" and ")
        .next()
        .unwrap_or_default()
        .to_owned();
    question.expected = Some(ExpectedAnswer {
        kind: if problem.solves_for.is_some() {
            AnswerKind::Equation
        } else {
            AnswerKind::Number
        },
        value: answer,
        unit: None,
        options: Vec::new(),
        mistakes: Vec::new(),
    });
    lifecycle::ask(session, question);
    // The reply offers its first step: the next help is the step after.
    if let Some(pending) = session.pending_question.as_mut() {
        pending.hints_used = pending.hints_used.max(1);
    }
    // It is worked step by step: the answer to a step is progress on it,
    // not a wrong try at the whole problem.
    session.scaffolding.active = true;
    session.scaffolding.depth = session.scaffolding.depth.max(1);
    session.scaffolding.step_expects = problem.first_step_expects;
}

/// The last sentence of `text` that asks something.
fn last_question(text: &str) -> Option<String> {
    text.split_inclusive(['.', '!', '?', '\n'])
        .rev()
        .find(|s| s.trim_end().ends_with('?'))
        .map(|s| s.trim().to_owned())
}

/// A question the tutor asked in words: tracked for its lifecycle; its
/// answer is not known to code, so the LLM's reading judges replies to it.
fn tutor_question(text: String, unit: &Unit, now: DateTime<Utc>) -> PendingQuestion {
    PendingQuestion {
        text,
        expected: None,
        unit_id: unit.id.clone(),
        concept: unit.title.clone(),
        wrong_attempts: 0,
        previous_answers: Vec::new(),
        hints_used: 0,
        phase: QuestionPhase::Asked,
        asked_at: now,
        drill_token: None,
    }
}

fn message(
    thread: &Thread,
    env: &TurnEnv<'_>,
    suffix: &str,
    role: Role,
    text: String,
    latex: Option<String>,
    card: Option<TutorCard>,
) -> TutorMessage {
    TutorMessage {
        id: format!("{}-{suffix}", env.turn_id),
        thread_id: thread.thread_id.clone(),
        role,
        text,
        latex,
        card,
        card_state: None,
        event: None,
        safety: None,
        created_at: env.now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(id: &str, role: Role) -> TutorMessage {
        TutorMessage {
            id: id.into(),
            thread_id: "t".into(),
            role,
            text: id.into(),
            latex: None,
            card: None,
            card_state: None,
            event: None,
            safety: None,
            created_at: DateTime::<Utc>::UNIX_EPOCH,
        }
    }

    /// Turns t1..t4 were about earlier problems (t4 presented the current
    /// one); t5 and t6 are about the current problem.
    fn conversation() -> Vec<TutorMessage> {
        (1..=6)
            .flat_map(|t| {
                [
                    said(&format!("t{t}-s"), Role::Student),
                    said(&format!("t{t}-a"), Role::Assistant),
                ]
            })
            .collect()
    }

    #[test]
    fn hybrid_memory_keeps_the_last_turns_of_the_earlier_problems() {
        let cut = MemoryCut {
            boundary_turn: "t4".into(),
            keep_previous: 4,
        };
        let (history, earlier) = hybrid_history(&conversation(), &cut, 10);
        let texts: Vec<&str> = history.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "t3-s", "t3-a", "t4-s", "t4-a", "t5-s", "t5-a", "t6-s", "t6-a"
            ]
        );
        assert_eq!(earlier, 4);
        // The workflow's limit still holds, dropping the oldest first.
        let (history, earlier) = hybrid_history(&conversation(), &cut, 6);
        assert_eq!(history.first().unwrap().text, "t4-s");
        assert_eq!(earlier, 2);
        // A boundary older than the messages read back: all are current.
        let gone = MemoryCut {
            boundary_turn: "t0".into(),
            keep_previous: 4,
        };
        let (history, earlier) = hybrid_history(&conversation(), &gone, 20);
        assert_eq!((history.len(), earlier), (12, 0));
    }

    /// Every blueprint of the course is fingerprinted once, with the
    /// runtime, and the turn's drills carry that fingerprint rather than
    /// digesting the blueprint again each turn.
    #[test]
    fn the_runtime_holds_every_course_blueprint_fingerprint() {
        let bundle = Arc::new(crate::engine::modes::shipped_bundle());
        let rt = CourseRuntime::new(bundle.clone(), "prealgebra").unwrap();
        let ids: Vec<&String> = rt
            .course()
            .units
            .values()
            .flat_map(|u| &u.blueprints)
            .collect();
        assert!(!ids.is_empty());
        assert_eq!(rt.blueprint_fingerprints.len(), {
            let mut unique = ids.clone();
            unique.sort();
            unique.dedup();
            unique.len()
        });
        for id in ids {
            let (blueprint, fingerprint) = rt.blueprint(id).unwrap();
            assert_eq!(fingerprint, bundle.blueprints[id].fingerprint());
            assert_eq!(&blueprint.id, id);
        }
        assert!(rt.blueprint("NOT.A.BLUEPRINT").is_none());
    }
}
