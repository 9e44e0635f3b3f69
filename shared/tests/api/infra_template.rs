//! infra/template.yaml against the code it deploys.
//!
//! The template is read with its SAM Globals merged into each function and
//! its intrinsic functions (`!Ref`, `!Sub`, `!If`, `!FindInMap`, …)
//! evaluated for the parameters of each samconfig environment and of one
//! scenario with every optional feature on. Then:
//! - every function of `Function::ALL` is declared as `cargo lambda build
//!   --release --arm64` lays it out, and nothing else;
//! - every route of `ROUTES` is an HttpApi event of its function, behind the
//!   JWT authorizer except the HMAC-signed webhook;
//! - each function's environment passes `Function::check_lambda_config` and
//!   builds everything startup builds from it (auth, webhooks, LLM providers,
//!   transcription, drill tokens), with every secret reference readable by
//!   the function's IAM policy;
//! - each policy grants only actions and resources the code uses
//!   (`store::permissions`, itself checked against the SDK calls in the
//!   store's source), and every granted secret is one the function reads;
//! - the table matches `store::TABLE_LAYOUT`; timeouts cover the workflow's
//!   LLM timeouts; buckets, logs and alarms are in place.
//!
//! The checks return the problems they find, so the tests at the end can
//! also show that removing a route, a variable or a grant is caught.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json, json};
use tutorflow::api::auth::Authenticator;
use tutorflow::api::routes::{Function, ROUTES, Route};
use tutorflow::api::webhook::WebhookVerifier;
use tutorflow::config::{Config, ENV_OVERRIDES, SecretRef, TranscriptionConfig};
use tutorflow::llm::LlmStack;
use tutorflow::llm::RetryPolicy;
use tutorflow::llm::transcription::OpenAiTranscriber;
use tutorflow::store::TABLE_LAYOUT;
use tutorflow::store::permissions::{
    CONTENT_PUBLISH, CONTENT_READS, DYNAMODB_READS, DYNAMODB_WRITES, IDEMPOTENCY_ACTIONS,
    THREAD_LEASE_ACTIONS,
};

