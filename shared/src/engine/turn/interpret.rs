//! The turn before the LLM call: [`interpret`] reads the message (safety,
//! grading, classification, the units it is about, the routing category
//! a button or a question beyond the course forces) and [`plan_interpreted`]
//! runs the policy, the mode's plan and the composed tutor input on it.

use chrono::{DateTime, Utc};

use super::compose::compose;
use super::questions::own_problem;
use super::{TurnError, mode_of};
use crate::content::Workflow;
use crate::content::workflow::GradingSettings;
use crate::content::workflow::Transition;
use crate::engine::exam;
use crate::engine::grading;
use crate::engine::interpret::classify::{self, BEYOND_COURSE, Interpretation};
use crate::engine::interpret::follow_up;
use crate::engine::interpret::mapping::{UnitMapper, UnitMatch, event_unit};
use crate::engine::interpret::outside_math;
use crate::engine::interpret::student_math;
use crate::engine::modes::{ModePlan, ModeTurn};
use crate::engine::policy::{PolicyInput, PolicyOutcome, StudentRequest, compute_policy};
use crate::engine::practice::drill;
use crate::engine::practice::drill_grade;
use crate::engine::practice::drill_token;
use crate::engine::practice::item_help;
use crate::engine::practice::solution::Solution;
use crate::engine::reply::answer_guard::{self, PendingAnswer};
use crate::engine::runtime::CourseRuntime;
use crate::engine::session::scaffolding;
use crate::engine::turn_data::{ChatDrill, Interpreted, Plan, TurnEnv, TurnEvent, TurnState};
use crate::model::{
    AnswerKind, ClientEvent, ExpectedAnswer, GradeOutcome, MappedUnit, MasteryTier,
    PendingQuestion, Role, SessionState, StudentIntent, StudentSnapshot, Thread, TutorAction,
    TutorMessage,
};

/// Units a message may map to, at most.
const MAPPED_UNITS: usize = 3;

/// The previous turn's reading counts a little less than this turn's words.
const PREVIOUS_READING_WEIGHT: f64 = 0.8;

/// Confidence of a unit named by a button press (e.g. "Try a drill" on a card).
const EVENT_UNIT_CONFIDENCE: f64 = 0.95;

/// Confidence of the unit the tutor offers after answering a question
/// beyond the course: as sure as a clear match by name.
const OFFERED_UNIT_CONFIDENCE: f64 = 0.9;

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
    let written = event.student_input().said();
    // The gate reads the student's own words; everything after reads what
    // they mean.
    let safety = written.as_deref().and_then(|s| rt.safety.classify(s));
    let mapper = &rt.index.mapper;
    let said = written
        .as_deref()
        .and_then(|w| {
            follow_up_of(w, session, state.history, &workflow.grading)
                .or_else(|| why_beyond_course(w, state.history, mapper))
        })
        .or_else(|| written.clone());
    let own_problem = own_problem(session, said.as_deref());
    // Read once: unit mapping, the outside topics and the chatter check
    // all weigh the same words and the same ranking.
    let words = said.as_deref().map(|s| mapper.read(s));
    let ranked = words
        .as_ref()
        .map(|w| mapper.rank_read(w))
        .unwrap_or_default();
    let beyond_course = words
        .as_ref()
        .map(|w| mapper.outside_topics_read(w, &ranked))
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
                unrelated: words
                    .as_ref()
                    .is_some_and(|w| mapper.is_unrelated_read(w, &ranked)),
                greeting: UnitMapper::is_greeting(text),
                acknowledgement: UnitMapper::is_acknowledgement(text),
                after_safety_help: after_safety_help(state.history),
                names_a_unit: !ranked.is_empty(),
                topic_only: expects_maths(
                    session
                        .pending_question
                        .as_ref()
                        .and_then(|q| q.expected.as_ref()),
                ) && words
                    .as_ref()
                    .is_some_and(|w| mapper.names_only_a_topic_read(w)),
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

    // An answer's own form ("15p" to "what does one pencil cost?") says
    // nothing about what the student wants to learn next.
    let answers = interpretation
        .as_ref()
        .is_some_and(|i| i.classification.intent == StudentIntent::Answer);
    let names_a_unit = !ranked.is_empty();
    let ranked = if answers {
        ranked.into_iter().filter(|m| !m.by_shape_only()).collect()
    } else {
        ranked
    };
    let mut mapped_units = map_units(rt, state.snapshot, ranked, &event.client_event);
    // The reply offers the unit nearest a question beyond the course: a
    // "yes" to that offer must find the same unit, not the focus unit or
    // a unit carried over from an earlier question.
    if category == BEYOND_COURSE
        && !names_a_unit
        && let Some(nearest) = beyond_course
            .first()
            .and_then(|&i| workflow.beyond_course.get(i))
            .and_then(|b| b.nearest_unit.as_deref())
            .filter(|u| rt.course().unit(u).is_some())
    {
        mapped_units.retain(|m| m.unit_id != nearest);
        mapped_units.insert(
            0,
            MappedUnit {
                unit_id: nearest.to_owned(),
                confidence: OFFERED_UNIT_CONFIDENCE,
            },
        );
        mapped_units.truncate(MAPPED_UNITS);
    }
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
        written: written.filter(|w| said.as_ref() != Some(w)),
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

