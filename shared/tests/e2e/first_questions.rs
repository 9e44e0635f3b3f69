//! A new student's first question, as a teacher would mark the reply: each
//! row of `tests/data/first_questions.tsv` is asked by a fresh student of
//! the sample course, over HTTP with the offline tutor, and the tutor's
//! words must answer it — every `;`-separated group of `must_mention` has
//! one of its `|` alternatives in the reply, and no `must_not_mention`
//! phrase (a redirect, a reply about something else) appears. Case is
//! ignored; cards count as part of the reply.

use crate::e2e_support;

use e2e_support::{Harness, repo_root};
use serde_json::{Value, json};

struct Question {
    line: usize,
    text: String,
    must_mention: Vec<Vec<String>>,
    must_not_mention: Vec<String>,
}

fn questions() -> Vec<Question> {
    let path = repo_root().join("shared/tests/data/first_questions.tsv");
    let table = std::fs::read_to_string(&path).expect("the question table");
    let lowered = |text: &str| text.trim().to_lowercase();
    table
        .lines()
        .enumerate()
        .skip(1)
        .filter(|(_, row)| !row.trim().is_empty())
        .map(|(i, row)| {
            let columns: Vec<&str> = row.split('\t').collect();
            assert!(
                columns.len() >= 3,
                "{}:{}: question, topic and must_mention are needed",
                path.display(),
                i + 1
            );
            Question {
                line: i + 1,
                text: columns[0].to_owned(),
                must_mention: columns[2]
                    .split(" ; ")
                    .map(|group| group.split('|').map(lowered).collect())
                    .collect(),
                must_not_mention: columns
                    .get(3)
                    .map(|c| {
                        c.split('|')
                            .map(lowered)
                            .filter(|p| !p.is_empty())
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// The tutor's words and cards in a turn response, lowercased.
fn reply_read(turn: &Value) -> String {
    let mut read = Vec::new();
    for message in turn["messages"].as_array().into_iter().flatten() {
        if message["role"] == "student" {
            continue;
        }
        read.push(message["text"].as_str().unwrap_or_default().to_owned());
        if !message["card"].is_null() {
            read.push(message["card"].to_string());
        }
    }
    read.join(" ").to_lowercase()
}

/// What the reply misses or says wrongly; empty when it answers.
fn marked(question: &Question, reply: &str) -> Vec<String> {
    let mut faults: Vec<String> = question
        .must_mention
        .iter()
        .filter(|group| !group.iter().any(|alt| reply.contains(alt.as_str())))
        .map(|group| format!("says none of {}", group.join(" | ")))
        .collect();
    faults.extend(
        question
            .must_not_mention
            .iter()
            .filter(|phrase| reply.contains(phrase.as_str()))
            .map(|phrase| format!("says {phrase:?}")),
    );
    faults
}

#[test]
fn marking_finds_a_missing_idea_and_a_redirect() {
    let question = Question {
        line: 1,
        text: "what is a prime number?".to_owned(),
        must_mention: vec![vec!["factors".to_owned(), "divisible".to_owned()]],
        must_not_mention: vec!["here for maths".to_owned()],
    };
    assert!(marked(&question, "a prime has exactly two factors").is_empty());
    assert_eq!(marked(&question, "i'm here for maths, though.").len(), 2);
}

#[tokio::test]
async fn a_new_students_first_question_is_answered() {
    let h = Harness::sqlite().await;
    let table = questions();
    assert!(
        table.len() >= 50,
        "the table holds {} questions",
        table.len()
    );
    let mut failures = Vec::new();
    for (i, question) in table.iter().enumerate() {
        let student = format!("first-question-{i}");
        let thread = h.new_thread(&student).await;
        let turn = h
            .turn(&student, &thread, json!({ "messageText": question.text }))
            .await;
        let reply = reply_read(&turn);
        let faults = marked(question, &reply);
        if !faults.is_empty() {
            failures.push(format!(
                "line {}: {:?}: {}\n    reply: {reply}",
                question.line,
                question.text,
                faults.join("; ")
            ));
        }
    }
    println!(
        "first questions: {} of {} answered",
        table.len() - failures.len(),
        table.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A follow-up is answered as the question it stands for, and the
/// conversation keeps what the student actually wrote.
#[tokio::test]
async fn a_follow_up_is_answered_and_kept_in_the_students_words() {
    let h = Harness::sqlite().await;
    let thread = h.new_thread("follow-up").await;
    h.turn(
        "follow-up",
        &thread,
        json!({ "messageText": "how do i turn 3/8 into a decimal" }),
    )
    .await;
    let turn = h
        .turn(
            "follow-up",
            &thread,
            json!({ "messageText": "what about 1/3?" }),
        )
        .await;
    let student: Vec<&str> = turn["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "student")
        .filter_map(|m| m["text"].as_str())
        .collect();
    assert_eq!(student, ["what about 1/3?"], "{turn}");
    let reply = reply_read(&turn);
    assert!(reply.contains("1/3 means 1 ÷ 3"), "{reply}");
}
