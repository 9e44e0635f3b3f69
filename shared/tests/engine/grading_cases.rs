//! The table of (expected, answer, result) cases in data/grading_cases.tsv:
//! how students really answer, and what a maths teacher would mark.

use tutorflow::content::workflow::GradingSettings;
use tutorflow::engine::grading::{self, SlipTag};
use tutorflow::model::{AnswerKind, ExpectedAnswer, GradeOutcome};

const CASES: &str = include_str!("../data/grading_cases.tsv");

struct Case {
    line: usize,
    result: GradeOutcome,
    expected: ExpectedAnswer,
    answer: String,
    tags: Vec<SlipTag>,
    question: Option<String>,
}

fn parse_enum<T: serde::de::DeserializeOwned>(text: &str, line: usize) -> T {
    serde_json::from_value(serde_json::Value::String(text.to_owned()))
        .unwrap_or_else(|e| panic!("line {line}: `{text}`: {e}"))
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (n, raw) in CASES.lines().enumerate() {
        let line = n + 1;
        if raw.starts_with('#') || raw.trim().is_empty() {
            continue;
        }
        let mut fields: Vec<&str> = raw.split('\t').collect();
        assert!(fields.len() >= 3, "line {line}: too few fields");
        fields.resize(8, "");
        let options: Vec<String> = fields[4]
            .split('|')
            .filter(|o| !o.is_empty())
            .map(str::to_owned)
            .collect();
        let kind = if fields[1].is_empty() {
            grading::infer_kind(fields[2], &options)
        } else {
            parse_enum::<AnswerKind>(fields[1], line)
        };
        cases.push(Case {
            line,
            result: parse_enum(fields[0], line),
            expected: ExpectedAnswer {
                kind,
                value: fields[2].to_owned(),
                unit: (!fields[5].is_empty()).then(|| fields[5].to_owned()),
                options,
                mistakes: Vec::new(),
            },
            answer: fields[3].to_owned(),
            tags: fields[6]
                .split(',')
                .filter(|t| !t.is_empty())
                .map(|t| parse_enum(t, line))
                .collect(),
            question: (!fields[7].is_empty()).then(|| fields[7].to_owned()),
        });
    }
    cases
}

#[test]
fn the_table_is_large_and_covers_every_outcome() {
    let cases = cases();
    assert!(cases.len() >= 300, "only {} cases", cases.len());
    for outcome in [
        GradeOutcome::Correct,
        GradeOutcome::Close,
        GradeOutcome::Wrong,
        GradeOutcome::Unverifiable,
    ] {
        let n = cases.iter().filter(|c| c.result == outcome).count();
        assert!(n >= 20, "only {n} cases expect {outcome:?}");
    }
    for kind in [
        AnswerKind::Number,
        AnswerKind::Expression,
        AnswerKind::Equation,
        AnswerKind::Mcq,
    ] {
        assert!(cases.iter().filter(|c| c.expected.kind == kind).count() >= 20);
    }
}

#[test]
fn every_case_grades_as_a_teacher_would() {
    let settings = GradingSettings::default();
    let mut failures = Vec::new();
    let cases = cases();
    for case in &cases {
        let grade = grading::grade(
            &case.expected,
            &case.answer,
            case.question.as_deref(),
            &settings,
        );
        let mut tags = case.tags.clone();
        tags.sort();
        if grade.result != case.result || grade.tags != tags {
            failures.push(format!(
                "line {}: {:?} `{}` vs `{}`: expected {:?} {:?}, got {:?} {:?} ({})",
                case.line,
                case.expected.kind,
                case.expected.value,
                case.answer,
                case.result,
                tags,
                grade.result,
                grade.tags,
                grade.reason
            ));
        }
        if grade.result == GradeOutcome::Unverifiable {
            assert!(
                !grade.reason.is_empty(),
                "line {}: unverifiable without a reason",
                case.line
            );
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The shipped course: every exam question's correct option is recognised
/// by its text, its letter and its number; every other option is wrong; and
/// every problem-set answer grades correct against itself and as a bare value.
#[test]
fn the_shipped_course_grades_its_own_answers() {
    use std::path::PathBuf;
    use tutorflow::content::{Bundle, ContentSource, FsSource};

    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let files = runtime
        .block_on(FsSource::new(root).fetch())
        .expect("the repository holds a bundle");
    let bundle = Bundle::load(&files).unwrap_or_else(|d| panic!("{d}"));
    let settings = GradingSettings::default();
    let mut failures = Vec::new();
    let mut items = 0;
    for course in bundle.courses.values() {
        for unit in course.units.values() {
            for item in unit.exam.iter().filter(|q| !q.is_written()) {
                items += 1;
                let expected = ExpectedAnswer {
                    kind: AnswerKind::Mcq,
                    value: item.answer.clone(),
                    unit: None,
                    options: item.options.clone(),
                    mistakes: Vec::new(),
                };
                let correct = item.option_index(&item.answer).expect("validated");
                for (i, option) in item.options.iter().enumerate() {
                    let number = (i + 1).to_string();
                    let letter = ((b'a' + i as u8) as char).to_string();
                    for answer in [
                        option.as_str(),
                        letter.as_str(),
                        &format!("option {number}"),
                    ] {
                        let grade = grading::grade(&expected, answer, Some(&item.stem), &settings);
                        let want = if i == correct {
                            GradeOutcome::Correct
                        } else {
                            GradeOutcome::Wrong
                        };
                        if grade.result != want {
                            failures.push(format!(
                                "{} `{answer}`: {:?} ({})",
                                item.id, grade.result, grade.reason
                            ));
                        }
                    }
                }
            }
        }
        for set in &course.problem_sets {
            for problem in &set.problems {
                let expected = ExpectedAnswer {
                    kind: grading::infer_kind(&problem.answer, &[]),
                    value: problem.answer.clone(),
                    unit: None,
                    options: Vec::new(),
                    mistakes: Vec::new(),
                };
                let bare = problem
                    .answer
                    .rsplit('=')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_owned();
                for answer in [problem.answer.as_str(), bare.as_str()] {
                    let grade = grading::grade(&expected, answer, Some(&problem.text), &settings);
                    if grade.result != GradeOutcome::Correct {
                        failures.push(format!(
                            "{} `{answer}`: {:?} ({})",
                            problem.id, grade.result, grade.reason
                        ));
                    }
                }
            }
        }
    }
    assert!(items >= 50, "only {items} exam items");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
