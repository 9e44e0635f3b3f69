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

/// Share of right answers at which a unit counts as a strength.
const STRONG: f64 = 0.7;
/// Below this share a unit is worth reviewing.
const WEAK: f64 = 0.5;

fn summarize(input: &SummaryInput) -> LlmSessionSummary {
    let stats = &input.stats;
    let titles: Vec<&str> = stats.units.iter().map(|u| u.title.trim()).collect();
    let mut headline = if stats.questions_answered > 0 {
        format!(
            "You answered {} of {} questions correctly",
            stats.questions_correct.min(stats.questions_answered),
            stats.questions_answered
        )
    } else if titles.is_empty() {
        format!("Thanks for your session in {}", input.course_title.trim())
    } else {
        format!("You worked on {}", list(&titles))
    };
    if stats.steps_total > 0 {
        headline.push_str(&format!(
            " and completed {} of {} lesson steps",
            stats.steps_completed.min(stats.steps_total),
            stats.steps_total
        ));
    }
    headline.push('.');

    let share = |correct: u32, answered: u32| f64::from(correct) / f64::from(answered.max(1));
    let mut strengths = Vec::new();
    let mut to_review = Vec::new();
    for unit in &stats.units {
        let title = unit.title.trim();
        if unit.answered > 0 && share(unit.correct, unit.answered) >= STRONG {
            strengths.push(format!(
                "{title}: {} of {} right",
                unit.correct.min(unit.answered),
                unit.answered
            ));
        } else if unit.mastery_tier != MasteryTier::None {
            strengths.push(format!(
                "{title}: {} tier reached",
                unit.mastery_tier.as_str()
            ));
        }
        if unit.answered > 0 && share(unit.correct, unit.answered) < WEAK {
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

    let mut suggestions = Vec::new();
    if let Some(first) = to_review.first() {
        suggestions.push(format!("Review: {first}"));
    }
    if let Some(best) = stats
        .units
        .iter()
        .filter(|u| u.answered > 0 && share(u.correct, u.answered) >= STRONG)
        .max_by_key(|u| u.mastery_tier)
    {
        suggestions.push(match best.mastery_tier {
            MasteryTier::Gold => {
                format!("{} is mastered: ready for the next unit", best.title.trim())
            }
            _ => format!(
                "Try an exam question on {} to earn the next tier",
                best.title.trim()
            ),
        });
    }
    if suggestions.is_empty() {
        suggestions.push("Keep practising a little every day".to_owned());
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

    #[test]
    fn numbers_become_a_readable_summary() {
        let input = SummaryInput {
            course_title: "Pre-algebra".into(),
            transcript: vec![],
            stats: SessionStats {
                questions_answered: 5,
                questions_correct: 3,
                steps_completed: 2,
                steps_total: 4,
                units: vec![
                    UnitStat {
                        title: "Fractions".into(),
                        mastery_tier: MasteryTier::Bronze,
                        answered: 3,
                        correct: 3,
                    },
                    UnitStat {
                        title: "Decimals".into(),
                        mastery_tier: MasteryTier::None,
                        answered: 2,
                        correct: 0,
                    },
                ],
                misconceptions_seen: vec!["Adding denominators".into()],
                ..SessionStats::default()
            },
        };
        let summary = summarize(&input);
        assert_eq!(
            summary.headline,
            "You answered 3 of 5 questions correctly and completed 2 of 4 lesson steps."
        );
        assert_eq!(summary.strengths, vec!["Fractions: 3 of 3 right"]);
        assert_eq!(summary.to_review, vec!["Decimals", "Adding denominators"]);
        assert_eq!(summary.suggestions[0], "Review: Decimals");
        summary.check().unwrap();
    }

    #[test]
    fn an_empty_session_still_says_something_valid() {
        let input = SummaryInput {
            course_title: "Pre-algebra".into(),
            transcript: vec![],
            stats: SessionStats::default(),
        };
        let summary = summarize(&input);
        assert_eq!(summary.headline, "Thanks for your session in Pre-algebra.");
        summary.check().unwrap();
    }
}
