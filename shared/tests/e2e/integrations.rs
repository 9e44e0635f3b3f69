//! End to end with the outside systems the server talks to: an external
//! exam API (authoritative for lockouts and verdicts: the tutor only reads
//! them), an
//! OpenAI-style transcription API (wiremock replaying its shapes), S3
//! presigned uploads (moto), and the read endpoints.

use crate::e2e_support;

use e2e_support::{Harness, base_config};
use serde_json::{Value, json};
use tutorflow::config::{ProviderKind, TranscriptionProvider};
use wiremock::matchers::{body_partial_json, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn env_with_keys(key: &str) -> Option<String> {
    match key {
        "E2E_OPENAI_KEY" => Some("sk-test".into()),
        "E2E_EXAM_KEY" => Some("exam-key".into()),
        other => e2e_support::env(other),
    }
}

/// A tiny WAV header: enough for the format check.
fn wav(bytes: usize) -> Vec<u8> {
    let mut data = b"RIFF\x24\x08\x00\x00WAVEfmt ".to_vec();
    data.resize(bytes.max(16), 0);
    data
}

#[tokio::test]
async fn the_external_exam_api_decides_verdicts_and_lockouts() {
    let exams = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/status"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "statuses": {"EX-WHN-S1": {"status": "locked", "lockedUntil": "2999-01-01T00:00:00Z"}}
        })))
        .mount(&exams)
        .await;
    Mock::given(method("POST"))
        .and(path("/submissions"))
        .and(body_partial_json(json!({"studentId": "student-exam-api", "questionId": "EX-WHN-B1", "selectedOption": "C"})))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"correct": true})))
        .expect(1)
        .mount(&exams)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.exam_api.base_url = Some(exams.uri());
    config.exam_api.api_key = Some("env:E2E_EXAM_KEY".into());
    let h = Harness::start_with_env(config, dir, None, env_with_keys).await;
    let student = "student-exam-api";
    let thread = h.new_thread(student).await;
    h.show_exam_cards(&thread, &["EX-WHN-B1", "EX-WHN-S1"])
        .await;
    // The API's verdict stands, whatever the bank says.
    let r = h
        .post(
            student,
            &format!("/threads/{thread}/exam/mcq-submit"),
            json!({"questionId": "EX-WHN-B1", "selectedOption": "C"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["isCorrect"], true);
    // A question the API reports locked cannot be submitted.
    let locked = h
        .post(
            student,
            &format!("/threads/{thread}/exam/mcq-submit"),
            json!({"questionId": "EX-WHN-S1", "selectedOption": "A"}),
        )
        .await;
    assert_eq!(locked.status, 409, "{}", locked.body);
    assert!(locked.body["detail"].as_str().unwrap().contains("2999"));
    let sent = exams.received_requests().await.unwrap();
    assert!(sent.iter().all(|r| {
        r.headers
            .get("authorization")
            .is_some_and(|v| v == "Bearer exam-key")
    }));
}

#[tokio::test]
async fn an_exam_api_outage_is_a_clear_503_and_turns_carry_on() {
    let exams = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(502))
        .mount(&exams)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.exam_api.base_url = Some(exams.uri());
    let h = Harness::start(config, dir, None).await;
    let student = "student-exam-down";
    let thread = h.new_thread(student).await;
    h.show_exam_cards(&thread, &["EX-WHN-B1"]).await;
    let r = h
        .post(
            student,
            &format!("/threads/{thread}/exam/mcq-submit"),
            json!({"questionId": "EX-WHN-B1", "selectedOption": "C"}),
        )
        .await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(r.body["detail"].as_str().unwrap().contains("exam service"));
    let turn = h
        .turn(
            student,
            &thread,
            json!({"messageText": "can we practise adding?"}),
        )
        .await;
    assert!(!turn["messages"][1]["text"].as_str().unwrap().is_empty());
}

async fn transcription_api() -> MockServer {
    let api = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/v1/audio/transcriptions"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"text": "what is three quarters plus one eighth"})),
        )
        .mount(&api)
        .await;
    api
}

