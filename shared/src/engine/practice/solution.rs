//! What the tutor may say about how a pending item is solved: the next
//! step as a hint, all the steps as an explanation, the question shown
//! another way, and what is wrong with a mistaken answer. These are the
//! calls the question lifecycle makes at each phase, and what an LLM is
//! given as context.
//!
//! The final answer is kept apart: every text here may be shown while the
//! item is pending except [`Solution::worked`] and [`Solution::answer`],
//! which are for once the question is over. A step that works out the
//! answer is only ever offered with its result left open.

use serde::Serialize;

use super::generate::Item;
use super::worked::ItemRepresentation;
use crate::content::course::MistakeTag;
use crate::content::workflow::GradingSettings;
use crate::engine::grading;
use crate::model::{AnswerKind, ExpectedAnswer, GradeOutcome, KnownMistake};

/// One step of a solution, as it may be used while the item is pending.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HintStep {
    /// The step with its result left open, as a smaller question to ask:
    /// `Ones: 2 - 8 can't be done, so borrow a ten: 12 - 8 = ?`.
    pub ask: String,
    /// The step told in full, or (for the step that works out the answer)
    /// the same open text as `ask`: never the answer.
    pub tell: String,
    /// What `ask` expects, to grade the student's reply to the smaller
    /// question; `None` for the step that works out the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expects: Option<String>,
    /// The same step asked smaller still, for a student stuck on `ask`:
    /// just its arithmetic (`What is 11 - 3?`). It works out to `expects`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smaller: Option<String>,
}

/// An item's solution: its steps and representations, and its answer
/// kept apart. Built from a generated item or from authored steps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Solution {
    steps: Vec<SolutionStep>,
    representations: Vec<ItemRepresentation>,
    #[serde(skip)]
    answer: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
struct SolutionStep {
    hint: HintStep,
    /// The step in full, answer included.
    #[serde(skip)]
    worked: String,
}

impl Solution {
    /// The solution of a generated item, with its own numbers.
    pub fn of_item(item: &Item) -> Self {
        let steps = item
            .steps
            .iter()
            .map(|s| SolutionStep {
                hint: HintStep {
                    ask: s.open.clone(),
                    tell: s.answer_free().to_owned(),
                    expects: (!s.gives_answer).then(|| s.value.clone()),
                    smaller: None,
                },
                worked: s.text.clone(),
            })
            .collect();
        Solution {
            steps,
            representations: item.representations.clone(),
            answer: item.answer.text.clone(),
        }
    }

    /// The solution of an authored exam question or problem: its steps
    /// lead up to the answer and never state it (validation sees to that).
    pub fn authored(steps: &[String], answer: &str) -> Self {
        let steps = steps
            .iter()
            .map(|s| SolutionStep {
                hint: HintStep {
                    ask: s.clone(),
                    tell: s.clone(),
                    expects: None,
                    smaller: None,
                },
                worked: s.clone(),
            })
            .collect();
        Solution {
            steps,
            representations: Vec::new(),
            answer: answer.to_owned(),
        }
    }

    /// The solution of a problem the student brought, worked by code:
    /// each step as it may be offered (`hint`) with its full text, answer
    /// included (`worked`).
    pub fn worked_by_code(steps: Vec<(HintStep, String)>, answer: &str) -> Self {
        Solution {
            steps: steps
                .into_iter()
                .map(|(hint, worked)| SolutionStep { hint, worked })
                .collect(),
            representations: Vec::new(),
            answer: answer.to_owned(),
        }
    }

    /// The steps that may be given as hints, in order: all but the step
    /// that works out the answer (which, open, says only "= ?"). A
    /// one-step solution's only step is a hint too, left open.
    pub fn hints(&self) -> Vec<&HintStep> {
        let last = self.steps.len().saturating_sub(1);
        self.steps
            .iter()
            .enumerate()
            .filter(|(i, s)| *i < last || self.steps.len() == 1 || s.hint.expects.is_some())
            .map(|(_, s)| &s.hint)
            .collect()
    }

