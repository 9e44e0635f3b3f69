//! The wire types' JSON Schemas as docs/openapi.yaml publishes them, derived
//! from the Rust types with schemars.

use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value, json};
use tutorflow::model::{
    CreateThreadRequest, CreateThreadResponse, DrillGradeRequest, DrillGradeResponse,
    McqSubmitRequest, McqSubmitResponse, SupportViewedRequest, SupportViewedResponse, TurnRequest,
    TurnResponse, WebhookTurnRequest, WebhookTurnResponse,
};
use tutorflow::service::{
    CourseDetail, CourseList, LifecycleResponse, ReportCard, ThreadList, ThreadLogs, ThreadReplay,
    ThreadSummaryReport, TranscriptBody, UploadRequest, UploadTicket, UploadedAudio,
};

/// Where OpenAPI keeps reusable schemas; every `$ref` points here.
const DEFINITIONS: &str = "/components/schemas";

/// Every request and response body of the API and the types they use, by
/// name. Requests are described as the server reads them (fields with a
/// default are optional, `null` is accepted for an absent option);
/// responses as the server writes them.
pub fn generated() -> Map<String, Value> {
    let mut requests = generator(SchemaSettings::draft2020_12().for_deserialize());
    add::<CreateThreadRequest>(&mut requests);
    add::<TurnRequest>(&mut requests);
    add::<WebhookTurnRequest>(&mut requests);
    add::<DrillGradeRequest>(&mut requests);
    add::<McqSubmitRequest>(&mut requests);
    add::<SupportViewedRequest>(&mut requests);
    add::<UploadRequest>(&mut requests);
    add::<UploadedAudio>(&mut requests);

    let mut responses = generator(SchemaSettings::draft2020_12().for_serialize());
    add::<CreateThreadResponse>(&mut responses);
    add::<TurnResponse>(&mut responses);
    add::<WebhookTurnResponse>(&mut responses);
    add::<DrillGradeResponse>(&mut responses);
    add::<McqSubmitResponse>(&mut responses);
    add::<SupportViewedResponse>(&mut responses);
    add::<UploadTicket>(&mut responses);
    add::<TranscriptBody>(&mut responses);
    add::<ThreadSummaryReport>(&mut responses);
    add::<ThreadReplay>(&mut responses);
    add::<ThreadList>(&mut responses);
    add::<ReportCard>(&mut responses);
    add::<CourseList>(&mut responses);
    add::<CourseDetail>(&mut responses);
    add::<LifecycleResponse>(&mut responses);
    add::<ThreadLogs>(&mut responses);

    let mut schemas = requests.take_definitions(true);
    for schema in schemas.values_mut() {
        enums_as_enum(schema);
        unsigned_maximum(schema);
    }
    for (name, mut schema) in responses.take_definitions(true) {
        enums_as_enum(&mut schema);
        unsigned_maximum(&mut schema);
        skipped_fields_are_never_null(&mut schema);
        match schemas.get(&name) {
            // Enums and other types read and written the same way.
            Some(existing) => assert_eq!(
                existing, &schema,
                "{name} differs between requests and responses: give one of them its own name"
            ),
            None => {
                schemas.insert(name, schema);
            }
        }
    }
    schemas
}

fn generator(settings: SchemaSettings) -> SchemaGenerator {
    settings
        .with(|s| s.definitions_path = DEFINITIONS.into())
        .into_generator()
}

fn add<T: JsonSchema>(generator: &mut SchemaGenerator) {
    generator.subschema_for::<T>();
}

/// schemars writes an enum whose variants carry doc comments as a `oneOf`
/// of constants; code generators and readers handle a plain `enum` better,
/// so the variants' docs move into the description as a list.
fn enums_as_enum(schema: &mut Value) {
    let Some(variants) = schema.get("oneOf").and_then(Value::as_array) else {
        return;
    };
    let mut values = Vec::new();
    let mut notes = Vec::new();
    for variant in variants {
        if variant.get("type") != Some(&json!("string")) {
            return;
        }
        let names: Vec<Value> = match (variant.get("const"), variant.get("enum")) {
            (Some(name), None) => vec![name.clone()],
            (None, Some(Value::Array(names))) => names.clone(),
            _ => return,
        };
        if let Some(note) = variant.get("description").and_then(Value::as_str) {
            for name in &names {
                notes.push(format!("- `{}`: {note}", name.as_str().unwrap_or_default()));
            }
        }
        values.extend(names);
    }
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    object.remove("oneOf");
    object.insert("type".into(), json!("string"));
    object.insert("enum".into(), Value::Array(values));
    if !notes.is_empty() {
        let intro = object
            .get("description")
            .and_then(Value::as_str)
            .map(|d| format!("{d}\n\n"))
            .unwrap_or_default();
        object.insert(
            "description".into(),
            json!(format!("{intro}{}", notes.join("\n"))),
        );
    }
}

/// schemars bounds unsigned integers below (`minimum: 0`) and names their
/// width only in a non-standard `format`; the upper bound is what the
/// server enforces (a larger number is refused), so say it.
fn unsigned_maximum(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            let maximum = match map.get("format").and_then(Value::as_str) {
                Some("uint8") => Some(json!(u8::MAX)),
                Some("uint16") => Some(json!(u16::MAX)),
                Some("uint32") => Some(json!(u32::MAX)),
                Some("uint64") => Some(json!(u64::MAX)),
                _ => None,
            };
            if let Some(maximum) = maximum {
                map.insert("maximum".into(), maximum);
            }
            map.values_mut().for_each(unsigned_maximum);
        }
        Value::Array(items) => items.iter_mut().for_each(unsigned_maximum),
        _ => {}
    }
}

/// In a response, a property that is not required is one serde skips when
/// it is `None` (`skip_serializing_if`): it is absent or has a value, never
/// `null`. schemars still allows `null` there; say what is really sent.
fn skipped_fields_are_never_null(schema: &mut Value) {
    let required: Vec<Value> = schema
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for (name, property) in properties.iter_mut() {
            if !required.contains(&json!(name)) {
                drop_null(property);
            }
        }
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(Value::Array(variants)) = schema.get_mut(key) {
            variants.iter_mut().for_each(skipped_fields_are_never_null);
        }
    }
}

fn drop_null(property: &mut Value) {
    let Some(object) = property.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if let [only] = types.as_slice() {
            let only = only.clone();
            object.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(options)) = object.remove("anyOf") {
        let mut rest: Vec<Value> = options
            .into_iter()
            .filter(|o| o != &json!({ "type": "null" }))
            .collect();
        match rest.len() {
            1 => {
                if let Some(Value::Object(only)) = rest.pop() {
                    object.extend(only);
                }
            }
            _ => {
                object.insert("anyOf".into(), Value::Array(rest));
            }
        }
    }
}
