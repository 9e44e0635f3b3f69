//! How a generated item is worked out: its steps, and the question shown
//! another way. Both are written from the blueprint's templates with the
//! item's own numbers, so a hint is about the item in front of the student.
//!
//! The answer stays separable. Each step knows whether its value is the
//! answer (or a part of it); [`answer_free`] gives the steps with such
//! values left open, which is all that may go into a prompt or a reply
//! while the item is pending.

use serde::Serialize;

use crate::content::blueprint::{Formula, Representation, STEP_RESULT, SolutionStep};
use crate::math::{Number, Rational, Value, evaluate};
use crate::text::mentions;
use crate::text::template::{Format, format_number};

/// What a step's open result is written as.
pub const OPEN: &str = "?";

/// One step of an item's worked solution.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkedStep {
    /// The step with its result: `Tens: 6 - 3 = 3`.
    pub text: String,
    /// The step with its result left open: `Tens: 6 - 3 = ?`.
    pub open: String,
    /// What the step works out, written as in `text`.
    pub value: String,
    /// The value exactly, to recognise a student's answer to the step.
    #[serde(skip)]
    pub number: Option<Rational>,
    /// The value is the answer or a part of it.
    pub gives_answer: bool,
}

impl WorkedStep {
    /// The step as it may be shown before the item is answered.
    pub fn answer_free(&self) -> &str {
        if self.gives_answer {
            &self.open
        } else {
            &self.text
        }
    }
}

/// The item's question in another form (a number line, an area model).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemRepresentation {
    pub kind: String,
    pub text: String,
}

/// The steps as they may be shown before the item is answered.
pub fn answer_free(steps: &[WorkedStep]) -> Vec<String> {
    steps.iter().map(|s| s.answer_free().to_owned()).collect()
}

fn holds(when: Option<&Formula>, lookup: &dyn Fn(&str) -> Option<Number>) -> Result<bool, String> {
    let Some(when) = when else { return Ok(true) };
    let expr = when
        .expr()
        .map_err(|e| format!("`{}` does not parse: {e}", when.text()))?;
    match evaluate(expr, lookup) {
        Ok(Value::Bool(b)) => Ok(b),
        Ok(Value::Num(_)) => Err(format!("`{}` is a number, not a condition", when.text())),
        Err(e) => Err(format!("`{}`: {e}", when.text())),
    }
}

/// Writes the steps that apply to these values. `answer` holds the
/// answer's value (or its parts, as in `26 r 2`).
pub fn render_steps(
    steps: &[SolutionStep],
    lookup: &dyn Fn(&str) -> Option<Number>,
    answer: &[Number],
) -> Result<Vec<WorkedStep>, String> {
    let mut out = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let which = || format!("step {}", i + 1);
        if !holds(step.when.as_ref(), lookup).map_err(|e| format!("{}: {e}", which()))? {
            continue;
        }
        let expr = step
            .value
            .expr()
            .map_err(|e| format!("{}: `{}` does not parse: {e}", which(), step.value.text()))?;
        let value = match evaluate(expr, lookup) {
            Ok(Value::Num(n)) => n,
            Ok(Value::Bool(_)) => {
                return Err(format!(
                    "{}: `{}` is a condition, not a number",
                    which(),
                    step.value.text()
                ));
            }
            Err(e) => return Err(format!("{}: `{}`: {e}", which(), step.value.text())),
        };
        let with_result = |name: &str| {
            if name == STEP_RESULT {
                Some(value)
            } else {
                lookup(name)
            }
        };
        let text = step
            .text
            .render(&with_result)
            .map_err(|e| format!("{}: {}", which(), e.0))?;
        let open = step
            .text
            .render_hiding(&with_result, STEP_RESULT, OPEN)
            .map_err(|e| format!("{}: {}", which(), e.0))?;
        let format = step.text.format_of(STEP_RESULT).unwrap_or(Format::Plain);
        let written = format_number(value, format).map_err(|e| format!("{}: {}", which(), e.0))?;
        out.push(WorkedStep {
            text,
            open,
            value: written,
            number: value.exact(),
            gives_answer: answer.iter().any(|a| a.approx_eq(value)),
        });
    }
    Ok(out)
}