#[tokio::test]
async fn small_recordings_are_transcribed_from_the_body() {
    let api = transcription_api().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.transcription.provider = TranscriptionProvider::Openai;
    config.transcription.base_url = format!("{}/v1", api.uri());
    config.transcription.api_key = Some("env:E2E_OPENAI_KEY".into());
    config.transcription.max_inline_bytes = 4096;
    let h = Harness::start_with_env(config, dir, None, env_with_keys).await;
    let token = h.token("student-voice");
    let send = |content_type: &'static str, body: Vec<u8>| {
        h.http
            .post(format!("{}/transcribe", h.base))
            .bearer_auth(&token)
            .header("content-type", content_type)
            .body(body)
    };
    let ok = h.send(send("audio/wav", wav(1000))).await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert_eq!(ok.body["text"], "what is three quarters plus one eighth");
    let big = h.send(send("audio/wav", wav(5000))).await;
    assert_eq!(big.status, 413, "{}", big.body);
    assert!(
        big.body["detail"]
            .as_str()
            .unwrap()
            .contains("/transcribe/uploads")
    );
    let csv = h.send(send("text/csv", b"a,b".to_vec())).await;
    assert_eq!(csv.status, 415, "{}", csv.body);
    let empty = h.send(send("audio/wav", Vec::new())).await;
    assert_eq!(empty.status, 400, "{}", empty.body);

    // A retry with the Idempotency-Key is answered from the store: the
    // provider transcribed the recording once.
    let calls = || async { api.received_requests().await.unwrap().len() };
    let before = calls().await;
    let keyed = || send("audio/wav", wav(1200)).header("idempotency-key", "voice-note-7");
    let first = h.send(keyed()).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let again = h.send(keyed()).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.body, first.body);
    assert_eq!(calls().await, before + 1);
    // The same key with another recording is refused.
    let other = h
        .send(send("audio/wav", wav(1300)).header("idempotency-key", "voice-note-7"))
        .await;
    assert_eq!(other.status, 422, "{}", other.body);
}

#[tokio::test]
async fn transcription_that_is_not_configured_says_so() {
    let h = Harness::sqlite().await;
    let r = h
        .send(
            h.http
                .post(format!("{}/transcribe", h.base))
                .bearer_auth(h.token("student-voice"))
                .header("content-type", "audio/wav")
                .body(wav(100)),
        )
        .await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(
        r.body["detail"]
            .as_str()
            .unwrap()
            .contains("not configured")
    );
}

