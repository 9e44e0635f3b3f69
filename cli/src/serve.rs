//! `tutorflow serve`: the whole API on one local port, with the embedded
//! store, the repository's content and the offline tutor by default.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tutorflow::api::App;
use tutorflow::api::auth::dev_token;
use tutorflow::api::site::{LocalSite, PageConfig};
use tutorflow::api::{logging, server};
use tutorflow::config::{AuthMode, Config, ContentSourceKind, SecretRef};

#[derive(clap::Args)]
pub struct Args {
    /// Configuration file (every key is documented in samplconfig.toml).
    #[arg(long, env = "TUTORFLOW_CONFIG")]
    config: Option<PathBuf>,
    /// Port to listen on (0 picks a free one); overrides server.port.
    #[arg(long)]
    port: Option<u16>,
    /// Address to listen on; overrides server.host.
    #[arg(long)]
    host: Option<String>,
    /// The built web page to serve at `/` (`npm --prefix web run build`).
    #[arg(long, default_value = "web/dist")]
    web: PathBuf,
}

/// A fresh random value for each signing secret the configuration reads
/// from an unset environment variable, for this run only.
pub(crate) fn development_secrets(config: &Config) -> HashMap<String, String> {
    let mut generated = HashMap::new();
    for reference in [&config.auth.hs256_secret, &config.drills.token_secret]
        .into_iter()
        .flatten()
    {
        if let Ok(SecretRef::Env(name)) = SecretRef::parse(reference)
            && std::env::var(&name).is_err()
        {
            generated.insert(
                name.clone(),
                format!("{:032x}{:032x}", fastrand::u128(..), fastrand::u128(..)),
            );
            eprintln!("note: {name} is not set; using a random development secret for this run");
        }
    }
    generated
}

/// Local edits to content show up within this many seconds.
const LOCAL_REFRESH_SECONDS: u64 = 2;

pub async fn run(args: Args) -> ExitCode {
    let process_env = |k: &str| std::env::var(k).ok();
    logging::init(process_env);
    let mut config = match Config::load(args.config.as_deref(), process_env) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(port) = args.port {
        config.server.port = port;
    }
    if let Some(host) = args.host {
        config.server.host = host;
    }
    if config.content.source == ContentSourceKind::Fs {
        config.content.refresh_seconds = config.content.refresh_seconds.min(LOCAL_REFRESH_SECONDS);
    }
    let generated = development_secrets(&config);
    let env = move |k: &str| std::env::var(k).ok().or_else(|| generated.get(k).cloned());
    let jwt_secret = config
        .auth
        .hs256_secret
        .as_deref()
        .and_then(|r| SecretRef::parse(r).ok())
        .and_then(|r| r.resolve(&env));
    let app = match App::from_config(config.clone(), &env).await {
        Ok(app) => Arc::new(app),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    app.prepare_courses().await;
    let address = format!("{}:{}", config.server.host, config.server.port);
    let listener = match tokio::net::TcpListener::bind(&address).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("error: cannot listen on {address}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let url = match listener.local_addr() {
        Ok(a) => format!("http://{a}"),
        Err(_) => format!("http://{address}"),
    };
    let dev_secret = match config.auth.mode {
        AuthMode::Hs256 => jwt_secret.clone(),
        AuthMode::Jwks | AuthMode::Apigw => None,
    };
    let built = args.web.join("index.html").is_file();
    let site = LocalSite {
        root: Some(args.web.clone()),
        dev_secret: dev_secret.clone(),
        staff_group: config.auth.staff_group.clone(),
        page_config: PageConfig {
            api_base_url: String::new(),
            auth: if dev_secret.is_some() { "dev" } else { "oidc" }.to_owned(),
            transcription: app.transcription_available(),
            debug: config.debug.enabled,
        },
    };
    println!("tutorflow is ready at {url}");
    if built {
        println!("  open {url}/ in a browser to learn (sign in as any student id)");
    } else {
        println!(
            "  the web page is not built: npm --prefix web ci && npm --prefix web run build (then reload {url}/)"
        );
    }
    if let (AuthMode::Hs256, Some(secret)) = (config.auth.mode, jwt_secret) {
        let token = dev_token(&secret, "student-1", Duration::from_secs(12 * 3600));
        println!("  a token for student-1 (12 h): {token}");
        println!(
            "  try: curl -s -X POST {url}/threads -H 'authorization: Bearer {token}' -H 'content-type: application/json' -d '{{\"courseId\":\"prealgebra\"}}'"
        );
    }
    server::serve_with_site(app, Arc::new(site), listener, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await;
    ExitCode::SUCCESS
}
