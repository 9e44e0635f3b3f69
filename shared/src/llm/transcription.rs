//! Speech to text through an OpenAI-style `/audio/transcriptions` endpoint
//! (whisper-1, gpt-4o-transcribe, gpt-4o-mini-transcribe). Audio is checked
//! before upload — size, and a container the API accepts, recognised from
//! its first bytes — so a bad recording gets a clear error without a call.

use std::time::Duration;

use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use reqwest::multipart::{Form, Part};
use serde_json::Value;
use tokio::time::Instant;

use super::http::{AttemptFailure, HttpJson, RetryPolicy, failure_for_status, retry_after_header};
use super::provider::Endpoint;
use super::setup::{LlmSetupError, api_key};
use crate::config::{TranscriptionConfig, TranscriptionProvider};
use crate::model::LlmError;

/// The API's upload limit.
pub const MAX_AUDIO_BYTES: u64 = 25 * 1024 * 1024;
/// How long one transcription may take when the caller sets no deadline.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The audio containers the API accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AudioFormat {
    Webm,
    Ogg,
    Mp4,
    M4a,
    Mpeg,
    Wav,
    Flac,
}

impl AudioFormat {
    /// The file extension the API infers the format from.
    pub fn extension(self) -> &'static str {
        match self {
            AudioFormat::Webm => "webm",
            AudioFormat::Ogg => "ogg",
            AudioFormat::Mp4 => "mp4",
            AudioFormat::M4a => "m4a",
            AudioFormat::Mpeg => "mp3",
            AudioFormat::Wav => "wav",
            AudioFormat::Flac => "flac",
        }
    }

    /// The format a `Content-Type` names (parameters such as
    /// `;codecs=opus` ignored); `Err` for one the API does not take.
    pub fn from_content_type(content_type: &str) -> Result<Option<Self>, TranscriptionError> {
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        Ok(Some(match essence.as_str() {
            "" | "application/octet-stream" => return Ok(None),
            "audio/webm" | "video/webm" => AudioFormat::Webm,
            "audio/ogg" | "audio/opus" | "application/ogg" => AudioFormat::Ogg,
            "audio/mp4" | "video/mp4" => AudioFormat::Mp4,
            "audio/m4a" | "audio/x-m4a" => AudioFormat::M4a,
            "audio/mpeg" | "audio/mp3" | "audio/mpga" => AudioFormat::Mpeg,
            "audio/wav" | "audio/x-wav" | "audio/wave" | "audio/vnd.wave" => AudioFormat::Wav,
            "audio/flac" | "audio/x-flac" => AudioFormat::Flac,
            _ => {
                return Err(TranscriptionError::UnsupportedFormat(format!(
                    "{essence} is not supported; send webm, ogg, mp4, m4a, mpeg (mp3), wav or flac"
                )));
            }
        }))
    }

    /// The container `bytes` start with, from its magic number.
    pub fn sniff(bytes: &[u8]) -> Option<Self> {
        let starts = |magic: &[u8]| bytes.starts_with(magic);
        if starts(&[0x1A, 0x45, 0xDF, 0xA3]) {
            Some(AudioFormat::Webm)
        } else if starts(b"OggS") {
            Some(AudioFormat::Ogg)
        } else if starts(b"fLaC") {
            Some(AudioFormat::Flac)
        } else if starts(b"RIFF") && bytes.get(8..12) == Some(b"WAVE") {
            Some(AudioFormat::Wav)
        } else if bytes.get(4..8) == Some(b"ftyp") {
            let brand = bytes.get(8..11);
            Some(if brand == Some(b"M4A") {
                AudioFormat::M4a
            } else {
                AudioFormat::Mp4
            })
        } else if starts(b"ID3")
            || (bytes.len() >= 2 && bytes[0] == 0xFF && bytes[1] & 0xE0 == 0xE0)
        {
            Some(AudioFormat::Mpeg)
        } else {
            None
        }
    }

    /// MP4 and M4A are the same container.
    fn same_container(self, other: AudioFormat) -> bool {
        let family = |f| match f {
            AudioFormat::M4a => AudioFormat::Mp4,
            f => f,
        };
        family(self) == family(other)
    }
}

