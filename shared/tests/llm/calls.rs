//! The seams as one provider call each, end to end against wiremock: the
//! workflow's template is rendered into the request, and each reply is
//! checked against its input (mistake tags from the unit's list, plan
//! length, safety consistency) before it is handed back.

use crate::llm_support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tutorflow::config::{LlmConfig, ProviderKind};
use tutorflow::llm::openai::{OpenAiFlavor, OpenAiProvider};
use tutorflow::llm::{
    Endpoint, LlmBinding, LlmDrillGrader, LlmExamEvaluator, LlmPlanner, LlmSafetyJudge, LlmStack,
    LlmSummarizer, LlmTutor, RetryPolicy,
};
use tutorflow::model::{
    DrillGrader, DrillGradingInput, ExamEvaluationInput, ExamEvaluator, HistoryMessage, Judgement,
    LlmError, MistakeTagBrief, Planner, PlannerInput, QuestionResult, Role, SafetyCategory,
    SafetyInput, SafetyJudge, SafetyOutcome, SessionStats, StepKind, Summarizer, SummaryInput,
    Tutor,
};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use llm_support::{bundle, sample_units, turn_input};

/// An OpenAI chat completion whose structured output is `reply`.
fn completion(reply: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-9", "object": "chat.completion", "created": 1, "model": "llama3.1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.to_string(), "refusal": null}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 200, "completion_tokens": 40, "total_tokens": 240}
    }))
}

async fn server_replying(reply: Value) -> MockServer {
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(completion(reply))
        .mount(&server)
        .await;
    server
}

fn binding(server: &MockServer) -> LlmBinding {
    let provider = OpenAiProvider::new(
        Endpoint {
            base_url: format!("{}/v1", server.uri()),
            api_key: None,
            default_model: "llama3.1".into(),
        },
        OpenAiFlavor::Compatible,
        RetryPolicy::default(),
    );
    LlmBinding::new(Arc::new(provider), bundle(), "default")
        .with_deadline(tokio::time::Instant::now() + Duration::from_secs(10))
}

/// The messages the provider was sent, as one text.
async fn sent(server: &MockServer) -> String {
    let request = &server.received_requests().await.unwrap()[0];
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

fn drill_input() -> DrillGradingInput {
    DrillGradingInput {
        unit_title: "One-step equations".into(),
        prompt: "Solve for x".into(),
        question: "x + 9 = 15".into(),
        expected_answer: "x = 6".into(),
        student_answer: "x = 24".into(),
        mistake_tags: vec![
            MistakeTagBrief {
                id: "wrong_inverse".into(),
                description: "Used the same operation instead of its inverse".into(),
            },
            MistakeTagBrief {
                id: "arithmetic_slip".into(),
                description: "Right method but a calculation error".into(),
            },
        ],
    }
}

#[tokio::test]
async fn the_llm_tutor_sends_the_rendered_bundle_and_returns_the_checked_reply() {
    let loaded = bundle();
    let units = sample_units(&loaded);
    let server = server_replying(json!({
        "mapped_units": [{"unit_id": units[0].id, "confidence": 0.8}],
        "action": "SOCRATIC_QUESTION", "target_unit_id": units[0].id,
        "tutor_text": "What is being done to x?", "concept_card": null, "drill_card": null,
        "exam_suggestion": null,
        "turn_analysis": {"student_intent": "question", "understanding_signal": "uncertain",
            "suggested_prereq_units": [], "answer_text": null}
    }))
    .await;
    let input = turn_input(&units[..1]);
    let reply = LlmTutor(binding(&server)).decide(&input).await.unwrap();
    assert_eq!(reply.value.tutor_text, "What is being done to x?");
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (200, 40)
    );
    let request: Value =
        serde_json::from_slice(&server.received_requests().await.unwrap()[0].body).unwrap();
    assert_eq!(request["messages"].as_array().unwrap().len(), 4);
    // The workflow's tutor settings travel with the call.
    assert_eq!(request["max_tokens"], 900);
    assert_eq!(request["temperature"], 0.3);
    let text = sent(&server).await;
    assert!(text.contains("POLICY (computed by the backend"));
    assert!(text.contains(&format!("\"title\":\"{}\"", units[0].title)));
}

