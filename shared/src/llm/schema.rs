//! Output schemas: derived from the reply types (schemars), then normalised
//! for each provider's dialect of JSON Schema. The normalised schemas are
//! committed as golden files (`shared/tests/golden/schemas/`), so a change to
//! what a provider is sent is always a reviewed change.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::model::{
    CheckReply, LlmDrillGrade, LlmExamEvaluation, LlmSafetyVerdict, LlmSessionSummary,
    LlmStudyPlan, LlmTutorResponse,
};

/// Which JSON Schema subset a provider accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SchemaDialect {
    /// OpenAI structured outputs with `strict: true` (also sent to
    /// OpenAI-compatible servers): every property required, optional ones
    /// nullable, `additionalProperties: false`, no `oneOf`/`allOf`.
    OpenAiStrict,
    /// Anthropic tool input / native JSON outputs: no numeric or length
    /// constraints, `minItems` only 0 or 1.
    Anthropic,
    /// Gemini `responseJsonSchema`: its documented keyword subset.
    Gemini,
}

impl SchemaDialect {
    pub const ALL: [SchemaDialect; 3] = [
        SchemaDialect::OpenAiStrict,
        SchemaDialect::Anthropic,
        SchemaDialect::Gemini,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SchemaDialect::OpenAiStrict => "openai",
            SchemaDialect::Anthropic => "anthropic",
            SchemaDialect::Gemini => "gemini",
        }
    }
}

/// A reply type a provider can be asked for.
pub trait StructuredOutput: DeserializeOwned + JsonSchema + CheckReply + Send + 'static {
    /// Schema (and Anthropic tool) name: letters, digits and `_`.
    const SCHEMA_NAME: &'static str;
}

impl StructuredOutput for LlmTutorResponse {
    const SCHEMA_NAME: &'static str = "tutor_reply";
}
impl StructuredOutput for LlmSafetyVerdict {
    const SCHEMA_NAME: &'static str = "safety_verdict";
}
impl StructuredOutput for LlmDrillGrade {
    const SCHEMA_NAME: &'static str = "drill_grade";
}
impl StructuredOutput for LlmExamEvaluation {
    const SCHEMA_NAME: &'static str = "exam_evaluation";
}
impl StructuredOutput for LlmStudyPlan {
    const SCHEMA_NAME: &'static str = "study_plan";
}
impl StructuredOutput for LlmSessionSummary {
    const SCHEMA_NAME: &'static str = "session_summary";
}

/// A named output schema in every dialect.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSchema {
    pub name: String,
    pub canonical: Value,
    openai: Value,
    anthropic: Value,
    gemini: Value,
}

static SCHEMAS: LazyLock<Mutex<HashMap<TypeId, Arc<OutputSchema>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

impl OutputSchema {
    /// The schema of `T`, derived and normalised once per process.
    pub fn of<T: StructuredOutput>() -> Arc<OutputSchema> {
        let mut cache = SCHEMAS
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        cache
            .entry(TypeId::of::<T>())
            .or_insert_with(|| {
                let canonical = serde_json::to_value(schemars::schema_for!(T))
                    .unwrap_or_else(|_| json!({"type": "object"}));
                Arc::new(OutputSchema::new(T::SCHEMA_NAME, canonical))
            })
            .clone()
    }

    /// A schema from a canonical JSON Schema (draft 2020-12, `$defs` refs).
    pub fn new(name: &str, canonical: Value) -> Self {
        OutputSchema {
            name: name.to_owned(),
            openai: normalise(SchemaDialect::OpenAiStrict, &canonical),
            anthropic: normalise(SchemaDialect::Anthropic, &canonical),
            gemini: normalise(SchemaDialect::Gemini, &canonical),
            canonical,
        }
    }

    pub fn dialect(&self, dialect: SchemaDialect) -> &Value {
        match dialect {
            SchemaDialect::OpenAiStrict => &self.openai,
            SchemaDialect::Anthropic => &self.anthropic,
            SchemaDialect::Gemini => &self.gemini,
        }
    }
}

