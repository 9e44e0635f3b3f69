//! The session's timeline (docs/architecture.md, "The conversation as it is
//! read back"): one entry per turn and per
//! card answered between turns, the newest [`TIMELINE_KEPT`] kept, each
//! saying what the student did, what the tutor did and what came of it —
//! in every mode, from what the turn pipeline already decided.

use chrono::{DateTime, Utc};

use crate::content::Workflow;
use crate::content::workflow::Category;
use crate::engine::turn_data::Plan;
use crate::model::{
    ClientEvent, GradeOutcome, LlmTutorResponse, PendingQuestion, TimelineEntry, TimelineEvent,
    TimelineOutcome, TutorAction,
};

/// Entries a session keeps: the newest, enough for a summary to tell the
/// session's story without the thread item growing with it.
pub const TIMELINE_KEPT: usize = 30;

/// Appends `entry`, dropping the oldest beyond [`TIMELINE_KEPT`].
pub fn record(timeline: &mut Vec<TimelineEntry>, entry: TimelineEntry) {
    timeline.push(entry);
    let excess = timeline.len().saturating_sub(TIMELINE_KEPT);
    timeline.drain(..excess);
}

/// What a turn was about in a thread's timeline.
pub struct TurnRecord<'a> {
    /// The turn's number in the session, from 1.
    pub turn: u32,
    pub now: DateTime<Utc>,
    pub plan: &'a Plan,
    /// The question pending before the turn.
    pub pending: Option<&'a PendingQuestion>,
    /// The reply applied; `None` when the safety response stood in for it.
    pub reply: Option<&'a LlmTutorResponse>,
}

/// The entry for one turn.
pub fn turn_entry(workflow: &Workflow, record: &TurnRecord<'_>) -> TimelineEntry {
    let plan = record.plan;
    let event = &plan.input.context.client_event;
    let step = event_step(event).map_or_else(|| plan.category.clone(), str::to_owned);
    let Some(reply) = record.reply else {
        return TimelineEntry {
            turn: record.turn,
            at: record.now,
            step,
            action: None,
            unit_id: None,
            outcome: TimelineOutcome::Safety,
        };
    };
    let graded = match &plan.chat_drill {
        Some(d) => Some((d.verdict.outcome, d.unit_id.as_str())),
        None => record
            .pending
            .zip(plan.interpretation.as_ref().and_then(|i| i.grade.as_ref()))
            .map(|(q, g)| (g.result, q.unit_id.as_str())),
    }
    .filter(|(g, _)| *g != GradeOutcome::Unverifiable);
    let (outcome, unit_id) = if plan.scripted.is_some() {
        // The mode wrote the reply and keeps its own marks: an exam shows
        // none while it runs.
        (scripted_outcome(event, plan.said.is_some()), None)
    } else if let Some((grade, unit)) = graded {
        (graded_outcome(grade), Some(unit))
    } else if workflow
        .category(&plan.category)
        .is_some_and(Category::asks_for_help)
    {
        (TimelineOutcome::Hint, None)
    } else {
        (reply_outcome(reply.action), None)
    };
    TimelineEntry {
        turn: record.turn,
        at: record.now,
        step,
        action: Some(reply.action),
        // A caller's own problem may belong to no unit.
        unit_id: Some(unit_id.unwrap_or(reply.target_unit_id.as_str()))
            .filter(|u| !u.is_empty())
            .map(str::to_owned),
        outcome,
    }
}

/// The entry for a card answered between turns (`turn` is the session's
/// turn count then).
pub fn card_entry(turn: u32, event: &TimelineEvent, now: DateTime<Utc>) -> TimelineEntry {
    let (step, unit_id, outcome) = match event {
        TimelineEvent::DrillGraded { unit_id, grade, .. } => {
            ("drill_graded", unit_id, graded_outcome(grade.result))
        }
        TimelineEvent::ExamSubmitted {
            unit_id,
            is_correct,
            ..
        } => {
            let outcome = if *is_correct {
                TimelineOutcome::Right
            } else {
                TimelineOutcome::Wrong
            };
            ("exam_submitted", unit_id, outcome)
        }
        TimelineEvent::SupportViewed { unit_id, .. } => {
            ("support_viewed", unit_id, TimelineOutcome::Hint)
        }
    };
    TimelineEntry {
        turn,
        at: now,
        step: step.to_owned(),
        action: None,
        unit_id: Some(unit_id.clone()),
        outcome,
    }
}