#[tokio::test]
async fn drill_grading_sends_the_fixed_tag_list_and_refuses_other_tags() {
    let server = server_replying(json!({
        "is_correct": false, "feedback_text": "Check which operation undoes adding 9.",
        "common_mistake_tag": "wrong_inverse"
    }))
    .await;
    let reply = LlmDrillGrader(binding(&server))
        .grade(&drill_input())
        .await
        .unwrap();
    match reply.value {
        Judgement::Judged(grade) => {
            assert!(!grade.is_correct);
            assert_eq!(grade.common_mistake_tag.as_deref(), Some("wrong_inverse"));
        }
        Judgement::CannotJudge => panic!("expected a judgement"),
    }
    let text = sent(&server).await;
    assert!(text.contains("Intended answer: x = 6"));
    assert!(text.contains("Student's answer: x = 24"));
    assert!(text.contains("- wrong_inverse: Used the same operation instead of its inverse"));
    assert!(text.contains("- arithmetic_slip: Right method but a calculation error"));

    for (reply, why) in [
        (
            json!({"is_correct": false, "feedback_text": "Nearly.", "common_mistake_tag": "careless"}),
            "a tag from outside the list",
        ),
        (
            json!({"is_correct": true, "feedback_text": "Yes!", "common_mistake_tag": "wrong_inverse"}),
            "a tag on a correct answer",
        ),
    ] {
        let server = server_replying(reply).await;
        let err = LlmDrillGrader(binding(&server))
            .grade(&drill_input())
            .await
            .unwrap_err();
        assert!(matches!(err, LlmError::InvalidOutput(_)), "{why}: {err:?}");
    }
}

#[tokio::test]
async fn exam_evaluation_marks_partial_credit() {
    let server = server_replying(
        json!({"result": "partial", "feedback": "Right method, one sign slipped."}),
    )
    .await;
    let input = ExamEvaluationInput {
        question: "Solve x/4 = -3.".into(),
        expected_answer: "x = -12".into(),
        rubric: Vec::new(),
        student_answer: "x = 12".into(),
    };
    let reply = LlmExamEvaluator(binding(&server))
        .evaluate(&input)
        .await
        .unwrap();
    assert!(matches!(reply.value, Judgement::Judged(ref e) if e.result == QuestionResult::Partial));
    assert!(sent(&server).await.contains("Marking notes: none"));
}

#[tokio::test]
async fn a_plan_longer_than_asked_for_is_refused() {
    let step = json!({"title": "Balance", "kind": "explain", "concept": "balance", "success_criteria": "explains it"});
    let input = PlannerInput {
        unit_title: "One-step equations".into(),
        unit_anchor: "Solving x + 7 = 12".into(),
        key_ideas: vec!["An equation is a balance.".into()],
        authored_plan: None,
        default_plan: vec![StepKind::Explain, StepKind::Practice],
        student_profile: "Year 8".into(),
        previous_plan: vec!["Balance".into()],
        replan_reason: Some("failed three checks".into()),
        max_steps: 2,
    };
    let server = server_replying(json!({"steps": [step, step]})).await;
    let plan = LlmPlanner(binding(&server)).plan(&input).await.unwrap();
    assert_eq!(plan.value.steps.len(), 2);
    let text = sent(&server).await;
    assert!(text.contains("Why a new plan is needed: failed three checks"));
    assert!(text.contains("Write at most 2 steps"));
    let server = server_replying(json!({"steps": [step, step, step]})).await;
    let err = LlmPlanner(binding(&server)).plan(&input).await.unwrap_err();
    assert!(matches!(err, LlmError::InvalidOutput(_)), "{err:?}");
}

#[tokio::test]
async fn safety_verdicts_must_be_consistent() {
    let server = server_replying(
        json!({"safe": false, "category": "self_harm", "reason": "Mentions hurting themself."}),
    )
    .await;
    let reply = LlmSafetyJudge(binding(&server))
        .judge(&SafetyInput {
            message: "i want to hurt myself".into(),
        })
        .await
        .unwrap();
    assert!(matches!(
        reply.value,
        SafetyOutcome::Judged(ref v) if !v.safe && v.category == Some(SafetyCategory::SelfHarm)
    ));
    assert!(
        sent(&server)
            .await
            .contains("Message: i want to hurt myself")
    );
    let server =
        server_replying(json!({"safe": true, "category": "violence", "reason": "?"})).await;
    let err = LlmSafetyJudge(binding(&server))
        .judge(&SafetyInput {
            message: "hello".into(),
        })
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::InvalidOutput(_)));
}

