//! Routing categories: the detection semantics of the workflow's comment
//! block, the merge of code grading with the LLM's reading (the model says
//! whether it is an answer, code says how good), and the
//! shipped categories on realistic messages, with and without an LLM.

use std::path::PathBuf;

use chrono::{TimeZone, Utc};
use tutorflow::content::{Bundle, ContentSource, FsSource, Workflow};
use tutorflow::engine::grading;
use tutorflow::engine::interpret::classify::{
    self, ClassifyInput, IntentSource, MessageKind, MessageReading,
};
use tutorflow::model::{
    ExpectedAnswer, GradeOutcome, PendingQuestion, QuestionPhase, SessionState, StudentIntent,
};

fn default_workflow() -> Workflow {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let files = runtime
        .block_on(FsSource::new(root).fetch())
        .expect("the repository holds a bundle");
    let bundle = Bundle::load(&files).unwrap_or_else(|d| panic!("{d}"));
    bundle.workflows["default"].clone()
}

fn question(text: &str, expected: &str) -> PendingQuestion {
    PendingQuestion {
        text: text.to_owned(),
        expected: Some(ExpectedAnswer {
            kind: grading::infer_kind(expected, &[]),
            value: expected.to_owned(),
            unit: None,
            options: Vec::new(),
            mistakes: Vec::new(),
        }),
        unit_id: "two-step-equations".to_owned(),
        concept: "two-step equations".to_owned(),
        wrong_attempts: 0,
        previous_answers: Vec::new(),
        hints_used: 0,
        phase: QuestionPhase::Asked,
        asked_at: Utc.with_ymd_and_hms(2025, 1, 1, 9, 0, 0).unwrap(),
        drill_token: None,
    }
}

#[derive(Clone, Copy)]
enum State {
    Pending,
    Scaffolding,
    TeachBack,
    Free,
}

fn session(state: State) -> SessionState {
    let mut session = SessionState::default();
    match state {
        State::Pending => session.pending_question = Some(question("Solve 2x + 3 = 11.", "x = 4")),
        State::Scaffolding => {
            session.pending_question = Some(question("Solve 2x + 3 = 11.", "x = 4"));
            session.scaffolding.active = true;
            session.scaffolding.depth = 1;
            session.scaffolding.last_question = Some("What is 11 - 3?".to_owned());
            session.scaffolding.step_expects = Some("8".to_owned());
        }
        State::TeachBack => {
            session.teach_back.active = true;
            session.teach_back.awaiting_explanation = true;
        }
        State::Free => {}
    }
    session
}

fn category(
    workflow: &Workflow,
    state: State,
    message: &str,
    reading: Option<(StudentIntent, Option<&str>)>,
) -> String {
    let reading = reading.map(|(intent, text)| MessageReading {
        intent,
        answer_text: text.map(str::to_owned),
    });
    classify::interpret(
        workflow,
        &session(state),
        message,
        reading.as_ref(),
        MessageKind::default(),
    )
    .classification
    .category
}

