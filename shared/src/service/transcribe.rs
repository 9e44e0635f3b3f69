//! Voice notes: `POST /transcribe` with small audio in the body, or with
//! `{key}` for a recording uploaded to S3 through `POST /transcribe/uploads`
//! (a presigned PUT bound to the declared size and type).

use std::time::Duration as StdDuration;

use aws_sdk_s3::presigning::PresigningConfig;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::ServiceError;
use super::{App, Output};
use crate::api::problem::Problem;
use crate::config::TranscriptionConfig;
use crate::llm::transcription::{AudioClip, AudioFormat, TranscriptionError};
use crate::model::Principal;

/// The bucket audio is uploaded to, and the rules for it.
#[derive(Clone)]
pub struct AudioStore {
    client: aws_sdk_s3::Client,
    bucket: String,
    prefix: String,
    max_upload_bytes: u64,
    presign_for: StdDuration,
}

impl AudioStore {
    pub fn new(client: aws_sdk_s3::Client, bucket: &str, config: &TranscriptionConfig) -> Self {
        AudioStore {
            client,
            bucket: bucket.to_owned(),
            prefix: config.upload_prefix.clone(),
            max_upload_bytes: config.max_upload_bytes,
            presign_for: StdDuration::from_secs(config.presign_seconds.clamp(30, 3600)),
        }
    }

    /// Where a student's uploads go: nobody can name another student's key.
    fn student_prefix(&self, student_id: &str) -> String {
        format!("{}{}/", self.prefix, hex_id(student_id))
    }
}

/// Student ids may contain characters that are awkward in keys.
fn hex_id(id: &str) -> String {
    id.bytes().map(|b| format!("{b:02x}")).collect()
}

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
    Problem::unavailable("voice transcription is not configured on this server").into()
}

fn transcription_problem(e: TranscriptionError) -> ServiceError {
    match e {
        TranscriptionError::Empty => ServiceError::bad_request("the recording is empty"),
        TranscriptionError::TooLarge { bytes, limit } => Problem::too_large(format!(
            "the recording is {bytes} bytes; the limit is {limit} bytes"
        ))
        .into(),
        TranscriptionError::UnsupportedFormat(detail) => {
            Problem::unsupported_media_type(detail).into()
        }
        TranscriptionError::Provider(e) => {
            tracing::warn!(error = %e, "transcription provider failed");
            Problem::unavailable("the transcription service failed; try again shortly")
                .with_retry_after(3)
                .into()
        }
    }
}

impl App {
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
            return Err(Problem::too_large(format!(
                "recordings over {limit} bytes must be uploaded first: POST /transcribe/uploads"
            ))
            .into());
        }
        let clip = AudioClip {
            bytes: body,
            content_type: content_type.map(str::to_owned),
        };
        let transcript = transcriber
            .transcribe(&clip, language, Some(self.transcription_deadline()))
            .await
            .map_err(transcription_problem)?;
        Output::json(
            200,
            &TranscriptBody {
                text: transcript.text,
            },
        )
    }

    /// A recording the student uploaded with a presigned URL.
    pub async fn transcribe_uploaded(
        &self,
        who: &Principal,
        request: UploadedAudio,
    ) -> Result<Output, ServiceError> {
        let transcriber = self.transcriber.as_ref().ok_or_else(not_configured)?;
        let audio = self.audio.as_ref().ok_or_else(not_configured)?;
        if !request
            .key
            .starts_with(&audio.student_prefix(&who.student_id))
            || request.key.contains("..")
        {
            return Err(ServiceError::not_found("no such upload"));
        }
        let object = audio
            .client
            .get_object()
            .bucket(&audio.bucket)
            .key(&request.key)
            .send()
            .await
            .map_err(|e| {
                if e.as_service_error().is_some_and(|s| s.is_no_such_key()) {
                    ServiceError::not_found("no such upload (it may have expired)")
                } else {
                    tracing::warn!(error = %aws_sdk_s3::error::DisplayErrorContext(&e), "audio fetch failed");
                    Problem::unavailable("the upload cannot be read right now").into()
                }
            })?;
        if object.content_length().unwrap_or(0) as u64 > audio.max_upload_bytes {
            return Err(Problem::too_large("the upload is larger than allowed").into());
        }
        let content_type = object.content_type().map(str::to_owned);
        let bytes = object
            .body
            .collect()
            .await
            .map_err(|_| {
                ServiceError::from(Problem::unavailable("the upload cannot be read right now"))
            })?
            .into_bytes();
        let clip = AudioClip {
            bytes,
            content_type,
        };
        let transcript = transcriber
            .transcribe(
                &clip,
                request.language.as_deref(),
                Some(self.transcription_deadline()),
            )
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
        if request.size_bytes == 0 || request.size_bytes > audio.max_upload_bytes {
            return Err(ServiceError::invalid_field(
                "sizeBytes",
                format!("recordings must be 1 to {} bytes", audio.max_upload_bytes),
            ));
        }
        let key = format!(
            "{}{}.{}",
            audio.student_prefix(&who.student_id),
            self.ids.new_id(),
            format.extension()
        );
        let presigning = PresigningConfig::expires_in(audio.presign_for)
            .map_err(|e| ServiceError::internal(e.to_string()))?;
        let signed = audio
            .client
            .put_object()
            .bucket(&audio.bucket)
            .key(&key)
            .content_type(&request.content_type)
            .content_length(i64::try_from(request.size_bytes).unwrap_or(i64::MAX))
            .presigned(presigning)
            .await
            .map_err(|e| ServiceError::internal(format!("presign: {e}")))?;
        let headers = [
            ("Content-Type".to_owned(), request.content_type.clone()),
            ("Content-Length".to_owned(), request.size_bytes.to_string()),
        ]
        .into_iter()
        .collect();
        let expires_at = self.clock.now()
            + chrono::Duration::from_std(audio.presign_for)
                .unwrap_or_else(|_| chrono::Duration::minutes(5));
        Output::json(
            201,
            &UploadTicket {
                key,
                upload_url: signed.uri().to_owned(),
                headers,
                expires_at,
            },
        )
    }

    fn transcription_deadline(&self) -> tokio::time::Instant {
        tokio::time::Instant::now() + StdDuration::from_secs(60)
    }
}