/// Formats OpenAI strict mode accepts.
const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Formats Anthropic structured outputs accept.
const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Keywords Gemini's `responseJsonSchema` accepts (refs are inlined first).
const GEMINI_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "enum",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "anyOf",
    "properties",
    "additionalProperties",
    "required",
];
/// Annotations no provider needs.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "title",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];
/// Keywords OpenAI strict mode rejects.
const OPENAI_UNSUPPORTED: &[&str] = &[
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "const",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "contains",
    "uniqueItems",
    "default",
    "$schema",
];
const NUMERIC_AND_LENGTH: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "maxItems",
];

/// `canonical` rewritten for `dialect`: refs inlined (our reply types are not
/// recursive), variant-documented enums merged back into one `enum`, and
/// each provider's unsupported keywords removed.
pub fn normalise(dialect: SchemaDialect, canonical: &Value) -> Value {
    let defs = canonical.get("$defs").cloned().unwrap_or(Value::Null);
    let mut root = canonical.clone();
    if let Value::Object(map) = &mut root {
        map.remove("$defs");
    }
    normalise_node(dialect, inline_refs(&root, &defs, 0))
}

/// Deeper than any reply type: a longer chain means a recursive type.
const MAX_REF_DEPTH: usize = 16;

fn inline_refs(node: &Value, defs: &Value, depth: usize) -> Value {
    match node {
        Value::Object(map) => {
            if let Some(target) = map
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .and_then(|name| defs.get(name))
                .filter(|_| depth < MAX_REF_DEPTH)
            {
                let mut resolved = inline_refs(target, defs, depth + 1);
                if let Value::Object(out) = &mut resolved {
                    for (key, value) in map.iter().filter(|(k, _)| *k != "$ref") {
                        out.insert(key.clone(), inline_refs(value, defs, depth + 1));
                    }
                }
                return resolved;
            }
            Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), inline_refs(v, defs, depth)))
                    .collect(),
            )
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| inline_refs(v, defs, depth)).collect())
        }
        other => other.clone(),
    }
}

fn normalise_node(dialect: SchemaDialect, node: Value) -> Value {
    let Value::Object(mut map) = node else {
        return node;
    };
    merge_string_variants(&mut map);
    if let Some(value) = map.remove("const") {
        map.insert("enum".into(), Value::Array(vec![value]));
    }
    if let Some(Value::Array(mut parts)) = map.remove("allOf") {
        if parts.len() == 1 {
            if let Value::Object(only) = parts.remove(0) {
                for (k, v) in only {
                    map.entry(k).or_insert(v);
                }
            }
        } else {
            map.insert("allOf".into(), Value::Array(parts));
        }
    }
    if let Some(one_of) = map.remove("oneOf") {
        map.insert("anyOf".into(), one_of);
    }
    for key in ANNOTATIONS {
        map.remove(*key);
    }
    let keep_format = |format: &str| match dialect {
        SchemaDialect::OpenAiStrict => OPENAI_FORMATS.contains(&format),
        SchemaDialect::Anthropic => ANTHROPIC_FORMATS.contains(&format),
        SchemaDialect::Gemini => format == "date-time",
    };
    if map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| !keep_format(f))
    {
        map.remove("format");
    }
    match dialect {
        SchemaDialect::OpenAiStrict => {
            for key in ["minLength", "maxLength"] {
                map.remove(key);
            }
        }
        SchemaDialect::Anthropic => {
            for key in NUMERIC_AND_LENGTH {
                map.remove(*key);
            }
            if map
                .get("minItems")
                .and_then(Value::as_u64)
                .is_some_and(|n| n > 1)
            {
                map.insert("minItems".into(), json!(1));
            }
        }
        SchemaDialect::Gemini => map.retain(|k, _| GEMINI_KEYWORDS.contains(&k.as_str())),
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = map.remove(key) {
            let child = if child.is_object() {
                normalise_node(dialect, child)
            } else {
                child
            };
            map.insert(key.into(), child);
        }
    }
    for key in ["anyOf", "prefixItems"] {
        if let Some(Value::Array(parts)) = map.remove(key) {
            let parts = parts
                .into_iter()
                .map(|p| normalise_node(dialect, p))
                .collect();
            map.insert(key.into(), Value::Array(parts));
        }
    }
    if let Some(Value::Object(props)) = map.remove("properties") {
        let required: Vec<String> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let mut out = Map::new();
        for (name, schema) in props {
            let mut schema = normalise_node(dialect, schema);
            if dialect == SchemaDialect::OpenAiStrict && !required.contains(&name) {
                make_nullable(&mut schema);
            }
            out.insert(name, schema);
        }
        if dialect == SchemaDialect::OpenAiStrict {
            let all: Vec<Value> = out.keys().map(|k| Value::String(k.clone())).collect();
            map.insert("required".into(), Value::Array(all));
        }
        map.insert("properties".into(), Value::Object(out));
    }
    let is_object =
        map.get("type").and_then(Value::as_str) == Some("object") || map.contains_key("properties");
    if is_object {
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    Value::Object(map)
}

