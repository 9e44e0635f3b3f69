//! What one conversation did: its answers, the help it gave and what was
//! learned in it. A right answer after a wrong try or after help (a hint, a
//! concept card, "I'm stuck") is learning, not a miss; the course-wide record
//! lives in the snapshot.

use crate::model::{ThreadLearning, UnitLearning};

/// The record of `unit_id`; `None` for the empty id of a caller's own
/// problem that belongs to no unit (its mode's report counts it).
fn unit<'a>(learning: &'a mut ThreadLearning, unit_id: &str) -> Option<&'a mut UnitLearning> {
    if unit_id.is_empty() {
        return None;
    }
    let at = match learning.units.iter().position(|u| u.unit_id == unit_id) {
        Some(at) => at,
        None => {
            learning.units.push(UnitLearning {
                unit_id: unit_id.to_owned(),
                ..UnitLearning::default()
            });
            learning.units.len() - 1
        }
    };
    Some(&mut learning.units[at])
}

/// One graded answer on `unit_id`. An answer to a question already answered
/// (`repeat`) counts only when it puts a wrong answer right.
pub fn record_answer(
    learning: &mut ThreadLearning,
    unit_id: &str,
    correct: bool,
    repeat: bool,
    mistake_tag: Option<&str>,
) {
    let Some(u) = unit(learning, unit_id) else {
        return;
    };
    if repeat && !(correct && u.not_yet_right) {
        return;
    }
    if correct {
        if u.not_yet_right || u.helped_since_answer {
            u.learned += 1;
        } else {
            u.right_first_time += 1;
        }
        u.not_yet_right = false;
    } else {
        u.wrong_answers += 1;
        u.not_yet_right = true;
        if let Some(tag) = mistake_tag
            && !u.mistake_tags.iter().any(|t| t == tag)
        {
            u.mistake_tags.push(tag.to_owned());
        }
    }
    u.helped_since_answer = false;
}

/// A hint, a concept card, "I'm stuck" or an opened exam memo or video on
/// `unit_id`.
pub fn record_help(learning: &mut ThreadLearning, unit_id: &str) {
    let Some(u) = unit(learning, unit_id) else {
        return;
    };
    u.help += 1;
    u.helped_since_answer = true;
}

/// One reply of the tutor about `unit_id`.
pub fn record_reply(learning: &mut ThreadLearning, unit_id: &str) {
    if let Some(u) = unit(learning, unit_id) {
        u.replies += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of<'a>(learning: &'a ThreadLearning, id: &str) -> &'a UnitLearning {
        learning.units.iter().find(|u| u.unit_id == id).unwrap()
    }

    #[test]
    fn wrong_then_help_then_right_is_learned() {
        let mut l = ThreadLearning::default();
        record_answer(&mut l, "u", false, false, Some("borrow"));
        record_help(&mut l, "u");
        record_answer(&mut l, "u", true, false, None);
        let u = of(&l, "u");
        assert_eq!((u.right_first_time, u.learned, u.wrong_answers), (0, 1, 1));
        assert!(!u.not_yet_right);
        assert_eq!(u.mistake_tags, ["borrow"]);
    }

    #[test]
    fn right_after_help_alone_is_learned_and_right_later_is_first_time() {
        let mut l = ThreadLearning::default();
        record_help(&mut l, "u");
        record_answer(&mut l, "u", true, false, None);
        record_answer(&mut l, "u", true, false, None);
        let u = of(&l, "u");
        assert_eq!((u.learned, u.right_first_time, u.help), (1, 1, 1));
    }

    #[test]
    fn a_repeated_answer_counts_only_when_it_puts_a_wrong_one_right() {
        let mut l = ThreadLearning::default();
        record_answer(&mut l, "u", true, false, None);
        record_answer(&mut l, "u", true, true, None);
        record_answer(&mut l, "u", false, false, None);
        record_answer(&mut l, "u", false, true, None);
        record_answer(&mut l, "u", true, true, None);
        let u = of(&l, "u");
        assert_eq!((u.right_first_time, u.wrong_answers, u.learned), (1, 1, 1));
        assert!(!u.not_yet_right);
    }

    #[test]
    fn a_problem_of_no_unit_is_not_recorded_as_a_unit() {
        let mut l = ThreadLearning::default();
        record_answer(&mut l, "", true, false, None);
        record_help(&mut l, "");
        assert!(l.units.is_empty(), "{:?}", l.units);
    }

    #[test]
    fn a_wrong_answer_stays_open_until_put_right_and_units_are_apart() {
        let mut l = ThreadLearning::default();
        record_answer(&mut l, "a", false, false, Some("t"));
        record_answer(&mut l, "a", false, false, Some("t"));
        record_answer(&mut l, "b", true, false, None);
        assert!(of(&l, "a").not_yet_right);
        assert_eq!(of(&l, "a").mistake_tags, ["t"]);
        assert_eq!(of(&l, "b").right_first_time, 1);
        assert_eq!(
            l.units
                .iter()
                .map(|u| u.unit_id.as_str())
                .collect::<Vec<_>>(),
            ["a", "b"]
        );
    }
}
