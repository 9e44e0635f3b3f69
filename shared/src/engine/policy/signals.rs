//! The dynamic signals for the tutor prompt: the pacing directive
//! (TURN 1 / ACCELERATE / EXTEND / SIMPLIFY / CONSOLIDATE / STEADY) from
//! mastery and trend, and the student's style (QUIET / moderate /
//! expressive, with disengagement) from how they write. Thresholds come
//! from the workflow's `pacing` and `style` sections.

use serde::Serialize;

use crate::content::workflow::{PacingSettings, StyleSettings};
pub use crate::model::Trend;
use crate::model::{GradeOutcome, PacingDirective, StudentStyle, Verbosity};

impl Trend {
    /// The trend of graded answers, oldest first: the share of right
    /// answers (close counts half) in the newer half of the last
    /// `trend_window` against the older half. Unverifiable ones are skipped.
    pub fn from_outcomes(outcomes: &[GradeOutcome], settings: &PacingSettings) -> Trend {
        let scores: Vec<f64> = outcomes
            .iter()
            .filter_map(|o| match o {
                GradeOutcome::Correct => Some(1.0),
                GradeOutcome::Close => Some(0.5),
                GradeOutcome::Wrong => Some(0.0),
                GradeOutcome::Unverifiable => None,
            })
            .collect();
        let window = &scores[scores.len().saturating_sub(settings.trend_window as usize)..];
        if window.len() < 2 {
            return Trend::Steady;
        }
        let (older, newer) = window.split_at(window.len() / 2);
        let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
        let change = mean(newer) - mean(older);
        if change > settings.trend_margin {
            Trend::Improving
        } else if change < -settings.trend_margin {
            Trend::Declining
        } else {
            Trend::Steady
        }
    }
}

/// What the pacing directive is computed from.
#[derive(Debug, Clone, Copy)]
pub struct PacingInput<'a> {
    /// This turn's number in the session, from 1.
    pub turn_number: u32,
    /// Mastery estimates per concept, each in [0, 1].
    pub mastery: &'a [f64],
    pub trend: Trend,
    /// Wrong answers in the current step (or the recent ones).
    pub recent_wrong: u32,
    /// Struggling by another measure (e.g. a question in its explain phase).
    pub struggling: bool,
    /// The study plan is complete.
    pub plan_complete: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pacing {
    pub directive: PacingDirective,
    pub reason: String,
}

/// The pacing table, its rows tried in order (first match wins). EXTEND
/// comes before ACCELERATE: once the plan is complete there are no steps
/// left to skip.
pub fn pacing(input: &PacingInput, settings: &PacingSettings) -> Pacing {
    let decide = |directive, reason: String| Pacing { directive, reason };
    if input.turn_number <= 1 {
        return decide(PacingDirective::TurnOne, "the first turn".to_owned());
    }
    let known = !input.mastery.is_empty();
    let average = if known {
        input.mastery.iter().sum::<f64>() / input.mastery.len() as f64
    } else {
        0.0
    };
    let fast_share = if known {
        input
            .mastery
            .iter()
            .filter(|m| **m >= settings.fast_track_mastery)
            .count() as f64
            / input.mastery.len() as f64
    } else {
        0.0
    };
    let improving = input.trend == Trend::Improving;
    if known && input.plan_complete && average >= settings.accelerate_min_mastery {
        return decide(
            PacingDirective::Extend,
            format!("the plan is complete with average mastery {average:.2}"),
        );
    }
    if known && improving && average >= settings.accelerate_min_mastery {
        return decide(
            PacingDirective::Accelerate,
            format!("average mastery {average:.2} and improving"),
        );
    }
    if known && improving && fast_share >= settings.fast_track_share {
        return decide(
            PacingDirective::Accelerate,
            format!(
                "fast track: {:.0}% of concepts at {} or more, and improving",
                fast_share * 100.0,
                settings.fast_track_mastery
            ),
        );
    }
    if input.struggling || input.trend == Trend::Declining {
        return decide(PacingDirective::Simplify, "struggling".to_owned());
    }
    if known && average < settings.simplify_max_mastery {
        return decide(
            PacingDirective::Simplify,
            format!("average mastery {average:.2} is low"),
        );
    }
    let consolidating =
        (settings.consolidate_min_mastery..=settings.consolidate_max_mastery).contains(&average);
    if known
        && consolidating
        && input.recent_wrong >= settings.consolidate_min_wrong
        && input.trend == Trend::Steady
    {
        return decide(
            PacingDirective::Consolidate,
            format!(
                "average mastery {average:.2} with {} wrong answers and a steady trend",
                input.recent_wrong
            ),
        );
    }
    decide(
        PacingDirective::Steady,
        "nothing calls for a change".to_owned(),
    )
}

/// How the student writes (for the prompt), with the measurements behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StyleReading {
    pub style: StudentStyle,
    pub average_words: f64,
    /// Share of messages that ask something.
    pub question_share: f64,
}

/// Share of asking messages above which the student "asks questions".
const ASKS_QUESTIONS_SHARE: f64 = 0.3;

fn word_count(message: &str) -> usize {
    message
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count()
}

fn is_emoji(c: char) -> bool {
    matches!(c as u32, 0x1F300..=0x1FAFF | 0x2600..=0x27BF | 0x1F000..=0x1F2FF)
}

/// The style of the student's recent messages, oldest first.
pub fn student_style(messages: &[&str], settings: &StyleSettings) -> StyleReading {
    let counts: Vec<usize> = messages.iter().map(|m| word_count(m)).collect();
    let average_words = if counts.is_empty() {
        0.0
    } else {
        counts.iter().sum::<usize>() as f64 / counts.len() as f64
    };
    let level = if average_words <= settings.quiet_max_words {
        Verbosity::Quiet
    } else if average_words >= settings.expressive_min_words {
        Verbosity::Expressive
    } else {
        Verbosity::Moderate
    };
    let window = settings.disengagement_window.max(2) as usize;
    let disengaged = counts.len() >= window && {
        let recent = &counts[counts.len() - window..];
        let (first, last) = (recent[0] as f64, recent[window - 1]);
        (last as f64) < settings.disengagement_ratio * first
            && last <= settings.disengagement_max_words as usize
    };
    let asking = messages.iter().filter(|m| m.contains('?')).count();
    let question_share = if messages.is_empty() {
        0.0
    } else {
        asking as f64 / messages.len() as f64
    };
    StyleReading {
        style: StudentStyle {
            verbosity: level,
            disengaged,
            uses_emoji: messages.iter().any(|m| m.chars().any(is_emoji)),
            asks_questions: question_share >= ASKS_QUESTIONS_SHARE,
        },
        average_words,
        question_share,
    }
}
