//! docs/openapi.yaml against the code: every route and nothing else, every
//! body schema generated from the Rust types, every operation with its
//! errors as problem+json, and real responses of the handler (on a SQLite
//! store with the repository's content) valid against the documented
//! schemas. docs/exam-api.openapi.yaml against the requests the server
//! really sends to an external exam API.

use crate::openapi_support;

use std::collections::BTreeSet;

use http::Method;
use openapi_support::{
    Api, COURSE, Call, Checked, EXAM_API_KEY, Spec, WEBHOOK_INTEGRATION, WEBHOOK_SECRET,
    WEBHOOK_STUDENT_PREFIX, fixture, repo_root, schemas, with_exam_api, with_transcription,
};
use serde_json::{Value, json};
use tutorflow::api::routes::ROUTES;
use tutorflow::api::webhook;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const SPEC: &str = "docs/openapi.yaml";
const EXAM_API_SPEC: &str = "docs/exam-api.openapi.yaml";
/// The line after which docs/openapi.yaml holds the generated schemas.
const GENERATED_MARKER: &str = "    # after changing a wire type, run: UPDATE_OPENAPI=1 cargo test -p tutorflow --test api openapi::";

fn spec() -> Spec {
    Spec::load(SPEC)
}

/// The generated schemas as they are written into the document.
fn rendered_schemas() -> String {
    let yaml = serde_yaml::to_string(&Value::Object(schemas::generated())).unwrap();
    yaml.lines().map(|line| format!("    {line}\n")).collect()
}

#[test]
fn component_schemas_are_generated_from_the_rust_types() {
    let path = repo_root().join(SPEC);
    let text = std::fs::read_to_string(&path).unwrap();
    let (head, _) = text
        .split_once(&format!("{GENERATED_MARKER}\n"))
        .unwrap_or_else(|| panic!("{SPEC} lacks the line\n{GENERATED_MARKER}"));
    let expected = format!("{head}{GENERATED_MARKER}\n{}", rendered_schemas());
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &expected).unwrap();
        return;
    }
    let written = Spec::parse(&text);
    let generated = Spec::parse(&expected);
    for (name, schema) in generated.doc["components"]["schemas"].as_object().unwrap() {
        assert_eq!(
            written.doc["components"]["schemas"].get(name),
            Some(schema),
            "{SPEC}: components.schemas.{name} differs from the Rust type; \
             review the change and run UPDATE_OPENAPI=1 cargo test -p tutorflow --test api openapi::"
        );
    }
    assert!(
        text == expected,
        "{SPEC}: the generated schemas are not in their generated form; \
         run UPDATE_OPENAPI=1 cargo test -p tutorflow --test api openapi::"
    );
}

#[test]
fn the_documents_carry_the_crate_version() {
    for document in [SPEC, EXAM_API_SPEC] {
        assert_eq!(
            Spec::load(document).doc["info"]["version"],
            env!("CARGO_PKG_VERSION"),
            "{document}"
        );
    }
}

#[test]
fn every_route_is_documented_with_its_method_and_nothing_else() {
    let spec = spec();
    let documented: BTreeSet<(String, String)> = spec
        .operations()
        .into_iter()
        .map(|(method, path, _)| (method, path))
        .collect();
    let routed: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|r| (r.method.as_str().to_ascii_lowercase(), r.path.to_owned()))
        .collect();
    let missing: Vec<_> = routed.difference(&documented).collect();
    let extra: Vec<_> = documented.difference(&routed).collect();
    assert!(
        missing.is_empty(),
        "routes missing from {SPEC}: {missing:?}"
    );
    assert!(
        extra.is_empty(),
        "{SPEC} documents what is not routed: {extra:?}"
    );
}

