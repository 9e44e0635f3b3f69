//! What the scripted student answers when a script asks for a correct,
//! close or wrong answer rather than writing one: found by grading.

use tutorflow::content::workflow::GradingSettings;
use tutorflow::engine::practice::drill::{self, Expected};
use tutorflow::engine::practice::drill_grade::{self, grade_drill};
use tutorflow::engine::practice::drill_token;
use tutorflow::engine::practice::generate::generate;
use tutorflow::model::{ExamItemSource, GradeOutcome, ModeState};

use super::deployment::DRILL_SECRET;
use super::{Simulation, StepError};
use crate::script::{Answer, Step};

/// Answers tried, after a drill's own distractors, for a wrong answer.
const WRONG_GUESSES: [&str; 4] = ["999", "0", "-1", "x = 999"];

impl Simulation<'_> {
    /// The text a student answers the last drill card with.
    pub(super) fn drill_answer(&self, step: &Step, answer: &Answer) -> Result<String, StepError> {
        if let Answer::Text(text) = answer {
            return Ok(text.clone());
        }
        let (_, expected) = self.last_drill_expected(step)?;
        self.answer_to(step, &expected, answer, "drill")
    }

    /// An answer of the kind asked for to `expected`, found by grading.
    fn answer_to(
        &self,
        step: &Step,
        expected: &Expected,
        answer: &Answer,
        what: &str,
    ) -> Result<String, StepError> {
        let grading = &self.grading;
        let (found, kind) = match answer {
            Answer::Text(text) => return Ok(text.clone()),
            Answer::Correct => (
                Some(correct_answer(expected))
                    .filter(|a| grade_drill(expected, a, grading).outcome == GradeOutcome::Correct),
                "correct",
            ),
            Answer::Wrong => (wrong_answer(expected, grading), "wrong"),
            Answer::Close => (close_answer(expected, grading), "close"),
        };
        found.ok_or_else(|| {
            self.error(
                step,
                format!(
                    "cannot make a {kind} answer for this {what} (write the answer text instead)"
                ),
            )
        })
    }

    /// An answer to the exam question on screen, read from the thread's
    /// state (the API never shows it).
    pub(super) async fn exam_answer(
        &self,
        step: &Step,
        answer: &Answer,
    ) -> Result<String, StepError> {
        if let Answer::Text(text) = answer {
            return Ok(text.clone());
        }
        let record = self
            .store
            .get_thread(&self.thread_id, 0)
            .await
            .map_err(|e| self.error(step, format!("cannot read the thread: {e}")))?
            .ok_or_else(|| self.error(step, "the thread is gone"))?;
        let ModeState::Exam(exam) = record.thread.session.mode_state else {
            return Err(self.error(step, "the thread is not an exam"));
        };
        let question = exam
            .questions
            .get(exam.current_index as usize)
            .filter(|_| !exam.finished())
            .ok_or_else(|| self.error(step, "the exam has no question on screen"))?;
        let expected = match &question.source {
            ExamItemSource::Blueprint {
                blueprint_id,
                seed,
                target_difficulty,
            } => {
                let blueprint = self.bundle.blueprints.get(blueprint_id).ok_or_else(|| {
                    self.error(step, format!("blueprint `{blueprint_id}` is gone"))
                })?;
                let item = generate(blueprint, *target_difficulty, *seed)
                    .map_err(|e| self.error(step, e.to_string()))?;
                Expected::Generated(Box::new(item))
            }
            ExamItemSource::Bank { .. } => Expected::Authored {
                prompt: question.prompt.clone(),
                question_latex: String::new(),
                expected_answer: question.expected.value.clone(),
            },
        };
        if let (ExamItemSource::Bank { .. }, Answer::Wrong) = (&question.source, answer) {
            let right = &question.expected.value;
            return question
                .options
                .iter()
                .find(|o| *o != right)
                .cloned()
                .ok_or_else(|| self.error(step, "the question has one option"));
        }
        self.answer_to(step, &expected, answer, "exam question")
    }

    /// The last drill card's token and what it expects, regenerated from
    /// the token as the drill-grade endpoint does.
    pub(super) fn last_drill_expected(&self, step: &Step) -> Result<(String, Expected), StepError> {
        let shown = self.last_drill.as_ref().ok_or_else(|| {
            self.error(
                step,
                format!(
                    "`{}` answers the last drill card, but the tutor has not shown one yet",
                    step.name()
                ),
            )
        })?;
        let token = shown
            .card
            .drill_token
            .clone()
            .ok_or_else(|| self.error(step, "the last drill card has no drill token"))?;
        // Checked as of when the card was shown: an expired token is the
        // API's to refuse, so a script can test that too.
        let verified = drill_token::verify(
            &token,
            &drill_token::TokenKeys::single(DRILL_SECRET.as_bytes())
                .map_err(|e| self.error(step, e.to_string()))?,
            &self.thread_id,
            shown.at,
            self.drill_ttl,
        )
        .map_err(|e| self.error(step, format!("the drill token does not verify: {e}")))?;
        let expected = drill::expected(&verified, &self.bundle.blueprints)
            .map_err(|e| self.error(step, e.to_string()))?;
        Ok((token, expected))
    }
}

/// What the grader compares a drill answer with.
fn correct_answer(expected: &Expected) -> String {
    match expected {
        Expected::Generated(item) => drill_grade::expected_answer(item).value,
        Expected::Authored {
            expected_answer, ..
        } => expected_answer.clone(),
    }
}

/// A number near the right answer that grades as close.
fn close_answer(expected: &Expected, grading: &GradingSettings) -> Option<String> {
    let value: f64 = correct_answer(expected).trim().parse().ok()?;
    [1.0, -1.0, 0.1 * value, -0.1 * value, 0.5, -0.5, 2.0]
        .into_iter()
        .map(|d| {
            let near = value + d;
            if near.fract() == 0.0 {
                format!("{}", near as i64)
            } else {
                format!("{near}")
            }
        })
        .find(|a| grade_drill(expected, a, grading).outcome == GradeOutcome::Close)
}

/// A wrong answer that grades as wrong (not close): a distractor with a
/// mistake tag if there is one, so the line shows the tag.
fn wrong_answer(expected: &Expected, grading: &GradingSettings) -> Option<String> {
    let mut candidates: Vec<String> = Vec::new();
    if let Expected::Generated(item) = expected {
        let (tagged, untagged): (Vec<_>, Vec<_>) = item
            .distractors
            .iter()
            .partition(|d| d.mistake_tag.is_some());
        candidates.extend(tagged.into_iter().chain(untagged).map(|d| d.text.clone()));
    }
    candidates.extend(WRONG_GUESSES.iter().map(|g| (*g).to_owned()));
    candidates
        .into_iter()
        .find(|c| grade_drill(expected, c, grading).outcome == GradeOutcome::Wrong)
}
