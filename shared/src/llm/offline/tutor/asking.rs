//! The pending question as the tutor words it: asked again as a question,
//! its maths found in a passage or a step that would give it away or only
//! ask it again.

use crate::model::TutorTurnInput;

/// A pending question as the tutor asks it again: a problem the student
/// brought is stored bare (`47 + 38`, `2x + 3 = 11`) and is put as a
/// question.
pub(super) fn asked(question: &str) -> String {
    let text = question.trim();
    // A drill's prompt followed by its maths: a sentence already. A word
    // problem's sentences state every number of its plain sum, and the sum
    // beside them would tell the student which operation to do; LaTeX and
    // other maths are marked for the page to typeset.
    let sentence_end = [". ", "? ", "! "]
        .iter()
        .filter_map(|p| text.rfind(p))
        .max();
    if let Some(end) = sentence_end {
        let (sentence, maths) = text.split_at(end + 1);
        let maths = maths.trim();
        if is_bare_maths(maths) {
            let numbers = maths
                .split(|c: char| !(c.is_ascii_digit() || c == '.'))
                .map(|n| n.trim_matches('.'))
                .filter(|n| !n.is_empty());
            let stated = numbers.clone().all(|n| sentence_words_hold(sentence, n));
            // `10\% \text{ of } 80` typesets no better than the sentence's
            // "10% of 80"; a fraction or a times sign does.
            let typesets_better = maths
                .replace("\\%", "%")
                .replace("\\text{", "{")
                .contains('\\');
            return if stated && numbers.count() > 0 && !typesets_better {
                sentence.to_owned()
            } else {
                format!("{sentence} \\({maths}\\)")
            };
        }
    }
    // Sentences already: never wrapped in "What is …?".
    if text.ends_with(['?', '.', '!']) || sentence_end.is_some() {
        text.to_owned()
    } else if text.contains('=') {
        format!("Solve {text}.")
    } else {
        format!("What is {text}?")
    }
}

/// Maths with nothing in words: digits, signs, single letters and LaTeX
/// commands, not yet marked for typesetting.
fn is_bare_maths(text: &str) -> bool {
    if text.contains("\\(") || text.contains('$') || !text.contains(|c: char| c.is_ascii_digit()) {
        return false;
    }
    // Words inside `\text{…}` are part of the LaTeX ("10\% \text{ of } 360").
    let mut maths = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("\\text{") {
        maths.push_str(&rest[..start]);
        rest = &rest[start..];
        rest = rest.find('}').map_or("", |end| &rest[end + 1..]);
    }
    maths.push_str(rest);
    let mut words = maths.split(|c: char| !(c.is_alphabetic() || c == '\\'));
    words.all(|w| w.starts_with('\\') || w.chars().count() <= 1)
}

/// Whether `number` stands in `sentence` as a number of its own (60 in
/// "has 60 students", not in "160").
fn sentence_words_hold(sentence: &str, number: &str) -> bool {
    sentence
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .any(|n| n.trim_matches('.') == number)
}

/// Runs of math-looking tokens, e.g. `x-4=9` from "Solve x - 4 = 9.".
fn math_runs(text: &str) -> Vec<String> {
    let mathy = |token: &str| {
        token
            .chars()
            .any(|c| c.is_ascii_digit() || "=+-*/×÷^<>".contains(c))
            || (token.chars().count() == 1 && token.chars().all(char::is_alphabetic))
    };
    let mut runs = Vec::new();
    let mut current = String::new();
    for token in text.split_whitespace() {
        let token = token.trim_end_matches(['.', ',', '?', '!', ';', ':']);
        if mathy(token) {
            current.extend(token.chars().flat_map(char::to_lowercase));
        } else if !current.is_empty() {
            runs.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        runs.push(current);
    }
    runs.retain(|r| r.chars().count() >= 3 && r.chars().any(|c| c.is_ascii_digit()));
    runs
}

/// Whether `text` contains the mathematics of the pending question (so
/// quoting it could give the answer away). Compares the question's runs of
/// numbers, variables and operators, spaces ignored.
pub(super) fn overlaps_question(input: &TutorTurnInput, text: &str) -> bool {
    let Some(question) = &input.question else {
        return false;
    };
    let haystack: String = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    math_runs(&question.text)
        .iter()
        .any(|run| haystack.contains(run.as_str()))
}

/// Whether `step` only asks `question` again: it ends a question with the
/// question's maths ("Now put it together: what is (-3) × (-5)?"),
/// whichever sign for times or divide each uses. A step that only names
/// it ("Where do you start for -3 + 5?") asks something smaller.
pub(super) fn reasks(question: &str, step: &str) -> bool {
    let signs = |text: &str| -> String {
        text.chars()
            .filter(|c| !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .map(|c| match c {
                '×' | '*' => 'x',
                '÷' => '/',
                other => other,
            })
            .collect()
    };
    let step = signs(step);
    math_runs(question)
        .iter()
        .any(|run| step.contains(&format!("{}?", signs(run))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_problem_is_asked_without_its_sum() {
        assert_eq!(
            asked(
                "A school has 60 students. 24 of them go on a trip. How many students stay at school? 60 - 24"
            ),
            "A school has 60 students. 24 of them go on a trip. How many students stay at school?"
        );
        assert_eq!(
            asked("Round to the nearest ten. 347"),
            "Round to the nearest ten. \\(347\\)"
        );
    }

    #[test]
    fn a_bare_problem_is_asked_as_a_question() {
        assert_eq!(asked("47 + 38"), "What is 47 + 38?");
        assert_eq!(asked(" 2x + 3 = 11 "), "Solve 2x + 3 = 11.");
        assert_eq!(asked("What is 7 + 5?"), "What is 7 + 5?");
        assert_eq!(
            asked("Write 16/22 in its simplest form."),
            "Write 16/22 in its simplest form."
        );
        assert_eq!(
            asked("Simplify the fraction 6/14 as far as possible. \\frac{6}{14}"),
            "Simplify the fraction 6/14 as far as possible. \\(\\frac{6}{14}\\)"
        );
        assert_eq!(
            asked("Work out. 3.5 \\times 2"),
            "Work out. \\(3.5 \\times 2\\)"
        ); // Words in \text{} are LaTeX, and a question is never wrapped in
        // "What is …?" again.
        assert_eq!(
            asked("What is 10% of 360? 10\\% \\text{ of } 360"),
            "What is 10% of 360?"
        );
        assert_eq!(
            asked("Which is bigger? 3/4 or five eighths"),
            "Which is bigger? 3/4 or five eighths"
        );
    }

    #[test]
    fn math_runs_find_the_equation() {
        assert_eq!(math_runs("Solve x - 4 = 9."), vec!["x-4=9".to_owned()]);
        assert_eq!(math_runs("What is 3/4 + 1/8?"), vec!["3/4+1/8".to_owned()]);
        assert!(math_runs("Why do we divide?").is_empty());
    }
}