const REGION: &str = "eu-west-1";
const ACCOUNT: &str = "123456789012";
/// Lambda's limit is 15 minutes, but the HTTP API gives up after 30 s.
const GATEWAY_TIMEOUT_SECONDS: u64 = 30;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(workspace().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

// ------------------------------------------------------------ the template

/// YAML with CloudFormation's short tags, as the equivalent long-form JSON.
fn to_json(value: &serde_yaml::Value) -> Json {
    use serde_yaml::Value as Y;
    match value {
        Y::Null => Json::Null,
        Y::Bool(b) => json!(b),
        Y::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => json!(i),
            (None, Some(f)) => json!(f),
            _ => panic!("unsupported number {n}"),
        },
        Y::String(s) => json!(s),
        Y::Sequence(items) => Json::Array(items.iter().map(to_json).collect()),
        Y::Mapping(entries) => Json::Object(
            entries
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        Y::String(s) => s.clone(),
                        other => to_json(other).to_string(),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        Y::Tagged(tagged) => {
            let tag = tagged.tag.to_string();
            let name = tag.trim_start_matches('!');
            let inner = to_json(&tagged.value);
            match name {
                "Ref" | "Condition" => object(name, inner),
                "GetAtt" => {
                    let parts = match &inner {
                        Json::String(s) => {
                            let (resource, attribute) =
                                s.split_once('.').expect("!GetAtt Resource.Attribute");
                            json!([resource, attribute])
                        }
                        other => other.clone(),
                    };
                    object("Fn::GetAtt", parts)
                }
                other => object(&format!("Fn::{other}"), inner),
            }
        }
    }
}

fn object(key: &str, value: Json) -> Json {
    Json::Object(Map::from_iter([(key.to_owned(), value)]))
}

fn template() -> Json {
    let yaml: serde_yaml::Value =
        serde_yaml::from_str(&read("infra/template.yaml")).expect("infra/template.yaml parses");
    to_json(&yaml)
}

/// SAM's Globals rules: maps merge (the resource wins), lists concatenate,
/// anything else — intrinsics included — is the resource's own.
fn merge_globals(global: &Json, local: &Json) -> Json {
    let is_intrinsic = |v: &Json| {
        v.as_object().is_some_and(|m| {
            m.len() == 1
                && m.keys()
                    .all(|k| k == "Ref" || k == "Condition" || k.starts_with("Fn::"))
        })
    };
    match (global, local) {
        (Json::Object(g), Json::Object(l)) if !is_intrinsic(global) && !is_intrinsic(local) => {
            let mut merged = g.clone();
            for (k, v) in l {
                let value = match g.get(k) {
                    Some(gv) => merge_globals(gv, v),
                    None => v.clone(),
                };
                merged.insert(k.clone(), value);
            }
            Json::Object(merged)
        }
        (Json::Array(g), Json::Array(l)) => Json::Array(g.iter().chain(l).cloned().collect()),
        _ => local.clone(),
    }
}

/// The template with one set of parameter values.
struct Stack {
    template: Json,
    parameters: BTreeMap<String, Json>,
    name: String,
}

impl Stack {
    /// Template defaults, overridden by `overrides` (samconfig style).
    fn new(template: Json, name: &str, overrides: &BTreeMap<String, String>) -> Stack {
        let declared = template["Parameters"]
            .as_object()
            .expect("Parameters")
            .clone();
        for key in overrides.keys() {
            assert!(
                declared.contains_key(key),
                "{name}: unknown parameter {key}"
            );
        }
        let mut parameters = BTreeMap::new();
        for (key, spec) in declared {
            let raw = match (overrides.get(&key), &spec["Default"]) {
                (Some(v), _) => v.clone(),
                (None, Json::String(s)) => s.clone(),
                (None, Json::Number(n)) => n.to_string(),
                (None, _) => panic!("{name}: parameter {key} has no value"),
            };
            if let Some(allowed) = spec["AllowedValues"].as_array() {
                assert!(
                    allowed.iter().any(|a| scalar(a) == raw),
                    "{name}: {key}={raw} is not allowed"
                );
            }
            if let Some(pattern) = spec["AllowedPattern"].as_str() {
                let re = regex::Regex::new(pattern).unwrap();
                assert!(
                    re.is_match(&raw),
                    "{name}: {key}={raw} does not match {pattern}"
                );
            }
            let value = match spec["Type"].as_str() {
                Some("CommaDelimitedList") => {
                    Json::Array(raw.split(',').map(|s| json!(s.trim())).collect())
                }
                _ => json!(raw),
            };
            parameters.insert(key, value);
        }
        Stack {
            template,
            parameters,
            name: name.to_owned(),
        }
    }

    fn resource(&self, id: &str) -> &Json {
        let resource = &self.template["Resources"][id];
        assert!(resource.is_object(), "{}: no resource {id}", self.name);
        resource
    }

    fn resources_of_type(&self, kind: &str) -> Vec<(&String, &Json)> {
        self.template["Resources"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(_, r)| r["Type"] == kind)
            .collect()
    }

    /// A function's properties with the Globals merged in, evaluated.
    fn function_properties(&self, id: &str) -> Json {
        let raw = &self.resource(id)["Properties"];
        let merged = match self.template.pointer("/Globals/Function") {
            Some(global) => merge_globals(global, raw),
            None => raw.clone(),
        };
        self.eval(&merged).unwrap_or(Json::Null)
    }

    fn condition(&self, name: &str) -> bool {
        let spec = &self.template["Conditions"][name];
        assert!(!spec.is_null(), "{}: no condition {name}", self.name);
        self.truth(spec)
    }

    fn truth(&self, spec: &Json) -> bool {
        let (function, args) = single(spec).expect("a condition function");
        let args = args.as_array().map(Vec::as_slice).unwrap_or_default();
        match function {
            "Condition" => self.condition(spec["Condition"].as_str().unwrap()),
            "Fn::Equals" => {
                let side = |v: &Json| scalar(&self.eval(v).unwrap_or(Json::Null));
                side(&args[0]) == side(&args[1])
            }
            "Fn::Not" => !self.truth(&args[0]),
            "Fn::And" => args.iter().all(|a| self.truth(a)),
            "Fn::Or" => args.iter().any(|a| self.truth(a)),
            other => panic!("{}: unsupported condition function {other}", self.name),
        }
    }

    fn reference(&self, name: &str) -> Option<Json> {
        Some(match name {
            "AWS::NoValue" => return None,
            "AWS::Region" => json!(REGION),
            "AWS::AccountId" => json!(ACCOUNT),
            "AWS::Partition" => json!("aws"),
            "AWS::URLSuffix" => json!("amazonaws.com"),
            "AWS::StackName" => json!(self.name),
            _ => match self.parameters.get(name) {
                Some(v) => v.clone(),
                None => {
                    self.resource(name);
                    json!(format!("<{name}>"))
                }
            },
        })
    }

    /// `value` with every intrinsic evaluated; `None` is `AWS::NoValue`.
    fn eval(&self, value: &Json) -> Option<Json> {
        if let Some((function, args)) = single(value) {
            return self.eval_function(function, args);
        }
        Some(match value {
            Json::Array(items) => Json::Array(items.iter().filter_map(|v| self.eval(v)).collect()),
            Json::Object(map) => Json::Object(
                map.iter()
                    .filter_map(|(k, v)| Some((k.clone(), self.eval(v)?)))
                    .collect(),
            ),
            other => other.clone(),
        })
    }

    fn eval_function(&self, function: &str, args: &Json) -> Option<Json> {
        let list = |v: &Json| -> Vec<Json> {
            match self.eval(v) {
                Some(Json::Array(items)) => items,
                other => panic!("{}: {function} expects a list, got {other:?}", self.name),
            }
        };
        let text = |v: &Json| scalar(&self.eval(v).unwrap_or(Json::Null));
        match function {
            "Ref" => self.reference(args.as_str().unwrap()),
            "Fn::GetAtt" => {
                let parts = args.as_array().unwrap();
                let resource = parts[0].as_str().unwrap();
                self.resource(resource);
                Some(json!(format!(
                    "<{resource}.{}>",
                    parts[1].as_str().unwrap()
                )))
            }
            "Fn::If" => {
                let parts = args.as_array().unwrap();
                let branch = if self.condition(parts[0].as_str().unwrap()) {
                    &parts[1]
                } else {
                    &parts[2]
                };
                self.eval(branch)
            }
            "Fn::FindInMap" => {
                let parts = args.as_array().unwrap();
                let keys: Vec<String> = parts.iter().map(text).collect();
                let found = &self.template["Mappings"][&keys[0]][&keys[1]][&keys[2]];
                assert!(!found.is_null(), "{}: no mapping {keys:?}", self.name);
                Some(found.clone())
            }
            "Fn::Sub" => {
                let (pattern, variables) = match args {
                    Json::String(s) => (s.clone(), Map::new()),
                    Json::Array(parts) => (
                        parts[0].as_str().unwrap().to_owned(),
                        parts[1].as_object().unwrap().clone(),
                    ),
                    other => panic!("{}: bad Fn::Sub {other}", self.name),
                };
                Some(json!(self.substitute(&pattern, &variables)))
            }
            "Fn::Join" => {
                let parts = args.as_array().unwrap();
                let items: Vec<String> = list(&parts[1]).iter().map(scalar).collect();
                Some(json!(items.join(&text(&parts[0]))))
            }
            "Fn::Split" => {
                let parts = args.as_array().unwrap();
                let whole = text(&parts[1]);
                Some(Json::Array(
                    whole
                        .split(text(&parts[0]).as_str())
                        .map(|s| json!(s))
                        .collect(),
                ))
            }
            "Fn::Select" => {
                let parts = args.as_array().unwrap();
                let index: usize = scalar(&parts[0]).parse().unwrap();
                // A CommaDelimitedList parameter arrives as its text.
                match self.eval(&parts[1]) {
                    Some(Json::String(items)) => items.split(',').nth(index).map(|s| json!(s)),
                    _ => list(&parts[1]).get(index).cloned(),
                }
            }
            other => panic!("{}: unsupported intrinsic {other}", self.name),
        }
    }

    fn substitute(&self, pattern: &str, variables: &Map<String, Json>) -> String {
        let mut out = String::new();
        let mut rest = pattern;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find('}').expect("closed ${") + start;
            let name = &rest[start + 2..end];
            let value = if let Some(literal) = name.strip_prefix('!') {
                format!("${{{literal}}}")
            } else if let Some(v) = variables.get(name) {
                scalar(&self.eval(v).unwrap_or(Json::Null))
            } else if let Some((resource, attribute)) =
                name.split_once('.').filter(|_| !name.starts_with("AWS::"))
            {
                self.resource(resource);
                format!("<{resource}.{attribute}>")
            } else {
                scalar(&self.reference(name).unwrap_or(Json::Null))
            };
            out.push_str(&value);
            rest = &rest[end + 1..];
        }
        out.push_str(rest);
        out
    }
}

/// `{"Fn::X": args}` (or `Ref`, `Condition`) as (name, args).
fn single(value: &Json) -> Option<(&str, &Json)> {
    let map = value.as_object()?;
    let (key, args) = map.iter().next().filter(|_| map.len() == 1)?;
    (key == "Ref" || key == "Condition" || key.starts_with("Fn::")).then_some((key.as_str(), args))
}

fn scalar(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        Json::Null => String::new(),
        other => other.to_string(),
    }
}

fn strings(value: &Json) -> Vec<String> {
    match value {
        Json::Array(items) => items.iter().map(scalar).collect(),
        Json::Null => Vec::new(),
        other => vec![scalar(other)],
    }
}

// ------------------------------------------------------------- scenarios

/// `parameter_overrides` of a samconfig environment, parsed as SAM CLI
/// does for a list of `Key=Value` strings (a value may be quoted whole).
fn samconfig_overrides(environment: &str) -> BTreeMap<String, String> {
    let config: toml::Table = read("infra/samconfig.toml").parse().unwrap();
    let overrides = config[environment]["deploy"]["parameters"]["parameter_overrides"]
        .as_array()
        .unwrap_or_else(|| panic!("samconfig {environment}: parameter_overrides list"));
    overrides
        .iter()
        .map(|item| {
            let (key, value) = item.as_str().unwrap().split_once('=').unwrap();
            let unquoted = value
                .strip_prefix('\'')
                .and_then(|v| v.strip_suffix('\''))
                .or_else(|| value.strip_prefix('"').and_then(|v| v.strip_suffix('"')))
                .unwrap_or(value);
            (key.to_owned(), unquoted.to_owned())
        })
        .collect()
}

fn samconfig_environments() -> Vec<String> {
    let config: toml::Table = read("infra/samconfig.toml").parse().unwrap();
    config
        .iter()
        .filter(|(_, v)| v.get("deploy").is_some())
        .map(|(k, _)| k.clone())
        .collect()
}

