//! The LLM layer's share of a turn's overhead (goal for the whole turn,
//! without the LLM and network: p99 under 2 ms): rendering and trimming the
//! tutor prompt, the offline tutor's reply, and the token estimate.

#[path = "../tests/llm_support/mod.rs"]
mod llm_support;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use llm_support::{bundle, sample_units, synthetic, turn_input};
use tutorflow::llm::OfflineTutor;
use tutorflow::llm::prompt::tutor_prompt;
use tutorflow::llm::tokens::estimate;
use tutorflow::model::{HistoryMessage, QuestionPhase, QuestionState, Role, TutorAction};

fn bench_llm(c: &mut Criterion) {
    let bundle = bundle();
    let workflow = &bundle.workflows["default"];
    // Six scoped units (the policy's cap), two chunks each, ten messages of history.
    let mut units = sample_units(&bundle);
    units.truncate(4);
    units.push(synthetic(
        "bench-unit-5",
        "Ratios",
        &["A ratio compares amounts."],
        None,
    ));
    units.push(synthetic(
        "bench-unit-6",
        "Rates",
        &["A rate compares different units."],
        None,
    ));
    let mut input = turn_input(&units);
    input.history = (0..10)
        .map(|i| HistoryMessage {
            role: if i % 2 == 0 {
                Role::Assistant
            } else {
                Role::Student
            },
            text: format!("Message {i}: what do you get when you divide both sides by 3?"),
        })
        .collect();
    input.category.id = "wrong_operation".into();
    input.question = Some(QuestionState {
        text: "Solve 4x = 28.".into(),
        unit_id: units[0].id.clone(),
        concept: "inverse".into(),
        phase: QuestionPhase::Hint,
        wrong_attempts: 2,
        hints_used: 1,
        previous_answers: vec!["112".into(), "24".into()],
        help: Default::default(),
    });
    let prompt = tutor_prompt(&bundle.prompts, workflow, &input).expect("a prompt");
    assert!(prompt.tokens <= workflow.token_budget);

    c.bench_function("tutor_prompt/6_units/10_messages", |b| {
        b.iter(|| tutor_prompt(&bundle.prompts, workflow, black_box(&input)))
    });

    let tutor = OfflineTutor::new(bundle.clone(), "default");
    let mut stuck = input.clone();
    stuck.policy.stuck = true;
    stuck.policy.allowed_actions = vec![
        TutorAction::SocraticQuestion,
        TutorAction::ConceptCard,
        TutorAction::DrillCard,
    ];
    stuck.category.id = "stuck".into();
    assert_eq!(
        tutor.reply(&stuck).expect("a reply").action,
        TutorAction::ConceptCard
    );
    c.bench_function("offline_reply/stuck_concept_card", |b| {
        b.iter(|| tutor.reply(black_box(&stuck)))
    });
    c.bench_function("offline_reply/wrong_answer_hint", |b| {
        b.iter(|| tutor.reply(black_box(&input)))
    });

    let text: String = prompt
        .messages
        .iter()
        .map(|m| m.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    c.bench_function("estimate_tokens/rendered_prompt", |b| {
        b.iter(|| estimate(black_box(&text)))
    });
}

criterion_group!(benches, bench_llm);
criterion_main!(benches);
