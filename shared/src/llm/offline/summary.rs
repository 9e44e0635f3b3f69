//! The offline session summary: a headline, strengths, what to review and
//! next steps, from the session's numbers alone.

use async_trait::async_trait;

use super::offline;
use crate::model::{
    LlmError, LlmSessionSummary, MAX_REPLY_LIST, MasteryTier, Reply, Summarizer, SummaryInput,
};

#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineSummarizer;

#[async_trait]
impl Summarizer for OfflineSummarizer {
    async fn summarize(&self, input: &SummaryInput) -> Result<Reply<LlmSessionSummary>, LlmError> {
        Ok(offline(summarize(input)))
    }
}

fn plural(n: u32, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Speaks of this conversation only: its turns, its answers and what was
/// learned in it.
fn summarize(input: &SummaryInput) -> LlmSessionSummary {
    let stats = &input.stats;
    let titles: Vec<&str> = stats.units.iter().map(|u| u.title.trim()).collect();
    let wrong = stats
        .questions_answered
        .saturating_sub(stats.questions_correct + stats.questions_learned);
    let turns = plural(stats.turns, "turn", "turns");
    let headline = if stats.turns == 0 {
        format!(
            "This conversation in {} has just started: 0 turns and no questions answered yet.",
            input.course_title.trim()
        )
    } else if stats.questions_answered > 0 {
        let parts: Vec<String> = [
            (stats.questions_correct, "right first time"),
            (stats.questions_learned, "right after help or another try"),
            (wrong, "wrong"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        format!(
            "In this conversation ({turns}) you gave {}: {}.",
            plural(stats.questions_answered, "answer", "answers"),
            list(&parts)
        )
    } else if titles.is_empty() {
        format!("In this conversation ({turns}) you have not answered a question yet.")
    } else {
        format!(
            "In this conversation ({turns}) you worked on {}; no questions answered yet.",
            list(&titles)
        )
    };

    let mut strengths = Vec::new();
    let mut to_review = Vec::new();
    let mut suggestions = Vec::new();
    for unit in &stats.units {
        let title = unit.title.trim();
        if unit.learned > 0 {
            strengths.push(format!(
                "{title}: learned here ({} right after help or another try)",
                unit.learned
            ));
        } else if unit.correct > 0 && !unit.not_yet_right {
            strengths.push(format!("{title}: {} right first time", unit.correct));
        }
        if unit.not_yet_right {
            to_review.push(title.to_owned());
        }
    }
    to_review.extend(
        stats
            .misconceptions_seen
            .iter()
            .map(|m| m.trim().to_owned())
            .filter(|m| !m.is_empty()),
    );
    to_review.dedup();
    if let Some(first) = to_review.first() {
        suggestions.push(format!("Review: {first}"));
    }
    if let Some(learned) = stats
        .units
        .iter()
        .find(|u| u.learned > 0 && !u.not_yet_right)
    {
        suggestions.push(format!(
            "Try another {} question on your own to make it stick",
            learned.title.trim()
        ));
    }
    if let Some(best) = stats
        .units
        .iter()
        .filter(|u| u.correct + u.learned > 0 && !u.not_yet_right)
        .max_by_key(|u| u.mastery_tier)
        && best.mastery_tier == MasteryTier::Gold
    {
        suggestions.push(format!(
            "{} is mastered: ready for the next unit",
            best.title.trim()
        ));
    }
    if suggestions.is_empty() {
        suggestions.push(if stats.turns == 0 {
            "Ask a question or say what you want to learn to begin".to_owned()
        } else {
            "Keep practising a little every day".to_owned()
        });
    }
    for list in [&mut strengths, &mut to_review, &mut suggestions] {
        list.truncate(MAX_REPLY_LIST);
    }
    LlmSessionSummary {
        headline,
        strengths,
        to_review,
        suggestions,
    }
}

fn list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CheckReply, SessionStats, UnitStat};

    fn unit(title: &str, correct: u32, learned: u32, not_yet_right: bool) -> UnitStat {
        UnitStat {
            title: title.into(),
            mastery_tier: MasteryTier::None,
            answered: correct + learned + u32::from(not_yet_right),
            correct,
            learned,
            not_yet_right,
            help: 0,
        }
    }

    fn input(stats: SessionStats) -> SummaryInput {
        SummaryInput {
            course_title: "Pre-algebra".into(),
            transcript: vec![],
            stats,
        }
    }

    #[test]
    fn a_conversation_with_answers_reads_from_its_own_numbers() {
        let summary = summarize(&input(SessionStats {
            turns: 6,
            questions_answered: 4,
            questions_correct: 2,
            questions_learned: 1,
            units: vec![unit("Fractions", 2, 1, false), unit("Decimals", 0, 0, true)],
            misconceptions_seen: vec!["Adding denominators".into()],
            ..SessionStats::default()
        }));
        assert_eq!(
            summary.headline,
            "In this conversation (6 turns) you gave 4 answers: 2 right first time, \
             1 right after help or another try and 1 wrong."
        );
        assert_eq!(
            summary.strengths,
            vec!["Fractions: learned here (1 right after help or another try)"]
        );
        assert_eq!(summary.to_review, vec!["Decimals", "Adding denominators"]);
        assert_eq!(summary.suggestions[0], "Review: Decimals");
        summary.check().unwrap();
    }

    #[test]
    fn wrong_then_right_after_help_is_learned_not_a_miss() {
        let summary = summarize(&input(SessionStats {
            turns: 3,
            questions_answered: 2,
            questions_learned: 1,
            units: vec![unit("Whole numbers", 0, 1, false)],
            ..SessionStats::default()
        }));
        assert_eq!(
            summary.headline,
            "In this conversation (3 turns) you gave 2 answers: 1 right after help or another try and 1 wrong."
        );
        assert!(summary.to_review.is_empty(), "{summary:?}");
        assert!(!summary.headline.contains("0 of"), "{}", summary.headline);
    }

    #[test]
    fn a_new_conversation_speaks_of_zero_turns() {
        let summary = summarize(&input(SessionStats::default()));
        assert_eq!(
            summary.headline,
            "This conversation in Pre-algebra has just started: 0 turns and no questions answered yet."
        );
        summary.check().unwrap();
    }

    #[test]
    fn talk_without_answers_names_the_units() {
        let summary = summarize(&input(SessionStats {
            turns: 1,
            units: vec![unit("Ratios", 0, 0, false)],
            ..SessionStats::default()
        }));
        assert_eq!(
            summary.headline,
            "In this conversation (1 turn) you worked on Ratios; no questions answered yet."
        );
    }
}
