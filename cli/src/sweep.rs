//! `tutorflow sweep`: one run of the idle sweep the scheduled function
//! makes on AWS, against the configured store.

use std::path::PathBuf;
use std::process::ExitCode;

use tutorflow::api::{App, logging};
use tutorflow::config::Config;

use crate::serve::development_secrets;

#[derive(clap::Args)]
pub struct Args {
    /// Configuration file (every key is documented in samplconfig.toml).
    #[arg(long, env = "TUTORFLOW_CONFIG")]
    config: Option<PathBuf>,
}

pub async fn run(args: Args) -> ExitCode {
    let process_env = |k: &str| std::env::var(k).ok();
    logging::init(process_env);
    let config = match Config::load(args.config.as_deref(), process_env) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    // The sweep signs nothing a student will present back, so unset
    // signing secrets may be random for the run.
    let generated = development_secrets(&config);
    let env = move |k: &str| std::env::var(k).ok().or_else(|| generated.get(k).cloned());
    let app = match App::from_config(config, &env).await {
        Ok(app) => app,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match app.sweep_idle().await {
        Ok(report) => {
            println!(
                "{}",
                serde_json::to_string(&report).unwrap_or_else(|e| e.to_string())
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:?}");
            ExitCode::FAILURE
        }
    }
}