/// Every optional feature on: an LLM provider, transcription, webhooks,
/// Secrets Manager, reserved concurrency.
fn everything_on() -> BTreeMap<String, String> {
    let mut overrides = samconfig_overrides("dev");
    let webhooks = json!([
        {"id": "n8n", "secret": "secretsmanager:tutorflow/dev/webhooks/n8n",
         "student_prefix": "n8n:", "course_id": "prealgebra"},
        {"id": "lms", "secret": "secretsmanager:tutorflow/dev/webhooks/lms",
         "student_prefix": "lms:", "course_id": "prealgebra"}
    ]);
    for (key, value) in [
        ("LlmProvider", "anthropic".to_owned()),
        ("TranscriptionProvider", "openai".into()),
        ("SecretStore", "secretsmanager".into()),
        ("WebhookIntegrations", webhooks.to_string()),
        ("TurnReservedConcurrency", "10".into()),
        ("CorsOrigins", String::new()),
    ] {
        overrides.insert(key.to_owned(), value);
    }
    overrides
}

fn stacks() -> Vec<Stack> {
    let template = template();
    let mut stacks: Vec<Stack> = samconfig_environments()
        .iter()
        .map(|env| Stack::new(template.clone(), env, &samconfig_overrides(env)))
        .collect();
    assert!(
        stacks.iter().any(|s| s.name == "dev") && stacks.iter().any(|s| s.name == "prod"),
        "samconfig.toml has dev and prod"
    );
    stacks.push(Stack::new(template, "everything-on", &everything_on()));
    stacks
}

// ----------------------------------------------------------------- checks

type Problems = Vec<String>;

fn logical_id(function: Function) -> String {
    let camel: String = function
        .name()
        .split('-')
        .map(|part| {
            let mut chars = part.chars();
            let first = chars.next().unwrap().to_ascii_uppercase();
            std::iter::once(first).chain(chars).collect::<String>()
        })
        .collect();
    format!("{camel}Function")
}

fn check_functions(stack: &Stack) -> Problems {
    let mut problems = Problems::new();
    let declared = stack.resources_of_type("AWS::Serverless::Function");
    let mut expected: BTreeSet<String> = Function::ALL.iter().map(|f| logical_id(*f)).collect();
    expected.insert(STREAMING_TWIN.into());
    expected.insert(NOTIFY.into());
    expected.insert(SWEEP.into());
    for (id, _) in &declared {
        if !expected.contains(*id) {
            problems.push(format!("{id} is not a function of api::routes::Function"));
        }
    }
    for function in Function::ALL {
        let id = logical_id(function);
        if !declared.iter().any(|(d, _)| **d == id) {
            problems.push(format!("no {id} for function {}", function.name()));
            continue;
        }
        let p = stack.function_properties(&id);
        let code = format!("../target/lambda/{}/", function.name());
        for (key, want) in [
            ("CodeUri", json!(code)),
            ("Handler", json!("bootstrap")),
            ("Runtime", json!("provided.al2023")),
            ("Architectures", json!(["arm64"])),
            ("Tracing", json!("Active")),
        ] {
            if p[key] != want {
                problems.push(format!("{id}: {key} is {}, not {want}", p[key]));
            }
        }
        let log_group = p.pointer("/LoggingConfig/LogGroup").map(scalar);
        let retained = log_group
            .as_deref()
            .and_then(|g| g.strip_prefix('<')?.strip_suffix('>'))
            .is_some_and(|g| !stack.resource(g)["Properties"]["RetentionInDays"].is_null());
        if !retained {
            problems.push(format!("{id}: logs to no log group with a retention"));
        }
    }
    problems
}

/// The turn function's twin: the same binary behind a function URL that
/// streams (the HTTP API buffers whole responses).
const STREAMING_TWIN: &str = "TurnStreamFunction";

fn check_streaming_twin(stack: &Stack) -> Problems {
    let mut problems = Problems::new();
    let p = stack.function_properties(STREAMING_TWIN);
    let turn = stack.function_properties(&logical_id(Function::Turn));
    for key in [
        "CodeUri",
        "Handler",
        "Runtime",
        "Architectures",
        "MemorySize",
        "Timeout",
    ] {
        if p[key] != turn[key] {
            problems.push(format!(
                "{STREAMING_TWIN}: {key} is {}, the turn's is {}",
                p[key], turn[key]
            ));
        }
    }
    if p.pointer("/FunctionUrlConfig/InvokeMode") != Some(&json!("RESPONSE_STREAM")) {
        problems.push(format!(
            "{STREAMING_TWIN}: its function URL does not stream"
        ));
    }
    let env = env_of(&p);
    if env.get("TUTORFLOW_RESPONSE_STREAMING").map(String::as_str) != Some("true") {
        problems.push(format!(
            "{STREAMING_TWIN}: TUTORFLOW_RESPONSE_STREAMING is not true"
        ));
    }
    // No gateway authorizer stands in front of a function URL.
    if env.get("TUTORFLOW_AUTH_MODE").map(String::as_str) != Some("jwks") {
        problems.push(format!(
            "{STREAMING_TWIN}: it must check tokens itself (jwks)"
        ));
    }
    if !p["Events"].is_null() {
        problems.push(format!(
            "{STREAMING_TWIN}: the HTTP API routes belong to the turn function"
        ));
    }
    problems
}

#[test]
fn the_streaming_twin_is_the_turn_function_behind_a_streaming_url() {
    assert_clean(check_streaming_twin);
}

/// The function that delivers queued outbound notifications.
const NOTIFY: &str = "NotifyFunction";

fn check_notifications_queue(stack: &Stack) -> Problems {
    let mut problems = Problems::new();
    let p = stack.function_properties(NOTIFY);
    if p["CodeUri"] != json!("../target/lambda/notify/") {
        problems.push(format!("{NOTIFY}: CodeUri is {}", p["CodeUri"]));
    }
    let source = p["Events"]
        .as_object()
        .and_then(|e| e.values().find(|v| v["Type"] == "SQS"))
        .cloned()
        .unwrap_or_default();
    if source["Properties"]["Queue"] != json!("<NotificationQueue.Arn>") {
        problems.push(format!("{NOTIFY}: not fed by NotificationQueue"));
    }
    if source["Properties"]["FunctionResponseTypes"] != json!(["ReportBatchItemFailures"]) {
        problems.push(format!(
            "{NOTIFY}: without ReportBatchItemFailures one unreadable message retries its whole batch"
        ));
    }
    let queue = stack
        .eval(&stack.resource("NotificationQueue")["Properties"])
        .unwrap();
    let visibility = queue["VisibilityTimeout"].as_u64().unwrap_or(0);
    let timeout = p["Timeout"].as_u64().unwrap_or(0);
    if visibility < 6 * timeout {
        problems.push(format!(
            "NotificationQueue: visibility {visibility} s is under six times {NOTIFY}'s {timeout} s"
        ));
    }
    if queue
        .pointer("/RedrivePolicy/deadLetterTargetArn")
        .is_none()
    {
        problems.push("NotificationQueue: no dead-letter queue".into());
    }
    // Whoever raises notifications queues them.
    for id in [logical_id(Function::Turn), STREAMING_TWIN.to_owned()] {
        let f = stack.function_properties(&id);
        if env_of(&f)
            .get("TUTORFLOW_NOTIFICATIONS_QUEUE_URL")
            .map(String::as_str)
            != Some("<NotificationQueue>")
        {
            problems.push(format!(
                "{id}: TUTORFLOW_NOTIFICATIONS_QUEUE_URL is not the queue"
            ));
        }
        let sends = statements(&id, &f, &mut problems)
            .iter()
            .any(|(actions, resources)| {
                actions.iter().any(|a| a == "sqs:SendMessage")
                    && resources.iter().any(|r| r == "<NotificationQueue.Arn>")
            });
        if !sends {
            problems.push(format!("{id}: may not send to NotificationQueue"));
        }
    }
    problems
}