/// What every operation must say, and what each kind of route can answer.
#[test]
fn every_operation_is_described_with_its_security_parameters_and_errors() {
    let spec = spec();
    let mut ids = BTreeSet::new();
    for route in ROUTES {
        let method = route.method.as_str().to_ascii_lowercase();
        let at = format!("{} {}", route.method, route.path);
        let operation = spec
            .operation(&method, route.path)
            .unwrap_or_else(|| panic!("{at} is not documented"));
        let id = operation["operationId"].as_str().unwrap_or_default();
        assert!(!id.is_empty(), "{at}: no operationId");
        assert!(
            ids.insert(id.to_owned()),
            "{at}: operationId {id} is used twice"
        );
        for key in ["summary", "description"] {
            assert!(
                operation[key]
                    .as_str()
                    .is_some_and(|s| !s.trim().is_empty()),
                "{at}: no {key}"
            );
        }
        assert_eq!(
            operation["tags"],
            serde_json::json!([route.function.name()]),
            "{at}: the tag names the function that serves it"
        );

        let security = operation.get("security").unwrap_or(&spec.doc["security"]);
        let scheme = if route.path == "/webhooks/turn" {
            "webhookSignature"
        } else {
            "bearerAuth"
        };
        assert_eq!(
            security,
            &serde_json::json!([{ scheme: [] }]),
            "{at}: security"
        );

        let parameters: Vec<Value> = operation["parameters"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|p| spec.resolve(p, at.clone()).0.clone())
            .collect();
        let named = |place: &str| -> BTreeSet<String> {
            parameters
                .iter()
                .filter(|p| p["in"] == place)
                .map(|p| p["name"].as_str().unwrap().to_owned())
                .collect()
        };
        let in_template: BTreeSet<String> = route
            .path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(str::to_owned)
            .collect();
        assert_eq!(named("path"), in_template, "{at}: path parameters");
        for p in parameters.iter().filter(|p| p["in"] == "path") {
            assert_eq!(p["required"], true, "{at}: path parameters are required");
        }
        assert_eq!(
            named("header").contains("Idempotency-Key"),
            route.mutating,
            "{at}: Idempotency-Key is taken exactly by the routes that change state"
        );

        let responses = operation["responses"].as_object().unwrap();
        assert!(
            responses.keys().any(|s| s.starts_with('2')),
            "{at}: no success response"
        );
        let mut expected: BTreeSet<&str> = BTreeSet::from(["401", "500", "503"]);
        if operation.get("requestBody").is_some() {
            expected.extend(["400", "413", "415"]);
        }
        if route.mutating {
            // The same Idempotency-Key while the first request runs (409),
            // or with another body (422).
            expected.extend(["409", "422"]);
        }
        if route.path.contains("{threadId}") {
            expected.insert("404");
        }
        for status in expected {
            assert!(
                responses.contains_key(status),
                "{at}: {status} is not documented"
            );
        }
        for (status, response) in responses {
            let (response, _) = spec.resolve(response, format!("{at} {status}"));
            if status.starts_with('2') {
                assert!(
                    response["headers"].get("X-Request-Id").is_some(),
                    "{at} {status}: X-Request-Id"
                );
                continue;
            }
            let content = response["content"].as_object().unwrap();
            assert_eq!(
                content.keys().collect::<Vec<_>>(),
                ["application/problem+json"],
                "{at} {status}: errors are problem+json"
            );
            assert_eq!(
                content["application/problem+json"]["schema"]["$ref"],
                "#/components/schemas/Problem",
                "{at} {status}"
            );
            if status == "409" || status == "503" {
                assert!(
                    response["headers"].get("Retry-After").is_some(),
                    "{at} {status}: Retry-After"
                );
            }
        }
    }
}

