//! How a step reaches the App: an HTTP-shaped POST through the handler a
//! Lambda function would run, and the API's refusal when it says no.

use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use http::{HeaderMap, Method, Uri};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tutorflow::api::incoming::{IDEMPOTENCY_HEADER, Incoming};
use tutorflow::api::routes::Function;
use tutorflow::content::yaml_index::Position;

use super::{Simulation, StepError};
use crate::script::Step;

/// The API refused a request.
pub(super) struct Refused {
    pub(super) status: u16,
    pub(super) title: String,
    pub(super) detail: String,
}

impl Refused {
    /// The refusal of `what` ("this step"), reported at `at`.
    pub(super) fn at(self, at: Position, what: &str) -> StepError {
        StepError {
            at,
            message: format!(
                "the API refused {what} ({} {}): {}",
                self.status, self.title, self.detail
            ),
        }
    }
}

impl Simulation<'_> {
    /// POSTs a step's request, keyed by the step for idempotency; a
    /// refusal is the step's error.
    pub(super) async fn post_step<T: DeserializeOwned>(
        &self,
        step: &Step,
        path: &str,
        body: &impl Serialize,
        function: Function,
    ) -> Result<T, StepError> {
        self.post(path, body, function, &step.number.to_string())
            .await
            .map_err(|r| r.at(step.at, "this step"))
    }

    /// POSTs `body` as the student's app would, through the handler of
    /// `function`, and reads the reply.
    pub(super) async fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
        function: Function,
        idempotency_key: &str,
    ) -> Result<T, Refused> {
        let internal = |detail: String| Refused {
            status: 0,
            title: "simulation error".to_owned(),
            detail,
        };
        let uri: Uri = path
            .parse()
            .map_err(|e| internal(format!("bad path {path}: {e}")))?;
        let body = serde_json::to_vec(body).map_err(|e| internal(e.to_string()))?;
        let mut headers = HeaderMap::new();
        let header = |value: &str| {
            HeaderValue::from_str(value).map_err(|e| internal(format!("header {value}: {e}")))
        };
        headers.insert(AUTHORIZATION, header(&self.bearer)?);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            IDEMPOTENCY_HEADER,
            header(&format!("sim-step-{idempotency_key}"))?,
        );
        let response = self
            .app
            .handle(
                Incoming {
                    method: Method::POST,
                    uri,
                    headers,
                    body: Bytes::from(body),
                    request_id: format!("sim-request-{idempotency_key}"),
                    authorizer_claims: None,
                },
                Some(function),
            )
            .await;
        let status = response.status();
        let bytes = response.into_body();
        if !status.is_success() {
            let problem: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            return Err(Refused {
                status: status.as_u16(),
                title: problem["title"]
                    .as_str()
                    .or(status.canonical_reason())
                    .unwrap_or("error")
                    .to_owned(),
                detail: problem["detail"].as_str().unwrap_or_default().to_owned(),
            });
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| internal(format!("unexpected reply to {path}: {e}")))
    }
}