#[tokio::test]
async fn a_long_transcript_is_cut_to_its_latest_messages() {
    let server = server_replying(json!({
        "headline": "You practised one-step equations.", "strengths": ["Undoing addition"],
        "to_review": [], "suggestions": ["Try a silver exam question"]
    }))
    .await;
    let transcript: Vec<HistoryMessage> = (0..3000)
        .map(|i| HistoryMessage {
            role: if i % 2 == 0 {
                Role::Assistant
            } else {
                Role::Student
            },
            text: format!("message number {i} with a few more words in it"),
        })
        .collect();
    let input = SummaryInput {
        course_title: "Pre-algebra foundations".into(),
        transcript,
        stats: SessionStats::default(),
    };
    let reply = LlmSummarizer(binding(&server))
        .summarize(&input)
        .await
        .unwrap();
    assert_eq!(reply.value.strengths, vec!["Undoing addition"]);
    let text = sent(&server).await;
    assert!(
        text.contains("message number 2999 "),
        "the latest message is kept"
    );
    assert!(!text.contains("message number 0 "), "the oldest is dropped");
    assert!(text.len() < 60_000, "{} characters", text.len());
}

#[tokio::test]
async fn the_stack_hands_out_offline_seams_unless_a_provider_is_configured() {
    let loaded = bundle();
    let units = sample_units(&loaded);
    let offline =
        LlmStack::from_config(&LlmConfig::default(), |_| None, RetryPolicy::default()).unwrap();
    let reply = offline
        .tutor(&loaded, "default", None)
        .decide(&turn_input(&units))
        .await
        .unwrap();
    assert_eq!(reply.usage.provider, "offline");
    let verdict = offline
        .safety(&loaded, "default", None)
        .judge(&SafetyInput {
            message: "hi".into(),
        })
        .await
        .unwrap();
    assert_eq!(verdict.value, SafetyOutcome::NoVerdict);

    let server = server_replying(json!({"safe": true, "category": null, "reason": "Fine."})).await;
    let mut config = LlmConfig {
        safety: ProviderKind::OpenaiCompatible,
        ..LlmConfig::default()
    };
    config.openai_compatible.base_url = format!("{}/v1", server.uri());
    let stack = LlmStack::from_config(&config, |_| None, RetryPolicy::default()).unwrap();
    let verdict = stack
        .safety(&loaded, "default", None)
        .judge(&SafetyInput {
            message: "hi".into(),
        })
        .await
        .unwrap();
    assert_eq!(verdict.usage.provider, "openai_compatible");
    assert!(matches!(verdict.value, SafetyOutcome::Judged(ref v) if v.safe));
    // The tutor stays offline: only safety was configured.
    let reply = stack
        .tutor(&loaded, "default", None)
        .decide(&turn_input(&units))
        .await
        .unwrap();
    assert_eq!(reply.usage.provider, "offline");
}

/// A written exam answer with its rubric: the prompt shows each point and
/// its terms; a reply outside the schema and a server error are errors the
/// turn answers with the offline judge's mark.
#[tokio::test]
async fn exam_evaluation_shows_the_rubric_and_refuses_what_is_not_a_verdict() {
    let input = ExamEvaluationInput {
        question: "Explain how to check 72 - 38 = 34.".into(),
        expected_answer: "Add back: 34 + 38 = 72.".into(),
        rubric: vec![tutorflow::model::RubricPoint {
            point: "adds the answer back".into(),
            terms: vec!["add".into(), "plus".into()],
        }],
        student_answer: "add them".into(),
    };
    let server = server_replying(json!({"result": "correct", "feedback": "Yes."})).await;
    let reply = LlmExamEvaluator(binding(&server))
        .evaluate(&input)
        .await
        .unwrap();
    assert!(matches!(reply.value, Judgement::Judged(ref e) if e.result == QuestionResult::Correct));
    let text = sent(&server).await;
    assert!(
        text.contains("- adds the answer back (shown by: add, plus)"),
        "{text}"
    );
    for bad in [
        json!({"result": "maybe", "feedback": "?"}),
        json!({"result": "correct", "feedback": ""}),
        json!({"result": "correct"}),
    ] {
        let server = server_replying(bad.clone()).await;
        let err = LlmExamEvaluator(binding(&server))
            .evaluate(&input)
            .await
            .unwrap_err();
        assert!(matches!(err, LlmError::InvalidOutput(_)), "{bad}: {err:?}");
    }
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&server)
        .await;
    let err = LlmExamEvaluator(binding(&server))
        .evaluate(&input)
        .await
        .unwrap_err();
    assert!(!matches!(err, LlmError::InvalidOutput(_)), "{err:?}");
}
