//! The clarify_doubts mode: the student leads with questions about a unit
//! or the course, and the tutor answers each one directly, not Socratically.
//!
//! - `start` remembers the student's latest earlier question sessions on
//!   the course, so the context can build on them.
//! - `plan` answers each question about the unit it is about (its words
//!   decide, else the session's unit): the reply is the answer, in words.
//!   "Thanks, that's all", the end event, or a "no" to the tutor's
//!   "anything else?" closes the session with a recap; once closed, every
//!   message gets a short reply pointing to a lesson or practice. A
//!   message about something else gets the workflow's polite boundary.
//! - `apply` records the concept answered and closes the session when the
//!   reply was the recap. Nothing is graded here: the tutor's closing
//!   check ("is that clear?") is not a question waiting for an answer.

use crate::content::tutor_text::list_in_words;
use crate::content::workflow::{Category, ClarifyMode, Transition};
use crate::content::{Course, Workflow};
use crate::engine::interpret::classify::BEYOND_COURSE;
use crate::engine::interpret::mapping::UnitMapper;
use crate::engine::modes::{
    Ended, Ending, ModeBlock, ModePlan, ModeTurn, Outcome, SessionMode, Start, StartError, Started,
    welcome,
};
use crate::engine::policy::PolicyOutcome;
use crate::engine::turn_data::{Interpreted, Plan, TurnEvent};
use crate::model::{
    ClarifyBrief, ClarifySession, ExamAvailability, LlmTutorResponse, Mode, ModeState,
    PastDiscussion, Role, SessionState, StudentIntent, Thread, ThreadStatus, TutorAction,
    TutorMessage,
};

/// The clarify_doubts mode.
pub struct ClarifyDoubts;

impl SessionMode for ClarifyDoubts {
    fn earlier_sessions(&self, start: &Start<'_>) -> usize {
        start.workflow.modes.clarify_doubts.past_discussions as usize
    }

    /// The recap the closing reply gives: the concepts discussed.
    fn end(&self, ending: &mut Ending<'_>) -> Ended {
        Ended {
            text: recap(ending.workflow, ending.course, ending.thread),
            events: Vec::new(),
        }
    }

    fn start(&self, start: &Start<'_>) -> Result<Started, StartError> {
        let past_discussions = start
            .earlier
            .iter()
            .filter(|t| !t.session.concepts_discussed.is_empty())
            .map(|t| PastDiscussion {
                thread_id: t.thread_id.clone(),
                created_at: t.created_at,
                concepts: t.session.concepts_discussed.clone(),
            })
            .collect();
        Ok(Started {
            session: SessionState {
                mode_state: ModeState::ClarifyDoubts(ClarifySession {
                    past_discussions,
                    ..ClarifySession::default()
                }),
                ..SessionState::default()
            },
            welcome: welcome(start, Mode::ClarifyDoubts)?,
        })
    }

    fn plan(
        &self,
        turn: &ModeTurn<'_>,
        event: &TurnEvent,
        read: &Interpreted,
        mut policy: PolicyOutcome,
    ) -> ModePlan {
        let thread = turn.state.thread;
        let settings = &turn.rt.workflow().modes.clarify_doubts;
        let session = clarify_of(&thread.session).cloned().unwrap_or_default();
        let complete = session.complete || thread.status == ThreadStatus::Completed;
        let closing = !complete && closes(turn, read, settings);
        // "I still don't get it" names no maths, yet asks for the answer again.
        let stuck = read
            .interpretation
            .as_ref()
            .is_some_and(|i| i.classification.intent == StudentIntent::Stuck);
        let transitions = turn
            .rt
            .workflow()
            .category(&read.category)
            .map(|c| c.transitions.as_slice())
            .unwrap_or_default();
        let boundary =
            !complete && !closing && !stuck && transitions.contains(&Transition::CountOffTopic);
        let invites_choice = turn
            .rt
            .workflow()
            .category(&read.category)
            .is_some_and(Category::invites_choice);

        // The unit the question is about: its own words first (last turn's
        // reading carries less), then the session's unit, then the focus.
        let course = turn.rt.course();
        let own_words = read
            .said
            .as_deref()
            .map(|s| turn.rt.index.map_message(s, 1))
            .unwrap_or_default();
        let unit = own_words
            .first()
            .or(read.mapped_units.first())
            .map(|m| m.unit_id.clone())
            .or_else(|| thread.unit_id.clone())
            .filter(|u| course.unit(u).is_some())
            .unwrap_or_else(|| policy.policy.focus_unit_id.clone());
        let p = &mut policy.policy;
        p.focus_unit_id = unit.clone();
        p.primary_target_unit_id = unit.clone();
        p.scoped_unit_ids = vec![unit];
        p.prereq_blocking_unit_id = None;
        p.exam_ready = false;
        p.exam_availability = ExamAvailability::None;
        p.exam_next_eligible_at = None;
        p.stuck = false;
        p.allowed_actions = vec![TutorAction::SocraticQuestion];
        policy.exam.available_question_ids.clear();

        let category = if complete {
            Some(settings.after_category.clone())
        } else if closing {
            Some(settings.closing_category.clone())
        } else if boundary || event.message_text.is_none() && event.message_latex.is_none() {
            None
        } else if invites_choice && !boundary {
            // "I don't know" before any question asks where to begin: the
            // student is asked what they are working on, not answered.
            Some(read.category.clone())
        } else if read
            .said
            .as_deref()
            .is_some_and(UnitMapper::is_acknowledgement)
        {
            // "ok" or "thanks" asks nothing: the answer is not given again.
            Some(settings.acknowledged_category.clone())
        } else if read.category == BEYOND_COURSE {
            // Maths the course does not teach is answered with its own rule,
            // not with the nearest lesson passage.
            Some(read.category.clone())
        } else {
            Some(settings.answer_category.clone())
        };
        ModePlan {
            policy,
            practice: None,
            block: ModeBlock {
                clarify: Some(ClarifyBrief {
                    concepts_discussed: thread.session.concepts_discussed.clone(),
                    past_discussions: session
                        .past_discussions
                        .iter()
                        .map(|d| {
                            format!(
                                "{}: {}",
                                d.created_at.format("%Y-%m-%d"),
                                d.concepts.join(", ")
                            )
                        })
                        .collect(),
                    closing,
                    complete,
                }),
                ..ModeBlock::default()
            },
            category,
            judging: None,
            reply: None,
        }
    }