#[test]
fn shipped_categories_without_an_llm() {
    use State::*;
    let workflow = default_workflow();
    let table: &[(State, &str, &str)] = &[
        (Pending, "x = 4", "correct"),
        (Pending, "4", "correct"),
        (Pending, "is it 4?", "correct"),
        (Pending, "I think x is four", "correct"),
        (Pending, "x = 5", "close"),
        (Pending, "x = 7", "wrong_operation"),
        (Pending, "x = -4", "wrong_operation"),
        (Pending, "idk", "stuck"),
        (Pending, "I don't know", "stuck"),
        (Pending, "help", "stuck"),
        (Pending, "can I have a hint?", "stuck"),
        (Pending, "I'm confused", "stuck"),
        (
            Pending,
            "why do we subtract 3 first?",
            "conceptual_question",
        ),
        (Pending, "what does solve mean?", "conceptual_question"),
        (Pending, "bye", "wrap_up"),
        (Pending, "I'm done for today", "wrap_up"),
        (Pending, "tell me a joke", "off_topic"),
        (Pending, "do you like minecraft?", "off_topic"),
        (Pending, "2x + 3 = 11", "general"),
        (Pending, "hi", "general"),
        (Pending, "", "general"),
        (Scaffolding, "8", "scaffold_progress"),
        (Scaffolding, "because 11 - 3 is 8", "scaffold_progress"),
        (Scaffolding, "x = 4", "correct"),
        (Scaffolding, "idk", "stuck"),
        (Scaffolding, "to the left", "scaffold_progress"),
        (Scaffolding, "hmm", "general"),
        (Pending, "hmm", "general"),
        (
            TeachBack,
            "because I subtracted 3 and then divided by 2",
            "explanation",
        ),
        (
            TeachBack,
            "I took 3 away from both sides and then halved it",
            "explanation",
        ),
        (TeachBack, "ok", "general"),
        (Free, "solve 2x + 3 = 11", "own_problem"),
        (Free, "what is a fraction?", "conceptual_question"),
        (Free, "how do you add fractions?", "conceptual_question"),
        (Free, "hello", "general"),
        (Free, "thanks, bye!", "wrap_up"),
    ];
    let wrong: Vec<String> = table
        .iter()
        .filter_map(|(state, message, expected)| {
            let got = category(&workflow, *state, message, None);
            (got != *expected).then(|| format!("{message:?}: expected {expected}, got {got}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_llm_decides_whether_it_is_an_answer_and_code_how_good() {
    use State::*;
    use StudentIntent::*;
    let workflow = default_workflow();
    // The LLM says it is an answer: code grades it, whatever the LLM thinks.
    assert_eq!(
        category(&workflow, Pending, "four", Some((Answer, None))),
        "correct"
    );
    assert_eq!(
        category(&workflow, Pending, "x = 7", Some((Answer, None))),
        "wrong_operation"
    );
    // The LLM says it is not an answer: the grade is not used.
    assert_eq!(
        category(&workflow, Pending, "x = 4?? why", Some((Question, None))),
        "conceptual_question"
    );
    assert_eq!(
        category(
            &workflow,
            TeachBack,
            "so x = 4 because 8 / 2 = 4",
            Some((Explain, None))
        ),
        "explanation"
    );
    // Code cannot read "for" (a voice note); the LLM quotes the answer.
    assert_eq!(
        category(&workflow, Pending, "for", Some((Answer, Some("4")))),
        "correct"
    );
    // Off topic beats a question word.
    assert_eq!(
        category(&workflow, Free, "what's for lunch?", Some((OffTopic, None))),
        "off_topic"
    );
    // An unknown reading falls back to the heuristics.
    let reading = MessageReading {
        intent: Unknown,
        answer_text: None,
    };
    let result = classify::interpret(
        &workflow,
        &session(Pending),
        "x = 4",
        Some(&reading),
        MessageKind::default(),
    );
    assert_eq!(
        result.classification.intent_source,
        IntentSource::Heuristics
    );
    assert_eq!(result.classification.category, "correct");
}

#[test]
fn detection_semantics_conditions_priority_and_declaration_order() {
    let mut workflow = default_workflow();
    let pending = session(State::Pending);
    let grade = grading::grade_pending(
        pending.pending_question.as_ref().unwrap(),
        "x = 4",
        &workflow.grading,
    )
    .unwrap();
    let run = |workflow: &Workflow, message: &str, intent: StudentIntent| {
        classify::classify(&ClassifyInput {
            workflow,
            session: &pending,
            message,
            grade: Some(&grade),
            reading: Some(&MessageReading {
                intent,
                answer_text: None,
            }),
            kind: MessageKind::default(),
        })
    };
    // Every matching category is reported; the highest priority wins.
    let result = run(&workflow, "x = 4", StudentIntent::Answer);
    assert_eq!(result.category, "correct");
    assert_eq!(result.answer_grade, Some(GradeOutcome::Correct));
    let matched: Vec<&str> = result
        .checks
        .iter()
        .filter(|c| c.matched)
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(matched, ["correct", "general"]);
    // A tie goes to the category declared first.
    let general = workflow
        .categories
        .iter()
        .position(|c| c.id == "general")
        .unwrap();
    workflow.categories[general].priority = 90;
    let result = run(&workflow, "x = 4", StudentIntent::Answer);
    assert_eq!(result.category, "correct");
    assert!(result.rule.contains("declared first"), "{}", result.rule);
    let moved = workflow.categories.remove(general);
    workflow.categories.insert(0, moved);
    assert_eq!(
        run(&workflow, "x = 4", StudentIntent::Answer).category,
        "general"
    );
    // A condition that does not hold rules a category out, signals or not.
    let mut workflow = default_workflow();
    let correct = workflow
        .categories
        .iter()
        .position(|c| c.id == "correct")
        .unwrap();
    workflow.categories[correct].detect.scaffolding = Some(true);
    let result = run(&workflow, "x = 4", StudentIntent::Answer);
    assert_ne!(result.category, "correct");
    assert!(result.checks[correct].detail.contains("needs scaffolding"));
    // Nothing matching: the default category.
    let mut workflow = default_workflow();
    workflow.categories.retain(|c| c.id == "stuck");
    let result = run(&workflow, "x = 4", StudentIntent::Answer);
    assert_eq!(result.category, workflow.default_category);
    assert!(result.rule.contains("default_category"));
}

#[test]
fn the_explanation_names_intent_grade_rule_and_every_category() {
    let workflow = default_workflow();
    let result = classify::interpret(
        &workflow,
        &session(State::Pending),
        "x = 7",
        None,
        MessageKind::default(),
    );
    let text = result.classification.explain();
    for needle in [
        "category: wrong_operation",
        "intent: answer",
        "offline heuristics",
        "answer graded by code: wrong",
        "rule:",
        "+ wrong_operation",
        "- correct",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
    assert_eq!(result.grade.map(|g| g.result), Some(GradeOutcome::Wrong));
}

mod properties {
    use std::sync::LazyLock;

    use proptest::prelude::*;

    use super::*;

    static WORKFLOW: LazyLock<Workflow> = LazyLock::new(default_workflow);

    proptest! {
        /// Any message in any state gets one of the workflow's categories,
        /// with or without a reading, and never panics.
        #[test]
        fn every_message_gets_a_category(
            message in "\\PC{0,200}",
            state in 0usize..4,
            intent in prop::option::of(0usize..9),
            answer_text in prop::option::of("\\PC{0,20}"),
        ) {
            let state = [State::Pending, State::Scaffolding, State::TeachBack, State::Free][state];
            let intents = [
                StudentIntent::Answer, StudentIntent::Solve, StudentIntent::Question,
                StudentIntent::Explain, StudentIntent::Check, StudentIntent::Stuck,
                StudentIntent::OffTopic, StudentIntent::Done, StudentIntent::Unknown,
            ];
            let reading = intent.map(|i| MessageReading { intent: intents[i], answer_text });
            let result = classify::interpret(&WORKFLOW, &session(state), &message, reading.as_ref(), MessageKind::default());
            let category = &result.classification.category;
            prop_assert!(WORKFLOW.category(category).is_some(), "{category}");
            prop_assert_eq!(result.classification.checks.len(), WORKFLOW.categories.len());
        }
    }
}

/// The item in front of the student, for the table of replies below.
#[derive(Clone, Copy, Debug)]
enum Item {
    /// "Work out 45 - 29." (16), a drill with options.
    Subtraction,
    /// "Solve 2x + 3 = 11." (x = 4).
    Equation,
    /// "Work out 1/2 + 1/3." (5/6).
    Fractions,
    /// The tutor asked "Does that make sense?" after explaining.
    MakesSense,
}

fn pending_on(item: Item, scaffolding: bool) -> SessionState {
    let mut session = SessionState::default();
    let mut q = match item {
        Item::Subtraction => {
            let mut q = question("Work out 45 - 29.", "16");
            if let Some(e) = q.expected.as_mut() {
                e.options = ["16", "74", "26", "14"].map(String::from).to_vec();
            }
            q
        }
        Item::Equation => question("Solve 2x + 3 = 11.", "x = 4"),
        Item::Fractions => question("Work out 1/2 + 1/3.", "5/6"),
        Item::MakesSense => {
            let mut q = question("Does that make sense?", "");
            q.expected = None;
            q
        }
    };
    q.unit_id = "u".to_owned();
    session.pending_question = Some(q);
    if scaffolding {
        session.scaffolding.active = true;
        session.scaffolding.depth = 1;
        session.scaffolding.step_expects = Some(
            match item {
                Item::Subtraction => "6",
                Item::Equation => "8",
                Item::Fractions => "6",
                Item::MakesSense => "1",
            }
            .to_owned(),
        );
    }
    session
}

/// Replies a student gives to a pending item, without an LLM: the
/// category each gets, and whether it counts as an attempt at the item
/// (graded, and a right or wrong answer, not a step or a non-answer).
#[test]
fn student_replies_to_pending_items() {
    use Item::*;
    let workflow = default_workflow();
    // (item, scaffolding on, reply, category, counts as an attempt)
    let table: &[(Item, bool, &str, &str, bool)] = &[
        // Right answers, however they are written.
        (Subtraction, false, "16", "correct", true),
        (Subtraction, false, "it's 16", "correct", true),
        (Subtraction, false, "I think 16", "correct", true),
        (Subtraction, false, "the answer is 16", "correct", true),
        (Subtraction, false, "sixteen", "correct", true),
        (Subtraction, false, "16!", "correct", true),
        (Subtraction, false, "is it 16?", "correct", true),
        (Subtraction, false, "a", "correct", true),
        (Equation, false, "x = 4", "correct", true),
        (Equation, false, "x=4", "correct", true),
        (Equation, false, "4", "correct", true),
        (Equation, false, "I think x is 4", "correct", true),
        (Fractions, false, "5/6", "correct", true),
        (Fractions, false, "10/12", "correct", true),
        (Fractions, false, "it's 5/6", "correct", true),
        // Close: a slip, not a method problem.
        (Subtraction, false, "15", "close", true),
        (Subtraction, false, "17", "close", true),
        (Subtraction, false, "I think 15", "close", true),
        (Equation, false, "x = 5", "close", true),
        (Equation, false, "x = 3", "close", true),
        // Wrong, typed or picked, options or not.
        (Subtraction, false, "74", "wrong_operation", true),
        (Subtraction, false, "26", "wrong_operation", true),
        (Subtraction, false, "it's 74", "wrong_operation", true),
        (Subtraction, false, "100", "wrong_operation", true),
        (Subtraction, false, "3", "wrong_operation", true),
        (Subtraction, false, "b", "wrong_operation", true),
        (Equation, false, "x = 4.5", "wrong_operation", true),
        (Equation, false, "x = 7", "wrong_operation", true),
        (Equation, false, "x = -4", "wrong_operation", true),
        (Equation, false, "I think 12", "wrong_operation", true),
        (Equation, false, "it's 12", "wrong_operation", true),
        (Fractions, false, "2/5", "wrong_operation", true),
        (Fractions, false, "1/6", "wrong_operation", true),
        // Wrong answers count while the problem is broken into steps too.
        (Subtraction, true, "74", "wrong_operation", true),
        (Subtraction, true, "30", "wrong_operation", true),
        (Equation, true, "x = 7", "wrong_operation", true),
        (Equation, true, "14", "wrong_operation", true),
        (Fractions, true, "2/5", "wrong_operation", true),
        (Subtraction, true, "15", "close", true),
        // The right answer ends the scaffolding.
        (Subtraction, true, "16", "correct", true),
        (Equation, true, "x = 4", "correct", true),
        // The answer to the smaller step is progress, not a wrong try.
        (Subtraction, true, "6", "scaffold_progress", false),
        (Subtraction, true, "it's 6", "scaffold_progress", false),
        (Equation, true, "8", "scaffold_progress", false),
        (Equation, true, "2x = 8", "scaffold_progress", false),
        (Fractions, true, "6", "scaffold_progress", false),
        // Stuck: never a wrong attempt.
        (Subtraction, false, "I don't know", "stuck", false),
        (Subtraction, false, "I do not know", "stuck", false),
        (Subtraction, false, "i dont know", "stuck", false),
        (Subtraction, false, "no idea", "stuck", false),
        (Subtraction, false, "idk", "stuck", false),
        (Subtraction, false, "help", "stuck", false),
        (Subtraction, false, "help me", "stuck", false),
        (Subtraction, false, "can you help me", "stuck", false),
        (Subtraction, false, "I'm lost", "stuck", false),
        (Subtraction, false, "I am lost", "stuck", false),
        (Subtraction, false, "I am not sure", "stuck", false),
        (Subtraction, false, "not sure", "stuck", false),
        (Subtraction, false, "?", "stuck", false),
        (Subtraction, false, "??", "stuck", false),
        (Subtraction, false, "I'm stuck", "stuck", false),
        (Subtraction, false, "I give up", "stuck", false),
        (Subtraction, false, "dunno", "stuck", false),
        (Subtraction, false, "I'm confused", "stuck", false),
        (Equation, false, "I don't get it", "stuck", false),
        (Equation, false, "no clue", "stuck", false),
        (Equation, true, "idk", "stuck", false),
        (Equation, true, "I'm still stuck", "stuck", false),
        (MakesSense, false, "no", "stuck", false),
        (MakesSense, false, "nope", "stuck", false),
        (MakesSense, false, "not really", "stuck", false),
        // Asking for the answer, or weighing answers up, is not answering.
        (
            Subtraction,
            false,
            "what's the answer to question 5",
            "stuck",
            false,
        ),
        (
            Subtraction,
            false,
            "what's the answer to question 5 I'll copy it",
            "stuck",
            false,
        ),
        (
            Subtraction,
            false,
            "just tell me the answer",
            "stuck",
            false,
        ),
        (Subtraction, false, "give me the answer", "stuck", false),
        (Subtraction, false, "is it 12 or 13?", "stuck", false),
        (Equation, false, "is it x = 3 or x = 5?", "stuck", false),
        (Equation, false, "what is the answer", "stuck", false),
        // Talk about the task or questions of their own: not graded.
        (Equation, false, "one-step equations", "general", false),
        (Equation, false, "two-step equations", "general", false),
        (
            Equation,
            false,
            "why do we subtract 3 first?",
            "conceptual_question",
            false,
        ),
        (
            Subtraction,
            false,
            "what does borrowing mean?",
            "conceptual_question",
            false,
        ),
        (
            Fractions,
            false,
            "how do you find a common denominator?",
            "conceptual_question",
            false,
        ),
        (Subtraction, false, "ok", "general", false),
        (Subtraction, false, "hmm", "general", false),
        (Subtraction, false, "bye", "wrap_up", false),
        (Subtraction, false, "tell me a joke", "off_topic", false),
        (Subtraction, false, "next one", "next_item", false),
        (Subtraction, false, "give me a drill", "next_item", false),
        (Subtraction, false, "quiz me", "next_item", false),
        (
            Subtraction,
            false,
            "can I have an easier one",
            "easier",
            false,
        ),
    ];
    // Teach-back is judged by what the explanation says.
    let explains: &[(&str, &str)] = &[
        (
            "because I took 3 away from both sides and halved it",
            "explanation",
        ),
        ("I borrowed a ten from the tens column", "explanation"),
        ("honestly I just guessed it, no idea why", "guessed"),
        ("I guessed", "guessed"),
        ("I really like maths it is so much fun", "general"),
        ("3", "general"),
    ];
    let mut teach_back = SessionState::default();
    teach_back.teach_back.active = true;
    teach_back.teach_back.awaiting_explanation = true;
    let mut after_stuck = teach_back.clone();
    after_stuck.scaffolding.active = true;
    for (message, expected) in explains {
        let got = |session: &SessionState| {
            classify::interpret(&workflow, session, message, None, MessageKind::default())
                .classification
                .category
        };
        assert_eq!(got(&teach_back), *expected, "teach-back reply {message:?}");
        // After "I don't know" to the teach-back question a short reply
        // answers the smaller question; it is still no explanation.
        let after = got(&after_stuck);
        assert_eq!(
            after == "explanation",
            *expected == "explanation",
            "teach-back reply {message:?} after stuck: {after}"
        );
    }
    assert!(table.len() >= 80, "{} replies", table.len());
    let counting = ["correct", "close", "wrong_operation"];
    let wrong: Vec<String> = table
        .iter()
        .filter_map(|(item, scaffolding, message, expected, counts)| {
            let session = pending_on(*item, *scaffolding);
            let result = classify::interpret(&workflow, &session, message, None, MessageKind::default());
            let got = result.classification.category;
            let graded = result
                .classification
                .answer_grade
                .is_some_and(|g| g != GradeOutcome::Unverifiable);
            let got_counts = graded && counting.contains(&got.as_str());
            (got != *expected || got_counts != *counts).then(|| {
                format!(
                    "{item:?}{} {message:?}: expected {expected} (counts: {counts}), got {got} (counts: {got_counts}; {})",
                    if *scaffolding { " scaffolding" } else { "" },
                    result.classification.intent_reason
                )
            })
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A topic's name mid-problem asks for the topic: it outranks working on
/// the problem's steps.
#[test]
fn a_topic_name_mid_problem_changes_topic() {
    let workflow = default_workflow();
    let topic_only = MessageKind {
        topic_only: true,
        names_a_unit: true,
        ..MessageKind::default()
    };
    for state in [State::Pending, State::Scaffolding] {
        let routed = classify::interpret(&workflow, &session(state), "fractions", None, topic_only);
        assert_eq!(routed.classification.category, "change_topic");
    }
    let not_only = classify::interpret(
        &workflow,
        &session(State::Scaffolding),
        "fractions",
        None,
        MessageKind::default(),
    );
    assert_eq!(not_only.classification.category, "scaffold_progress");
}

#[test]
fn an_equal_answer_not_yet_simplest_is_close_only_when_the_question_asks_for_it() {
    let settings = default_workflow().grading;
    let outcome = |text: &str, expected: &str, answer: &str, drill: bool| {
        let mut q = question(text, expected);
        q.drill_token = drill.then(|| "token".to_owned());
        grading::grade_pending(&q, answer, &settings)
            .unwrap()
            .result
    };
    let simplify = "Simplify 12/18.";
    assert_eq!(outcome(simplify, "2/3", "6/9", false), GradeOutcome::Close);
    assert_eq!(
        outcome(simplify, "2/3", "2/3", false),
        GradeOutcome::Correct
    );
    assert_eq!(
        outcome("What is 12:8 in its simplest form?", "3:2", "6:4", false),
        GradeOutcome::Close
    );
    // Not asked for: an equal fraction is right.
    assert_eq!(
        outcome("What is 3/4 + 1/8?", "7/8", "14/16", false),
        GradeOutcome::Correct
    );
    // A drill's own answer decides, not the question's words.
    assert_eq!(outcome(simplify, "2/3", "6/9", true), GradeOutcome::Correct);
}