/// How a session was closed outside a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionClose {
    /// The student ended it (`POST /threads/{threadId}/end`).
    Ended,
    /// Its mode closed it as abandoned: it was left idle past its time.
    Expired,
}

/// The entry saying the session was closed (`turn` is the session's turn
/// count then), in every mode: the timeline's last word on the session.
pub fn close_entry(turn: u32, close: SessionClose, now: DateTime<Utc>) -> TimelineEntry {
    let (step, outcome) = match close {
        SessionClose::Ended => ("session_ended", TimelineOutcome::Ended),
        SessionClose::Expired => ("session_expired", TimelineOutcome::Abandoned),
    };
    TimelineEntry {
        turn,
        at: now,
        step: step.to_owned(),
        action: None,
        unit_id: None,
        outcome,
    }
}

fn graded_outcome(grade: GradeOutcome) -> TimelineOutcome {
    match grade {
        GradeOutcome::Correct => TimelineOutcome::Right,
        GradeOutcome::Close => TimelineOutcome::Close,
        GradeOutcome::Wrong | GradeOutcome::Unverifiable => TimelineOutcome::Wrong,
    }
}

fn reply_outcome(action: TutorAction) -> TimelineOutcome {
    match action {
        TutorAction::SocraticQuestion => TimelineOutcome::Question,
        TutorAction::ConceptCard => TimelineOutcome::ConceptCard,
        TutorAction::DrillCard => TimelineOutcome::Drill,
        TutorAction::ExamBlock => TimelineOutcome::ExamQuestion,
    }
}

/// What the student did in a mode that writes its own replies (an exam,
/// a survey): a written message is an answer.
fn scripted_outcome(event: &ClientEvent, said: bool) -> TimelineOutcome {
    match event {
        ClientEvent::ExamSkip { .. } | ClientEvent::SurveySkip { .. } => TimelineOutcome::Skipped,
        ClientEvent::ExamEnd => TimelineOutcome::Ended,
        ClientEvent::ExamAnswer { .. } | ClientEvent::SurveyAnswer { .. } => {
            TimelineOutcome::Answered
        }
        _ if said => TimelineOutcome::Answered,
        _ => TimelineOutcome::Question,
    }
}