#[test]
fn queued_notifications_reach_the_notify_function() {
    assert_clean(check_notifications_queue);
}

const SWEEP: &str = "SweepFunction";

/// The idle sweep: its own binary on a schedule, one run at a time, allowed
/// exactly the calls it makes (list the active-threads index, read and
/// write threads, queue notifications, read content and its secrets).
fn check_sweep(stack: &Stack) -> Problems {
    let mut problems = Problems::new();
    let p = stack.function_properties(SWEEP);
    if p["CodeUri"] != json!("../target/lambda/sweep/") {
        problems.push(format!("{SWEEP}: CodeUri is {}", p["CodeUri"]));
    }
    let scheduled = p["Events"].as_object().is_some_and(|events| {
        events.values().any(|e| {
            e["Type"] == "Schedule" && scalar(&e["Properties"]["Schedule"]).starts_with("rate(")
        })
    });
    if !scheduled {
        problems.push(format!("{SWEEP}: no Schedule event"));
    }
    if p["ReservedConcurrentExecutions"] != json!(1) {
        problems.push(format!(
            "{SWEEP}: two sweeps at once would race for the same threads"
        ));
    }
    if env_of(&p)
        .get("TUTORFLOW_NOTIFICATIONS_QUEUE_URL")
        .map(String::as_str)
        != Some("<NotificationQueue>")
    {
        problems.push(format!(
            "{SWEEP}: TUTORFLOW_NOTIFICATIONS_QUEUE_URL is not the queue"
        ));
    }
    let table = "<Table.Arn>".to_owned();
    let active_index = format!("<Table.Arn>/index/{}", TABLE_LAYOUT.active_index_name);
    let content_prefix = scalar(&stack.parameters["ContentPrefix"]);
    let mut granted: BTreeSet<(String, String)> = BTreeSet::new();
    for (actions, resources) in statements(SWEEP, &p, &mut problems) {
        for action in &actions {
            for resource in &resources {
                if !action.starts_with("ssm:") && !action.starts_with("secretsmanager:") {
                    granted.insert((action.clone(), resource.clone()));
                }
            }
        }
    }
    let wanted: BTreeSet<(String, String)> = [
        ("dynamodb:Query", table.clone()),
        ("dynamodb:PutItem", table),
        ("dynamodb:Query", active_index),
        ("sqs:SendMessage", "<NotificationQueue.Arn>".to_owned()),
        (
            "s3:GetObject",
            format!("<ContentBucket.Arn>/{content_prefix}/*"),
        ),
        ("s3:ListBucket", "<ContentBucket.Arn>".to_owned()),
    ]
    .into_iter()
    .map(|(a, r)| (a.to_owned(), r))
    .collect();
    for extra in granted.difference(&wanted) {
        problems.push(format!(
            "{SWEEP}: grants {extra:?}, which the sweep does not call"
        ));
    }
    for missing in wanted.difference(&granted) {
        problems.push(format!("{SWEEP}: lacks {missing:?}"));
    }
    problems
}

#[test]
fn the_sweep_runs_on_a_schedule_with_only_what_it_calls() {
    assert_clean(check_sweep);
}

fn check_routes(stack: &Stack) -> Problems {
    let mut problems = Problems::new();
    let api = &stack.resource("HttpApi")["Properties"];
    let default_authorizer = scalar(&api["Auth"]["DefaultAuthorizer"]);
    let jwt = &api["Auth"]["Authorizers"][&default_authorizer]["JwtConfiguration"];
    if jwt["issuer"] != json!({"Ref": "JwtIssuer"})
        || jwt["audience"] != json!({"Ref": "JwtAudience"})
    {
        problems.push(format!(
            "the default authorizer `{default_authorizer}` is not a JWT authorizer on the JwtIssuer/JwtAudience parameters"
        ));
    }
    let mut events = 0;
    for function in Function::ALL {
        let id = logical_id(function);
        let declared = &stack.resource(&id)["Properties"]["Events"];
        events += declared
            .as_object()
            .map(|e| e.values().filter(|v| v["Type"] == "HttpApi").count())
            .unwrap_or(0);
    }
    if events != ROUTES.len() {
        problems.push(format!(
            "{events} HttpApi events for {} routes in api::routes::ROUTES",
            ROUTES.len()
        ));
    }
    for spec in ROUTES {
        let id = logical_id(spec.function);
        let name = format!("{:?}", spec.route);
        let event = &stack.resource(&id)["Properties"]["Events"][&name];
        if event.is_null() {
            problems.push(format!("{id}: no event {name} for {spec:?}"));
            continue;
        }
        let p = &event["Properties"];
        if event["Type"] != "HttpApi" || p["ApiId"] != json!({"Ref": "HttpApi"}) {
            problems.push(format!("{id}.{name}: not an HttpApi event on HttpApi"));
        }
        if !scalar(&p["Method"]).eq_ignore_ascii_case(spec.method.as_str())
            || p["Path"] != json!(spec.path)
        {
            problems.push(format!(
                "{id}.{name}: {} {} instead of {spec:?}",
                scalar(&p["Method"]),
                scalar(&p["Path"])
            ));
        }
        let authorizer = p["Auth"]["Authorizer"]
            .as_str()
            .unwrap_or(&default_authorizer);
        // Webhooks carry an HMAC signature, checked in the function.
        let want = if spec.route == Route::WebhookTurn {
            "NONE"
        } else {
            default_authorizer.as_str()
        };
        if authorizer != want {
            problems.push(format!(
                "{id}.{name}: authorizer {authorizer}, expected {want}"
            ));
        }
    }
    problems
}

fn env_of(properties: &Json) -> BTreeMap<String, String> {
    properties
        .pointer("/Environment/Variables")
        .and_then(Json::as_object)
        .map(|vars| vars.iter().map(|(k, v)| (k.clone(), scalar(v))).collect())
        .unwrap_or_default()
}

/// The ARN a secret reference resolves to (`-AbCdEf`: the random suffix
/// Secrets Manager appends to a secret's name).
fn secret_arn(reference: &SecretRef) -> Option<String> {
    match reference {
        SecretRef::Ssm(name) => Some(format!(
            "arn:aws:ssm:{REGION}:{ACCOUNT}:parameter/{}",
            name.trim_start_matches('/')
        )),
        SecretRef::SecretsManager(id) => Some(format!(
            "arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:{id}-AbCdEf"
        )),
        SecretRef::Env(_) => None,
    }
}

/// IAM's `*` (any run) and `?` (one character).
fn glob(pattern: &str, text: &str) -> bool {
    match pattern.chars().next() {
        None => text.is_empty(),
        Some('*') => (0..=text.len())
            .filter(|i| text.is_char_boundary(*i))
            .any(|i| glob(&pattern[1..], &text[i..])),
        Some(p) => {
            let mut chars = text.chars();
            chars.next().is_some_and(|t| {
                (p == '?' || p == t) && glob(&pattern[p.len_utf8()..], chars.as_str())
            })
        }
    }
}

