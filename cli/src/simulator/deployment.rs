//! The simulated deployment: the configuration and content every run
//! shares, and the clock, ids and secrets that make a run repeatable.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};
use tutorflow::api::App;
use tutorflow::config::{
    AuthConfig, Config, ContentSourceKind, ExamApiConfig, NotificationConfig, TranscriptionConfig,
};
use tutorflow::content::{Bundle, FsSource};
use tutorflow::engine::rng::SplitMix64;
use tutorflow::service::{AppParts, Clock, Ids};
use tutorflow::startup::StartupError;
use tutorflow::store::{ContentCache, LoadError, Retention, SqliteStore, Store};

use crate::script::default_start;

/// The scripted student (the `sub` of its token).
pub(super) const STUDENT_ID: &str = "sim-student";
/// Secrets of the simulated deployment. They never leave the process: the
/// App reads them through the environment function handed to it.
const JWT_SECRET_VAR: &str = "TUTORFLOW_SIMULATE_JWT_SECRET";
pub(super) const JWT_SECRET: &str = "tutorflow-simulate-jwt-secret";
const DRILL_SECRET_VAR: &str = "TUTORFLOW_SIMULATE_DRILL_SECRET";
pub(super) const DRILL_SECRET: &str = "tutorflow-simulate-drill-secret";

/// The options of the commands that play scripts (`simulate`, `test`).
#[derive(clap::Args)]
pub struct SetupArgs {
    /// Configuration file: chooses the LLM providers (offline by default).
    #[arg(long, env = "TUTORFLOW_CONFIG")]
    pub config: Option<PathBuf>,
    /// Bundle root (holding workflows/ and prompts/) [default: the
    /// configuration's content.dir, which defaults to .].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

impl SetupArgs {
    /// The [`Setup`] these options name; what stops it loading is printed
    /// as an error.
    pub async fn load(&self) -> Option<Setup> {
        match Setup::load(self.config.as_deref(), self.dir.as_deref()).await {
            Ok(setup) => Some(setup),
            Err(message) => {
                eprintln!("error: {message}");
                None
            }
        }
    }
}

/// What every run shares: the configuration and the content, loaded once.
pub struct Setup {
    pub(super) config: Config,
    content: Arc<ContentCache>,
}

impl Setup {
    /// Reads the configuration (`file`, or only defaults and environment
    /// overrides) and the content bundle under `dir` (default: the
    /// configuration's `content.dir`). The state store, auth, exam API and
    /// notifications are the simulation's own whatever the file says; the
    /// LLM providers are the configuration's (offline by default).
    pub async fn load(file: Option<&Path>, dir: Option<&Path>) -> Result<Setup, String> {
        let mut config =
            Config::load(file, |k| std::env::var(k).ok()).map_err(|e| e.to_string())?;
        let dir: PathBuf = dir.map_or_else(|| config.content.dir.clone(), Path::to_path_buf);
        config.content.source = ContentSourceKind::Fs;
        config.content.dir = dir.clone();
        config.auth = AuthConfig {
            hs256_secret: Some(format!("env:{JWT_SECRET_VAR}")),
            ..AuthConfig::default()
        };
        config.drills.token_secret = Some(format!("env:{DRILL_SECRET_VAR}"));
        config.exam_api = ExamApiConfig::default();
        config.notifications = NotificationConfig::default();
        config.transcription = TranscriptionConfig::default();
        // One version for the whole run: content edited meanwhile is not picked up.
        let content = ContentCache::load(Arc::new(FsSource::new(&dir)), std::time::Duration::MAX)
            .await
            .map_err(|e| match e {
                LoadError::Invalid {
                    origin,
                    diagnostics,
                } => {
                    let n = diagnostics.0.len();
                    format!(
                        "the content bundle in {origin} has {n} problem{} (run `tutorflow validate`)",
                        if n == 1 { "" } else { "s" }
                    )
                }
                LoadError::Source(e) => e.to_string(),
            })?;
        let setup = Setup {
            config,
            content: Arc::new(content),
        };
        // A configuration the App cannot start with (an LLM provider
        // without its key) is reported once, here, not by every script.
        let trial_store = SqliteStore::in_memory(Retention::from_config(&setup.config.store))
            .await
            .map_err(|e| format!("cannot start the simulation's store: {e}"))?;
        setup
            .assemble(
                Arc::new(trial_store),
                Arc::new(ScriptClock(Mutex::new(default_start()))),
                Arc::new(ScriptIds::new(0)),
            )
            .map_err(|e| e.to_string())?;
        Ok(setup)
    }

    /// An App over `store` with the simulation's clock and ids.
    pub(super) fn assemble(
        &self,
        store: Arc<dyn Store>,
        clock: Arc<ScriptClock>,
        ids: Arc<ScriptIds>,
    ) -> Result<App, StartupError> {
        App::assemble(
            AppParts {
                config: self.config.clone(),
                store,
                content: self.content.clone(),
                clock,
                ids,
            },
            &env,
        )
    }

    pub fn bundle(&self) -> Arc<Bundle> {
        self.content.current()
    }
}

fn env(name: &str) -> Option<String> {
    match name {
        JWT_SECRET_VAR => Some(JWT_SECRET.to_owned()),
        DRILL_SECRET_VAR => Some(DRILL_SECRET.to_owned()),
        other => std::env::var(other).ok(),
    }
}

/// A clock that moves only when the script says.
pub(super) struct ScriptClock(pub(super) Mutex<DateTime<Utc>>);

impl ScriptClock {
    /// Moves the clock on; `None` past the end of representable time.
    pub(super) fn advance(&self, by: Duration) -> Option<DateTime<Utc>> {
        let mut now = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *now = now.checked_add_signed(by)?;
        Some(*now)
    }
}

impl Clock for ScriptClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Ids numbered in order and seeds drawn from the script's seed.
pub(super) struct ScriptIds {
    next: AtomicU64,
    seeds: Mutex<SplitMix64>,
}

impl ScriptIds {
    pub(super) fn new(seed: u64) -> Self {
        ScriptIds {
            next: AtomicU64::new(0),
            seeds: Mutex::new(SplitMix64::new(seed)),
        }
    }
}

impl Ids for ScriptIds {
    fn new_id(&self) -> String {
        format!("sim-{:04}", self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn seed(&self) -> u64 {
        self.seeds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .next_u64()
    }
}
