//! What `tutorflow serve` adds for the web page, beside the API: the built
//! page itself at `/`, the page's settings at `/config.json`, and a
//! development sign-in (`POST /dev/sign-in`: pick a student id, get a
//! token). None of it is a route of the Lambda functions: deployed, the page
//! is a static site and students sign in with the identity provider.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use http::{Method, Response, StatusCode};
use serde::{Deserialize, Serialize};

use super::auth::dev_token_in_groups;
use super::body::parse_json;
use super::problem::Problem;

/// How long a development sign-in lasts.
const DEV_TOKEN_TTL: Duration = Duration::from_secs(12 * 3600);
/// Longest student id the sign-in accepts.
const MAX_STUDENT_ID: usize = 64;
/// Largest sign-in body read.
const MAX_SIGN_IN_BODY: usize = 1024;

/// The page and its local helpers.
#[derive(Debug, Clone, Default)]
pub struct LocalSite {
    /// The built page (`web/dist`); `None` serves a note on how to build it.
    pub root: Option<PathBuf>,
    /// Signs development tokens; `None` switches the sign-in off.
    pub dev_secret: Option<String>,
    /// The group a "staff" sign-in is put in.
    pub staff_group: String,
    /// `/config.json`.
    pub page_config: PageConfig,
}

/// The settings the page reads at start (`/config.json`; a deployed site
/// ships its own file).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageConfig {
    /// Where the API is; empty for the page's own origin.
    pub api_base_url: String,
    /// `dev` (the local sign-in) or `oidc`.
    pub auth: String,
    /// Whether a transcription provider is configured (the voice button).
    pub transcription: bool,
    /// Whether the server sends debug traces to staff (the debug drawer).
    pub debug: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SignIn {
    student_id: String,
    #[serde(default)]
    staff: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SignedIn {
    student_id: String,
    token: String,
    expires_in_seconds: u64,
}

impl LocalSite {
    /// The response for a request the site handles, or `None` for the API.
    pub fn respond(
        &self,
        method: &Method,
        path: &str,
        headers: &http::HeaderMap,
        body: &Bytes,
    ) -> Option<Result<Response<Bytes>, Problem>> {
        match (method, path) {
            (&Method::POST, "/dev/sign-in") => Some(self.sign_in(headers, body)),
            (&Method::GET | &Method::HEAD, "/config.json") => Some(json(&self.page_config)),
            (&Method::GET | &Method::HEAD, "/" | "/index.html") => {
                Some(Ok(self.file("index.html")))
            }
            (&Method::GET | &Method::HEAD, p) if is_page_file(p) => {
                Some(Ok(self.file(p.trim_start_matches('/'))))
            }
            _ => None,
        }
    }

    fn sign_in(&self, headers: &http::HeaderMap, body: &Bytes) -> Result<Response<Bytes>, Problem> {
        let secret = self.dev_secret.as_deref().ok_or_else(|| {
            Problem::not_found(
                "the development sign-in is off: the server does not use HS256 tokens",
            )
        })?;
        let request: SignIn = parse_json(headers, body, MAX_SIGN_IN_BODY)?;
        let id = request.student_id.trim();
        let valid = !id.is_empty()
            && id.chars().count() <= MAX_STUDENT_ID
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.@".contains(c));
        if !valid {
            return Err(Problem::invalid_body(format!(
                "a student id is 1 to {MAX_STUDENT_ID} letters, digits, '-', '_', '.' or '@'"
            ))
            .with_field("studentId"));
        }
        let groups: Vec<&str> = if request.staff {
            vec![self.staff_group.as_str()]
        } else {
            Vec::new()
        };
        json(&SignedIn {
            student_id: id.to_owned(),
            token: dev_token_in_groups(secret, id, &groups, DEV_TOKEN_TTL),
            expires_in_seconds: DEV_TOKEN_TTL.as_secs(),
        })
    }

    fn file(&self, relative: &str) -> Response<Bytes> {
        let Some(root) = &self.root else {
            return not_built();
        };
        let Some(path) = safe_join(root, relative) else {
            return status(
                StatusCode::NOT_FOUND,
                "text/plain; charset=utf-8",
                "not found",
            );
        };
        match std::fs::read(&path) {
            Ok(bytes) => {
                let mut response = Response::new(Bytes::from(bytes));
                let headers = response.headers_mut();
                headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type(&path)));
                // Vite names built assets by their content hash.
                let cache = if relative.starts_with("assets/") {
                    "public, max-age=31536000, immutable"
                } else {
                    "no-cache"
                };
                headers.insert(CACHE_CONTROL, HeaderValue::from_static(cache));
                headers.insert(
                    "x-content-type-options",
                    HeaderValue::from_static("nosniff"),
                );
                response
            }
            Err(_) if relative == "index.html" => not_built(),
            Err(_) => status(
                StatusCode::NOT_FOUND,
                "text/plain; charset=utf-8",
                "not found",
            ),
        }
    }
}

