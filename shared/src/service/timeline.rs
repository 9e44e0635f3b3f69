//! A conversation as it is read back: what a student did with a card
//! (answered a drill, submitted an exam question, opened a memo) is an
//! event in the timeline, and the card itself carries its latest state, so
//! a reloaded page shows what happened.

use chrono::{DateTime, Utc};

use crate::engine::session::timeline;
use crate::model::{
    CardState, ExamCardState, RecordedCardState, Role, SessionState, Thread, TimelineEvent,
    TutorCard, TutorMessage,
};

/// Card states a thread keeps, newest last: far more cards than a page
/// shows, and a bounded share of the thread item.
const CARD_STATES_KEPT: usize = 100;

/// The timeline item recording `event`, in the student's words; the
/// session's summary timeline records it too.
pub(crate) fn event_message(
    thread: &mut Thread,
    id: String,
    text: String,
    event: TimelineEvent,
    now: DateTime<Utc>,
) -> TutorMessage {
    let entry = timeline::card_entry(thread.session.turn_count, &event, now);
    timeline::record(&mut thread.session.timeline, entry);
    TutorMessage {
        id,
        thread_id: thread.thread_id.clone(),
        role: Role::Student,
        text,
        latex: None,
        card: None,
        card_state: None,
        event: Some(event),
        safety: None,
        created_at: now,
    }
}

/// The latest of `messages` whose card `matches`.
pub(crate) fn card_message(
    messages: &[TutorMessage],
    matches: impl Fn(&TutorCard) -> bool,
) -> Option<&TutorMessage> {
    messages
        .iter()
        .rev()
        .find(|m| m.card.as_ref().is_some_and(&matches))
}

/// The state recorded for the card in `message_id`.
pub(crate) fn card_state<'s>(session: &'s SessionState, message_id: &str) -> Option<&'s CardState> {
    session
        .card_states
        .iter()
        .find(|r| r.message_id == message_id)
        .map(|r| &r.state)
}

/// Records `state` for the card in `message_id`, replacing what it had.
pub(crate) fn set_card_state(session: &mut SessionState, message_id: &str, state: CardState) {
    session.card_states.retain(|r| r.message_id != message_id);
    session.card_states.push(RecordedCardState {
        message_id: message_id.to_owned(),
        state,
    });
    let excess = session.card_states.len().saturating_sub(CARD_STATES_KEPT);
    session.card_states.drain(..excess);
}

/// The exam card state after one more action on it.
pub(crate) fn exam_state(
    previous: Option<&CardState>,
    update: impl FnOnce(&mut ExamCardState),
    initial: crate::model::ExamCardStatus,
) -> CardState {
    let mut state = match previous {
        Some(CardState::Exam(s)) => s.clone(),
        _ => ExamCardState {
            status: initial,
            selected_option: None,
            feedback_text: None,
            locked_until: None,
            supports_viewed: Vec::new(),
            memo: None,
        },
    };
    update(&mut state);
    CardState::Exam(state)
}

/// Gives every card of `messages` the state `session` recorded for it.
pub(crate) fn with_card_states(messages: &mut [TutorMessage], session: &SessionState) {
    for message in messages.iter_mut().filter(|m| m.card.is_some()) {
        message.card_state = card_state(session, &message.id).cloned();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DrillCardState, ExamCardStatus, GradeOutcome, SupportType};

    fn drill(answer: &str) -> CardState {
        CardState::Drill(DrillCardState {
            answer: answer.into(),
            result: GradeOutcome::Wrong,
            is_correct: false,
            feedback_text: "Not quite.".into(),
            correct_answer: Some("12".into()),
        })
    }

    #[test]
    fn a_card_keeps_one_state_and_old_ones_are_dropped() {
        let mut session = SessionState::default();
        set_card_state(&mut session, "m1", drill("11"));
        set_card_state(&mut session, "m1", drill("13"));
        assert_eq!(session.card_states.len(), 1);
        assert_eq!(card_state(&session, "m1"), Some(&drill("13")));
        for n in 0..CARD_STATES_KEPT + 5 {
            set_card_state(&mut session, &format!("x{n}"), drill("1"));
        }
        assert_eq!(session.card_states.len(), CARD_STATES_KEPT);
        assert!(
            card_state(&session, "m1").is_none(),
            "the oldest went first"
        );
        assert!(card_state(&session, &format!("x{}", CARD_STATES_KEPT + 4)).is_some());
    }

    #[test]
    fn an_exam_card_gathers_its_submission_and_support_views() {
        let failed = exam_state(
            None,
            |s| s.selected_option = Some("B".into()),
            ExamCardStatus::Failed,
        );
        let viewed = exam_state(
            Some(&failed),
            |s| s.supports_viewed.push(SupportType::Memo),
            ExamCardStatus::Locked,
        );
        let CardState::Exam(state) = viewed else {
            panic!("an exam state")
        };
        assert_eq!(
            state.status,
            ExamCardStatus::Failed,
            "a view keeps the verdict"
        );
        assert_eq!(state.selected_option.as_deref(), Some("B"));
        assert_eq!(state.supports_viewed, vec![SupportType::Memo]);
    }
}
