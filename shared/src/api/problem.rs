//! RFC 9457 problem details: every 4xx/5xx body.

use bytes::Bytes;
use http::{HeaderValue, Method, Response, StatusCode, header};
use serde::Serialize;

pub const PROBLEM_JSON: &str = "application/problem+json";

/// What went wrong, in a form the caller can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub status: StatusCode,
    /// Short machine-readable kind, e.g. `invalid-body`; the `type` URI ends with it.
    pub kind: &'static str,
    pub title: &'static str,
    pub detail: String,
    /// The offending field, as a dotted path into the request body (`clientEvent.type`).
    pub field: Option<String>,
    /// Seconds after which retrying may succeed (sent as `Retry-After`).
    pub retry_after: Option<u32>,
    /// Methods the path supports, for 405.
    pub allow: Vec<Method>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    #[serde(rename = "type")]
    kind: String,
    title: &'a str,
    status: u16,
    detail: &'a str,
    instance: &'a str,
    request_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'a str>,
}

impl Problem {
    pub fn new(
        status: StatusCode,
        kind: &'static str,
        title: &'static str,
        detail: impl Into<String>,
    ) -> Self {
        Problem {
            status,
            kind,
            title,
            detail: detail.into(),
            field: None,
            retry_after: None,
            allow: Vec::new(),
        }
    }

    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into()).filter(|f: &String| !f.is_empty());
        self
    }

    pub fn with_retry_after(mut self, seconds: u32) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    pub fn bad_request(detail: impl Into<String>) -> Self {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "invalid-request",
            "Invalid request",
            detail,
        )
    }

    pub fn invalid_body(detail: impl Into<String>) -> Self {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "invalid-body",
            "Invalid request body",
            detail,
        )
    }

    pub fn unauthorized(detail: impl Into<String>) -> Self {
        Problem::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "Not authenticated",
            detail,
        )
    }

    pub fn forbidden(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::FORBIDDEN, "forbidden", "Not allowed", detail)
    }

    /// Also used for resources that exist but are not the caller's, so that
    /// nobody can probe for other students' threads.
    pub fn not_found(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::NOT_FOUND, "not-found", "Not found", detail)
    }

    pub fn method_not_allowed(allow: Vec<Method>) -> Self {
        let names: Vec<&str> = allow.iter().map(Method::as_str).collect();
        let mut p = Problem::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method-not-allowed",
            "Method not allowed",
            format!("this path accepts {}", names.join(", ")),
        );
        p.allow = allow;
        p
    }

    pub fn conflict(detail: impl Into<String>) -> Self {
        Problem::new(StatusCode::CONFLICT, "conflict", "Conflict", detail)
    }

    pub fn too_large(detail: impl Into<String>) -> Self {
        Problem::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too-large",
            "Request too large",
            detail,
        )
    }

    pub fn unsupported_media_type(detail: impl Into<String>) -> Self {
        Problem::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported-media-type",
            "Unsupported media type",
            detail,
        )
    }

    pub fn unprocessable(
        kind: &'static str,
        title: &'static str,
        detail: impl Into<String>,
    ) -> Self {
        Problem::new(StatusCode::UNPROCESSABLE_ENTITY, kind, title, detail)
    }

    pub fn unavailable(detail: impl Into<String>) -> Self {
        Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "Temporarily unavailable",
            detail,
        )
    }

    /// An unexpected failure; the detail never includes internal error text.
    pub fn internal() -> Self {
        Problem::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "Internal error",
            "something went wrong on our side; the request id identifies it in our logs",
        )
    }

    /// The `application/problem+json` response for a request to `instance`.
    pub fn to_response(&self, instance: &str, request_id: &str) -> Response<Bytes> {
        let body = Body {
            kind: format!("urn:tutorflow:problem:{}", self.kind),
            title: self.title,
            status: self.status.as_u16(),
            detail: &self.detail,
            instance,
            request_id,
            field: self.field.as_deref(),
        };
        let json = serde_json::to_vec(&body).unwrap_or_default();
        let mut response = Response::new(Bytes::from(json));
        *response.status_mut() = self.status;
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if let Some(seconds) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if !self.allow.is_empty() {
            let allow: Vec<&str> = self.allow.iter().map(Method::as_str).collect();
            if let Ok(v) = HeaderValue::from_str(&allow.join(", ")) {
                headers.insert(header::ALLOW, v);
            }
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_rfc9457_with_request_id_and_field() {
        let p = Problem::invalid_body("unknown field `messageTxt`").with_field("messageTxt");
        let r = p.to_response("/threads/t1/turn", "req-1");
        assert_eq!(r.status(), 400);
        assert_eq!(r.headers()[header::CONTENT_TYPE], PROBLEM_JSON);
        let v: serde_json::Value = serde_json::from_slice(r.body()).unwrap();
        assert_eq!(v["type"], "urn:tutorflow:problem:invalid-body");
        assert_eq!(v["status"], 400);
        assert_eq!(v["instance"], "/threads/t1/turn");
        assert_eq!(v["requestId"], "req-1");
        assert_eq!(v["field"], "messageTxt");
        assert!(v["detail"].as_str().unwrap().contains("messageTxt"));
    }

    #[test]
    fn carries_retry_after_and_allow() {
        let r = Problem::conflict("busy")
            .with_retry_after(2)
            .to_response("/x", "r");
        assert_eq!(r.headers()[header::RETRY_AFTER], "2");
        let r = Problem::method_not_allowed(vec![Method::POST]).to_response("/x", "r");
        assert_eq!(r.status(), 405);
        assert_eq!(r.headers()[header::ALLOW], "POST");
    }
}