/// schemars documents each enum variant as its own `const` branch of a
/// `oneOf`; every provider handles a plain string `enum` best.
fn merge_string_variants(map: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = map.get("oneOf") else {
        return;
    };
    let mut values = Vec::new();
    let mut notes = Vec::new();
    for branch in branches {
        if branch.get("type").and_then(Value::as_str) != Some("string") {
            return;
        }
        if let Some(value) = branch.get("const") {
            if let (Some(v), Some(note)) = (
                value.as_str(),
                branch.get("description").and_then(Value::as_str),
            ) {
                notes.push(format!("{v}: {note}"));
            }
            values.push(value.clone());
        } else if let Some(Value::Array(list)) = branch.get("enum") {
            values.extend(list.iter().cloned());
        } else {
            return;
        }
    }
    map.remove("oneOf");
    map.insert("type".into(), json!("string"));
    map.insert("enum".into(), Value::Array(values));
    // The per-variant notes stay readable for the model in the description.
    if !notes.is_empty() {
        let intro = map
            .get("description")
            .and_then(Value::as_str)
            .map(|d| format!("{d}\n"))
            .unwrap_or_default();
        map.insert(
            "description".into(),
            Value::String(format!("{intro}{}", notes.join("\n"))),
        );
    }
}

fn make_nullable(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    let null = json!("null");
    if let Some(Value::Array(parts)) = map.get_mut("anyOf") {
        if !parts
            .iter()
            .any(|p| p.get("type").and_then(Value::as_str) == Some("null"))
        {
            parts.push(json!({"type": "null"}));
        }
        return;
    }
    match map.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(types)) if !types.contains(&null) => types.push(null.clone()),
        _ => {}
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

/// Every way `schema` breaks OpenAI's strict-mode rules, with the JSON path
/// of each; empty when it satisfies them all.
pub fn openai_strict_violations(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        found.push("$: the root must be an object schema".to_owned());
    }
    if schema.get("anyOf").is_some() {
        found.push("$: the root must not be anyOf".to_owned());
    }
    check_strict(schema, "$", &mut found);
    found
}

