//! A client for an external exam service, which is then the authority on
//! exam lockouts and verdicts (lockouts come from the school's own API).
//! Its contract is documented in the README and the OpenAPI file.

use std::collections::BTreeMap;
use std::time::Duration as StdDuration;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::config::ExamApiConfig;
use crate::engine::exam::lockout::LockoutStatus;
use crate::model::SupportType;
use crate::secrets::{self, UnresolvedSecret};

/// How long a question the API reports locked without a time stays locked.
const DEFAULT_LOCK_HOURS: i64 = 24;

/// The external exam service.
pub struct ExamApi {
    base_url: String,
    api_key: Option<String>,
    http: reqwest::Client,
    timeout: StdDuration,
}

/// Why a call to the exam service gave no answer.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ExamApiError(String);

/// What the service decided about an answer.
pub struct ExamVerdict {
    pub correct: bool,
    /// Set when the question is now locked.
    pub locked_until: Option<DateTime<Utc>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusRequest<'a> {
    student_id: &'a str,
    course_id: &'a str,
    question_ids: &'a [String],
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StatusResponse {
    statuses: BTreeMap<String, ExternalStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExternalStatus {
    status: String,
    #[serde(default)]
    locked_until: Option<DateTime<Utc>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SubmitRequest<'a> {
    student_id: &'a str,
    course_id: &'a str,
    question_id: &'a str,
    selected_option: &'a str,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SubmitResponse {
    correct: bool,
    #[serde(default)]
    locked_until: Option<DateTime<Utc>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SupportRequest<'a> {
    student_id: &'a str,
    course_id: &'a str,
    question_id: &'a str,
    support_type: SupportType,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SupportResponse {
    #[serde(default)]
    locked_until: Option<DateTime<Utc>>,
}

impl ExamApi {
    /// The service `config` names; `None` when it names none.
    pub fn from_config(
        config: &ExamApiConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, UnresolvedSecret> {
        let Some(base_url) = config.base_url.clone() else {
            return Ok(None);
        };
        let api_key = match &config.api_key {
            Some(reference) => Some(secrets::resolve("exam_api.api_key", reference, env)?),
            None => None,
        };
        Ok(Some(ExamApi {
            base_url,
            api_key,
            http: crate::http_client::shared(),
            timeout: StdDuration::from_millis(config.timeout_ms.max(1)),
        }))
    }

    /// The statuses of `question_ids` for the student; a question the
    /// service does not report is available.
    pub async fn statuses(
        &self,
        student_id: &str,
        course_id: &str,
        question_ids: &[String],
        now: DateTime<Utc>,
    ) -> Result<BTreeMap<String, LockoutStatus>, ExamApiError> {
        let response: StatusResponse = self
            .post(
                "/status",
                &StatusRequest {
                    student_id,
                    course_id,
                    question_ids,
                },
            )
            .await?;
        Ok(question_ids
            .iter()
            .map(|q| {
                let status = match response.statuses.get(q) {
                    Some(s) if s.status == "locked" => LockoutStatus::Locked {
                        until: s
                            .locked_until
                            .unwrap_or(now + Duration::hours(DEFAULT_LOCK_HOURS)),
                    },
                    Some(s) if s.status == "passed" => LockoutStatus::Passed,
                    _ => LockoutStatus::Available,
                };
                (q.clone(), status)
            })
            .collect())
    }

    /// Submits the student's chosen option; the service marks it.
    pub async fn submit(
        &self,
        student_id: &str,
        course_id: &str,
        question_id: &str,
        selected_option: &str,
    ) -> Result<ExamVerdict, ExamApiError> {
        let response: SubmitResponse = self
            .post(
                "/submissions",
                &SubmitRequest {
                    student_id,
                    course_id,
                    question_id,
                    selected_option,
                },
            )
            .await?;
        Ok(ExamVerdict {
            correct: response.correct,
            locked_until: response.locked_until,
        })
    }

    /// Tells the service the student opened a question's memo or video;
    /// answers until when the question is now locked.
    pub async fn support_viewed(
        &self,
        student_id: &str,
        course_id: &str,
        question_id: &str,
        support_type: SupportType,
    ) -> Result<Option<DateTime<Utc>>, ExamApiError> {
        let response: SupportResponse = self
            .post(
                "/support-views",
                &SupportRequest {
                    student_id,
                    course_id,
                    question_id,
                    support_type,
                },
            )
            .await?;
        Ok(response.locked_until)
    }

    async fn post<Req: Serialize, Res: for<'de> Deserialize<'de>>(
        &self,
        path: &str,
        body: &Req,
    ) -> Result<Res, ExamApiError> {
        let mut request = self
            .http
            .post(format!("{}{path}", self.base_url.trim_end_matches('/')))
            .timeout(self.timeout)
            .json(body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let failed = |e: reqwest::Error| ExamApiError(e.to_string());
        let response = request.send().await.map_err(failed)?;
        if !response.status().is_success() {
            return Err(ExamApiError(format!("status {}", response.status())));
        }
        response.json().await.map_err(failed)
    }
}