    /// The `n`th hint (0 for the first), or `None` when there are no more.
    pub fn hint(&self, n: usize) -> Option<&HintStep> {
        self.hints().into_iter().nth(n)
    }

    /// The hints whose results the student has already given in one of
    /// `answers`: a student who answered 8 to 2x + 3 = 11 has done the
    /// subtraction, so the hint to give is the division.
    pub fn done(&self, answers: &[String], settings: &GradingSettings) -> Vec<&HintStep> {
        let given = |value: &str| {
            let expected = ExpectedAnswer {
                kind: AnswerKind::Number,
                value: value.to_owned(),
                unit: None,
                options: Vec::new(),
                mistakes: Vec::new(),
            };
            answers.iter().any(|a| {
                grading::grade(&expected, a, None, settings).result == GradeOutcome::Correct
            })
        };
        self.hints()
            .into_iter()
            .filter(|h| h.expects.as_deref().is_some_and(given))
            .collect()
    }

    /// Every step as it may be shown while the item is pending, in order.
    pub fn open_steps(&self) -> impl Iterator<Item = &HintStep> {
        self.steps.iter().map(|s| &s.hint)
    }

    /// Every step, the one that works out the answer left open: for the
    /// explain phase and for an LLM's context while the item is pending.
    pub fn walkthrough(&self) -> Vec<&str> {
        self.steps.iter().map(|s| s.hint.tell.as_str()).collect()
    }

    /// The question shown another way (0 for the first), for a student
    /// the steps did not help.
    pub fn representation(&self, n: usize) -> Option<&ItemRepresentation> {
        self.representations.get(n)
    }

    pub fn representations(&self) -> &[ItemRepresentation] {
        &self.representations
    }

    /// Every step in full, answer included: only once the question is over.
    pub fn worked(&self) -> Vec<&str> {
        self.steps.iter().map(|s| s.worked.as_str()).collect()
    }

    /// The answer: only once the question is over.
    pub fn answer(&self) -> &str {
        &self.answer
    }
}

/// The `attempt_no`th hint of a generated item (0 for the first), with
/// the item's own numbers; `None` once there are no more.
pub fn hint_for(item: &Item, attempt_no: usize) -> Option<HintStep> {
    Solution::of_item(item).hint(attempt_no).cloned()
}

/// What the tutor says about a mistake a student made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MistakeExplanation {
    /// How the mistake is made (the blueprint's strategy).
    pub strategy: String,
    /// The unit's mistake tag, when the mistake has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mistake_tag: Option<String>,
    /// The unit's words for the student: why it goes wrong, what to do.
    pub explain: String,
}

/// The explanation of the mistake `answer` comes from, if it is one the
/// question knows (`expected.mistakes`) and its unit explains. Right
/// answers, and wrong or near ones no known mistake gives, have none.
pub fn explain_mistake(
    expected: &ExpectedAnswer,
    answer: &str,
    unit_tags: &[MistakeTag],
    settings: &GradingSettings,
) -> Option<MistakeExplanation> {
    let mistake = grading::known_mistake(expected, answer, settings)?;
    // 14/12 for 7/6 is worth the answer but is the unsimplified mistake
    // when a drill asks for the simplest form: written as the mistake
    // writes it, it is that mistake.
    let as_written = mistake.value.trim() == answer.trim();
    let right = grading::grade(expected, answer, None, settings).result == GradeOutcome::Correct;
    if right && !as_written {
        return None;
    }
    explanation_of(mistake, unit_tags)
}