    fn apply(
        &self,
        turn: &ModeTurn<'_>,
        plan: &Plan,
        reply: &LlmTutorResponse,
        outcome: &mut Outcome<'_>,
    ) {
        let settings = &turn.rt.workflow().modes.clarify_doubts;
        let thread = &mut *outcome.thread;
        let mut session = clarify_of(&thread.session).cloned().unwrap_or_default();
        // A question session waits on nothing: the student leads.
        thread.session.pending_question = None;
        if plan.category == BEYOND_COURSE {
            session.questions_answered = session.questions_answered.saturating_add(1);
        }
        if plan.category == settings.answer_category {
            session.questions_answered = session.questions_answered.saturating_add(1);
            if let Some(unit) = turn.rt.course().unit(&reply.target_unit_id) {
                let concepts = &mut thread.session.concepts_discussed;
                if !concepts.contains(&unit.title) {
                    concepts.push(unit.title.clone());
                }
            }
        }
        if plan.category == settings.closing_category {
            session.complete = true;
            thread.status = ThreadStatus::Completed;
        }
        thread.session.mode_state = ModeState::ClarifyDoubts(session);
    }
}

pub(crate) fn clarify_of(session: &SessionState) -> Option<&ClarifySession> {
    match &session.mode_state {
        ModeState::ClarifyDoubts(s) => Some(s),
        _ => None,
    }
}

/// Whether this message ends the session: the student says they are done,
/// or answers the tutor's "anything else?" with a short "no".
fn closes(turn: &ModeTurn<'_>, read: &Interpreted, settings: &ClarifyMode) -> bool {
    let workflow = turn.rt.workflow();
    let done = workflow
        .categories
        .iter()
        .find(|c| c.id == read.category)
        .is_some_and(|c| c.detect.intents.contains(&StudentIntent::Done));
    if done {
        return true;
    }
    let Some(said) = read.said.as_deref() else {
        return false;
    };
    let asked_anything_else =
        last_tutor_words(turn.state.history).is_some_and(|t| t.trim_end().ends_with('?'));
    asked_anything_else && declines(said, &settings.declines)
}

fn last_tutor_words(history: &[TutorMessage]) -> Option<&str> {
    history
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant && m.is_conversation())
        .map(|m| m.text.as_str())
}

/// A short reply that is one of `declines`, give or take punctuation and
/// a "thanks".
fn declines(said: &str, declines: &[String]) -> bool {
    let folded: String = said
        .to_lowercase()
        .replace(['’', '‘'], "'")
        .chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace() || *c == '\'')
        .collect();
    let words: Vec<&str> = folded
        .split_whitespace()
        .filter(|w| !matches!(*w, "thanks" | "thank" | "you" | "ty" | "ok" | "okay"))
        .collect();
    if words.is_empty() || words.len() > 4 {
        return false;
    }
    let core = words.join(" ");
    declines.iter().any(|d| d.trim().to_lowercase() == core)
}

/// Closes the question session: the recap of the concepts discussed.
fn recap(workflow: &Workflow, course: &Course, thread: &mut Thread) -> Option<String> {
    let mut session = clarify_of(&thread.session).cloned().unwrap_or_default();
    session.complete = true;
    thread.session.mode_state = ModeState::ClarifyDoubts(session);
    let concepts = &thread.session.concepts_discussed;
    let student = &thread.session.personalization;
    let spoken = workflow.offline_tutor.in_language(student.language);
    let name = student.student_name.as_deref();
    let recap: Vec<&String> = spoken
        .moves
        .recap
        .iter()
        .filter(|p| name.is_some() || !p.contains("{{student_name}}"))
        .collect();
    let phrase = recap
        .iter()
        .find(|p| p.contains("{{concepts}}") != concepts.is_empty())
        .or(recap.first())?;
    let about = thread
        .unit_id
        .as_deref()
        .and_then(|u| course.unit(u))
        .map_or(&course.title, |u| &u.title);
    Some(
        phrase
            .replace("{{concepts}}", &list_in_words(concepts))
            .replace("{{unit_title}}", about)
            .replace("{{student_name}}", name.unwrap_or_default()),
    )
}

#[cfg(test)]
mod tests {
    use super::declines;

    #[test]
    fn a_short_no_declines_and_a_question_does_not() {
        let list: Vec<String> = ["no", "nope", "no thanks", "i'm good", "that's it"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for said in [
            "No",
            "no thanks!",
            "Nope.",
            "I'm good, thanks",
            "no, thank you",
            "That's it",
        ] {
            assert!(declines(said, &list), "{said}");
        }
        for said in [
            "no, why is 2x + 3 = 11 solved by x = 4?",
            "what is a ratio?",
            "thanks",
            "",
        ] {
            assert!(!declines(said, &list), "{said}");
        }
    }
}