/// Every schema in the document is a valid JSON Schema 2020-12 schema, and
/// every reference and link in the document points at something.
#[test]
fn schemas_are_valid_and_references_resolve() {
    let spec = spec();
    for (name, schema) in spec.doc["components"]["schemas"].as_object().unwrap() {
        if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
            panic!("components.schemas.{name} is not a valid JSON Schema: {e}");
        }
    }
    fn references<'v>(value: &'v Value, found: &mut Vec<&'v str>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    found.push(r);
                }
                map.values().for_each(|v| references(v, found));
            }
            Value::Array(items) => items.iter().for_each(|v| references(v, found)),
            _ => {}
        }
    }
    let operations = spec.operations();
    for (method, path, operation) in &operations {
        for response in operation["responses"].as_object().unwrap().values() {
            for (name, link) in response["links"].as_object().into_iter().flatten() {
                let (_, template, _) = operations
                    .iter()
                    .find(|(_, _, o)| o["operationId"] == link["operationId"])
                    .unwrap_or_else(|| panic!("{method} {path}: link {name} names no operation"));
                for parameter in link["parameters"].as_object().unwrap().keys() {
                    assert!(
                        template.contains(&format!("{{{parameter}}}")),
                        "{method} {path}: link {name}: {template} has no {parameter}"
                    );
                }
            }
        }
    }
    let mut found = Vec::new();
    references(&spec.doc, &mut found);
    assert!(found.len() > 100, "only {} references", found.len());
    for reference in found {
        let pointer = reference
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("{reference} is not a local reference"));
        assert!(
            spec.doc.pointer(pointer).is_some(),
            "{reference} points nowhere"
        );
    }
}

/// The contract fixtures (the reference app API and webhook examples) are
/// valid bodies by the spec, and the shapes this API refuses are refused by
/// it too.
#[test]
fn contract_fixtures_match_the_schemas() {
    let spec = spec();
    let valid = [
        ("turn_request.json", "TurnRequest"),
        ("drill_grade_request.json", "DrillGradeRequest"),
        ("mcq_submit_request.json", "McqSubmitRequest"),
        ("support_viewed_request.json", "SupportViewedRequest"),
        ("webhook_turn_request.json", "WebhookTurnRequest"),
        ("webhook_turn_response.json", "WebhookTurnResponse"),
        ("snapshot_lite.json", "SnapshotLite"),
        ("tutor_message.json", "TutorMessage"),
    ];
    for (file, schema) in valid {
        if let Err(e) = spec.validate_schema(schema, &fixture(file)) {
            panic!("{file}: {e}");
        }
    }
    for event in fixture("client_events.json").as_array().unwrap() {
        if let Err(e) = spec.validate_schema("ClientEvent", event) {
            panic!("client_events.json: {e}");
        }
    }
    // The client may not claim the verdict, nor send the drill's text.
    let refused = [
        (
            "refused_mcq_submit_with_client_verdict.json",
            "McqSubmitRequest",
        ),
        (
            "refused_drill_grade_with_drill_text.json",
            "DrillGradeRequest",
        ),
    ];
    for (file, schema) in refused {
        assert!(
            spec.validate_schema(schema, &fixture(file)).is_err(),
            "{file} should not match {schema}"
        );
    }
    // Integrations also spell the answer `ans`; the server reads both, not both at once.
    let mut request = fixture("webhook_turn_request.json");
    let problem = request["current_problem"].as_object_mut().unwrap();
    let answer = problem.remove("correct_answer").unwrap();
    problem.insert("ans".into(), answer.clone());
    spec.validate_schema("WebhookTurnRequest", &request)
        .unwrap();
    serde_json::from_value::<tutorflow::model::WebhookTurnRequest>(request.clone()).unwrap();
    request["current_problem"]["correct_answer"] = answer;
    assert!(
        spec.validate_schema("WebhookTurnRequest", &request)
            .is_err()
    );
    assert!(serde_json::from_value::<tutorflow::model::WebhookTurnRequest>(request).is_err());
}

fn drill_token(reply: &Value) -> Option<String> {
    reply["messages"].as_array()?.iter().find_map(|m| {
        (m["card"]["type"] == "DRILL")
            .then(|| m["card"]["drillToken"].as_str().map(str::to_owned))?
    })
}