/// A recording to transcribe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AudioClip {
    pub bytes: Bytes,
    /// As sent by the client, e.g. `audio/webm;codecs=opus`.
    pub content_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transcript {
    pub text: String,
    pub model: String,
    pub latency_ms: u64,
    pub attempts: u32,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TranscriptionError {
    #[error("the recording is empty")]
    Empty,
    #[error("the recording is {bytes} bytes; the limit is {limit} bytes")]
    TooLarge { bytes: u64, limit: u64 },
    #[error("unsupported audio: {0}")]
    UnsupportedFormat(String),
    #[error(transparent)]
    Provider(#[from] LlmError),
}

#[derive(Debug)]
pub struct OpenAiTranscriber {
    endpoint: Endpoint,
    model: String,
    max_bytes: u64,
    http: HttpJson,
}

impl OpenAiTranscriber {
    /// The configured transcriber; `None` when transcription is off.
    pub fn from_config(
        config: &TranscriptionConfig,
        env: impl Fn(&str) -> Option<String>,
        retry: RetryPolicy,
    ) -> Result<Option<Self>, LlmSetupError> {
        if config.provider == TranscriptionProvider::None {
            return Ok(None);
        }
        const SECTION: &str = "transcription";
        if config.base_url.trim().is_empty() {
            return Err(LlmSetupError::NoBaseUrl { section: SECTION });
        }
        let reference = config
            .api_key
            .as_deref()
            .ok_or(LlmSetupError::MissingKey { section: SECTION })?;
        let endpoint = Endpoint {
            base_url: config.base_url.trim().to_owned(),
            api_key: Some(api_key(SECTION, reference, env)?),
            default_model: config.model.trim().to_owned(),
        };
        Ok(Some(OpenAiTranscriber::new(
            endpoint,
            config.max_upload_bytes,
            retry,
        )))
    }

    /// `max_bytes` is capped at the API's own limit.
    pub fn new(endpoint: Endpoint, max_bytes: u64, retry: RetryPolicy) -> Self {
        OpenAiTranscriber {
            model: endpoint.default_model.clone(),
            endpoint,
            max_bytes: max_bytes.min(MAX_AUDIO_BYTES),
            http: HttpJson::new(retry),
        }
    }

    /// The format `clip` will be sent as, or why it cannot be sent.
    pub fn check(&self, clip: &AudioClip) -> Result<AudioFormat, TranscriptionError> {
        if clip.bytes.is_empty() {
            return Err(TranscriptionError::Empty);
        }
        let size = u64::try_from(clip.bytes.len()).unwrap_or(u64::MAX);
        if size > self.max_bytes {
            return Err(TranscriptionError::TooLarge {
                bytes: size,
                limit: self.max_bytes,
            });
        }
        let declared = match clip.content_type.as_deref() {
            Some(content_type) => AudioFormat::from_content_type(content_type)?,
            None => None,
        };
        let sniffed = AudioFormat::sniff(&clip.bytes);
        match (declared, sniffed) {
            (Some(declared), Some(actual)) if declared.same_container(actual) => Ok(declared),
            (Some(declared), _) => Err(TranscriptionError::UnsupportedFormat(format!(
                "the data is not {} audio",
                declared.extension()
            ))),
            (None, Some(actual)) => Ok(actual),
            (None, None) => Err(TranscriptionError::UnsupportedFormat(
                "the data is not a recording in a supported format".into(),
            )),
        }
    }

    /// The text spoken in `clip`. `language` is an ISO-639-1 hint.
    pub async fn transcribe(
        &self,
        clip: &AudioClip,
        language: Option<&str>,
        deadline: Option<Instant>,
    ) -> Result<Transcript, TranscriptionError> {
        let format = self.check(clip)?;
        let started = Instant::now();
        let deadline = deadline.map_or(started + DEFAULT_TIMEOUT, |d| {
            d.min(started + DEFAULT_TIMEOUT)
        });
        let url = self.endpoint.url("audio/transcriptions");
        let key = self.endpoint.api_key.clone();
        let size = u64::try_from(clip.bytes.len()).unwrap_or(u64::MAX);
        let limit = self.max_bytes;
        let result = self
            .http
            .send(
                || {
                    // The API tells formats apart by the file name's extension.
                    let file =
                        Part::stream_with_length(reqwest::Body::from(clip.bytes.clone()), size)
                            .file_name(format!("audio.{}", format.extension()));
                    let mut form = Form::new()
                        .text("model", self.model.clone())
                        .text("response_format", "json")
                        .part("file", file);
                    if let Some(language) = language {
                        form = form.text("language", language.to_owned());
                    }
                    let builder = self.http.client().post(&url).multipart(form);
                    match &key {
                        Some(key) => {
                            builder.header(AUTHORIZATION, format!("Bearer {}", key.expose()))
                        }
                        None => builder,
                    }
                },
                deadline,
                |status, headers, body| classify(status, headers, body, size, limit),
            )
            .await;
        let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let outcome = match &result {
            Ok(_) => "ok",
            Err(e) => e.kind(),
        };
        tracing::info!(
            target: "tutorflow::llm",
            call = "transcription",
            provider = "openai",
            model = %self.model,
            audio_bytes = size,
            latency_ms,
            outcome,
            "transcription"
        );
        let reply = result?;
        let text = reply
            .body
            .get("text")
            .and_then(Value::as_str)
            .ok_or_else(|| LlmError::InvalidOutput("the response has no text".into()))?;
        Ok(Transcript {
            text: text.trim().to_owned(),
            model: self.model.clone(),
            latency_ms,
            attempts: reply.attempts,
        })
    }
}

/// OpenAI's error body; a 413 is the upload limit.
fn classify(
    status: StatusCode,
    headers: &HeaderMap,
    body: &str,
    bytes: u64,
    limit: u64,
) -> AttemptFailure {
    let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let message = parsed
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or(body);
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return AttemptFailure::fatal(LlmError::BadRequest(format!(
            "the recording is {bytes} bytes, more than the provider accepts (limit {limit})"
        )));
    }
    failure_for_status(status, message, retry_after_header(headers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_recognised_by_their_first_bytes() {
        let mut wav = b"RIFF\0\0\0\0WAVEfmt ".to_vec();
        wav.extend([0; 8]);
        assert_eq!(AudioFormat::sniff(&wav), Some(AudioFormat::Wav));
        assert_eq!(
            AudioFormat::sniff(&[0x1A, 0x45, 0xDF, 0xA3, 1]),
            Some(AudioFormat::Webm)
        );
        assert_eq!(AudioFormat::sniff(b"OggS\0"), Some(AudioFormat::Ogg));
        assert_eq!(AudioFormat::sniff(b"fLaC\0"), Some(AudioFormat::Flac));
        assert_eq!(AudioFormat::sniff(b"ID3\x04"), Some(AudioFormat::Mpeg));
        assert_eq!(
            AudioFormat::sniff(&[0xFF, 0xFB, 0x90]),
            Some(AudioFormat::Mpeg)
        );
        assert_eq!(
            AudioFormat::sniff(b"\0\0\0\x20ftypM4A "),
            Some(AudioFormat::M4a)
        );
        assert_eq!(
            AudioFormat::sniff(b"\0\0\0\x20ftypisom"),
            Some(AudioFormat::Mp4)
        );
        assert_eq!(AudioFormat::sniff(b"%PDF-1.7"), None);
        assert_eq!(AudioFormat::sniff(b""), None);
    }

    #[test]
    fn content_types_ignore_parameters_and_case() {
        assert_eq!(
            AudioFormat::from_content_type("Audio/WebM; codecs=opus"),
            Ok(Some(AudioFormat::Webm))
        );
        assert_eq!(
            AudioFormat::from_content_type("application/octet-stream"),
            Ok(None)
        );
        assert!(matches!(
            AudioFormat::from_content_type("audio/aac"),
            Err(TranscriptionError::UnsupportedFormat(_))
        ));
    }
}