/// Paths the page's files live under; everything else is the API's.
fn is_page_file(path: &str) -> bool {
    path.starts_with("/assets/") || matches!(path, "/favicon.svg" | "/robots.txt")
}

/// `relative` under `root`, refusing anything that climbs out of it.
fn safe_join(root: &Path, relative: &str) -> Option<PathBuf> {
    let relative = Path::new(relative);
    relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then(|| root.join(relative))
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "json" => "application/json",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "ttf" => "font/ttf",
        "png" => "image/png",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn json<T: Serialize>(value: &T) -> Result<Response<Bytes>, Problem> {
    let body = serde_json::to_vec(value).map_err(|_| Problem::internal())?;
    let mut response = Response::new(Bytes::from(body));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

fn status(code: StatusCode, content_type: &'static str, body: &'static str) -> Response<Bytes> {
    let mut response = Response::new(Bytes::from_static(body.as_bytes()));
    *response.status_mut() = code;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn not_built() -> Response<Bytes> {
    status(
        StatusCode::NOT_FOUND,
        "text/html; charset=utf-8",
        "<!doctype html><meta charset=utf-8><title>tutorflow</title>\
         <p>The web page is not built yet. From the repository root run \
         <code>npm --prefix web ci &amp;&amp; npm --prefix web run build</code>, \
         then reload. The API is served here as usual.</p>",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_outside_the_root_are_never_served() {
        let root = Path::new("/srv/web");
        assert_eq!(
            safe_join(root, "assets/app.js"),
            Some(PathBuf::from("/srv/web/assets/app.js"))
        );
        assert_eq!(safe_join(root, "assets/../../etc/passwd"), None);
        assert_eq!(safe_join(root, "/etc/passwd"), None);
        assert!(is_page_file("/assets/index-abc.js"));
        assert!(!is_page_file("/threads/t1"));
    }

    #[test]
    fn a_sign_in_needs_a_plain_student_id() {
        let site = LocalSite {
            dev_secret: Some("a-development-secret-0123456789".into()),
            staff_group: "staff".into(),
            ..LocalSite::default()
        };
        let mut headers = http::HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let ok = site
            .respond(
                &Method::POST,
                "/dev/sign-in",
                &headers,
                &Bytes::from_static(br#"{"studentId":"ada-1","staff":true}"#),
            )
            .unwrap()
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(ok.body()).unwrap();
        assert_eq!(body["studentId"], "ada-1");
        assert!(body["token"].as_str().unwrap().split('.').count() == 3);
        let bad = site
            .respond(
                &Method::POST,
                "/dev/sign-in",
                &headers,
                &Bytes::from_static(br#"{"studentId":"<script>"}"#),
            )
            .unwrap()
            .unwrap_err();
        assert_eq!(bad.field.as_deref(), Some("studentId"));
        let off = LocalSite::default()
            .respond(&Method::POST, "/dev/sign-in", &headers, &Bytes::new())
            .unwrap()
            .unwrap_err();
        assert_eq!(off.status, StatusCode::NOT_FOUND);
    }
}