/// The question a follow-up stands for ("what about 1/3?" after "how do
/// I turn 3/8 into a decimal?"), unless the message answers the question
/// the tutor asked ("and 125?" can be an answer).
fn follow_up_of(
    written: &str,
    session: &SessionState,
    history: &[TutorMessage],
    grading: &GradingSettings,
) -> Option<String> {
    let earlier: Vec<&str> = history
        .iter()
        .rev()
        .filter(|m| m.role == Role::Student && m.event.is_none())
        .take(follow_up::CHAIN)
        .map(|m| m.text.as_str())
        .collect();
    let meant = follow_up::meant(written, &earlier)
        .or_else(|| follow_up::check_of(written, &earlier))
        .or_else(|| follow_up::they_compared(written, &earlier))?;
    // Graded only for a message that could be a follow-up: most are not.
    let answers_pending = session
        .pending_question
        .as_ref()
        .and_then(|q| grading::grade_pending(q, written, grading))
        .is_some_and(|g| matches!(g.result, GradeOutcome::Correct | GradeOutcome::Close));
    (!answers_pending).then_some(meant)
}

/// "why?" on its own right after a question beyond the course asks why
/// of that answer: the question again, asked as a why ("why is 51
/// prime"), which is answered with the topic's rule before the worked
/// answer. After anything else a bare "why" keeps its own reading.
fn why_beyond_course(
    written: &str,
    history: &[TutorMessage],
    mapper: &UnitMapper,
) -> Option<String> {
    if !follow_up::only_asks_why(written) {
        return None;
    }
    let previous = history
        .iter()
        .rev()
        .find(|m| m.role == Role::Student && m.event.is_none())?;
    let words = mapper.read(&previous.text);
    let ranked = mapper.rank_read(&words);
    if mapper.outside_topics_read(&words, &ranked).is_empty() {
        return None;
    }
    Some(format!("why {}", previous.text.trim()))
}

/// Whether the tutor's last reply paused tutoring for a safety concern and
/// pointed the student to help.
fn after_safety_help(history: &[TutorMessage]) -> bool {
    history
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .and_then(|m| m.safety.as_ref())
        .is_some_and(|mark| mark.tutoring_paused && !mark.help_resources.is_empty())
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
    // The mode and the tutor's input read the message as the turn does.
    let meant;
    let event = if read.written.is_some() {
        meant = TurnEvent {
            message_text: read.said.clone(),
            ..event.clone()
        };
        &meant
    } else {
        event
    };
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
            scaffolding::ScaffoldingContext {
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
        written: read.written,
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
        exam::cards::lifetime(rt.workflow().policy.exam_card_hours),
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

/// Whether the question pending can only be answered in maths (a number,
/// an expression, choices that are numbers): then a topic's name said to
/// it asks for that topic. With nothing pending a topic's name is read as
/// any message naming a unit; a question a word may answer ("ratio or
/// rate?") keeps it as an answer.
fn expects_maths(expected: Option<&ExpectedAnswer>) -> bool {
    let Some(expected) = expected else {
        return false;
    };
    match expected.kind {
        AnswerKind::Number | AnswerKind::Expression | AnswerKind::Equation => true,
        AnswerKind::Mcq => expected
            .options
            .iter()
            .all(|o| o.chars().any(|c| c.is_ascii_digit())),
        AnswerKind::Text => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(kind: AnswerKind, value: &str, options: &[&str]) -> ExpectedAnswer {
        ExpectedAnswer {
            kind,
            value: value.to_owned(),
            unit: None,
            options: options.iter().map(|o| o.to_string()).collect(),
            mistakes: Vec::new(),
        }
    }

    #[test]
    fn only_a_question_answered_in_maths_hears_a_topic_name_as_a_request() {
        assert!(expects_maths(Some(&asked(AnswerKind::Number, "12", &[]))));
        assert!(expects_maths(Some(&asked(
            AnswerKind::Equation,
            "x = 4",
            &[]
        ))));
        assert!(expects_maths(Some(&asked(
            AnswerKind::Mcq,
            "B",
            &["3/8", "3/4"]
        ))));
        assert!(!expects_maths(Some(&asked(
            AnswerKind::Mcq,
            "A",
            &["ratio", "rate"]
        ))));
        assert!(!expects_maths(Some(&asked(
            AnswerKind::Text,
            "ratios",
            &[]
        ))));
        assert!(!expects_maths(None));
    }
}
