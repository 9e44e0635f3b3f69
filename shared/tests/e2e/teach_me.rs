//! A teach_me lesson end to end over HTTP, on the embedded SQLite store and
//! on DynamoDB + S3 (moto): a student who answers well goes through every
//! step of the unit's plan to the completion message, the extension and
//! the closing reply, and the summary counts the steps; a student who keeps
//! answering wrong gets a smaller step, never more replans than allowed,
//! and an ending that says what needs another look. A unit without an
//! authored plan gets the planner's, from the offline planner or from a
//! stand-in of each provider (OpenAI-compatible, Anthropic, Gemini), and
//! the default plan when that reply is unusable.

use crate::e2e_support;

use e2e_support::{
    Harness, base_config, bundle_files, bundle_patched, drill_answer, tutor_text, wrong_answer,
};
use serde_json::{Value, json};
use tutorflow::config::ProviderKind;

const EXTENSION_TURNS: u64 = 10;

async fn new_lesson(h: &Harness, student: &str, unit: &str) -> (String, Value) {
    let r = h
        .post(
            student,
            "/threads",
            json!({"courseId": "prealgebra", "mode": "teach_me", "unitId": unit}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    (r.body["threadId"].as_str().unwrap().to_owned(), r.body)
}

fn plan(turn: &Value) -> &Value {
    &turn["state"]["studyPlan"]
}

fn statuses(turn: &Value) -> Vec<String> {
    plan(turn)["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap().to_owned())
        .collect()
}

/// The student's next message: the right (or a wrong) answer to a drill
/// still pending, else a sentence that takes part in the lesson.
fn next_message(thread: &str, drill: Option<&Value>, right: bool) -> Value {
    match drill {
        Some(card) => {
            let answer = drill_answer(thread, card["drillToken"].as_str().unwrap());
            let said = if right {
                answer
            } else {
                wrong_answer(card, &answer)
            };
            json!({ "messageText": said })
        }
        None => json!({"messageText": "I see, you add the parts of the ratio first"}),
    }
}

/// The drill the student still has to answer, if any.
fn pending_drill(turn: &Value, last: Option<Value>) -> Option<Value> {
    let pending = turn["state"]["pendingQuestion"]["text"].as_str()?;
    Harness::card(turn, "DRILL")
        .cloned()
        .or(last)
        .filter(|c| pending.starts_with(c["prompt"].as_str().unwrap_or("\u{0}")))
}

async fn a_strong_student_completes_the_plan(h: &Harness) {
    let student = "student-lesson";
    let (thread, created) = new_lesson(h, student, "ratios").await;
    assert_eq!(created["mode"], "teach_me");
    let steps = plan(&created)["steps"].as_array().unwrap();
    assert!((3..=5).contains(&steps.len()), "{created}");
    assert!(statuses(&created).iter().all(|s| s == "pending"));
    assert_eq!(plan(&created)["currentStepId"], steps[0]["stepId"]);
    assert_eq!(plan(&created)["replansUsed"], 0);

    let mut drill = None;
    let mut completed_before = 0;
    let mut finished = None;
    for n in 0..40 {
        let turn = h
            .turn(
                student,
                &thread,
                next_message(&thread, drill.as_ref(), true),
            )
            .await;
        let s = statuses(&turn);
        let completed = s.iter().filter(|s| *s == "completed").count();
        assert!(completed >= completed_before, "steps never go back: {s:?}");
        completed_before = completed;
        assert!(
            s.iter().filter(|s| *s == "in_progress").count() <= 1,
            "{s:?}"
        );
        if plan(&turn)["complete"] == true {
            finished = Some((n, turn));
            break;
        }
        assert_eq!(turn["state"]["isComplete"], false);
        drill = pending_drill(&turn, drill);
    }
    let (turns, done) = finished.expect("a student who answers well completes the plan");
    assert!(turns >= 4, "every step takes at least a turn");
    assert!(statuses(&done).iter().all(|s| s == "completed"), "{done}");
    assert!(plan(&done).get("currentStepId").is_none());
    assert_eq!(done["state"]["isComplete"], true);
    assert_eq!(done["state"]["status"], "completed");
    let text = tutor_text(&done);
    assert!(text.contains("Today you learned"), "{text}");
    assert!(text.contains("Ratios"), "{text}");

    // The extension, then the closing reply.
    drill = pending_drill(&done, None);
    for n in 1..=EXTENSION_TURNS {
        let turn = h
            .turn(
                student,
                &thread,
                next_message(&thread, drill.as_ref(), true),
            )
            .await;
        assert_eq!(plan(&turn)["extensionTurns"], n);
        drill = pending_drill(&turn, drill);
    }
    let closing = h
        .turn(student, &thread, json!({"messageText": "can we do more?"}))
        .await;
    assert!(Harness::card(&closing, "DRILL").is_none(), "{closing}");
    assert!(!tutor_text(&closing).is_empty());
    assert_eq!(closing["state"]["isComplete"], true);

    let replay = h.get(student, &format!("/threads/{thread}")).await;
    assert_eq!(replay.status, 200);
    assert_eq!(
        replay.body["state"]["studyPlan"]["steps"],
        plan(&closing)["steps"]
    );
    let summary = h.get(student, &format!("/threads/{thread}/summary")).await;
    assert_eq!(summary.status, 200, "{}", summary.body);
    assert_eq!(
        summary.body["stepsCompleted"].as_u64(),
        Some(steps.len() as u64)
    );
    assert!(summary.body["masteryScore"].as_f64().unwrap() > 0.5);
    assert!(summary.body["suggestions"].is_array());
}

async fn a_struggling_student_gets_a_smaller_step(h: &Harness) {
    let student = "student-struggling";
    let (thread, _) = new_lesson(h, student, "fractions").await;
    let mut drill = None;
    let mut replanned = None;
    let mut last = Value::Null;
    for _ in 0..60 {
        let turn = h
            .turn(
                student,
                &thread,
                next_message(&thread, drill.as_ref(), false),
            )
            .await;
        if replanned.is_none() && plan(&turn)["replansUsed"] == 1 {
            replanned = Some(turn.clone());
        }
        assert!(plan(&turn)["replansUsed"].as_u64().unwrap() <= 3);
        let n = plan(&turn)["steps"].as_array().unwrap().len();
        assert!((3..=5).contains(&n));
        drill = pending_drill(&turn, drill);
        let over = plan(&turn)["complete"] == true;
        last = turn;
        if over {
            break;
        }
    }
    let replanned = replanned.expect("wrong answers lead to a replan");
    let reason = plan(&replanned)["replans"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("was tricky"), "{reason}");
    let current = plan(&replanned)["currentStepId"].as_str().unwrap();
    let step = plan(&replanned)["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stepId"] == current)
        .unwrap();
    assert_eq!(step["kind"], "explain", "a smaller step first: {replanned}");
    assert!(
        Harness::card(&replanned, "CONCEPT").is_some(),
        "the smaller step opens with its idea: {replanned}"
    );
    // The plan still ends on practice.
    assert_eq!(
        plan(&last)["steps"].as_array().unwrap().last().unwrap()["kind"],
        "practice"
    );
    // With every replan used, steps that stay blocked are passed over and
    // the lesson ends by saying what needs another look, not what was learned.
    assert_eq!(plan(&last)["complete"], true, "{last}");
    assert_eq!(plan(&last)["replansUsed"], 3);
    assert!(statuses(&last).iter().any(|s| s == "blocked"), "{last}");
    let text = tutor_text(&last);
    assert!(text.contains("needs another look"), "{text}");
    assert!(!text.contains("Today you learned"), "{text}");
}

#[tokio::test]
async fn sqlite_a_strong_student_completes_the_plan() {
    a_strong_student_completes_the_plan(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn sqlite_a_struggling_student_gets_a_smaller_step() {
    a_struggling_student_gets_a_smaller_step(&Harness::sqlite().await).await;
}

#[tokio::test]
async fn aws_a_strong_student_completes_the_plan() {
    if let Some(h) = Harness::aws("aws_a_strong_student_completes_the_plan").await {
        a_strong_student_completes_the_plan(&h).await;
    }
}

#[tokio::test]
async fn aws_a_struggling_student_gets_a_smaller_step() {
    if let Some(h) = Harness::aws("aws_a_struggling_student_gets_a_smaller_step").await {
        a_struggling_student_gets_a_smaller_step(&h).await;
    }
}

const RATIOS: &str = "workflows/courses/prealgebra/units/ratios.yaml";

/// The shipped bundle with the ratios unit's authored study plan removed.
fn without_authored_plan(dir: &std::path::Path) -> std::path::PathBuf {
    let text = &bundle_files().files[RATIOS];
    let start = text
        .find("study_plan:")
        .expect("ratios has an authored plan");
    let end = text[start..]
        .find("\n\n")
        .map_or(text.len(), |i| start + i + 1);
    bundle_patched(dir, &[(RATIOS, &text[start..end], "")])
}

fn titles(created: &Value) -> Vec<String> {
    plan(created)["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap().to_owned())
        .collect()
}

fn kinds(created: &Value) -> Vec<String> {
    plan(created)["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap().to_owned())
        .collect()
}

/// No authored plan and no planner model: the offline planner builds one
/// from the unit's key ideas.
#[tokio::test]
async fn without_an_authored_plan_the_offline_planner_plans_from_the_key_ideas() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.content.dir = without_authored_plan(dir.path());
    let h = Harness::start(config, dir, None).await;
    let (_, created) = new_lesson(&h, "student-offline-plan", "ratios").await;
    assert_eq!(kinds(&created), ["explain", "check", "explain", "practice"]);
    let first = &plan(&created)["steps"][0];
    assert!(
        first["concept"]
            .as_str()
            .unwrap()
            .starts_with("A ratio compares amounts"),
        "{created}"
    );
}

/// The planner's provider in a test: how it is configured, and the
/// provider's own reply shape carrying `plan` as the structured output.
#[derive(Debug, Clone, Copy)]
enum PlannerApi {
    OpenAiCompatible,
    Anthropic,
    Gemini,
}

impl PlannerApi {
    fn configure(self, config: &mut tutorflow::config::Config, base: &str) {
        let llm = &mut config.llm;
        match self {
            PlannerApi::OpenAiCompatible => {
                llm.planner = ProviderKind::OpenaiCompatible;
                llm.openai_compatible.base_url = format!("{base}/v1");
            }
            PlannerApi::Anthropic => {
                llm.planner = ProviderKind::Anthropic;
                llm.anthropic.base_url = base.to_owned();
                llm.anthropic.api_key = Some("env:E2E_LLM_KEY".into());
                llm.anthropic.default_model = "claude-sonnet-4-5".into();
            }
            PlannerApi::Gemini => {
                llm.planner = ProviderKind::Gemini;
                llm.gemini.base_url = format!("{base}/v1beta");
                llm.gemini.api_key = Some("env:E2E_LLM_KEY".into());
                llm.gemini.default_model = "gemini-2.5-flash".into();
            }
        }
    }

    fn path(self) -> &'static str {
        match self {
            PlannerApi::OpenAiCompatible => "/v1/chat/completions",
            PlannerApi::Anthropic => "/v1/messages",
            PlannerApi::Gemini => "/v1beta/models/gemini-2.5-flash:generateContent",
        }
    }

    fn reply(self, plan: &Value) -> Value {
        let text = plan.to_string();
        match self {
            PlannerApi::OpenAiCompatible => json!({
                "id": "x", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text, "refusal": null}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
            }),
            PlannerApi::Anthropic => json!({
                "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn", "stop_sequence": null,
                "usage": {"input_tokens": 812, "output_tokens": 143}
            }),
            PlannerApi::Gemini => json!({
                "candidates": [{"content": {"parts": [{"text": text}], "role": "model"},
                    "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 812, "candidatesTokenCount": 143, "totalTokenCount": 955},
                "modelVersion": "gemini-2.5-flash", "responseId": "mMTNaO7VJ5e1nvgPkZ3P6QI"
            }),
        }
    }
}

/// The harness's secrets, with a key for the planner's provider.
fn env_with_llm_key(key: &str) -> Option<String> {
    match key {
        "E2E_LLM_KEY" => Some("test-llm-key".into()),
        _ => e2e_support::env(key),
    }
}

/// A planner model on each provider: its plan is used when it is a plan of
/// the unit, and the workflow's default plan replaces one that is not (a
/// step off the unit's topic, or too few steps).
async fn the_planner_plans_and_an_unusable_plan_falls_back_to_the_default(api: PlannerApi) {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let step = |title: &str, kind: &str, concept: &str| json!({"title": title, "kind": kind, "concept": concept, "success_criteria": "Gets two right"});
    let good = json!({"steps": [
        step("Ratios as recipes", "explain", "ratio as for every"),
        step("Simplify ratios", "check", "simplify a ratio"),
        step("Share it out", "practice", "share in a ratio"),
    ]});
    let off_topic = json!({"steps": [
        step("Volcanoes", "explain", "magma chambers"),
        step("Simplify ratios", "check", "simplify a ratio"),
        step("Share it out", "practice", "share in a ratio"),
    ]});
    let too_short = json!({"steps": [
        step("Simplify ratios", "check", "simplify a ratio"),
        step("Share it out", "practice", "share in a ratio"),
    ]});
    for (reply, expected) in [
        (
            good,
            vec!["Ratios as recipes", "Simplify ratios", "Share it out"],
        ),
        (off_topic, vec![]),
        (too_short, vec![]),
    ] {
        let model = MockServer::builder().start().await;
        Mock::given(method("POST"))
            .and(path(api.path()))
            .respond_with(ResponseTemplate::new(200).set_body_json(api.reply(&reply)))
            .mount(&model)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let mut config = base_config(dir.path());
        api.configure(&mut config, &model.uri());
        config.content.dir = without_authored_plan(dir.path());
        let h = Harness::start_with_env(config, dir, None, env_with_llm_key).await;
        let (_, created) = new_lesson(&h, "student-planned", "ratios").await;
        let asked = model.received_requests().await.unwrap();
        assert_eq!(asked.len(), 1, "{api:?}: one planner call at creation");
        let prompt = String::from_utf8_lossy(&asked[0].body).to_string();
        assert!(prompt.contains("Ratios and sharing"), "{api:?}: {prompt}");
        if expected.is_empty() {
            assert_eq!(
                kinds(&created),
                ["explain", "check", "explain", "practice"],
                "{api:?}: {created}"
            );
            assert!(
                titles(&created)[0].starts_with("Ratios and sharing: idea 1"),
                "{api:?}: {created}"
            );
        } else {
            assert_eq!(titles(&created), expected, "{api:?}");
        }
    }
}

#[tokio::test]
async fn an_openai_compatible_planner_plans_and_an_unusable_plan_falls_back() {
    the_planner_plans_and_an_unusable_plan_falls_back_to_the_default(PlannerApi::OpenAiCompatible)
        .await;
}

#[tokio::test]
async fn an_anthropic_planner_plans_and_an_unusable_plan_falls_back() {
    the_planner_plans_and_an_unusable_plan_falls_back_to_the_default(PlannerApi::Anthropic).await;
}

#[tokio::test]
async fn a_gemini_planner_plans_and_an_unusable_plan_falls_back() {
    the_planner_plans_and_an_unusable_plan_falls_back_to_the_default(PlannerApi::Gemini).await;
}