/// A student's session through every student route, each response checked
/// against the operation's documented status, media type and schema.
#[tokio::test]
async fn a_students_session_answers_as_documented() {
    let spec = spec();
    let transcription = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .and(path("/v1/audio/transcriptions"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({ "text": "what is 58 plus 27" })),
        )
        .mount(&transcription)
        .await;
    let api = Api::start(|c| with_transcription(c, &format!("{}/v1", transcription.uri()))).await;
    let checked = Checked::new(&api, &spec);
    let token = Api::token("student-1");
    let call = |c: Call| c.bearer(&token);

    let created = checked
        .send(
            call(Call::post(
                "/threads",
                &json!({ "courseId": COURSE, "goal": "adding" }),
            )),
            201,
        )
        .await
        .json();
    let thread = created["threadId"].as_str().unwrap().to_owned();
    let turn = format!("/threads/{thread}/turn");
    checked
        .send(
            call(Call::post(
                &turn,
                &json!({ "messageText": "can you help me add 58 and 27?" }),
            )),
            200,
        )
        .await;
    let drill = checked
        .send(
            call(Call::post(
                &turn,
                &json!({ "clientEvent": { "type": "REQUEST_DRILL" } }),
            )),
            200,
        )
        .await
        .json();
    let drill_token = drill_token(&drill).expect("a drill card after REQUEST_DRILL");
    let grade = format!("/threads/{thread}/drill/grade");
    let graded = checked
        .send(
            call(Call::post(
                &grade,
                &json!({ "drillToken": drill_token, "studentAnswer": "1" }),
            )),
            200,
        )
        .await
        .json();
    let again = checked
        .send(
            call(Call::post(
                &grade,
                &json!({ "drillToken": drill_token, "studentAnswer": "1" }),
            )),
            200,
        )
        .await
        .json();
    assert_eq!(again["counted"], false, "{graded} then {again}");
    let result = if graded["isCorrect"] == true {
        "correct"
    } else {
        "incorrect"
    };
    checked
        .send(
            call(Call::post(
                &turn,
                &json!({ "clientEvent": { "type": "DRILL_CONTINUE", "lastResult": result } }),
            )),
            200,
        )
        .await;

    let submit = format!("/threads/{thread}/exam/mcq-submit");
    // A question the tutor has not shown is refused...
    checked
        .send(
            call(Call::post(
                &submit,
                &json!({ "questionId": "EX-WHN-B1", "selectedOption": "A" }),
            )),
            409,
        )
        .await;
    // ...and one on a card the tutor showed is answered.
    api.show_exam_cards(&thread, &["EX-WHN-B1", "EX-WHN-B2", "EX-WHN-S1"])
        .await;
    let passed = checked
        .send(
            call(Call::post(
                &submit,
                &json!({ "questionId": "EX-WHN-B1", "selectedOption": "A", "difficultyTier": "bronze" }),
            )),
            200,
        )
        .await
        .json();
    assert_eq!(passed["isCorrect"], true);
    let failed = checked
        .send(
            call(Call::post(
                &submit,
                &json!({ "questionId": "EX-WHN-B2", "selectedOption": "A" }),
            )),
            200,
        )
        .await
        .json();
    assert!(failed["lockedUntil"].is_string(), "{failed}");
    checked
        .send(
            call(Call::post(
                &submit,
                &json!({ "questionId": "EX-WHN-B2", "selectedOption": "B" }),
            )),
            409,
        )
        .await;
    checked
        .send(
            call(Call::post(
                &submit,
                &json!({ "questionId": "EX-WHN-B1", "selectedOption": "Z" }),
            )),
            400,
        )
        .await;
    let viewed = format!("/threads/{thread}/exam/support-viewed");
    let memo = checked
        .send(
            call(Call::post(
                &viewed,
                &json!({ "questionId": "EX-WHN-S1", "supportType": "memo" }),
            )),
            200,
        )
        .await
        .json();
    assert!(memo["memo"].is_string(), "{memo}");
    checked
        .send(
            call(Call::post(
                &viewed,
                &json!({ "questionId": "EX-WHN-S1", "supportType": "video" }),
            )),
            400,
        )
        .await;
    checked
        .send(
            call(Call::post(
                &turn,
                &json!({ "clientEvent": { "type": "EXAM_CONTINUE", "questionId": "EX-WHN-B1", "result": "passed" } }),
            )),
            200,
        )
        .await;

    checked
        .send(call(Call::get(&format!("/threads/{thread}/summary"))), 200)
        .await;
    let page = checked
        .send(call(Call::get(&format!("/threads/{thread}?limit=2"))), 200)
        .await
        .json();
    let cursor = page["nextCursor"].as_str().expect("more than two messages");
    checked
        .send(
            call(Call::get(&format!(
                "/threads/{thread}?limit=2&cursor={cursor}"
            ))),
            200,
        )
        .await;
    checked
        .send(call(Call::get(&format!("/threads/{thread}?limit=0"))), 400)
        .await;
    checked
        .send(call(Call::get("/me/threads?cursor=not-a-cursor")), 400)
        .await;
    checked.send(call(Call::get("/me/threads")), 200).await;
    checked.send(call(Call::get("/me/profile")), 200).await;
    checked
        .send(
            call(Call::put(
                "/me/profile",
                &json!({"name": "Lucía", "language": "es", "exampleThemes": ["cooking"]}),
            )),
            200,
        )
        .await;
    checked
        .send(
            call(Call::put(
                "/me/profile",
                &json!({"languageLevel": "fluent"}),
            )),
            400,
        )
        .await;
    checked
        .send(call(Call::put("/me/profile", &json!({"age": 40}))), 400)
        .await;
    checked
        .send(
            call(Call::get("/me/threads?status=active&mode=guided")),
            200,
        )
        .await;
    checked
        .send(call(Call::get("/me/threads?status=asleep")), 400)
        .await;
    checked
        .send(
            call(Call::get(&format!("/threads/{thread}/logs?limit=2"))),
            200,
        )
        .await;
    checked
        .send(
            call(Call::get(&format!("/threads/{thread}/logs?format=xml"))),
            400,
        )
        .await;
    checked
        .send(
            call(Call::post(&format!("/threads/{thread}/pause"), &json!({}))),
            200,
        )
        .await;
    checked
        .send(
            call(Call::post(
                &turn,
                &json!({ "messageText": "what is a ratio?" }),
            )),
            409,
        )
        .await;
    checked
        .send(
            call(Call::post(&format!("/threads/{thread}/resume"), &json!({}))),
            200,
        )
        .await;
    checked
        .send(
            call(Call::post(
                &turn,
                &json!({ "messageText": "a\u{0}b \u{202e} rtl" }),
            )),
            400,
        )
        .await;
    let report = checked
        .send(
            call(Call::get(&format!("/me/courses/{COURSE}/report"))),
            200,
        )
        .await
        .json();
    assert_eq!(report["started"], true);
    checked
        .send(call(Call::get("/me/courses/no-such-course/report")), 404)
        .await;
    let catalog = checked.send(call(Call::get("/courses")), 200).await.json();
    assert_eq!(catalog["courses"][0]["courseId"], COURSE, "{catalog}");
    let course = checked
        .send(call(Call::get(&format!("/courses/{COURSE}"))), 200)
        .await
        .json();
    assert_eq!(course["started"], true);
    checked
        .send(call(Call::get("/courses/no-such-course")), 404)
        .await;
    checked
        .send(
            call(Call::post(&format!("/threads/{thread}/end"), &json!({}))),
            200,
        )
        .await;

    let audio = webm();
    let transcript = checked
        .send(
            call(Call::new(Method::POST, "/transcribe?language=en").body("audio/webm", audio)),
            200,
        )
        .await
        .json();
    assert_eq!(transcript["text"], "what is 58 plus 27");
    // A retry with the same key replays the transcript.
    let keyed = || {
        call(Call::new(Method::POST, "/transcribe").body("audio/webm", webm()))
            .header("Idempotency-Key", "voice-1")
    };
    let first = checked.send(keyed(), 200).await.json();
    let retried = checked.send(keyed(), 200).await;
    assert_eq!(retried.header("idempotent-replayed"), Some("true"));
    assert_eq!(retried.json(), first);
    checked
        .send(
            call(Call::new(Method::POST, "/transcribe").body("audio/webm", Vec::new())),
            400,
        )
        .await;
    checked
        .send(
            call(Call::new(Method::POST, "/transcribe").body("audio/aiff", webm())),
            415,
        )
        .await;
    // No audio bucket is configured: uploads are unavailable.
    checked
        .send(
            call(Call::post(
                "/transcribe",
                &json!({ "key": "audio/x/y.webm" }),
            )),
            503,
        )
        .await;
    checked
        .send(
            call(Call::post(
                "/transcribe/uploads",
                &json!({ "contentType": "audio/webm", "sizeBytes": 5000000 }),
            )),
            503,
        )
        .await;

    // Every route answered at least once, and with success where the
    // test can provide what it needs (S3 presigning needs AWS credentials).
    let seen = checked.seen.into_inner().unwrap();
    for route in ROUTES.iter().filter(|r| r.path != "/webhooks/turn") {
        let statuses = seen
            .get(&(route.method.to_string(), route.path.to_owned()))
            .unwrap_or_else(|| panic!("{route:?} was not exercised"));
        if route.path != "/transcribe/uploads" {
            assert!(
                statuses.iter().any(|s| (200..300).contains(s)),
                "{route:?} never succeeded: {statuses:?}"
            );
        }
    }
}

