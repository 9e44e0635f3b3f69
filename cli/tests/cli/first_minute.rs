//! A new student's first messages, as a table: problems of their own in
//! many phrasings across every unit of the sample course, explanations in
//! words after a "why", and questions about maths outside the course. Each
//! row is a fresh student (`tutorflow simulate`, offline tutor); the table
//! asserts the category, the unit the tutor works in and the words the
//! reply must contain (for a problem: the student's own numbers).

use std::process::Command;

struct Row {
    /// Said first, when the row needs something to have happened.
    before: &'static [&'static str],
    say: &'static str,
    category: &'static str,
    /// The unit the reply is about (the policy's focus), when it is fixed.
    unit: Option<&'static str>,
    /// What the reply must say: the first entry is checked here (for a
    /// problem, the problem in the student's own numbers); the rest note
    /// the first step's words, which `student_math`'s tests check.
    says: &'static [&'static str],
}

const fn own(say: &'static str, unit: &'static str, says: &'static [&'static str]) -> Row {
    Row {
        before: &[],
        say,
        category: "own_problem",
        unit: Some(unit),
        says,
    }
}

/// The same problem brought while a drill is pending.
const fn own_over_drill(
    say: &'static str,
    unit: &'static str,
    says: &'static [&'static str],
) -> Row {
    Row {
        before: &["can I get a harder one"],
        say,
        category: "own_problem",
        unit: Some(unit),
        says,
    }
}

