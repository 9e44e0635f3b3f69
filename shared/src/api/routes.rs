//! Every HTTP route, which function serves it, and path matching.
//!
//! This table is the single source of truth for routing: the shared handler
//! dispatches on it, the local server and `cargo lambda watch` serve it, and
//! the infrastructure test checks that the SAM template declares each route.

use http::Method;

/// The Lambda function a route belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Function {
    Turn,
    DrillGrade,
    ExamSubmit,
    SupportViewed,
    Transcribe,
    Summary,
}

impl Function {
    pub const ALL: [Function; 6] = [
        Function::Turn,
        Function::DrillGrade,
        Function::ExamSubmit,
        Function::SupportViewed,
        Function::Transcribe,
        Function::Summary,
    ];

    /// The function's crate and binary name (`functions/<name>`).
    pub fn name(self) -> &'static str {
        match self {
            Function::Turn => "turn",
            Function::DrillGrade => "drill-grade",
            Function::ExamSubmit => "exam-submit",
            Function::SupportViewed => "support-viewed",
            Function::Transcribe => "transcribe",
            Function::Summary => "summary",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Route {
    CreateThread,
    Turn,
    PauseThread,
    ResumeThread,
    EndThread,
    WebhookTurn,
    DrillGrade,
    McqSubmit,
    SupportViewed,
    Transcribe,
    TranscribeUpload,
    Summary,
    GetThread,
    ThreadLogs,
    ListThreads,
    CourseReport,
    ListCourses,
    GetCourse,
    GetProfile,
    PutProfile,
}

/// A route's method, path template (API Gateway syntax) and function.
pub struct RouteSpec {
    pub route: Route,
    pub method: Method,
    pub path: &'static str,
    pub function: Function,
    /// Whether the route changes state (and so honours `Idempotency-Key`).
    pub mutating: bool,
}

pub const ROUTES: &[RouteSpec] = &[
    spec(
        Route::CreateThread,
        Method::POST,
        "/threads",
        Function::Turn,
        true,
    ),
    spec(
        Route::Turn,
        Method::POST,
        "/threads/{threadId}/turn",
        Function::Turn,
        true,
    ),
    spec(
        Route::PauseThread,
        Method::POST,
        "/threads/{threadId}/pause",
        Function::Turn,
        true,
    ),
    spec(
        Route::ResumeThread,
        Method::POST,
        "/threads/{threadId}/resume",
        Function::Turn,
        true,
    ),
    spec(
        Route::EndThread,
        Method::POST,
        "/threads/{threadId}/end",
        Function::Turn,
        true,
    ),
    spec(
        Route::WebhookTurn,
        Method::POST,
        "/webhooks/turn",
        Function::Turn,
        true,
    ),
    spec(
        Route::DrillGrade,
        Method::POST,
        "/threads/{threadId}/drill/grade",
        Function::DrillGrade,
        true,
    ),
    spec(
        Route::McqSubmit,
        Method::POST,
        "/threads/{threadId}/exam/mcq-submit",
        Function::ExamSubmit,
        true,
    ),
    spec(
        Route::SupportViewed,
        Method::POST,
        "/threads/{threadId}/exam/support-viewed",
        Function::SupportViewed,
        true,
    ),
    spec(
        Route::Transcribe,
        Method::POST,
        "/transcribe",
        Function::Transcribe,
        true,
    ),
    spec(
        Route::TranscribeUpload,
        Method::POST,
        "/transcribe/uploads",
        Function::Transcribe,
        true,
    ),
    spec(
        Route::Summary,
        Method::GET,
        "/threads/{threadId}/summary",
        Function::Summary,
        false,
    ),
    spec(
        Route::GetThread,
        Method::GET,
        "/threads/{threadId}",
        Function::Summary,
        false,
    ),
    spec(
        Route::ThreadLogs,
        Method::GET,
        "/threads/{threadId}/logs",
        Function::Summary,
        false,
    ),
    spec(
        Route::ListThreads,
        Method::GET,
        "/me/threads",
        Function::Summary,
        false,
    ),
    spec(
        Route::GetProfile,
        Method::GET,
        "/me/profile",
        Function::Summary,
        false,
    ),
    spec(
        Route::PutProfile,
        Method::PUT,
        "/me/profile",
        Function::Turn,
        true,
    ),
    spec(
        Route::CourseReport,
        Method::GET,
        "/me/courses/{courseId}/report",
        Function::Summary,
        false,
    ),
    spec(
        Route::ListCourses,
        Method::GET,
        "/courses",
        Function::Summary,
        false,
    ),
    spec(
        Route::GetCourse,
        Method::GET,
        "/courses/{courseId}",
        Function::Summary,
        false,
    ),
];

const fn spec(
    route: Route,
    method: Method,
    path: &'static str,
    function: Function,
    mutating: bool,
) -> RouteSpec {
    RouteSpec {
        route,
        method,
        path,
        function,
        mutating,
    }
}

/// Values of a matched route's `{name}` segments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathParams(Vec<(&'static str, String)>);

impl PathParams {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The outcome of matching a request line against the table.
#[derive(Debug, PartialEq, Eq)]
pub enum Matched {
    Found(&'static RouteSpec, PathParams),
    /// The path exists but not with this method (405), with the allowed ones.
    WrongMethod(Vec<Method>),
    NotFound,
}

impl std::fmt::Debug for RouteSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

impl PartialEq for RouteSpec {
    fn eq(&self, other: &Self) -> bool {
        self.route == other.route
    }
}

impl Eq for RouteSpec {}

/// Matches `path` (without query string; a trailing slash is ignored).
pub fn match_route(method: &Method, path: &str) -> Matched {
    let path = path
        .strip_suffix('/')
        .filter(|p| !p.is_empty())
        .unwrap_or(path);
    let mut allowed = Vec::new();
    for spec in ROUTES {
        if let Some(params) = match_template(spec.path, path) {
            if spec.method == *method {
                return Matched::Found(spec, params);
            }
            allowed.push(spec.method.clone());
        }
    }
    if allowed.is_empty() {
        Matched::NotFound
    } else {
        Matched::WrongMethod(allowed)
    }
}

fn match_template(template: &'static str, path: &str) -> Option<PathParams> {
    let mut params = Vec::new();
    let mut segments = path.split('/');
    for part in template.split('/') {
        let segment = segments.next()?;
        match part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
            Some(name) => {
                let value = percent_decode(segment)?;
                if value.is_empty() {
                    return None;
                }
                params.push((name, value));
            }
            None if part == segment => {}
            None => return None,
        }
    }
    segments.next().is_none().then_some(PathParams(params))
}

/// Decodes `%XX` escapes; `None` for malformed escapes or non-UTF-8 results.
fn percent_decode(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = segment.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(method: Method, path: &str) -> (Route, PathParams) {
        match match_route(&method, path) {
            Matched::Found(spec, params) => (spec.route, params),
            other => panic!("{method} {path}: {other:?}"),
        }
    }

    #[test]
    fn matches_every_route_with_its_parameters() {
        let (route, params) = found(Method::POST, "/threads/t-1/turn");
        assert_eq!(route, Route::Turn);
        assert_eq!(params.get("threadId"), Some("t-1"));
        let (route, params) = found(Method::GET, "/me/courses/prealgebra/report/");
        assert_eq!(route, Route::CourseReport);
        assert_eq!(params.get("courseId"), Some("prealgebra"));
        assert_eq!(found(Method::GET, "/threads/abc").0, Route::GetThread);
        assert_eq!(found(Method::POST, "/threads").0, Route::CreateThread);
        assert_eq!(found(Method::GET, "/courses").0, Route::ListCourses);
        let (route, params) = found(Method::GET, "/courses/prealgebra");
        assert_eq!(route, Route::GetCourse);
        assert_eq!(params.get("courseId"), Some("prealgebra"));
        assert_eq!(
            found(Method::POST, "/threads/a%20b/drill/grade")
                .1
                .get("threadId"),
            Some("a b")
        );
    }

    #[test]
    fn distinguishes_wrong_method_from_unknown_path() {
        assert_eq!(
            match_route(&Method::DELETE, "/threads/t-1/turn"),
            Matched::WrongMethod(vec![Method::POST])
        );
        assert_eq!(
            match_route(&Method::GET, "/threads/t-1/turn/extra"),
            Matched::NotFound
        );
        assert_eq!(match_route(&Method::GET, "/nope"), Matched::NotFound);
        assert_eq!(
            match_route(&Method::GET, "/threads//summary"),
            Matched::NotFound
        );
        assert_eq!(
            match_route(&Method::GET, "/threads/%ZZ/summary"),
            Matched::NotFound
        );
    }

    #[test]
    fn every_function_serves_a_route() {
        for f in Function::ALL {
            assert!(ROUTES.iter().any(|r| r.function == f), "{}", f.name());
        }
    }
}