/// Audio a transcriber recognises as webm by its first bytes.
fn webm() -> Vec<u8> {
    let mut bytes = vec![0x1A, 0x45, 0xDF, 0xA3];
    bytes.resize(2048, 0x42);
    bytes
}

/// Refusals are problem+json with the documented status for the route, and
/// idempotent retries carry the documented header.
#[tokio::test]
async fn refusals_and_retries_answer_as_documented() {
    let spec = spec();
    let api = Api::start(|_| {}).await;
    let checked = Checked::new(&api, &spec);
    let token = Api::token("student-2");
    let call = |c: Call| c.bearer(&token);
    let created = checked
        .send(
            call(Call::post("/threads", &json!({ "courseId": COURSE }))),
            201,
        )
        .await
        .json();
    let thread = created["threadId"].as_str().unwrap().to_owned();
    let turn = format!("/threads/{thread}/turn");
    let hello = json!({ "messageText": "hello" });

    checked.send(Call::post(&turn, &hello), 401).await;
    checked
        .send(Call::post(&turn, &hello).bearer("not-a-jwt"), 401)
        .await;
    checked
        .send(
            Call::post(&turn, &hello).bearer(&Api::token("someone-else")),
            404,
        )
        .await;
    checked
        .send(call(Call::get("/threads/no-such-thread/summary")), 404)
        .await;
    let unknown = checked
        .send(
            call(Call::post(&turn, &json!({ "messageTxt": "hello" }))),
            400,
        )
        .await
        .json();
    assert!(
        unknown["detail"].as_str().unwrap().contains("messageTxt"),
        "{unknown}"
    );
    let wrong_type = checked
        .send(
            call(Call::post(
                &turn,
                &json!({ "clientEvent": { "type": "TELEPORT" } }),
            )),
            400,
        )
        .await
        .json();
    assert_eq!(wrong_type["field"], "clientEvent.type");
    checked
        .send(
            call(Call::new(Method::POST, &turn).body("application/json", "{\"messageText\": ")),
            400,
        )
        .await;
    checked
        .send(
            call(Call::post(
                &turn,
                &json!({ "messageText": "a".repeat(4001) }),
            )),
            400,
        )
        .await;
    checked
        .send(
            call(Call::post(
                &turn,
                &json!({ "messageText": "a".repeat(70_000) }),
            )),
            413,
        )
        .await;
    checked
        .send(
            call(Call::new(Method::POST, &turn).body("text/plain", "hello")),
            415,
        )
        .await;
    checked
        .send(
            call(Call::post(
                "/threads",
                &json!({ "courseId": COURSE, "mode": "exam", "questionCount": 0 }),
            )),
            400,
        )
        .await;
    checked
        .send(
            call(Call::post(
                "/threads",
                &json!({ "courseId": "no-such-course" }),
            )),
            400,
        )
        .await;
    let forged = checked
        .send(
            call(Call::post(
                &format!("/threads/{thread}/drill/grade"),
                &json!({ "drillToken": "v1.e30.c2lnbmF0dXJl", "studentAnswer": "4" }),
            )),
            400,
        )
        .await
        .json();
    assert_eq!(forged["field"], "drillToken");

    // Idempotency: a retry is replayed; the same key for another body is refused.
    let keyed = |body: &Value| call(Call::post(&turn, body)).header("Idempotency-Key", "key-1");
    let first = checked.send(keyed(&hello), 200).await;
    let replay = checked.send(keyed(&hello), 200).await;
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.body, first.body);
    let reused = checked
        .send(keyed(&json!({ "messageText": "something else" })), 422)
        .await
        .json();
    assert_eq!(
        reused["type"],
        "urn:tutorflow:problem:idempotency-key-reused"
    );

    // A path with another method, and a path that does not exist: not
    // operations of the spec, but problem+json all the same.
    for (call, status) in [
        (call(Call::get("/threads")), 405),
        (call(Call::get("/no-such-path")), 404),
    ] {
        let reply = api.send(call).await;
        assert_eq!(reply.status, status, "{}", reply.text());
        assert_eq!(
            reply.content_type().as_deref(),
            Some("application/problem+json")
        );
        spec.validate_schema("Problem", &reply.json()).unwrap();
        spec.check_problem_kind(&reply.json()).unwrap();
    }
    assert_eq!(
        api.send(call(Call::get("/threads"))).await.header("allow"),
        Some("POST")
    );
}