const fn beyond(say: &'static str, says: &'static [&'static str]) -> Row {
    Row {
        before: &[],
        say,
        category: "beyond_course",
        unit: None,
        says,
    }
}

const TABLE: &[Row] = &[
    // Whole numbers.
    own("what is 47 + 38?", "whole-numbers", &["47 + 38", "7 + 8"]),
    own(
        "how do I work out 72 - 38",
        "whole-numbers",
        &["72 - 38", "12 - 8"],
    ),
    own(
        "add 156 and 78 pls",
        "whole-numbers",
        &["156 + 78", "6 + 8"],
    ),
    own(
        "what's the sum of 245 and 67",
        "whole-numbers",
        &["245 + 67"],
    ),
    own(
        "how do you take 19 away from 53",
        "whole-numbers",
        &["53 - 19"],
    ),
    // Multiplication and division.
    own(
        "what's 12 x 3",
        "multiplication-division",
        &["12 × 3", "10 × 3"],
    ),
    own(
        "how do I divide 144 by 12",
        "multiplication-division",
        &["144 ÷ 12"],
    ),
    own(
        "what is 25 times 4",
        "multiplication-division",
        &["25 × 4", "20 × 4"],
    ),
    own("multiply 13 by 6", "multiplication-division", &["13 × 6"]),
    // Order of operations.
    own("what is 2 + 3 × 4", "order-of-operations", &["2 + 3 × 4"]),
    own(
        "how do I do (5 + 3) × 2",
        "order-of-operations",
        &["(5 + 3) × 2"],
    ),
    // Integers.
    own(
        "what is -3 + 5",
        "integer-operations",
        &["-3 + 5", "number line"],
    ),
    own(
        "what's (-4) × (-6)",
        "integer-operations",
        &["(-4) × (-6)", "signs"],
    ),
    own("how do I do -7 - 3", "integer-operations", &["-7 - 3"]),
    // Fractions.
    own(
        "Can you help me with fractions? I don't get how to add 1/4 and 2/3",
        "fraction-addition",
        &["1/4 + 2/3", "4 and 3"],
    ),
    own(
        "what is 1/2 + 1/3",
        "fraction-addition",
        &["1/2 + 1/3", "2 and 3"],
    ),
    own("subtract 1/3 from 3/4", "fraction-addition", &["3/4 - 1/3"]),
    own(
        "how do I add 2/7 and 3/7",
        "fraction-addition",
        &["2/7 + 3/7", "2 and 3"],
    ),
    own(
        "what's 3/4 of 20",
        "fraction-multiplication",
        &["3/4 of 20", "20 ÷ 4"],
    ),
    own(
        "multiply 2/3 by 3/4 pls",
        "fraction-multiplication",
        &["2/3 × 3/4", "2 × 3"],
    ),
    own(
        "how do you do 2/3 ÷ 1/4",
        "fraction-multiplication",
        &["1/4"],
    ),
    // Decimals.
    own(
        "what is 0.3 + 0.45",
        "decimals",
        &["0.3 + 0.45", "decimal points"],
    ),
    own("add 2.5 and 1.75", "decimals", &["2.5 + 1.75"]),
    own("what's 1.2 x 3", "decimals", &["1.2 × 3"]),
    // Percentages.
    own(
        "how do I find 20% of 50?",
        "percentages",
        &["20% of 50", "ten percent of 50"],
    ),
    own("what's 15% of 80", "percentages", &["15% of 80"]),
    own("20 percent of 60 pls", "percentages", &["20% of 60"]),
    // Ratios.
    own("2:3 share 40", "ratios", &["40", "2:3", "2 + 3"]),
    own(
        "how do I share 60 in the ratio 1:2",
        "ratios",
        &["60", "1:2"],
    ),
    own("split 35 in the ratio 3:4", "ratios", &["35", "3:4"]),
    // Equations.
    own(
        "solve 3x - 5 = 10 pls",
        "two-step-equations",
        &["3x - 5 = 10", "add 5"],
    ),
    own(
        "How do I solve 2x + 3 = 11?",
        "two-step-equations",
        &["2x + 3 = 11", "take 3"],
    ),
    own(
        "x/2 + 1 = 6 how",
        "two-step-equations",
        &["x / 2 + 1 = 6", "take 1"],
    ),
    own(
        "how do you solve x + 7 = 12",
        "one-step-equations",
        &["x + 7 = 12", "take 7"],
    ),
    own(
        "can you help me solve 4x = 28",
        "one-step-equations",
        &["4x = 28", "divide both sides by 4"],
    ),
    // While a drill is pending, the student's own problem comes first.
    own_over_drill(
        "and how do I solve 3x - 5 = 10",
        "two-step-equations",
        &["3x - 5 = 10", "add 5"],
    ),
    own_over_drill("how do I find 20% of 50?", "percentages", &["20% of 50"]),
    own_over_drill(
        "what's 3/4 of 20",
        "fraction-multiplication",
        &["3/4 of 20"],
    ),
    own_over_drill(
        "I don't get how to add 1/4 and 2/3",
        "fraction-addition",
        &["1/4 + 2/3"],
    ),
    // An explanation in words after a "why" is not off topic.
    Row {
        before: &["why do we need a common denominator to add fractions?"],
        say: "because you make the bottom numbers the same so the pieces are the same size",
        category: "explained",
        unit: None,
        says: &[],
    },
    Row {
        before: &["why does a negative times a negative make a positive?"],
        say: "so it's like taking away a debt which means you gain",
        category: "explained",
        unit: None,
        says: &[],
    },
    // Maths outside the course: a short true answer and the nearest unit.
    beyond(
        "why can't you divide by zero?",
        &["any number times 0 is 0", "Multiplication"],
    ),
    beyond("what is pi?", &["3.14"]),
    beyond("whats a square root", &["7 × 7 = 49"]),
    beyond("is infinity a number", &["add 1"]),
    beyond("how does pythagoras work", &["a² + b² = c²"]),
    beyond("what's probability", &["1/6"]),
];

/// The row as a workflow test: what was said before, then the row's
/// message with its expectations.
fn workflow_test(row: &Row) -> String {
    let quote = |text: &str| serde_json::to_string(text).expect("a string");
    let mut yaml = format!("name: {}\ncourse: prealgebra\nsteps:\n", quote(row.say));
    for said in row.before {
        yaml.push_str(&format!("  - say: {}\n", quote(said)));
    }
    let mut expect = vec![format!("category: {}", row.category)];
    if let Some(unit) = row.unit {
        expect.push(format!("focus: {unit}"));
    }
    if !row.says.is_empty() {
        expect.push(format!("says: {}", quote(row.says[0])));
    }
    yaml.push_str(&format!(
        "  - say: {}\n    expect: {{{}}}\n",
        quote(row.say),
        expect.join(", ")
    ));
    yaml
}

#[test]
fn a_new_students_first_messages_are_answered_as_asked() {
    assert!(TABLE.len() >= 40, "the table holds {} rows", TABLE.len());
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (i, row) in TABLE.iter().enumerate() {
        std::fs::write(
            dir.path().join(format!("row-{i:02}.yaml")),
            workflow_test(row),
        )
        .expect("written");
    }
    let output = Command::new(env!("CARGO_BIN_EXE_tutorflow"))
        .arg("test")
        .arg(dir.path())
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .env_remove("TUTORFLOW_CONFIG")
        .output()
        .expect("the binary runs");
    let report = String::from_utf8_lossy(&output.stdout);
    let passed = report.lines().filter(|l| l.starts_with("ok ")).count();
    println!("first-minute table: {passed} of {} rows pass", TABLE.len());
    assert!(
        output.status.success() && passed == TABLE.len(),
        "{report}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