/// (actions, resources) of each Allow statement of the function's inline
/// policies; Deny, NotAction or NotResource are problems of their own.
fn statements(
    id: &str,
    properties: &Json,
    problems: &mut Problems,
) -> Vec<(Vec<String>, Vec<String>)> {
    let mut found = Vec::new();
    for policy in properties["Policies"]
        .as_array()
        .cloned()
        .unwrap_or_default()
    {
        let Some(list) = policy["Statement"].as_array() else {
            problems.push(format!(
                "{id}: a policy that is not an inline statement list: {policy}"
            ));
            continue;
        };
        for statement in list {
            if statement["Effect"] != "Allow"
                || !statement["NotAction"].is_null()
                || !statement["NotResource"].is_null()
            {
                problems.push(format!(
                    "{id}: statement other than a plain Allow: {statement}"
                ));
                continue;
            }
            found.push((
                strings(&statement["Action"]),
                strings(&statement["Resource"]),
            ));
        }
    }
    found
}

fn check_environment_and_secrets(stack: &Stack) -> Problems {
    let mut problems = Problems::new();
    let known: BTreeSet<&str> = ENV_OVERRIDES.iter().map(|(var, _, _)| *var).collect();
    // The route functions, and the sweep, which builds the same app.
    let functions = Function::ALL
        .into_iter()
        .map(|f| (logical_id(f), Some(f)))
        .chain([(SWEEP.to_owned(), None)]);
    for (id, function) in functions {
        let properties = stack.function_properties(&id);
        let env = env_of(&properties);
        for var in env.keys() {
            if !known.contains(var.as_str()) {
                problems.push(format!(
                    "{id}: {var} is not read by the code (config::ENV_OVERRIDES)"
                ));
            }
        }
        let config = match Config::load(None, |k| env.get(k).cloned()) {
            Ok(config) => config,
            Err(e) => {
                problems.push(format!("{id}: configuration does not load: {e}"));
                continue;
            }
        };
        if let Some(Err(e)) =
            function.map(|f| f.check_lambda_config(&config, |k| env.get(k).cloned()))
        {
            problems.push(format!("{id}: {e}"));
        }
        // Startup, with every remote secret as fetched by secrets::Secrets.
        let fetched = |name: &str| {
            SecretRef::parse(name)
                .is_ok_and(|r| r.is_remote())
                .then(|| "secret-value".to_owned())
        };
        if let Err(e) = Authenticator::from_config(&config.auth, fetched) {
            problems.push(format!("{id}: auth: {e}"));
        }
        if let Err(e) = WebhookVerifier::from_config(
            &config.auth.webhooks,
            config.auth.webhook_tolerance_seconds,
            fetched,
        ) {
            problems.push(format!("{id}: webhooks: {e}"));
        }
        if let Err(e) = LlmStack::from_config(&config.llm, fetched, RetryPolicy::default()) {
            problems.push(format!("{id}: LLM providers: {e}"));
        }
        if let Err(e) =
            OpenAiTranscriber::from_config(&config.transcription, fetched, RetryPolicy::default())
        {
            problems.push(format!("{id}: transcription: {e}"));
        }
        // Secrets: each one read is granted, each one granted is read.
        let mut local = Problems::new();
        let grants: Vec<String> = statements(&id, &properties, &mut local)
            .into_iter()
            .filter(|(actions, _)| {
                actions
                    .iter()
                    .any(|a| a == "ssm:GetParameter" || a == "secretsmanager:GetSecretValue")
            })
            .flat_map(|(_, resources)| resources)
            .collect();
        let arns: Vec<(String, String)> = config
            .secret_references()
            .into_iter()
            .filter_map(|(setting, reference)| {
                let arn = secret_arn(&SecretRef::parse(reference).ok()?)?;
                Some((setting, arn))
            })
            .collect();
        for (setting, arn) in &arns {
            if !grants.iter().any(|g| glob(g, arn)) {
                problems.push(format!(
                    "{id}: {setting} reads {arn}, which its role may not read"
                ));
            }
        }
        for grant in &grants {
            if !arns.iter().any(|(_, arn)| glob(grant, arn)) {
                problems.push(format!("{id}: may read {grant}, which no setting names"));
            }
        }
        let layers = strings(&properties["Layers"]);
        let needs_extension = !arns.is_empty();
        let has_extension = layers.contains(&scalar(&stack.parameters["SecretsExtensionLayerArn"]));
        if needs_extension != has_extension {
            problems.push(format!(
                "{id}: reads {} remote secrets but the secrets extension layer is {}",
                arns.len(),
                if has_extension { "attached" } else { "missing" }
            ));
        }
    }
    problems
}

fn check_policies(stack: &Stack) -> Problems {
    let mut problems = Problems::new();
    let table = "<Table.Arn>".to_owned();
    let index = format!("<Table.Arn>/index/{}", TABLE_LAYOUT.index_name);
    let content_prefix = scalar(&stack.parameters["ContentPrefix"]);
    let content_objects = format!("<ContentBucket.Arn>/{content_prefix}/*");
    let audio_objects = format!(
        "<AudioBucket.Arn>/{}*",
        TranscriptionConfig::default().upload_prefix
    );
    let allowed_dynamodb: BTreeSet<&str> = DYNAMODB_READS
        .iter()
        .chain(DYNAMODB_WRITES)
        .copied()
        .collect();
    for function in Function::ALL {
        let id = logical_id(function);
        let properties = stack.function_properties(&id);
        let routes: Vec<_> = ROUTES.iter().filter(|r| r.function == function).collect();
        let mutating = routes.iter().any(|r| r.mutating);
        let lists_threads = routes.iter().any(|r| r.route == Route::ListThreads);
        let uploads_audio = routes.iter().any(|r| r.route == Route::TranscribeUpload);
        let takes_thread_leases = routes.iter().any(|r| r.route == Route::Turn);
        let mut granted: BTreeSet<(String, String)> = BTreeSet::new();
        for (actions, resources) in statements(&id, &properties, &mut problems) {
            for action in &actions {
                for resource in &resources {
                    granted.insert((action.clone(), resource.clone()));
                }
            }
        }
        for (action, resource) in &granted {
            let fits = match action.split_once(':').map(|(service, _)| service) {
                Some("dynamodb") => {
                    allowed_dynamodb.contains(action.as_str())
                        && (*resource == table
                            || (*resource == index && action == "dynamodb:Query" && lists_threads))
                        && (mutating || !DYNAMODB_WRITES.contains(&action.as_str()))
                        && (takes_thread_leases || action != "dynamodb:UpdateItem")
                }
                Some("s3") if resource.starts_with("<ContentBucket.Arn>") => {
                    CONTENT_READS.contains(&action.as_str())
                        && !CONTENT_PUBLISH.contains(&action.as_str())
                        && *resource
                            == if action == "s3:ListBucket" {
                                "<ContentBucket.Arn>".to_owned()
                            } else {
                                content_objects.clone()
                            }
                }
                Some("s3") => {
                    uploads_audio
                        && *resource == audio_objects
                        && (action == "s3:PutObject" || action == "s3:GetObject")
                }
                // Checked against the references in check_environment_and_secrets.
                Some("ssm") => action == "ssm:GetParameter",
                Some("secretsmanager") => action == "secretsmanager:GetSecretValue",
                // Only turns raise outbound notifications.
                Some("sqs") => {
                    function == Function::Turn
                        && action == "sqs:SendMessage"
                        && resource == "<NotificationQueue.Arn>"
                }
                _ => false,
            };
            if !fits {
                problems.push(format!(
                    "{id}: grants {action} on {resource}, which its code does not use"
                ));
            }
        }
        let has = |action: &str, resource: &str| {
            granted.contains(&(action.to_owned(), resource.to_owned()))
        };
        if mutating {
            for action in IDEMPOTENCY_ACTIONS {
                if !has(action, &table) {
                    problems.push(format!(
                        "{id}: serves mutating routes but lacks {action} (idempotency)"
                    ));
                }
            }
        }
        if takes_thread_leases {
            for action in THREAD_LEASE_ACTIONS {
                if !has(action, &table) {
                    problems.push(format!(
                        "{id}: serves turns but lacks {action} (the thread's lease)"
                    ));
                }
            }
        }
        for action in CONTENT_READS {
            let resource = if *action == "s3:ListBucket" {
                "<ContentBucket.Arn>"
            } else {
                content_objects.as_str()
            };
            if !has(action, resource) {
                problems.push(format!(
                    "{id}: loads content but lacks {action} on {resource}"
                ));
            }
        }
        if lists_threads && !has("dynamodb:Query", &index) {
            problems.push(format!("{id}: lists threads but may not query {index}"));
        }
        if uploads_audio
            && !(has("s3:PutObject", &audio_objects) && has("s3:GetObject", &audio_objects))
        {
            problems.push(format!("{id}: presigns and reads uploads but lacks s3:PutObject/GetObject on {audio_objects}"));
        }
    }
    problems
}