/// The signed webhook: a reply in the webhook's own shape, an exact replay
/// answered from storage, and refusals of bad signatures and other
/// integrations' students.
#[tokio::test]
async fn the_webhook_answers_as_documented() {
    let spec = spec();
    let api = Api::start(|_| {}).await;
    let checked = Checked::new(&api, &spec);
    let signed = |body: &Value, secret: &str| {
        let body = body.to_string();
        let timestamp = chrono::Utc::now().timestamp().to_string();
        let signature = webhook::sign(
            secret.as_bytes(),
            timestamp.parse().unwrap(),
            body.as_bytes(),
        );
        move || {
            Call::new(Method::POST, "/webhooks/turn")
                .body("application/json", body.clone())
                .header("x-tutorflow-integration", WEBHOOK_INTEGRATION)
                .header("x-tutorflow-timestamp", &timestamp)
                .header("x-tutorflow-signature", &signature)
        }
    };
    let mut request = fixture("webhook_turn_request.json");
    request["student_id"] = json!(format!("{WEBHOOK_STUDENT_PREFIX}student_123"));
    let sent = signed(&request, WEBHOOK_SECRET);
    let first = checked.send(sent(), 200).await;
    let replay = checked.send(sent(), 200).await;
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.body, first.body);
    checked
        .send(signed(&request, "not-the-secret")(), 401)
        .await;
    request["student_id"] = json!("lms:student_123");
    checked.send(signed(&request, WEBHOOK_SECRET)(), 403).await;
}

