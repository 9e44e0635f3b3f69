//! The schema each provider is sent for each call is committed as a golden
//! file, so any change to it is a reviewed change; the OpenAI schemas obey
//! every strict-mode rule and the others their provider's subset.
//!
//! After an intended change to a reply type, regenerate with
//! `UPDATE_GOLDEN=1 cargo test -p tutorflow --test llm schemas::`.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;
use tutorflow::llm::schema::openai_strict_violations;
use tutorflow::llm::{LlmCall, SchemaDialect};

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/schemas")
}

fn file_name(call: LlmCall, dialect: SchemaDialect) -> String {
    format!("{}.{}.json", call.as_str(), dialect.as_str())
}

#[test]
fn every_schema_matches_its_golden_file() {
    let update = std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    for call in LlmCall::ALL {
        let schema = call.output_schema();
        for dialect in SchemaDialect::ALL {
            let path = golden_dir().join(file_name(call, dialect));
            let actual = serde_json::to_string_pretty(schema.dialect(dialect)).unwrap() + "\n";
            if update {
                std::fs::create_dir_all(golden_dir()).unwrap();
                std::fs::write(&path, &actual).unwrap();
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(expected) if expected == actual => {}
                _ => stale.push(path.display().to_string()),
            }
        }
    }
    assert!(
        stale.is_empty(),
        "these schemas changed; if that is intended, run \
         `UPDATE_GOLDEN=1 cargo test -p tutorflow --test llm schemas::` and review the diff:\n{}",
        stale.join("\n")
    );
}

#[test]
fn there_are_no_stray_golden_files() {
    let expected: BTreeSet<String> = LlmCall::ALL
        .into_iter()
        .flat_map(|c| SchemaDialect::ALL.map(|d| file_name(c, d)))
        .collect();
    let present: BTreeSet<String> = std::fs::read_dir(golden_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(present, expected);
}

#[test]
fn openai_schemas_satisfy_every_strict_mode_rule() {
    for call in LlmCall::ALL {
        let schema = call.output_schema();
        let violations = openai_strict_violations(schema.dialect(SchemaDialect::OpenAiStrict));
        assert!(violations.is_empty(), "{}: {violations:#?}", call.as_str());
    }
}

#[test]
fn the_strict_checker_rejects_the_unnormalised_schemas() {
    // The canonical schemas use $ref, oneOf and optional properties: the
    // normalisation is what makes them acceptable.
    let tutor = LlmCall::Tutor.output_schema();
    assert!(!openai_strict_violations(&tutor.canonical).is_empty());
}

/// Every (path, keyword) in `schema`'s schema nodes.
fn keywords(schema: &Value, at: &str, out: &mut Vec<(String, String)>) {
    let Value::Object(map) = schema else { return };
    for (key, value) in map {
        out.push((at.to_owned(), key.clone()));
        match key.as_str() {
            "properties" => {
                for (name, child) in value.as_object().into_iter().flatten() {
                    keywords(child, &format!("{at}.{name}"), out);
                }
            }
            "items" | "additionalProperties" => keywords(value, &format!("{at}[]"), out),
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                for (i, child) in value.as_array().into_iter().flatten().enumerate() {
                    keywords(child, &format!("{at}.{key}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
}

#[test]
fn anthropic_schemas_have_no_numeric_or_length_constraints() {
    let banned = [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "maxItems",
        "$ref",
        "$defs",
        "oneOf",
    ];
    for call in LlmCall::ALL {
        let schema = call.output_schema();
        let anthropic = schema.dialect(SchemaDialect::Anthropic);
        let mut found = Vec::new();
        keywords(anthropic, "$", &mut found);
        for (at, key) in &found {
            assert!(
                !banned.contains(&key.as_str()),
                "{}: {key} at {at}",
                call.as_str()
            );
        }
        assert!(
            anthropic
                .to_string()
                .contains("\"additionalProperties\":false")
        );
    }
}

#[test]
fn gemini_schemas_use_only_its_documented_keywords() {
    let allowed = [
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
    for call in LlmCall::ALL {
        let schema = call.output_schema();
        let mut found = Vec::new();
        keywords(schema.dialect(SchemaDialect::Gemini), "$", &mut found);
        for (at, key) in &found {
            assert!(
                allowed.contains(&key.as_str()),
                "{}: {key} at {at}",
                call.as_str()
            );
        }
    }
}

#[test]
fn the_tutor_schema_keeps_its_ranges_where_providers_enforce_them() {
    let schema = LlmCall::Tutor.output_schema();
    let openai = schema.dialect(SchemaDialect::OpenAiStrict);
    let confidence = &openai["properties"]["mapped_units"]["items"]["properties"]["confidence"];
    assert_eq!(confidence["minimum"], 0.0);
    assert_eq!(confidence["maximum"], 1.0);
    assert!(
        confidence.get("format").is_none(),
        "format double is not a strict-mode format"
    );
    // Optional in Rust, so required-but-nullable for OpenAI...
    let card = &openai["properties"]["concept_card"];
    assert!(
        card["anyOf"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["type"] == "null")
    );
    // ...and simply optional for Gemini.
    let gemini = schema.dialect(SchemaDialect::Gemini);
    let required: Vec<&str> = gemini["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(!required.contains(&"concept_card"));
    // Variant notes survive as a description of the merged enum.
    let intent = &gemini["properties"]["turn_analysis"]["properties"]["student_intent"];
    assert!(intent["enum"].as_array().unwrap().len() == 9);
    assert!(
        intent["description"]
            .as_str()
            .unwrap()
            .contains("answer: Attempting an answer")
    );
}