// ------------------------------------------------------------------ tests

fn assert_clean(check: fn(&Stack) -> Problems) {
    let report: Vec<String> = stacks()
        .iter()
        .filter_map(|stack| {
            let problems = check(stack);
            (!problems.is_empty()).then(|| format!("{}:\n  {}", stack.name, problems.join("\n  ")))
        })
        .collect();
    assert!(report.is_empty(), "{}", report.join("\n"));
}

#[test]
fn every_function_is_declared_as_cargo_lambda_builds_it() {
    assert_clean(check_functions);
}

#[test]
fn every_route_is_an_api_event_of_its_function() {
    assert_clean(check_routes);
}

#[test]
fn every_function_gets_the_environment_and_secrets_its_startup_reads() {
    assert_clean(check_environment_and_secrets);
}

#[test]
fn every_policy_grants_only_what_the_code_calls() {
    assert_clean(check_policies);
}

/// Each test below removes one thing from the template and expects the
/// checks to name it.
fn dev_with(edit: impl FnOnce(&mut Json)) -> Stack {
    let mut template = template();
    edit(&mut template);
    Stack::new(template, "dev", &samconfig_overrides("dev"))
}

fn names(problems: &Problems, needle: &str) -> bool {
    problems.iter().any(|p| p.contains(needle))
}

#[test]
fn a_removed_route_is_caught() {
    let stack = dev_with(|t| {
        t["Resources"]["SummaryFunction"]["Properties"]["Events"]
            .as_object_mut()
            .unwrap()
            .remove("ListThreads");
    });
    let problems = check_routes(&stack);
    assert!(names(&problems, "no event ListThreads"), "{problems:?}");
}

#[test]
fn a_webhook_behind_the_authorizer_or_a_route_without_it_is_caught() {
    let stack = dev_with(|t| {
        let events = &mut t["Resources"]["TurnFunction"]["Properties"]["Events"];
        events["WebhookTurn"]["Properties"]
            .as_object_mut()
            .unwrap()
            .remove("Auth");
        events["Turn"]["Properties"]["Auth"] = json!({"Authorizer": "NONE"});
    });
    let problems = check_routes(&stack);
    assert!(
        names(&problems, "WebhookTurn: authorizer StudentJwt"),
        "{problems:?}"
    );
    assert!(names(&problems, "Turn: authorizer NONE"), "{problems:?}");
}

#[test]
fn a_removed_or_misspelt_variable_is_caught() {
    for (function, var, expected) in [
        ("Globals", "TUTORFLOW_TABLE", "store.table"),
        ("Globals", "TUTORFLOW_AUTH_MODE", "auth.mode"),
        ("Globals", "TUTORFLOW_DRILL_SECRET", "drills.token_secret"),
        (
            "TranscribeFunction",
            "TUTORFLOW_AUDIO_BUCKET",
            "transcription.upload_bucket",
        ),
    ] {
        let stack = dev_with(|t| {
            let vars = if function == "Globals" {
                &mut t["Globals"]["Function"]["Environment"]["Variables"]
            } else {
                &mut t["Resources"][function]["Properties"]["Environment"]["Variables"]
            };
            vars.as_object_mut().unwrap().remove(var).expect(var);
        });
        let problems = check_environment_and_secrets(&stack);
        assert!(names(&problems, expected), "without {var}: {problems:?}");
    }
    let stack = dev_with(|t| {
        let vars = &mut t["Globals"]["Function"]["Environment"]["Variables"];
        let table = vars
            .as_object_mut()
            .unwrap()
            .remove("TUTORFLOW_TABLE")
            .unwrap();
        vars["TUTORFLOW_TABLE_NAME"] = table;
    });
    let problems = check_environment_and_secrets(&stack);
    assert!(
        names(&problems, "TUTORFLOW_TABLE_NAME is not read"),
        "{problems:?}"
    );
}

#[test]
fn a_secret_without_its_grant_or_a_grant_without_its_secret_is_caught() {
    let stack = dev_with(|t| {
        let statements =
            t["Resources"]["DrillGradeFunction"]["Properties"]["Policies"][0]["Statement"]
                .as_array_mut()
                .unwrap();
        statements.retain(|s| !s.to_string().contains("ReadSecrets"));
    });
    let problems = check_environment_and_secrets(&stack);
    assert!(
        names(&problems, "DrillGradeFunction: drills.token_secret reads"),
        "{problems:?}"
    );

    let stack = dev_with(|t| {
        let statements =
            t["Resources"]["SupportViewedFunction"]["Properties"]["Policies"][0]["Statement"]
                .as_array_mut()
                .unwrap();
        statements.push(json!({"Effect": "Allow", "Action": "ssm:GetParameter",
            "Resource": {"Fn::Sub": "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/${SecretsPath}/llm-api-key"}}));
    });
    let problems = check_environment_and_secrets(&stack);
    assert!(
        names(&problems, "SupportViewedFunction: may read"),
        "{problems:?}"
    );
}

#[test]
fn a_write_for_a_read_only_function_or_a_call_the_store_never_makes_is_caught() {
    let stack = dev_with(|t| {
        let statement =
            &mut t["Resources"]["SummaryFunction"]["Properties"]["Policies"][0]["Statement"][0];
        statement["Action"]
            .as_array_mut()
            .unwrap()
            .extend([json!("dynamodb:PutItem"), json!("dynamodb:Scan")]);
    });
    let problems = check_policies(&stack);
    assert!(
        names(&problems, "SummaryFunction: grants dynamodb:PutItem"),
        "{problems:?}"
    );
    assert!(
        names(&problems, "SummaryFunction: grants dynamodb:Scan"),
        "{problems:?}"
    );

    let stack = dev_with(|t| {
        let statement =
            &mut t["Resources"]["TurnFunction"]["Properties"]["Policies"][0]["Statement"][0];
        statement["Action"] = json!(["dynamodb:GetItem", "dynamodb:Query"]);
    });
    let problems = check_policies(&stack);
    assert!(names(&problems, "lacks dynamodb:PutItem"), "{problems:?}");
}

// ------------------------------------------- permissions vs the store code