/// A button or card event's name as a step.
fn event_step(event: &ClientEvent) -> Option<&'static str> {
    Some(match event {
        ClientEvent::None => return None,
        ClientEvent::RequestDrill { .. } => "request_drill",
        ClientEvent::DrillContinue { .. } => "drill_continue",
        ClientEvent::ExamContinue { .. } => "exam_continue",
        ClientEvent::IAmStuck { .. } => "i_am_stuck",
        ClientEvent::ExamAnswer { .. } => "exam_answer",
        ClientEvent::ExamSkip { .. } => "exam_skip",
        ClientEvent::ExamEnd => "exam_end",
        ClientEvent::SurveyAnswer { .. } => "survey_answer",
        ClientEvent::SurveySkip { .. } => "survey_skip",
    })
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use proptest::prelude::*;

    use super::*;
    use crate::model::DrillCardState;

    fn at(turn: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 25, 9, 0, 0).unwrap()
            + chrono::Duration::minutes(turn.into())
    }

    fn entry(turn: u32) -> TimelineEntry {
        TimelineEntry {
            turn,
            at: at(turn),
            step: "attempt_answer".into(),
            action: Some(TutorAction::SocraticQuestion),
            unit_id: Some("ratios".into()),
            outcome: TimelineOutcome::Right,
        }
    }

    #[test]
    fn thirty_one_turns_keep_the_newest_thirty() {
        let mut timeline = Vec::new();
        for turn in 1..=31 {
            record(&mut timeline, entry(turn));
        }
        assert_eq!(timeline.len(), 30);
        assert_eq!(timeline[0].turn, 2, "the oldest is dropped");
        assert_eq!(timeline[29].turn, 31);
    }

    #[test]
    fn a_graded_drill_card_is_right_or_wrong_and_a_memo_is_help() {
        let graded = |result| TimelineEvent::DrillGraded {
            drill_key: "k".into(),
            unit_id: "fractions".into(),
            grade: DrillCardState {
                answer: "3/4".into(),
                result,
                is_correct: result == GradeOutcome::Correct,
                feedback_text: String::new(),
                correct_answer: None,
            },
            counted: true,
        };
        let right = card_entry(4, &graded(GradeOutcome::Correct), at(4));
        assert_eq!(
            (right.turn, right.step.as_str(), right.outcome),
            (4, "drill_graded", TimelineOutcome::Right)
        );
        assert_eq!(right.unit_id.as_deref(), Some("fractions"));
        assert_eq!(right.action, None);
        let close = card_entry(4, &graded(GradeOutcome::Close), at(4));
        assert_eq!(close.outcome, TimelineOutcome::Close);
        let memo = card_entry(
            5,
            &TimelineEvent::SupportViewed {
                question_id: "q".into(),
                unit_id: "ratios".into(),
                support_type: crate::model::SupportType::Memo,
                locked_until: None,
            },
            at(5),
        );
        assert_eq!(
            (memo.step.as_str(), memo.outcome),
            ("support_viewed", TimelineOutcome::Hint)
        );
    }

    #[test]
    fn a_closed_session_says_how_it_closed() {
        let ended = close_entry(6, SessionClose::Ended, at(6));
        assert_eq!(
            (ended.turn, ended.step.as_str(), ended.outcome),
            (6, "session_ended", TimelineOutcome::Ended)
        );
        assert_eq!((ended.action, ended.unit_id), (None, None));
        let expired = close_entry(2, SessionClose::Expired, at(90));
        assert_eq!(
            (expired.step.as_str(), expired.outcome, expired.at),
            ("session_expired", TimelineOutcome::Abandoned, at(90))
        );
        assert_eq!(
            serde_json::to_value(expired.outcome).unwrap(),
            serde_json::json!("abandoned")
        );
    }

    #[test]
    fn a_mode_that_marks_its_own_answers_shows_no_grade() {
        let answer = ClientEvent::ExamAnswer { question_number: 2 };
        assert_eq!(scripted_outcome(&answer, true), TimelineOutcome::Answered);
        let skip = ClientEvent::SurveySkip {
            question_id: "q1".into(),
        };
        assert_eq!(scripted_outcome(&skip, false), TimelineOutcome::Skipped);
        assert_eq!(
            scripted_outcome(&ClientEvent::ExamEnd, false),
            TimelineOutcome::Ended
        );
        assert_eq!(
            scripted_outcome(&ClientEvent::None, true),
            TimelineOutcome::Answered
        );
        assert_eq!(
            scripted_outcome(&ClientEvent::None, false),
            TimelineOutcome::Question
        );
    }

    #[test]
    fn an_entry_reads_as_a_teacher_would_want_it() {
        let json = serde_json::to_value(entry(3)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "turn": 3,
                "at": "2026-11-25T09:03:00Z",
                "step": "attempt_answer",
                "action": "SOCRATIC_QUESTION",
                "unitId": "ratios",
                "outcome": "right",
            })
        );
    }

    #[test]
    fn a_thread_stored_before_timelines_reads_with_an_empty_one() {
        let session: crate::model::SessionState =
            serde_json::from_value(serde_json::json!({ "turnCount": 7 })).unwrap();
        assert_eq!(session.turn_count, 7);
        assert!(session.timeline.is_empty());
        let written = serde_json::to_value(&session).unwrap();
        assert!(written.get("timeline").is_none(), "not written while empty");
    }

    proptest! {
        /// However many entries are recorded, the timeline keeps the newest
        /// ones in the order they came, never more than the cap.
        #[test]
        fn the_timeline_is_the_newest_entries_in_order(
            turns in proptest::collection::vec(1u32..500, 0..80),
            before in 0usize..=TIMELINE_KEPT,
        ) {
            let mut timeline: Vec<TimelineEntry> = (0..before as u32).map(entry).collect();
            let mut all = timeline.clone();
            for &turn in &turns {
                record(&mut timeline, entry(turn));
                all.push(entry(turn));
            }
            prop_assert_eq!(timeline.len(), all.len().min(TIMELINE_KEPT));
            prop_assert_eq!(&timeline[..], &all[all.len() - timeline.len()..]);
        }
    }
}