fn check_strict(node: &Value, path: &str, found: &mut Vec<String>) {
    let Value::Object(map) = node else {
        found.push(format!("{path}: a schema must be an object"));
        return;
    };
    for key in OPENAI_UNSUPPORTED {
        if map.contains_key(*key) {
            found.push(format!("{path}: `{key}` is not supported in strict mode"));
        }
    }
    if map.contains_key("$ref") {
        found.push(format!("{path}: `$ref` is left unresolved"));
    }
    if let Some(format) = map.get("format").and_then(Value::as_str)
        && !OPENAI_FORMATS.contains(&format)
    {
        found.push(format!("{path}: format `{format}` is not supported"));
    }
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.is_empty() && !map.contains_key("anyOf") && !map.contains_key("enum") {
        found.push(format!("{path}: no `type`, `enum` or `anyOf`"));
    }
    if let Some(Value::Array(values)) = map.get("enum")
        && values.iter().any(|v| v.is_object() || v.is_array())
    {
        found.push(format!("{path}: enum values must be primitives"));
    }
    if types.contains(&"object") || map.contains_key("properties") {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            found.push(format!("{path}: `additionalProperties` must be false"));
        }
        let props = map.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match props {
            None => found.push(format!("{path}: an object needs `properties`")),
            Some(props) => {
                for name in props.keys() {
                    if !required.contains(&name.as_str()) {
                        found.push(format!("{path}: property `{name}` is not required"));
                    }
                }
                for name in &required {
                    if !props.contains_key(*name) {
                        found.push(format!("{path}: required `{name}` is not a property"));
                    }
                }
                for (name, child) in props {
                    check_strict(child, &format!("{path}.{name}"), found);
                }
            }
        }
    }
    if types.contains(&"array") {
        match map.get("items") {
            Some(items) => check_strict(items, &format!("{path}[]"), found),
            None => found.push(format!("{path}: an array needs `items`")),
        }
    }
    if let Some(Value::Array(parts)) = map.get("anyOf") {
        for (i, part) in parts.iter().enumerate() {
            check_strict(part, &format!("{path}.anyOf[{i}]"), found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_are_inlined_with_their_sibling_description() {
        let canonical = json!({
            "type": "object",
            "properties": {"tier": {"description": "which tier", "$ref": "#/$defs/Tier"}},
            "required": ["tier"],
            "$defs": {"Tier": {"type": "string", "enum": ["bronze", "gold"]}}
        });
        let out = normalise(SchemaDialect::OpenAiStrict, &canonical);
        assert_eq!(
            out["properties"]["tier"],
            json!({"type": "string", "enum": ["bronze", "gold"], "description": "which tier"})
        );
        assert!(out.get("$defs").is_none());
    }

    #[test]
    fn documented_variants_become_one_enum() {
        let canonical = json!({"oneOf": [
            {"type": "string", "enum": ["a"]},
            {"type": "string", "const": "b", "description": "B"}
        ]});
        let out = normalise(SchemaDialect::Gemini, &canonical);
        assert_eq!(
            out,
            json!({"type": "string", "enum": ["a", "b"], "description": "b: B"})
        );
    }

    #[test]
    fn openai_makes_optional_properties_required_and_nullable() {
        let canonical = json!({
            "type": "object",
            "properties": {
                "a": {"type": "string"},
                "b": {"type": "string", "enum": ["x"]},
                "c": {"anyOf": [{"type": "object", "properties": {}}, {"type": "null"}]}
            },
            "required": ["a"]
        });
        let out = normalise(SchemaDialect::OpenAiStrict, &canonical);
        assert_eq!(out["required"], json!(["a", "b", "c"]));
        assert_eq!(out["properties"]["a"]["type"], json!("string"));
        assert_eq!(out["properties"]["b"]["type"], json!(["string", "null"]));
        assert_eq!(out["properties"]["b"]["enum"], json!(["x", null]));
        assert_eq!(out["properties"]["c"]["anyOf"].as_array().unwrap().len(), 2);
        assert!(openai_strict_violations(&out).is_empty(), "{out}");
    }

    #[test]
    fn anthropic_drops_numeric_and_length_constraints() {
        let canonical = json!({
            "type": "object",
            "properties": {
                "n": {"type": "number", "minimum": 0, "maximum": 1, "format": "double"},
                "l": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 3}
            },
            "required": ["n", "l"]
        });
        let out = normalise(SchemaDialect::Anthropic, &canonical);
        assert_eq!(out["properties"]["n"], json!({"type": "number"}));
        assert_eq!(
            out["properties"]["l"],
            json!({"type": "array", "items": {"type": "string"}, "minItems": 1})
        );
        assert_eq!(out["additionalProperties"], json!(false));
    }

    #[test]
    fn the_strict_checker_names_each_violation() {
        let bad = json!({
            "type": "object",
            "properties": {
                "a": {"type": "string", "format": "uint32", "maxLength": 3},
                "b": {"oneOf": [{"type": "string"}]},
                "c": {"type": "array"}
            },
            "required": ["a", "z"]
        });
        let found = openai_strict_violations(&bad);
        for expected in [
            "$: `additionalProperties` must be false",
            "$: property `b` is not required",
            "$: required `z` is not a property",
            "$.a: format `uint32` is not supported",
            "$.a: `maxLength` is not supported in strict mode",
            "$.b: `oneOf` is not supported in strict mode",
            "$.c: an array needs `items`",
        ] {
            assert!(found.iter().any(|f| f == expected), "{expected}: {found:?}");
        }
    }

    #[test]
    fn a_recursive_ref_stops_instead_of_looping() {
        let canonical = json!({
            "type": "object",
            "properties": {"next": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}
        });
        let out = normalise(SchemaDialect::OpenAiStrict, &canonical);
        assert!(!openai_strict_violations(&out).is_empty());
    }
}