/// The operations a file calls on an SDK client (`.client.<op>(` and
/// `.client()` chains), in order of appearance.
fn sdk_calls(source: &str) -> Vec<String> {
    let re = regex::Regex::new(r"\.client\s*(?:\(\))?\s*\.\s*([a-z_]+)\(").unwrap();
    re.captures_iter(source)
        .map(|c| c[1].to_owned())
        .filter(|op| op != "clone")
        .collect()
}

fn to_action(service: &str, op: &str) -> String {
    let pascal: String = op
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().unwrap().to_ascii_uppercase().to_string() + c.as_str()
        })
        .collect();
    format!("{service}:{pascal}")
}

#[test]
fn dynamodb_permissions_are_the_calls_the_store_makes() {
    let source = read("shared/src/store/dynamo.rs");
    let calls: BTreeSet<String> = sdk_calls(&source).into_iter().collect();
    // Only against emulators (DynamoStore::create_table_if_missing); on AWS
    // the template owns the table.
    let emulator_only = ["create_table", "describe_table", "update_time_to_live"];
    // Each item of a TransactWriteItems is authorised as its own action;
    // the store builds Puts only.
    assert!(source.contains("TransactWriteItem::builder()"));
    for kind in [
        "Update::builder",
        "Delete::builder",
        "ConditionCheck::builder",
    ] {
        assert!(
            !source.contains(kind),
            "a transaction item of kind {kind}: update store::permissions"
        );
    }
    let actions: BTreeSet<String> = calls
        .iter()
        .filter(|c| !emulator_only.contains(&c.as_str()))
        .map(|c| match c.as_str() {
            "transact_write_items" => "dynamodb:PutItem".to_owned(),
            other => to_action("dynamodb", other),
        })
        .collect();
    let declared: BTreeSet<String> = DYNAMODB_READS
        .iter()
        .chain(DYNAMODB_WRITES)
        .map(|a| (*a).to_owned())
        .collect();
    assert_eq!(actions, declared, "calls in dynamo.rs: {calls:?}");

    // What taking and releasing an idempotency lock calls.
    let body_of = |name: &str| {
        let start = source.find(&format!("async fn {name}(")).expect(name);
        let end = source[start + 1..]
            .find("async fn ")
            .map_or(source.len(), |i| start + 1 + i);
        &source[start..end]
    };
    let mut idempotency: BTreeSet<String> = BTreeSet::new();
    for name in ["begin_idempotency", "release_idempotency"] {
        let body = body_of(name);
        idempotency.extend(sdk_calls(body).iter().map(|c| to_action("dynamodb", c)));
        if body.contains("self.get_item(") {
            idempotency.insert("dynamodb:GetItem".into());
        }
    }
    let declared: BTreeSet<String> = IDEMPOTENCY_ACTIONS
        .iter()
        .map(|a| (*a).to_owned())
        .collect();
    assert_eq!(idempotency, declared);

    // What taking and releasing a thread's lease calls.
    let mut lease: BTreeSet<String> = BTreeSet::new();
    for name in ["take_thread_lease", "release_thread_lease"] {
        let body = body_of(name);
        lease.extend(sdk_calls(body).iter().map(|c| to_action("dynamodb", c)));
        if body.contains("self.get_item(") {
            lease.insert("dynamodb:GetItem".into());
        }
    }
    let declared: BTreeSet<String> = THREAD_LEASE_ACTIONS
        .iter()
        .map(|a| (*a).to_owned())
        .collect();
    assert_eq!(lease, declared);
}

#[test]
fn content_permissions_are_the_calls_the_content_source_makes() {
    let source = read("shared/src/store/s3_content.rs");
    let publish_at = source.find("pub async fn publish(").expect("publish");
    let readers: BTreeSet<String> = sdk_calls(&source[..publish_at])
        .into_iter()
        .chain(
            // fetch_file takes the client as an argument.
            regex::Regex::new(r"client\s*\.\s*(get_object|head_object|put_object)\(")
                .unwrap()
                .captures_iter(&source[..publish_at])
                .map(|c| c[1].to_owned()),
        )
        .collect();
    assert_eq!(
        readers,
        BTreeSet::from(["get_object".to_owned(), "head_object".to_owned()]),
        "reader calls"
    );
    // GetObject authorises both; ListBucket has no call of its own (it turns
    // a missing manifest from 403 into 404).
    assert_eq!(CONTENT_READS, ["s3:GetObject", "s3:ListBucket"]);
    let publisher: BTreeSet<String> =
        regex::Regex::new(r"\.\s*(get_object|head_object|put_object)\(")
            .unwrap()
            .captures_iter(&source[publish_at..])
            .map(|c| to_action("s3", &c[1]))
            .collect();
    let declared: BTreeSet<String> = CONTENT_PUBLISH.iter().map(|a| (*a).to_owned()).collect();
    assert_eq!(publisher, declared);
}

// ------------------------------------------------------ table, limits, rest

#[test]
fn the_table_is_the_store_layout() {
    for stack in stacks() {
        let table = stack.resource("Table");
        let p = stack.eval(&table["Properties"]).unwrap();
        let l = TABLE_LAYOUT;
        assert_eq!(table["DeletionPolicy"], "Retain");
        assert_eq!(table["UpdateReplacePolicy"], "Retain");
        assert_eq!(p["BillingMode"], "PAY_PER_REQUEST");
        assert_eq!(
            p["KeySchema"],
            json!([{"AttributeName": l.partition_key, "KeyType": "HASH"},
                   {"AttributeName": l.sort_key, "KeyType": "RANGE"}])
        );
        let mut attributes: Vec<Json> = p["AttributeDefinitions"].as_array().unwrap().clone();
        attributes.sort_by_key(|a| scalar(&a["AttributeName"]));
        let mut expected: Vec<Json> = [
            l.partition_key,
            l.sort_key,
            l.index_partition_key,
            l.index_sort_key,
            l.active_index_partition_key,
            l.active_index_sort_key,
        ]
        .iter()
        .map(|name| json!({"AttributeName": name, "AttributeType": "S"}))
        .collect();
        expected.sort_by_key(|a| scalar(&a["AttributeName"]));
        assert_eq!(attributes, expected);
        assert_eq!(
            p["GlobalSecondaryIndexes"],
            json!([{
                "IndexName": l.index_name,
                "KeySchema": [{"AttributeName": l.index_partition_key, "KeyType": "HASH"},
                              {"AttributeName": l.index_sort_key, "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": l.index_projection}
            }, {
                "IndexName": l.active_index_name,
                "KeySchema": [{"AttributeName": l.active_index_partition_key, "KeyType": "HASH"},
                              {"AttributeName": l.active_index_sort_key, "KeyType": "RANGE"}],
                "Projection": {"ProjectionType": "KEYS_ONLY"}
            }])
        );
        assert_eq!(
            p["TimeToLiveSpecification"],
            json!({"AttributeName": l.ttl_attribute, "Enabled": true})
        );
        assert_eq!(
            p["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"],
            true
        );
        let prod = stack.parameters["Environment"] == "prod";
        assert_eq!(
            p["DeletionProtectionEnabled"],
            json!(prod),
            "{}",
            stack.name
        );
    }
}

/// The largest `timeout_ms` of an LLM call over the shipped workflows.
fn workflow_timeout_ms(call: &str) -> u64 {
    let dir = workspace().join("workflows");
    let mut max = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let doc: serde_yaml::Value =
                serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            if let Some(ms) = doc["llm"][call]["timeout_ms"].as_u64() {
                max = max.max(ms);
            }
        }
    }
    assert!(max > 0, "no workflow sets llm.{call}.timeout_ms");
    max
}

