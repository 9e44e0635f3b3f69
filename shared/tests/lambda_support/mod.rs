//! Shared by the cargo-lambda tests: the repository root and what the root
//! Cargo.toml tells `cargo lambda` (`[workspace.metadata.lambda]`).

use std::collections::BTreeMap;
use std::path::PathBuf;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the shared crate lives in the workspace")
        .to_path_buf()
}

/// `[workspace.metadata.lambda]` of the root Cargo.toml.
pub fn lambda_metadata() -> toml::Table {
    let path = repo_root().join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut manifest: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("{} is not TOML: {e}", path.display()));
    let lambda = manifest
        .remove("workspace")
        .and_then(|w| w.get("metadata")?.get("lambda").cloned());
    match lambda {
        Some(toml::Value::Table(table)) => table,
        _ => panic!("the root Cargo.toml has no [workspace.metadata.lambda] table"),
    }
}

/// The environment `cargo lambda watch` gives every function process
/// (`[workspace.metadata.lambda.env]`).
pub fn watch_env() -> BTreeMap<String, String> {
    let Some(toml::Value::Table(env)) = lambda_metadata().remove("env") else {
        panic!("the root Cargo.toml has no [workspace.metadata.lambda.env] table");
    };
    env.into_iter()
        .map(|(name, value)| match value {
            toml::Value::String(text) => (name, text),
            other => panic!("[workspace.metadata.lambda.env] {name} must be a string, not {other}"),
        })
        .collect()
}
