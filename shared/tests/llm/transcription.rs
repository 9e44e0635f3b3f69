//! Speech to text against a wiremock `/audio/transcriptions`: the multipart
//! request, clear errors for empty, oversize and unsupported audio before any
//! upload, and the provider's errors with retries where they help.

use std::time::Duration;

use bytes::Bytes;
use serde_json::json;
use tokio::time::Instant;
use tutorflow::config::{TranscriptionConfig, TranscriptionProvider};
use tutorflow::llm::{
    ApiKey, AudioClip, AudioFormat, Endpoint, LlmSetupError, OpenAiTranscriber, RetryPolicy,
    TranscriptionError,
};
use tutorflow::model::LlmError;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-transcribe-test";

fn transcriber(server: &MockServer, model: &str, max_bytes: u64) -> OpenAiTranscriber {
    OpenAiTranscriber::new(
        Endpoint {
            base_url: format!("{}/v1", server.uri()),
            api_key: Some(ApiKey::new(KEY)),
            default_model: model.into(),
        },
        max_bytes,
        RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(20),
        },
    )
}

fn webm(len: usize) -> Bytes {
    let mut bytes = vec![0x1A, 0x45, 0xDF, 0xA3];
    bytes.resize(len.max(4), 0x42);
    Bytes::from(bytes)
}

fn wav() -> Bytes {
    let mut bytes = b"RIFF\x24\0\0\0WAVEfmt ".to_vec();
    bytes.resize(64, 0);
    Bytes::from(bytes)
}

fn clip(bytes: Bytes, content_type: Option<&str>) -> AudioClip {
    AudioClip {
        bytes,
        content_type: content_type.map(str::to_owned),
    }
}

fn transcribed(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "text": text,
        "usage": {"type": "tokens", "input_tokens": 14,
            "input_token_details": {"text_tokens": 0, "audio_tokens": 14},
            "output_tokens": 45, "total_tokens": 59}
    }))
}

async fn mount(server: &MockServer, template: ResponseTemplate, times: Option<u64>) {
    let mock = Mock::given(method("POST"))
        .and(path("/v1/audio/transcriptions"))
        .respond_with(template);
    match times {
        Some(n) => mock.up_to_n_times(n).mount(server).await,
        None => mock.mount(server).await,
    }
}

async fn count(server: &MockServer) -> usize {
    server.received_requests().await.unwrap_or_default().len()
}

#[tokio::test]
async fn a_recording_becomes_text() {
    let server = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/v1/audio/transcriptions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(transcribed("  I think x equals seven.  "))
        .mount(&server)
        .await;
    let transcriber = transcriber(&server, "gpt-4o-mini-transcribe", 25 * 1024 * 1024);
    let transcript = transcriber
        .transcribe(
            &clip(webm(2048), Some("audio/webm;codecs=opus")),
            Some("en"),
            None,
        )
        .await
        .unwrap();
    assert_eq!(transcript.text, "I think x equals seven.");
    assert_eq!(transcript.model, "gpt-4o-mini-transcribe");
    assert_eq!(transcript.attempts, 1);
    let request = &server.received_requests().await.unwrap()[0];
    let content_type = request
        .headers
        .get("content-type")
        .unwrap()
        .to_str()
        .unwrap();
    assert!(
        content_type.starts_with("multipart/form-data; boundary="),
        "{content_type}"
    );
    let body = String::from_utf8_lossy(&request.body);
    for part in [
        "name=\"model\"\r\n\r\ngpt-4o-mini-transcribe",
        "name=\"response_format\"\r\n\r\njson",
        "name=\"language\"\r\n\r\nen",
        "name=\"file\"; filename=\"audio.webm\"",
    ] {
        assert!(body.contains(part), "missing {part:?}");
    }
    // The recording itself is uploaded as the file part.
    assert!(
        request
            .body
            .windows(4)
            .any(|w| w == [0x1A, 0x45, 0xDF, 0xA3])
    );
}

#[tokio::test]
async fn the_format_is_recognised_from_the_bytes_when_not_declared() {
    let server = MockServer::builder().start().await;
    mount(&server, transcribed("ok"), None).await;
    let transcriber = transcriber(&server, "whisper-1", 25 * 1024 * 1024);
    for content_type in [None, Some("application/octet-stream")] {
        transcriber
            .transcribe(&clip(wav(), content_type), None, None)
            .await
            .unwrap();
    }
    for request in server.received_requests().await.unwrap() {
        assert!(String::from_utf8_lossy(&request.body).contains("filename=\"audio.wav\""));
    }
}

#[tokio::test]
async fn bad_audio_is_refused_before_any_upload() {
    let server = MockServer::builder().start().await;
    mount(&server, transcribed("never"), None).await;
    let transcriber = transcriber(&server, "whisper-1", 1000);
    let cases = [
        (clip(Bytes::new(), Some("audio/webm")), "empty"),
        (clip(webm(1001), Some("audio/webm")), "too large"),
        (clip(webm(100), Some("audio/aac")), "unsupported type"),
        (
            clip(
                Bytes::from_static(b"%PDF-1.7 not audio"),
                Some("audio/webm"),
            ),
            "not webm",
        ),
        (
            clip(Bytes::from_static(b"hello there, not audio"), None),
            "unknown bytes",
        ),
        (clip(wav(), Some("audio/ogg")), "declared ogg, is wav"),
    ];
    for (clip, what) in cases {
        let err = transcriber.transcribe(&clip, None, None).await.unwrap_err();
        match what {
            "empty" => assert_eq!(err, TranscriptionError::Empty),
            "too large" => assert_eq!(
                err,
                TranscriptionError::TooLarge {
                    bytes: 1001,
                    limit: 1000
                }
            ),
            _ => assert!(
                matches!(err, TranscriptionError::UnsupportedFormat(_)),
                "{what}: {err:?}"
            ),
        }
        assert!(!err.to_string().is_empty());
    }
    assert_eq!(count(&server).await, 0);
    // MP4 and M4A share a container: either name is accepted for it.
    let m4a = Bytes::from_static(b"\0\0\0\x20ftypM4A \0\0\0\0");
    assert_eq!(
        transcriber.check(&clip(m4a.clone(), Some("audio/mp4"))),
        Ok(AudioFormat::Mp4)
    );
    assert_eq!(
        transcriber.check(&clip(m4a, Some("audio/x-m4a"))),
        Ok(AudioFormat::M4a)
    );
}