/// A step before the last whose value merely equals the answer, where the
/// question already shows that number (`x + 5 = 10`: the 5 that is taken
/// away), hides nothing by being open: it is shown whole. The last step
/// always stays open.
pub fn show_what_the_question_shows(steps: &mut [WorkedStep], question: &[&str]) {
    let Some((_, before_last)) = steps.split_last_mut() else {
        return;
    };
    for step in before_last {
        if step.gives_answer && question.iter().any(|q| mentions(q, &step.value)) {
            step.gives_answer = false;
        }
    }
}

/// Writes the representations that apply to these values.
pub fn render_representations(
    representations: &[Representation],
    lookup: &dyn Fn(&str) -> Option<Number>,
) -> Result<Vec<ItemRepresentation>, String> {
    let mut out = Vec::new();
    for (i, r) in representations.iter().enumerate() {
        let which = || format!("representation {} (`{}`)", i + 1, r.kind);
        if !holds(r.when.as_ref(), lookup).map_err(|e| format!("{}: {e}", which()))? {
            continue;
        }
        let text = r
            .text
            .render(lookup)
            .map_err(|e| format!("{}: {}", which(), e.0))?;
        out.push(ItemRepresentation {
            kind: r.kind.clone(),
            text,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::template::Template;

    fn step(text: &str, value: &str, when: Option<&str>) -> SolutionStep {
        SolutionStep {
            text: Template::new(text),
            value: Formula::new(value),
            when: when.map(Formula::new),
        }
    }

    #[test]
    fn steps_follow_their_conditions_and_leave_the_answer_open() {
        let steps = [
            step(
                "Ones: {ao} - {bo} can't be done, so borrow a ten: {ao + 10} - {bo} = {result}",
                "ao + 10 - bo",
                Some("ao < bo"),
            ),
            step("Ones: {ao} - {bo} = {result}", "ao - bo", Some("ao >= bo")),
            step("Tens: {at - 1} - {bt} = {result}", "at - 1 - bt", None),
            step(
                "So the answer is {result}",
                "10 * (at - 1 - bt) + ao + 10 - bo",
                None,
            ),
        ];
        let values = |name: &str| {
            Some(Number::int(match name {
                "at" => 7,
                "ao" => 2,
                "bt" => 3,
                "bo" => 8,
                _ => return None,
            }))
        };
        let worked = render_steps(&steps, &values, &[Number::int(34)]).unwrap();
        let texts: Vec<&str> = worked.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "Ones: 2 - 8 can't be done, so borrow a ten: 12 - 8 = 4",
                "Tens: 6 - 3 = 3",
                "So the answer is 34"
            ]
        );
        assert_eq!(worked[0].value, "4");
        assert_eq!(worked[0].number, Some(Rational::integer(4)));
        assert!(!worked[0].gives_answer && worked[2].gives_answer);
        assert_eq!(
            answer_free(&worked),
            [
                "Ones: 2 - 8 can't be done, so borrow a ten: 12 - 8 = 4",
                "Tens: 6 - 3 = 3",
                "So the answer is ?"
            ]
        );
    }

    #[test]
    fn a_step_that_cannot_be_written_says_which() {
        let steps = [step("Half: {result:decimal}", "a / 3", None)];
        let err = render_steps(&steps, &|_| Some(Number::int(1)), &[]).unwrap_err();
        assert!(err.starts_with("step 1:"), "{err}");
        let fraction = [step("Half: {result:fraction}", "a / 2", None)];
        let worked = render_steps(&fraction, &|_| Some(Number::int(1)), &[]).unwrap();
        assert_eq!(
            worked[0].value, "1/2",
            "the value is written as the text writes it"
        );
    }
}
