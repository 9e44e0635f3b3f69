//! Exam cards shown in a thread. An exam question is attempted through its
//! card, which the tutor shows only when the policy allows an exam block
//! (the student is exam-ready, the question is at the desired tier and not
//! locked). So a submission must name a card shown in this thread, not yet
//! answered and not expired; a memo may be opened for any card shown here.
//! The record lives in the thread's session state and is written in the
//! same commit as the card or the submission, so two submissions of one
//! card cannot both succeed.

use chrono::{DateTime, Duration, Utc};

use crate::model::{SessionState, ShownExamCard};

/// Cards remembered per thread; older ones drop off (a student answers a
/// card long before this many more are shown).
pub const CARDS_KEPT: usize = 50;

/// Why a question cannot be submitted (or its memo opened) in this thread.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CardRefusal {
    #[error(
        "question `{0}` has not been shown on an exam card in this conversation; answer the exam cards the tutor shows"
    )]
    NotShown(String),
    #[error(
        "the exam card of question `{question_id}` was already answered (or its memo opened) at {at}; it is answered once each time it is shown"
    )]
    AlreadySubmitted {
        question_id: String,
        at: DateTime<Utc>,
    },
    #[error(
        "the exam card of question `{question_id}` expired at {at}; ask the tutor for a new one"
    )]
    Expired {
        question_id: String,
        at: DateTime<Utc>,
    },
}

/// How long a card takes an answer: the workflow's fractional hours.
pub fn lifetime(hours: f64) -> Duration {
    Duration::milliseconds((hours * 3_600_000.0).round() as i64)
}

/// Records that the card of `question_id` is on screen from `now`. Showing
/// a question again (after its lockout) opens it for one more answer.
pub fn record_shown(session: &mut SessionState, question_id: &str, now: DateTime<Utc>) {
    session.exam_cards.retain(|c| c.question_id != question_id);
    session.exam_cards.push(ShownExamCard {
        question_id: question_id.to_owned(),
        shown_at: now,
        submitted_at: None,
    });
    let excess = session.exam_cards.len().saturating_sub(CARDS_KEPT);
    session.exam_cards.drain(..excess);
}

/// Whether `question_id` may be submitted now: its card was shown here,
/// less than `valid_for` ago, and not answered since.
pub fn check_submission(
    session: &SessionState,
    question_id: &str,
    now: DateTime<Utc>,
    valid_for: Duration,
) -> Result<(), CardRefusal> {
    let card = shown(session, question_id)?;
    if let Some(at) = card.submitted_at {
        return Err(CardRefusal::AlreadySubmitted {
            question_id: question_id.to_owned(),
            at,
        });
    }
    let expires = card.shown_at + valid_for;
    if now >= expires {
        return Err(CardRefusal::Expired {
            question_id: question_id.to_owned(),
            at: expires,
        });
    }
    Ok(())
}

/// Marks the card of `question_id` answered (or its solution seen): it
/// takes no further submission until it is shown again.
pub fn record_submitted(session: &mut SessionState, question_id: &str, now: DateTime<Utc>) {
    if let Some(card) = session
        .exam_cards
        .iter_mut()
        .find(|c| c.question_id == question_id)
    {
        card.submitted_at = Some(now);
    }
}

/// Whether the memo (or video) of `question_id` may be opened: its card was
/// shown in this thread, answered or not.
pub fn check_support_view(session: &SessionState, question_id: &str) -> Result<(), CardRefusal> {
    shown(session, question_id).map(|_| ())
}

/// The exam cards on screen: shown, not answered, not expired. Their
/// answers are pending like a drill's.
pub fn open_cards(
    session: &SessionState,
    now: DateTime<Utc>,
    valid_for: Duration,
) -> impl Iterator<Item = &ShownExamCard> {
    session
        .exam_cards
        .iter()
        .filter(move |c| c.submitted_at.is_none() && now < c.shown_at + valid_for)
}

fn shown<'s>(
    session: &'s SessionState,
    question_id: &str,
) -> Result<&'s ShownExamCard, CardRefusal> {
    session
        .exam_cards
        .iter()
        .find(|c| c.question_id == question_id)
        .ok_or_else(|| CardRefusal::NotShown(question_id.to_owned()))
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use proptest::prelude::*;

    use super::*;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0).unwrap()
    }

    const DAY: Duration = Duration::hours(24);

    #[test]
    fn only_a_shown_card_is_submitted_and_only_once() {
        let mut s = SessionState::default();
        assert_eq!(
            check_submission(&s, "q1", t0(), DAY),
            Err(CardRefusal::NotShown("q1".into()))
        );
        assert!(check_support_view(&s, "q1").is_err());
        record_shown(&mut s, "q1", t0());
        assert_eq!(check_submission(&s, "q1", t0(), DAY), Ok(()));
        assert!(check_submission(&s, "q2", t0(), DAY).is_err());
        record_submitted(&mut s, "q1", t0() + Duration::minutes(1));
        assert!(matches!(
            check_submission(&s, "q1", t0() + Duration::minutes(2), DAY),
            Err(CardRefusal::AlreadySubmitted { .. })
        ));
        // The memo of an answered card stays available.
        assert_eq!(check_support_view(&s, "q1"), Ok(()));
        // Shown again (after its lockout): one more answer.
        record_shown(&mut s, "q1", t0() + Duration::hours(30));
        assert_eq!(
            check_submission(&s, "q1", t0() + Duration::hours(30), DAY),
            Ok(())
        );
        assert_eq!(s.exam_cards.len(), 1);
    }

    #[test]
    fn a_card_expires() {
        let mut s = SessionState::default();
        record_shown(&mut s, "q1", t0());
        assert_eq!(
            check_submission(&s, "q1", t0() + DAY - Duration::seconds(1), DAY),
            Ok(())
        );
        assert_eq!(
            check_submission(&s, "q1", t0() + DAY, DAY),
            Err(CardRefusal::Expired {
                question_id: "q1".into(),
                at: t0() + DAY
            })
        );
        assert_eq!(open_cards(&s, t0() + DAY, DAY).count(), 0);
        assert_eq!(open_cards(&s, t0(), DAY).count(), 1);
    }

    proptest! {
        /// However many cards are shown and answered, the record stays
        /// bounded, the newest card is always kept, and a card is never
        /// submittable twice.
        #[test]
        fn the_record_is_bounded_and_answers_once(
            events in prop::collection::vec((0u8..80, any::<bool>()), 1..300)
        ) {
            let mut s = SessionState::default();
            for (i, (q, submit)) in events.iter().enumerate() {
                let now = t0() + Duration::seconds(i as i64);
                let id = format!("q{q}");
                record_shown(&mut s, &id, now);
                prop_assert!(s.exam_cards.len() <= CARDS_KEPT);
                prop_assert_eq!(&s.exam_cards.last().unwrap().question_id, &id);
                prop_assert!(check_submission(&s, &id, now, DAY).is_ok());
                if *submit {
                    record_submitted(&mut s, &id, now);
                    prop_assert!(check_submission(&s, &id, now, DAY).is_err());
                }
            }
        }
    }
}