#[tokio::test]
async fn the_limit_never_exceeds_the_providers_25_mb() {
    let server = MockServer::builder().start().await;
    let transcriber = transcriber(&server, "whisper-1", 100 * 1024 * 1024);
    let err = transcriber
        .check(&clip(webm(25 * 1024 * 1024 + 1), Some("audio/webm")))
        .unwrap_err();
    assert_eq!(
        err,
        TranscriptionError::TooLarge {
            bytes: 25 * 1024 * 1024 + 1,
            limit: 25 * 1024 * 1024
        }
    );
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried() {
    let server = MockServer::builder().start().await;
    mount(
        &server,
        ResponseTemplate::new(429)
            .insert_header("retry-after-ms", "200")
            .set_body_json(json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}})),
        Some(1),
    )
    .await;
    mount(&server, transcribed("after the wait"), None).await;
    let transcriber = transcriber(&server, "whisper-1", 1 << 20);
    let started = Instant::now();
    let transcript = transcriber
        .transcribe(&clip(webm(512), Some("audio/webm")), None, None)
        .await
        .unwrap();
    assert_eq!(transcript.text, "after the wait");
    assert_eq!(transcript.attempts, 2);
    assert!(started.elapsed() >= Duration::from_millis(200));

    let server = MockServer::builder().start().await;
    mount(
        &server,
        ResponseTemplate::new(500).set_body_json(
            json!({"error": {"message": "The server had an error", "type": "server_error"}}),
        ),
        None,
    )
    .await;
    let err = transcriber_for(&server)
        .transcribe(&clip(webm(512), Some("audio/webm")), None, None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, TranscriptionError::Provider(LlmError::Unavailable(_))),
        "{err:?}"
    );
    assert_eq!(count(&server).await, 3);
}

fn transcriber_for(server: &MockServer) -> OpenAiTranscriber {
    transcriber(server, "whisper-1", 1 << 20)
}

#[tokio::test]
async fn provider_rejections_are_typed_and_not_retried() {
    let cases = [
        (
            ResponseTemplate::new(400).set_body_json(json!({"error": {
                "message": "Audio file might be corrupted or unsupported",
                "type": "invalid_request_error", "param": "file", "code": "invalid_value"}})),
            "bad request",
        ),
        (
            ResponseTemplate::new(413).set_body_json(json!({"error": {
                "message": "Maximum content size limit (26214400) exceeded (26214401 bytes read)",
                "type": "server_error"}})),
            "too large",
        ),
        (
            ResponseTemplate::new(401).set_body_json(json!({"error": {
                "message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}})),
            "auth",
        ),
    ];
    for (template, what) in cases {
        let server = MockServer::builder().start().await;
        mount(&server, template, None).await;
        let err = transcriber_for(&server)
            .transcribe(&clip(webm(512), Some("audio/webm")), None, None)
            .await
            .unwrap_err();
        match what {
            "auth" => assert!(
                matches!(err, TranscriptionError::Provider(LlmError::Auth(_))),
                "{err:?}"
            ),
            _ => assert!(
                matches!(err, TranscriptionError::Provider(LlmError::BadRequest(_))),
                "{what}: {err:?}"
            ),
        }
        assert_eq!(count(&server).await, 1, "{what}");
    }
}

#[tokio::test]
async fn a_slow_transcription_stops_at_the_deadline() {
    let server = MockServer::builder().start().await;
    mount(
        &server,
        transcribed("late").set_delay(Duration::from_secs(5)),
        None,
    )
    .await;
    let started = Instant::now();
    let err = transcriber_for(&server)
        .transcribe(
            &clip(webm(512), Some("audio/webm")),
            None,
            Some(Instant::now() + Duration::from_millis(300)),
        )
        .await
        .unwrap_err();
    assert_eq!(err, TranscriptionError::Provider(LlmError::Timeout));
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn configuration_turns_transcription_on_and_needs_a_key() {
    let env = |name: &str| (name == "STT_KEY").then(|| "sk-live".to_owned());
    let mut config = TranscriptionConfig::default();
    assert!(
        OpenAiTranscriber::from_config(&config, env, RetryPolicy::default())
            .unwrap()
            .is_none()
    );
    config.provider = TranscriptionProvider::Openai;
    let missing = OpenAiTranscriber::from_config(&config, env, RetryPolicy::default()).unwrap_err();
    assert_eq!(
        missing,
        LlmSetupError::MissingKey {
            section: "transcription"
        }
    );
    // The message names the setting to fix, as written in the configuration.
    assert!(
        missing.to_string().starts_with("transcription.api_key "),
        "{missing}"
    );
    config.api_key = Some("env:STT_KEY".into());
    let transcriber = OpenAiTranscriber::from_config(&config, env, RetryPolicy::default())
        .unwrap()
        .unwrap();
    assert!(!format!("{transcriber:?}").contains("sk-live"));
    config.api_key = Some("env:MISSING".into());
    assert!(matches!(
        OpenAiTranscriber::from_config(&config, env, RetryPolicy::default()),
        Err(LlmSetupError::UnsetKey { .. })
    ));
}