#[test]
fn timeouts_cover_the_llm_calls_and_stay_under_the_gateway_limit() {
    let stack = Stack::new(template(), "dev", &samconfig_overrides("dev"));
    // A turn may run the safety check and then the tutor call, one after
    // the other; two seconds are left for the store and the content.
    let turn = stack.function_properties("TurnFunction")["Timeout"]
        .as_u64()
        .unwrap();
    let needed = workflow_timeout_ms("tutor") + workflow_timeout_ms("safety") + 2000;
    assert!(turn * 1000 >= needed, "turn timeout {turn} s < {needed} ms");
    for (function, call) in [
        (Function::DrillGrade, "drill_grading"),
        (Function::ExamSubmit, "exam_evaluation"),
        (Function::Summary, "summary"),
    ] {
        let timeout = stack.function_properties(&logical_id(function))["Timeout"]
            .as_u64()
            .unwrap();
        assert!(
            timeout * 1000 > workflow_timeout_ms(call),
            "{}: {timeout} s does not cover the {call} call",
            function.name()
        );
    }
    for function in Function::ALL {
        let id = logical_id(function);
        let timeout = stack.function_properties(&id)["Timeout"].as_u64().unwrap();
        assert!(timeout < GATEWAY_TIMEOUT_SECONDS, "{id}: {timeout} s");
        // Its alarms: throttles, and a p99 duration below the timeout.
        let alarms: Vec<Json> = stack
            .resources_of_type("AWS::CloudWatch::Alarm")
            .into_iter()
            .map(|(_, a)| stack.eval(&a["Properties"]).unwrap())
            .filter(|a| a.pointer("/Dimensions/0/Value") == Some(&json!(format!("<{id}>"))))
            .collect();
        assert!(
            alarms.iter().any(|a| a["MetricName"] == "Throttles"),
            "{id}: no throttles alarm"
        );
        let p99 = alarms
            .iter()
            .find(|a| a["MetricName"] == "Duration" && a["ExtendedStatistic"] == "p99")
            .unwrap_or_else(|| panic!("{id}: no p99 duration alarm"));
        let threshold = p99["Threshold"].as_u64().unwrap();
        assert!(
            threshold < timeout * 1000,
            "{id}: p99 alarm at {threshold} ms"
        );
    }
}

#[test]
fn the_api_has_a_5xx_rate_alarm_and_the_stack_its_outputs() {
    let stack = Stack::new(template(), "dev", &samconfig_overrides("dev"));
    let rate = stack
        .eval(&stack.resource("Api5xxRateAlarm")["Properties"])
        .unwrap();
    let text = rate.to_string();
    assert!(
        text.contains("\"5xx\"") && text.contains("<HttpApi>"),
        "{text}"
    );
    for output in [
        "ApiUrl",
        "TableName",
        "ContentBucket",
        "ContentPrefix",
        "AudioBucket",
    ] {
        assert!(
            !stack.template["Outputs"][output]["Value"].is_null(),
            "no output {output}"
        );
    }
}

#[test]
fn buckets_are_private_encrypted_and_tls_only() {
    let stack = Stack::new(template(), "dev", &samconfig_overrides("dev"));
    for (bucket, policy) in [
        ("ContentBucket", "ContentBucketPolicy"),
        ("AudioBucket", "AudioBucketPolicy"),
        ("WebBucket", "WebBucketPolicy"),
    ] {
        let p = stack.eval(&stack.resource(bucket)["Properties"]).unwrap();
        assert_eq!(
            p["PublicAccessBlockConfiguration"],
            json!({"BlockPublicAcls": true, "BlockPublicPolicy": true,
                   "IgnorePublicAcls": true, "RestrictPublicBuckets": true}),
            "{bucket}"
        );
        assert!(!p["BucketEncryption"].is_null(), "{bucket}: encryption");
        let policy = stack.eval(&stack.resource(policy)["Properties"]).unwrap();
        assert_eq!(policy["Bucket"], json!(format!("<{bucket}>")));
        let denies_plain_http = policy["PolicyDocument"]["Statement"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| {
                s["Effect"] == "Deny"
                    && s["Condition"]["Bool"]["aws:SecureTransport"] == "false"
                    && strings(&s["Resource"]).contains(&format!("<{bucket}.Arn>"))
                    && strings(&s["Resource"]).contains(&format!("<{bucket}.Arn>/*"))
            });
        assert!(denies_plain_http, "{bucket}: no TLS-only statement");
    }
    let content = stack
        .eval(&stack.resource("ContentBucket")["Properties"])
        .unwrap();
    assert_eq!(content["VersioningConfiguration"]["Status"], "Enabled");
    let audio = stack
        .eval(&stack.resource("AudioBucket")["Properties"])
        .unwrap();
    let rules = audio["LifecycleConfiguration"]["Rules"].as_array().unwrap();
    assert!(
        rules
            .iter()
            .any(|r| r["Status"] == "Enabled" && r["ExpirationInDays"].as_u64().is_some()),
        "audio uploads never expire"
    );
    // The browser's PUT to the presigned URL is cross-origin.
    assert_eq!(
        audio["CorsConfiguration"]["CorsRules"][0]["AllowedMethods"],
        json!(["PUT"])
    );
}

/// The web page: a private bucket read only by its CloudFront distribution,
/// whose origin the API and the audio bucket accept from browsers.
#[test]
fn the_web_page_is_served_privately_and_allowed_by_cors() {
    let stack = Stack::new(template(), "dev", &samconfig_overrides("dev"));
    let distribution = stack
        .eval(&stack.resource("WebDistribution")["Properties"]["DistributionConfig"])
        .unwrap();
    assert_eq!(distribution["DefaultRootObject"], "index.html");
    let origin = &distribution["Origins"][0];
    assert_eq!(origin["DomainName"], "<WebBucket.RegionalDomainName>");
    assert_eq!(origin["OriginAccessControlId"], "<WebOriginAccess.Id>");
    assert_eq!(
        distribution["DefaultCacheBehavior"]["ViewerProtocolPolicy"],
        "redirect-to-https"
    );
    let policy = stack
        .eval(&stack.resource("WebBucketPolicy")["Properties"])
        .unwrap();
    let reads: Vec<&Json> = policy["PolicyDocument"]["Statement"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["Effect"] == "Allow")
        .collect();
    assert_eq!(reads.len(), 1, "only the distribution reads: {policy}");
    assert_eq!(reads[0]["Principal"]["Service"], "cloudfront.amazonaws.com");
    assert_eq!(reads[0]["Action"], "s3:GetObject");
    assert!(
        reads[0]["Condition"]["StringEquals"]["AWS:SourceArn"]
            .as_str()
            .unwrap()
            .ends_with("distribution/<WebDistribution>")
    );
    let site = "https://<WebDistribution.DomainName>";
    let api = stack
        .eval(&stack.resource("HttpApi")["Properties"]["CorsConfiguration"])
        .unwrap();
    let allowed = strings(&api["AllowOrigins"]);
    assert!(allowed.contains(&site.to_owned()), "API CORS: {allowed:?}");
    assert!(
        allowed.contains(&"http://localhost:3000".to_owned()),
        "{allowed:?}"
    );
    let audio = stack
        .eval(&stack.resource("AudioBucket")["Properties"]["CorsConfiguration"])
        .unwrap();
    assert!(strings(&audio["CorsRules"][0]["AllowedOrigins"]).contains(&site.to_owned()));
}
