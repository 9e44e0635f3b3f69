//! Students' voice recordings in S3: each uploads to a key under its own
//! prefix with a presigned PUT bound to the declared size and type, and
//! the transcription reads it back from there.

use std::time::Duration;

use aws_sdk_s3::presigning::PresigningConfig;
use bytes::Bytes;

use crate::config::TranscriptionConfig;

/// The bucket audio is uploaded to, and the rules for it.
#[derive(Clone)]
pub struct AudioStore {
    client: aws_sdk_s3::Client,
    bucket: String,
    prefix: String,
    max_upload_bytes: u64,
    presign_for: Duration,
}

/// Why an uploaded recording could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum AudioFetchError {
    /// There is none under the key (or it has expired).
    Missing,
    /// It is larger than an upload may be.
    TooLarge,
    /// The bucket could not be read.
    Unreadable,
}

/// A recording read back from the bucket.
pub struct StoredAudio {
    pub bytes: Bytes,
    pub content_type: Option<String>,
}

impl AudioStore {
    pub fn new(client: aws_sdk_s3::Client, bucket: &str, config: &TranscriptionConfig) -> Self {
        AudioStore {
            client,
            bucket: bucket.to_owned(),
            prefix: config.upload_prefix.clone(),
            max_upload_bytes: config.max_upload_bytes,
            presign_for: Duration::from_secs(config.presign_seconds.clamp(30, 3600)),
        }
    }

    /// The largest recording a student may upload.
    pub fn max_upload_bytes(&self) -> u64 {
        self.max_upload_bytes
    }

    /// How long a presigned upload stays valid.
    pub fn presign_for(&self) -> Duration {
        self.presign_for
    }

    /// Where a student's uploads go: nobody can name another student's key.
    fn student_prefix(&self, student_id: &str) -> String {
        format!("{}{}/", self.prefix, hex_id(student_id))
    }

    /// A new key for a recording of `student_id`, named `name.extension`.
    pub fn new_key(&self, student_id: &str, name: &str, extension: &str) -> String {
        format!("{}{name}.{extension}", self.student_prefix(student_id))
    }

    /// Whether `key` can only be one of `student_id`'s uploads.
    pub fn is_students(&self, student_id: &str, key: &str) -> bool {
        key.starts_with(&self.student_prefix(student_id)) && !key.contains("..")
    }

    /// The recording under `key`.
    pub async fn fetch(&self, key: &str) -> Result<StoredAudio, AudioFetchError> {
        let object = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await
            .map_err(|e| {
                if e.as_service_error().is_some_and(|s| s.is_no_such_key()) {
                    AudioFetchError::Missing
                } else {
                    tracing::warn!(error = %aws_sdk_s3::error::DisplayErrorContext(&e), "audio fetch failed");
                    AudioFetchError::Unreadable
                }
            })?;
        if object.content_length().unwrap_or(0) as u64 > self.max_upload_bytes {
            return Err(AudioFetchError::TooLarge);
        }
        let content_type = object.content_type().map(str::to_owned);
        let bytes = object
            .body
            .collect()
            .await
            .map_err(|_| AudioFetchError::Unreadable)?
            .into_bytes();
        Ok(StoredAudio {
            bytes,
            content_type,
        })
    }

    /// A presigned PUT URL for one upload of exactly `size_bytes` of
    /// `content_type` to `key`.
    pub async fn presign_upload(
        &self,
        key: &str,
        content_type: &str,
        size_bytes: u64,
    ) -> Result<String, String> {
        let presigning =
            PresigningConfig::expires_in(self.presign_for).map_err(|e| e.to_string())?;
        let signed = self
            .client
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            .content_type(content_type)
            .content_length(i64::try_from(size_bytes).unwrap_or(i64::MAX))
            .presigned(presigning)
            .await
            .map_err(|e| format!("presign: {e}"))?;
        Ok(signed.uri().to_owned())
    }
}

/// Student ids may contain characters that are awkward in keys.
fn hex_id(id: &str) -> String {
    id.bytes().map(|b| format!("{b:02x}")).collect()
}
