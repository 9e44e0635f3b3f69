//! The tutor's input for one turn: the policy, the retrieved lesson text,
//! the routing cue and the note of what code established about the
//! message, the pacing and style signals, and the conversation read back.

use chrono::{DateTime, Utc};

use crate::content::workflow::{BeyondCourse, Transition};
use crate::content::{Course, Unit, Workflow};
use crate::engine::exam::lockout::LockoutStatus;
use crate::engine::interpret::classify::{BEYOND_COURSE, Interpretation};
use crate::engine::interpret::comparison;
use crate::engine::interpret::follow_up;
use crate::engine::interpret::outside_math;
use crate::engine::interpret::place_value;
use crate::engine::interpret::ratio_meaning;
use crate::engine::interpret::student_math;
use crate::engine::modes::{MemoryCut, ModeBlock};
use crate::engine::policy::signals::{self, PacingInput, Trend};
use crate::engine::policy::{MoveOn, PolicyOutcome};
use crate::engine::practice::drill::IssuedDrill;
use crate::engine::runtime::CourseRuntime;
use crate::engine::session::scaffolding;
use crate::engine::turn_data::{TurnEnv, TurnEvent, TurnState};
use crate::model::{
    CategoryCue, CodeReading, ContentChunk, CourseBrief, ExamCandidate, GradeOutcome,
    HistoryMessage, MappedUnit, PracticeItem, ProblemBrief, QuestionPhase, QuestionState,
    RevisitBrief, Role, SessionState, SnapshotLiteForLlm, StudentIntent, TutorContext,
    TutorMessage, TutorTurnInput, UnitAnchor,
};

/// Content chunks put in front of the tutor, at most (the prompt trims further).
const CONTEXT_CHUNKS: usize = 4;

/// Student messages the style signal looks at.
const STYLE_MESSAGES: usize = 8;

#[allow(clippy::too_many_arguments)]
pub(super) fn compose(
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
                BeyondAsked {
                    topics: beyond_course
                        .iter()
                        .filter_map(|&i| workflow.beyond_course.get(i))
                        .collect(),
                    last_reply: last_reply(state.history),
                },
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

/// The topics beyond the course a message asks about, and the tutor's
/// last reply: an offer made there is not made again.
struct BeyondAsked<'a> {
    topics: Vec<&'a BeyondCourse>,
    last_reply: Option<&'a str>,
}

/// The tutor's last message, if the conversation has one.
fn last_reply(history: &[TutorMessage]) -> Option<&str> {
    history
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant)
        .map(|m| m.text.as_str())
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
    beyond: BeyondAsked<'_>,
) -> String {
    let BeyondAsked {
        topics: beyond_course,
        last_reply,
    } = beyond;
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
                    " It goes beyond this course. Shall we look at {}, the nearest thing to it that we cover?",
                    u.title
                )
            })
            .unwrap_or_else(|| {
                " It goes beyond this course. What would you like to work on?".to_owned()
            });
        // Offered in the last reply already: a second question beyond the
        // course is answered without the same offer again.
        let offer = if last_reply.is_some_and(|r| r.contains(offer.trim())) {
            " What else would you like to know?".to_owned()
        } else {
            offer
        };
        // Worked in the student's own numbers where code can; else the
        // rule of each topic asked about. A "why" gets the rule first,
        // then the numbers.
        let rule = beyond_course
            .iter()
            .map(|b| b.answer.trim())
            .collect::<Vec<_>>()
            .join(" ");
        let answer = match said.and_then(outside_math::worked) {
            Some(worked) if said.is_some_and(follow_up::asks_why) => format!("{rule} {worked}"),
            Some(worked) => worked,
            None => rule,
        };
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
        .or_else(|| said.and_then(ratio_meaning::answer))
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
}
