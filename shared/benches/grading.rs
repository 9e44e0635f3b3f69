//! Speed of `grade` over the case table (shared/tests/data/grading_cases.tsv)
//! and over single answers of each kind. Run with
//! `cargo bench -p tutorflow --bench grading`; the median per answer is the
//! table's median time divided by its number of cases.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tutorflow::content::workflow::GradingSettings;
use tutorflow::engine::grading;
use tutorflow::model::{AnswerKind, ExpectedAnswer};

const CASES: &str = include_str!("../tests/data/grading_cases.tsv");

struct Case {
    expected: ExpectedAnswer,
    answer: String,
    question: Option<String>,
}

fn kind(name: &str, value: &str, options: &[String]) -> AnswerKind {
    match name {
        "number" => AnswerKind::Number,
        "expression" => AnswerKind::Expression,
        "equation" => AnswerKind::Equation,
        "mcq" => AnswerKind::Mcq,
        "text" => AnswerKind::Text,
        _ => grading::infer_kind(value, options),
    }
}

fn cases() -> Vec<Case> {
    CASES
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let mut f: Vec<&str> = line.split('\t').collect();
            f.resize(8, "");
            let options: Vec<String> = f[4]
                .split('|')
                .filter(|o| !o.is_empty())
                .map(str::to_owned)
                .collect();
            Case {
                expected: ExpectedAnswer {
                    kind: kind(f[1], f[2], &options),
                    value: f[2].to_owned(),
                    unit: (!f[5].is_empty()).then(|| f[5].to_owned()),
                    options,
                    mistakes: Vec::new(),
                },
                answer: f[3].to_owned(),
                question: (!f[7].is_empty()).then(|| f[7].to_owned()),
            }
        })
        .collect()
}

fn single(kind: AnswerKind, value: &str, options: &[&str]) -> ExpectedAnswer {
    ExpectedAnswer {
        kind,
        value: value.to_owned(),
        unit: None,
        options: options.iter().map(|o| o.to_string()).collect(),
        mistakes: Vec::new(),
    }
}

fn bench(c: &mut Criterion) {
    let settings = GradingSettings::default();
    let cases = cases();
    let mut group = c.benchmark_group("grade");
    group.throughput(Throughput::Elements(cases.len() as u64));
    group.bench_function("case_table", |b| {
        b.iter(|| {
            for case in &cases {
                black_box(grading::grade(
                    &case.expected,
                    black_box(&case.answer),
                    case.question.as_deref(),
                    &settings,
                ));
            }
        })
    });
    group.finish();

    let hostile = ("(".repeat(60) + "x" + &")".repeat(60) + " ").repeat(15);
    let singles = [
        ("plain_number", single(AnswerKind::Number, "12", &[]), "12"),
        (
            "sentence_with_words",
            single(AnswerKind::Number, "9/2", &[]),
            "I think the answer is four and a half",
        ),
        (
            "latex",
            single(AnswerKind::Number, "9/2", &[]),
            r"so $\boxed{\dfrac{9}{2}}$",
        ),
        (
            "expression",
            single(AnswerKind::Expression, "x^2 + 2x + 1", &[]),
            "(x+1)(x+1)",
        ),
        (
            "equation",
            single(AnswerKind::Equation, "x = 4", &[]),
            "2x + 3 = 11 so x = 4",
        ),
        (
            "mcq",
            single(AnswerKind::Mcq, "B", &["$9", "$36", "$25", "$54"]),
            "I'd go with 36 dollars",
        ),
        (
            "hostile",
            single(AnswerKind::Expression, "x + 1", &[]),
            hostile.as_str(),
        ),
    ];
    let mut group = c.benchmark_group("grade_one");
    for (name, expected, answer) in &singles {
        group.bench_function(*name, |b| {
            b.iter(|| black_box(grading::grade(expected, black_box(answer), None, &settings)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
