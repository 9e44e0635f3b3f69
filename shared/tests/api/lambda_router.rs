//! `cargo lambda watch` must serve the real function binaries on the app's
//! own paths: the router in the root Cargo.toml is `api::routes::ROUTES`,
//! route for route, and its environment configures the local app.

use crate::lambda_support;

use std::collections::BTreeSet;
use std::path::PathBuf;

use tutorflow::api::routes::{Function, ROUTES};
use tutorflow::config::{AuthMode, Config, ContentSourceKind, ProviderKind, StoreBackend};

/// One routed request line: method, path template, function package.
type RouterEntry = (String, String, String);

/// `[workspace.metadata.lambda.watch.router]`, one entry per method.
fn watch_router() -> Result<BTreeSet<RouterEntry>, String> {
    let metadata = lambda_support::lambda_metadata();
    let router = metadata
        .get("watch")
        .and_then(|w| w.get("router"))
        .and_then(toml::Value::as_table)
        .ok_or("the root Cargo.toml has no [workspace.metadata.lambda.watch.router] table")?;
    let mut entries = BTreeSet::new();
    for (path, routes) in router {
        // A bare function name would send every method to that function,
        // while the app serves each path with specific methods only.
        let routes = routes.as_array().ok_or_else(|| {
            format!("router path {path}: list its routes as [{{ method = ..., function = ... }}]")
        })?;
        for route in routes {
            let field = |name: &str| {
                route
                    .get(name)
                    .and_then(toml::Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| format!("router path {path}: a route without `{name}`"))
            };
            entries.insert((path.clone(), field("method")?, field("function")?));
        }
    }
    Ok(entries)
}

fn app_routes() -> BTreeSet<RouterEntry> {
    ROUTES
        .iter()
        .map(|r| {
            (
                r.path.to_owned(),
                r.method.to_string(),
                r.function.name().to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_watch_router_is_exactly_the_apps_route_table() {
    let router = watch_router().unwrap_or_else(|e| panic!("{e}"));
    let expected = app_routes();
    let missing: Vec<_> = expected.difference(&router).collect();
    let extra: Vec<_> = router.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "[workspace.metadata.lambda.watch.router] differs from api::routes::ROUTES\n\
         missing (path, method, function): {missing:?}\n\
         not in ROUTES: {extra:?}"
    );
}

#[test]
fn every_routed_function_is_a_binary_package_of_that_name() {
    for function in Function::ALL {
        let manifest = lambda_support::repo_root()
            .join("functions")
            .join(function.name())
            .join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest)
            .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
        let package: toml::Table = text.parse().unwrap();
        assert_eq!(
            package["package"]["name"].as_str(),
            Some(function.name()),
            "{} must name its package after the function, as the router does",
            manifest.display()
        );
    }
}

#[test]
fn the_watch_environment_configures_the_local_app() {
    let env = lambda_support::watch_env();
    let config = Config::load(None, |name| env.get(name).cloned())
        .unwrap_or_else(|e| panic!("[workspace.metadata.lambda.env]: {e}"));
    assert_eq!(config.store.backend, StoreBackend::Sqlite);
    // Relative to the repository root, where `cargo lambda watch` runs: the
    // six function processes open the same file.
    assert!(config.store.sqlite_path.is_relative());
    assert_eq!(config.content.source, ContentSourceKind::Fs);
    assert_eq!(config.content.dir, PathBuf::from("."));
    assert_eq!(config.llm.tutor, ProviderKind::Offline);
    // No API Gateway authorizer under watch: the functions check tokens.
    assert_eq!(config.auth.mode, AuthMode::Hs256);
    for secret in [&config.auth.hs256_secret, &config.drills.token_secret] {
        let name = secret
            .as_deref()
            .and_then(|r| r.strip_prefix("env:"))
            .expect("secrets are env: references");
        assert!(
            env.contains_key(name),
            "{name} must be set in [workspace.metadata.lambda.env] so all six processes share it"
        );
    }
}
