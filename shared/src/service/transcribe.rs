//! Voice notes: `POST /transcribe` with small audio in the body, or with
//! `{key}` for a recording uploaded to S3 through `POST /transcribe/uploads`
//! (a presigned PUT bound to the declared size and type).

use std::time::Duration as StdDuration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::ServiceError;
use super::{Output, Service};
use crate::llm::transcription::{AudioClip, AudioFormat, OpenAiTranscriber, TranscriptionError};
use crate::model::Principal;
use crate::store::AudioFetchError;

/// `POST /transcribe/uploads`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UploadRequest {
    pub content_type: String,
    pub size_bytes: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadTicket {
    key: String,
    upload_url: String,
    /// Send these headers with the PUT, exactly.
    headers: std::collections::BTreeMap<String, String>,
    expires_at: DateTime<Utc>,
}

/// `POST /transcribe` with JSON: an uploaded recording.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UploadedAudio {
    pub key: String,
    #[serde(default)]
    pub language: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptBody {
    text: String,
}

fn not_configured() -> ServiceError {
    ServiceError::unavailable("voice transcription is not configured on this server", None)
}

fn transcription_problem(e: TranscriptionError) -> ServiceError {
    match e {
        TranscriptionError::Empty => ServiceError::invalid_request("the recording is empty"),
        TranscriptionError::TooLarge { bytes, limit } => ServiceError::TooLarge(format!(
            "the recording is {bytes} bytes; the limit is {limit} bytes"
        )),
        TranscriptionError::UnsupportedFormat(detail) => ServiceError::UnsupportedMediaType(detail),
        TranscriptionError::Provider(e) => {
            tracing::warn!(error = %e, "transcription provider failed");
            ServiceError::unavailable(
                "the transcription service failed; try again shortly",
                Some(3),
            )
        }
    }
}

impl Service {
    /// Audio in the request body (small recordings).
    pub async fn transcribe_inline(
        &self,
        content_type: Option<&str>,
        body: Bytes,
        language: Option<&str>,
    ) -> Result<Output, ServiceError> {
        let transcriber = self.transcriber.as_ref().ok_or_else(not_configured)?;
        let limit = self.config.transcription.max_inline_bytes;
        if body.len() as u64 > limit {
            return Err(ServiceError::TooLarge(format!(
                "recordings over {limit} bytes must be uploaded first: POST /transcribe/uploads"
            )));
        }
        let clip = AudioClip {
            bytes: body,
            content_type: content_type.map(str::to_owned),
        };
        self.transcript(transcriber, &clip, language).await
    }

    /// A recording the student uploaded with a presigned URL.
    pub async fn transcribe_uploaded(
        &self,
        who: &Principal,
        request: UploadedAudio,
    ) -> Result<Output, ServiceError> {
        let transcriber = self.transcriber.as_ref().ok_or_else(not_configured)?;
        let audio = self.audio.as_ref().ok_or_else(not_configured)?;
        if !audio.is_students(&who.student_id, &request.key) {
            return Err(ServiceError::not_found("no such upload"));
        }
        let stored = audio.fetch(&request.key).await.map_err(|e| match e {
            AudioFetchError::Missing => {
                ServiceError::not_found("no such upload (it may have expired)")
            }
            AudioFetchError::TooLarge => {
                ServiceError::TooLarge("the upload is larger than allowed".to_owned())
            }
            AudioFetchError::Unreadable => {
                ServiceError::unavailable("the upload cannot be read right now", None)
            }
        })?;
        let clip = AudioClip {
            bytes: stored.bytes,
            content_type: stored.content_type,
        };
        self.transcript(transcriber, &clip, request.language.as_deref())
            .await
    }

    /// The text of `clip`, however the recording came.
    async fn transcript(
        &self,
        transcriber: &OpenAiTranscriber,
        clip: &AudioClip,
        language: Option<&str>,
    ) -> Result<Output, ServiceError> {
        let transcript = transcriber
            .transcribe(clip, language, Some(self.transcription_deadline()))
            .await
            .map_err(transcription_problem)?;
        Output::json(
            200,
            &TranscriptBody {
                text: transcript.text,
            },
        )
    }

    /// `POST /transcribe/uploads`: a presigned PUT for one recording.
    pub async fn transcription_upload(
        &self,
        who: &Principal,
        request: UploadRequest,
    ) -> Result<Output, ServiceError> {
        let audio = self.audio.as_ref().ok_or_else(not_configured)?;
        let format = AudioFormat::from_content_type(&request.content_type)
            .map_err(transcription_problem)?
            .ok_or_else(|| {
                ServiceError::invalid_field("contentType", "name the audio type, e.g. audio/webm")
            })?;
        if request.size_bytes == 0 || request.size_bytes > audio.max_upload_bytes() {
            return Err(ServiceError::invalid_field(
                "sizeBytes",
                format!("recordings must be 1 to {} bytes", audio.max_upload_bytes()),
            ));
        }
        let key = audio.new_key(&who.student_id, &self.ids.new_id(), format.extension());
        let upload_url = audio
            .presign_upload(&key, &request.content_type, request.size_bytes)
            .await
            .map_err(ServiceError::internal)?;
        let headers = [
            ("Content-Type".to_owned(), request.content_type.clone()),
            ("Content-Length".to_owned(), request.size_bytes.to_string()),
        ]
        .into_iter()
        .collect();
        let expires_at = self.clock.now()
            + chrono::Duration::from_std(audio.presign_for())
                .unwrap_or_else(|_| chrono::Duration::minutes(5));
        Output::json(
            201,
            &UploadTicket {
                key,
                upload_url,
                headers,
                expires_at,
            },
        )
    }

    fn transcription_deadline(&self) -> tokio::time::Instant {
        tokio::time::Instant::now() + StdDuration::from_secs(60)
    }
}