#[tokio::test]
async fn large_recordings_go_through_a_presigned_upload() {
    let Some(e2e_support::Aws::Emulator(endpoint)) =
        e2e_support::aws("large_recordings_go_through_a_presigned_upload")
    else {
        return;
    };
    let api = transcription_api().await;
    let bucket = format!(
        "e2e-audio-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    );
    let s3 = tutorflow::store::s3_client(Some(&endpoint), Some("us-east-1")).await;
    s3.create_bucket().bucket(&bucket).send().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.transcription.provider = TranscriptionProvider::Openai;
    config.transcription.base_url = format!("{}/v1", api.uri());
    config.transcription.api_key = Some("env:E2E_OPENAI_KEY".into());
    config.transcription.upload_bucket = Some(bucket.clone());
    config.transcription.endpoint_url = Some(endpoint.clone());
    let sdk = e2e_support::sdk_config(&e2e_support::Aws::Emulator(endpoint)).await;
    let cleanup = e2e_support::Cleanup::bucket(sdk, &bucket);
    let h = Harness::start_with_env(config, dir, Some(cleanup), env_with_keys).await;
    let student = "student-upload";
    let audio = wav(200_000);
    let ticket = h
        .post(
            student,
            "/transcribe/uploads",
            json!({"contentType": "audio/wav", "sizeBytes": audio.len()}),
        )
        .await;
    assert_eq!(ticket.status, 201, "{}", ticket.body);
    let url = ticket.body["uploadUrl"].as_str().unwrap();
    let key = ticket.body["key"].as_str().unwrap().to_owned();
    let mut put = reqwest::Client::new().put(url).body(audio.clone());
    for (name, value) in ticket.body["headers"].as_object().unwrap() {
        put = put.header(name, value.as_str().unwrap());
    }
    let uploaded = put.send().await.unwrap();
    assert!(uploaded.status().is_success(), "{}", uploaded.status());
    let done = h.post(student, "/transcribe", json!({"key": key})).await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(done.body["text"], "what is three quarters plus one eighth");
    // Another student cannot use the key; a key outside the uploads is not found.
    assert_eq!(
        h.post("student-other", "/transcribe", json!({"key": key}))
            .await
            .status,
        404
    );
    assert_eq!(
        h.post(student, "/transcribe", json!({"key": "audio/../secret"}))
            .await
            .status,
        404
    );
    // The declared size and type are part of the signature.
    let bad = h
        .post(
            student,
            "/transcribe/uploads",
            json!({"contentType": "audio/wav", "sizeBytes": 30_000_000}),
        )
        .await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(bad.body["field"], "sizeBytes");
}

#[tokio::test]
async fn summaries_thread_lists_and_replays_read_back() {
    let h = Harness::sqlite().await;
    let student = "student-reader";
    let first = h.new_thread(student).await;
    let second = h.new_thread(student).await;
    h.turn(
        student,
        &first,
        json!({"messageText": "what is 15% of 80?"}),
    )
    .await;
    h.turn(student, &first, json!({"messageText": "12"})).await;

    let summary = h.get(student, &format!("/threads/{first}/summary")).await;
    assert_eq!(summary.status, 200, "{}", summary.body);
    for field in [
        "headline",
        "strengths",
        "toReview",
        "suggestions",
        "misconceptionsSeen",
        "masteryScore",
        "units",
    ] {
        assert!(
            summary.body.get(field).is_some(),
            "{field} in {}",
            summary.body
        );
    }
    assert_eq!(summary.body["turns"], 2);
    // The other thread of the same student has its own summary.
    let other = h.get(student, &format!("/threads/{second}/summary")).await;
    assert_eq!(other.status, 200, "{}", other.body);
    assert_eq!(other.body["turns"], 0, "{}", other.body);
    assert_ne!(other.body["headline"], summary.body["headline"]);
    assert!(
        other.body["headline"].as_str().unwrap().contains("0 turns"),
        "{}",
        other.body
    );

    let page = h.get(student, "/me/threads?limit=1").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.body["threads"].as_array().unwrap().len(), 1);
    let cursor = page.body["nextCursor"].as_str().unwrap();
    let next = h
        .get(student, &format!("/me/threads?limit=1&cursor={cursor}"))
        .await;
    assert_eq!(next.body["threads"].as_array().unwrap().len(), 1);
    let ids: Vec<&Value> = [
        &page.body["threads"][0]["threadId"],
        &next.body["threads"][0]["threadId"],
    ]
    .into();
    assert!(ids.contains(&&json!(first)) && ids.contains(&&json!(second)));
    assert_eq!(
        h.get("someone-else", "/me/threads").await.body["threads"]
            .as_array()
            .unwrap()
            .len(),
        0
    );

    let replay = h.get(student, &format!("/threads/{first}?limit=2")).await;
    assert_eq!(replay.body["messages"].as_array().unwrap().len(), 2);
    let rest = h
        .get(
            student,
            &format!(
                "/threads/{first}?limit=10&cursor={}",
                replay.body["nextCursor"].as_str().unwrap()
            ),
        )
        .await;
    assert_eq!(
        rest.body["messages"].as_array().unwrap().len(),
        3,
        "welcome + 2 turns = 5 messages"
    );
    assert_eq!(
        h.get(student, "/me/courses/astrophysics/report")
            .await
            .status,
        404
    );
}

/// With the safety LLM call on, it screens what the rules let through:
/// a flagged message gets the matching category's response, and the
/// teacher channel is alerted.
#[tokio::test]
async fn moderation_flags_answer_with_the_safety_response_and_alert_a_teacher() {
    let model = MockServer::builder().start().await;
    let verdict = json!({"safe": false, "category": "self_harm", "reason": "talks about hurting"});
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": verdict.to_string(), "refusal": null}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        })))
        .expect(1)
        .mount(&model)
        .await;
    let teacher = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(body_partial_json(
            json!({"event": "student_needs_teacher", "studentId": "student-mod"}),
        ))
        .respond_with(ResponseTemplate::new(204))
        .expect(1)
        .mount(&teacher)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = base_config(dir.path());
    config.content.dir = e2e_support::bundle_patched(
        dir.path(),
        &[(
            "workflows/default.yaml",
            "  llm_judge: false",
            "  llm_judge: true",
        )],
    );
    config.llm.safety = ProviderKind::OpenaiCompatible;
    config.llm.openai_compatible.base_url = format!("{}/v1", model.uri());
    config.notifications.teacher_webhook_url = Some(teacher.uri());
    let h = Harness::start(config, dir, None).await;
    let thread = h.new_thread("student-mod").await;
    let turn = h
        .turn(
            "student-mod",
            &thread,
            json!({"messageText": "nothing matters anymore"}),
        )
        .await;
    let reply = turn["messages"][1]["text"].as_str().unwrap();
    assert!(reply.contains("glad you told me"), "{reply}");
    assert_eq!(turn["messages"][1]["safety"]["category"], "self_harm");
    assert!(turn["messages"][1].get("card").is_none());
}