/// The hand-written examples in both documents are valid by their schemas.
#[test]
fn every_example_matches_its_schema() {
    for document in [SPEC, EXAM_API_SPEC] {
        let spec = Spec::load(document);
        let examples = spec.examples();
        assert!(
            examples.len() >= 6,
            "{document}: {} examples",
            examples.len()
        );
        for (schema, example) in examples {
            if let Err(e) = spec.validate_at(&schema, &example) {
                panic!("{document}: an example {e}");
            }
        }
    }
}

/// The server's requests to an external exam API (served here by wiremock
/// with the contract's own examples) are the ones the contract documents,
/// and it understands the documented replies.
#[tokio::test]
async fn calls_to_the_exam_api_follow_its_contract() {
    let contract = Spec::load(EXAM_API_SPEC);
    let spec = spec();
    let exams = MockServer::builder().start().await;
    for endpoint in ["/status", "/submissions", "/support-views"] {
        let example = &contract.doc["paths"][endpoint]["post"]["responses"]["200"]["content"]["application/json"]
            ["example"];
        Mock::given(method("POST"))
            .and(path(format!("/api{endpoint}")))
            .respond_with(ResponseTemplate::new(200).set_body_json(example))
            .mount(&exams)
            .await;
    }
    let api = Api::start(|c| with_exam_api(c, &format!("{}/api", exams.uri()))).await;
    let checked = Checked::new(&api, &spec);
    let token = Api::token("student-3");
    let call = |c: Call| c.bearer(&token);
    let created = checked
        .send(
            call(Call::post("/threads", &json!({ "courseId": COURSE }))),
            201,
        )
        .await
        .json();
    let thread = created["threadId"].as_str().unwrap().to_owned();
    api.show_exam_cards(
        &thread,
        &["EX-WHN-B2", "EX-WHN-S1", "EX-WHN-S2", "EX-WHN-G1"],
    )
    .await;
    // The contract's examples: B2 is locked, B1 passed, and a submission
    // is wrong and locks the question.
    checked
        .send(
            call(Call::post(
                &format!("/threads/{thread}/exam/mcq-submit"),
                &json!({ "questionId": "EX-WHN-B2", "selectedOption": "B" }),
            )),
            409,
        )
        .await;
    let submitted = checked
        .send(
            call(Call::post(
                &format!("/threads/{thread}/exam/mcq-submit"),
                &json!({ "questionId": "EX-WHN-S1", "selectedOption": "D" }),
            )),
            200,
        )
        .await
        .json();
    assert_eq!(submitted["isCorrect"], false, "the exam API decides");
    assert_eq!(submitted["lockedUntil"], "2030-03-02T10:00:00Z");
    checked
        .send(
            call(Call::post(
                &format!("/threads/{thread}/exam/support-viewed"),
                &json!({ "questionId": "EX-WHN-S2", "supportType": "memo" }),
            )),
            200,
        )
        .await;
    checked
        .send(
            call(Call::get(&format!("/me/courses/{COURSE}/report"))),
            200,
        )
        .await;

    let mut called = BTreeSet::new();
    for request in exams.received_requests().await.unwrap() {
        let endpoint = request.url.path().strip_prefix("/api").unwrap().to_owned();
        let at = format!("{} {endpoint}", request.method);
        let operation = contract
            .operation(request.method.as_str(), &endpoint)
            .unwrap_or_else(|| panic!("{at} is not in {EXAM_API_SPEC}"));
        assert_eq!(
            request
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok()),
            Some(format!("Bearer {EXAM_API_KEY}").as_str()),
            "{at}"
        );
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let schema = format!(
            "/paths/{}/post/requestBody/content/application~1json/schema",
            openapi_support::escape(&endpoint)
        );
        assert!(operation["requestBody"].is_object());
        if let Err(e) = contract.validate_at(&schema, &body) {
            panic!("{at}: {e}");
        }
        called.insert(endpoint);
    }
    assert_eq!(
        called,
        BTreeSet::from([
            "/status".into(),
            "/submissions".into(),
            "/support-views".into()
        ])
    );

    // When the exam API refuses a submission, the student gets the
    // documented 503.
    exams.reset().await;
    Mock::given(method("POST"))
        .and(path("/api/status"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({ "statuses": {} })))
        .mount(&exams)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/submissions"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&exams)
        .await;
    checked
        .send(
            call(Call::post(
                &format!("/threads/{thread}/exam/mcq-submit"),
                &json!({ "questionId": "EX-WHN-G1", "selectedOption": "A" }),
            )),
            503,
        )
        .await;
}

/// The README's endpoint table lists every route with its function.
#[test]
fn the_readme_lists_every_route() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    for route in ROUTES {
        let row = format!(
            "| `{}` | `{}` | {} |",
            route.method,
            route.path,
            route.function.name()
        );
        assert!(readme.contains(&row), "README.md lacks the row {row}");
    }
}
