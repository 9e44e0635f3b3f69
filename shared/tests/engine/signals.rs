//! The dynamic signals, row by row: the pacing directive table and
//! the student style rules, with the shipped thresholds.

use tutorflow::content::workflow::{PacingSettings, StyleSettings};
use tutorflow::engine::policy::signals::{self, PacingInput, Trend};
use tutorflow::model::GradeOutcome::{self, *};
use tutorflow::model::{PacingDirective, Verbosity};

fn directive(
    turn_number: u32,
    mastery: &[f64],
    trend: Trend,
    recent_wrong: u32,
    struggling: bool,
    plan_complete: bool,
) -> PacingDirective {
    signals::pacing(
        &PacingInput {
            turn_number,
            mastery,
            trend,
            recent_wrong,
            struggling,
            plan_complete,
        },
        &PacingSettings::default(),
    )
    .directive
}

#[test]
fn pacing_table() {
    use PacingDirective::*;
    use Trend::{Declining, Improving, Steady as Flat};
    // TURN 1: the first turn, whatever else holds.
    assert_eq!(
        directive(1, &[0.9, 0.9], Improving, 0, false, false),
        TurnOne
    );
    // ACCELERATE: average mastery >= 0.8 and improving.
    assert_eq!(
        directive(5, &[0.8, 0.85], Improving, 0, false, false),
        Accelerate
    );
    assert_eq!(
        directive(5, &[0.8, 0.85], Flat, 0, false, false),
        Steady,
        "not improving"
    );
    // ... or the fast track: 60%+ of concepts at 0.7 or more, and improving.
    assert_eq!(
        directive(5, &[0.7, 0.75, 0.72, 0.1, 0.2], Improving, 0, false, false),
        Accelerate
    );
    assert_eq!(
        directive(5, &[0.7, 0.75, 0.1, 0.2, 0.3], Improving, 0, false, false),
        Steady,
        "only 40%"
    );
    // EXTEND: the plan is complete and aced.
    assert_eq!(
        directive(9, &[0.9, 0.95], Improving, 0, false, true),
        Extend
    );
    assert_eq!(
        directive(9, &[0.5, 0.6], Flat, 0, false, true),
        Steady,
        "complete, not aced"
    );
    // SIMPLIFY: average mastery below 0.4, or struggling.
    assert_eq!(directive(3, &[0.2, 0.3], Flat, 0, false, false), Simplify);
    assert_eq!(directive(3, &[0.6, 0.6], Flat, 0, true, false), Simplify);
    assert_eq!(
        directive(3, &[0.6, 0.6], Declining, 0, false, false),
        Simplify
    );
    // CONSOLIDATE: average 0.4 to 0.65, 2+ wrong, steady.
    assert_eq!(
        directive(4, &[0.5, 0.6], Flat, 2, false, false),
        Consolidate
    );
    assert_eq!(
        directive(4, &[0.5, 0.6], Flat, 1, false, false),
        Steady,
        "one wrong"
    );
    assert_eq!(
        directive(4, &[0.7, 0.7], Flat, 3, false, false),
        Steady,
        "above 0.65"
    );
    // STEADY: the default, also with no mastery known yet.
    assert_eq!(directive(2, &[], Flat, 0, false, false), Steady);
    assert_eq!(directive(2, &[0.5], Flat, 0, false, false), Steady);
}

#[test]
fn the_trend_compares_newer_answers_with_older_ones() {
    let settings = PacingSettings::default();
    let trend = |o: &[GradeOutcome]| Trend::from_outcomes(o, &settings);
    assert_eq!(
        trend(&[Wrong, Wrong, Wrong, Correct, Correct, Correct]),
        Trend::Improving
    );
    assert_eq!(
        trend(&[Correct, Correct, Correct, Wrong, Wrong, Close]),
        Trend::Declining
    );
    assert_eq!(trend(&[Correct, Wrong, Correct, Wrong]), Trend::Steady);
    assert_eq!(trend(&[Correct]), Trend::Steady);
    assert_eq!(
        trend(&[Wrong, Unverifiable, Unverifiable, Correct]),
        Trend::Improving,
        "unverifiable skipped"
    );
    // Only the last `trend_window` answers count.
    let old_failures = [Wrong; 20];
    let recent: Vec<GradeOutcome> = old_failures.iter().copied().chain([Correct; 6]).collect();
    assert_eq!(trend(&recent), Trend::Steady);
}

#[test]
fn student_style() {
    let settings = StyleSettings::default();
    let style = |m: &[&str]| signals::student_style(m, &settings);
    // QUIET: five words or fewer on average.
    let quiet = style(&["4", "idk", "ok so 7?"]);
    assert_eq!(quiet.style.verbosity, Verbosity::Quiet);
    let moderate = style(&[
        "I think it is 12 because three fours are twelve",
        "then I added the two parts together",
    ]);
    assert_eq!(moderate.style.verbosity, Verbosity::Moderate);
    let long = "I tried it a few different ways first I drew the number line and counted back seven then I moved three steps to the right and landed on minus four which matches";
    let expressive = style(&[long, long]);
    assert_eq!(expressive.style.verbosity, Verbosity::Expressive);
    // Emoji and questions.
    let chatty = style(&["is it 4? 🤔", "ok 👍"]);
    assert!(chatty.style.uses_emoji);
    assert_eq!(chatty.question_share, 0.5);
    assert!(chatty.style.asks_questions);
    assert!(!moderate.style.asks_questions);
    // Disengagement: over 4+ messages the last is under 40% of the first and at most 5 words.
    let fading = style(&[
        "I think you multiply both sides by two and then subtract",
        "then I get eight I think",
        "maybe 4",
        "ok",
    ]);
    assert!(fading.style.disengaged);
    let steady_short = style(&["4", "ok", "7", "no"]);
    assert!(
        !steady_short.style.disengaged,
        "always short is quiet, not fading"
    );
    let too_few = style(&[
        "I think you multiply both sides by two and then subtract",
        "ok",
    ]);
    assert!(!too_few.style.disengaged, "needs the window of 4 messages");
    assert_eq!(style(&[]).style.verbosity, Verbosity::Quiet);
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Style never panics on any text and its numbers stay meaningful.
        #[test]
        fn style_of_any_messages(messages in prop::collection::vec("\\PC{0,80}", 0..12)) {
            let refs: Vec<&str> = messages.iter().map(String::as_str).collect();
            let style = signals::student_style(&refs, &StyleSettings::default());
            prop_assert!(style.average_words >= 0.0);
            prop_assert!((0.0..=1.0).contains(&style.question_share));
        }

        /// Every mastery profile gets exactly one directive; the first turn is always TURN 1.
        #[test]
        fn pacing_of_any_profile(
            turn_number in 0u32..50,
            mastery in prop::collection::vec(0.0f64..=1.0, 0..10),
            trend in 0usize..3,
            recent_wrong in 0u32..6,
            struggling in any::<bool>(),
            plan_complete in any::<bool>(),
        ) {
            let trend = [Trend::Improving, Trend::Steady, Trend::Declining][trend];
            let pacing = signals::pacing(
                &PacingInput { turn_number, mastery: &mastery, trend, recent_wrong, struggling, plan_complete },
                &PacingSettings::default(),
            );
            if turn_number <= 1 {
                prop_assert_eq!(pacing.directive, PacingDirective::TurnOne);
            }
            prop_assert!(!pacing.reason.is_empty());
        }
    }
}