/// The explanation of a mistake grading has already named.
pub fn explanation_of(
    mistake: &KnownMistake,
    unit_tags: &[MistakeTag],
) -> Option<MistakeExplanation> {
    let tag = mistake.mistake_tag.as_deref()?;
    let explain = unit_tags
        .iter()
        .find(|t| t.id == tag)
        .map(|t| t.explain.trim())
        .filter(|e| !e.is_empty())?;
    Some(MistakeExplanation {
        strategy: mistake.strategy.clone(),
        mistake_tag: Some(tag.to_owned()),
        explain: explain.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::practice::worked::WorkedStep;

    fn step(text: &str, open: &str, value: &str, gives_answer: bool) -> WorkedStep {
        WorkedStep {
            text: text.into(),
            open: open.into(),
            value: value.into(),
            number: None,
            gives_answer,
        }
    }

    fn solution() -> Solution {
        Solution {
            steps: [
                step(
                    "Subtract 3 from both sides: 2x = 8",
                    "Subtract 3 from both sides: 2x = ?",
                    "8",
                    false,
                ),
                step(
                    "Divide both sides by 2: x = 4",
                    "Divide both sides by 2: x = ?",
                    "4",
                    true,
                ),
            ]
            .iter()
            .map(|s| SolutionStep {
                hint: HintStep {
                    ask: s.open.clone(),
                    tell: s.answer_free().to_owned(),
                    expects: (!s.gives_answer).then(|| s.value.clone()),
                    smaller: None,
                },
                worked: s.text.clone(),
            })
            .collect(),
            representations: Vec::new(),
            answer: "x = 4".into(),
        }
    }

    #[test]
    fn hints_stop_before_the_step_that_gives_the_answer() {
        let s = solution();
        let first = s.hint(0).expect("a hint");
        assert_eq!(first.ask, "Subtract 3 from both sides: 2x = ?");
        assert_eq!(first.tell, "Subtract 3 from both sides: 2x = 8");
        assert_eq!(first.expects.as_deref(), Some("8"));
        assert_eq!(s.hint(1), None, "the open last step is no hint");
        assert_eq!(
            s.walkthrough(),
            [
                "Subtract 3 from both sides: 2x = 8",
                "Divide both sides by 2: x = ?"
            ]
        );
        assert_eq!(s.worked()[1], "Divide both sides by 2: x = 4");
        let shown = serde_json::to_string(&s).unwrap();
        assert!(!shown.contains("x = 4"), "{shown}");
    }

    #[test]
    fn a_step_is_done_once_its_result_is_among_the_answers() {
        let s = solution();
        let settings = GradingSettings::default();
        assert!(s.done(&["5".into()], &settings).is_empty());
        assert_eq!(
            s.done(&["2x = 8".into(), "8".into()], &settings),
            [s.hint(0).unwrap()]
        );
    }

    #[test]
    fn an_authored_solution_hints_every_step_but_the_last() {
        let steps = [
            "Undo the + 3 first".to_owned(),
            "Then undo the 2 ×".to_owned(),
        ];
        let s = Solution::authored(&steps, "x = 4");
        assert_eq!(
            s.hint(0).map(|h| h.tell.as_str()),
            Some("Undo the + 3 first")
        );
        assert_eq!(s.hint(1), None);
        let one = Solution::authored(&steps[..1], "x = 4");
        assert_eq!(
            one.hint(0).map(|h| h.ask.as_str()),
            Some("Undo the + 3 first")
        );
        assert_eq!(one.answer(), "x = 4");
    }

    #[test]
    fn a_mistake_is_explained_in_the_units_words() {
        let tags = [MistakeTag {
            id: "wrong_operation".into(),
            description: "Added instead of subtracting".into(),
            explain: "Check the sign in the question.".into(),
        }];
        let expected = ExpectedAnswer {
            kind: AnswerKind::Number,
            value: "15".into(),
            unit: None,
            options: Vec::new(),
            mistakes: vec![KnownMistake {
                value: "137".into(),
                strategy: "wrong_operation".into(),
                mistake_tag: Some("wrong_operation".into()),
                slip: false,
            }],
        };
        let settings = GradingSettings::default();
        let explained = explain_mistake(&expected, "137", &tags, &settings).expect("explained");
        assert_eq!(explained.explain, "Check the sign in the question.");
        assert_eq!(explained.mistake_tag.as_deref(), Some("wrong_operation"));
        assert_eq!(explain_mistake(&expected, "15", &tags, &settings), None);
        assert_eq!(explain_mistake(&expected, "40", &tags, &settings), None);
        assert_eq!(explain_mistake(&expected, "137", &[], &settings), None);
    }
}
