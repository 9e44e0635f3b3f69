//! The content bundle as the functions and the local server hold it: loaded
//! once, kept across warm invocations, and replaced when a new version is
//! published (or, locally, when files change).
//!
//! At most once per refresh interval one caller asks the source for its
//! cheap fingerprint; only when it changed is the bundle fetched and
//! validated. A new version that fails to load or validate is logged and
//! the previous bundle keeps serving; the same broken version is not
//! fetched again until the fingerprint changes once more.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use crate::content::{Bundle, ContentSource, Diagnostics, SourceError};

/// Where the cache reads the time from to decide a refresh (monotonic,
/// unlike the service clock), injectable for tests.
pub type InstantSource = Arc<dyn Fn() -> Instant + Send + Sync>;

/// Why a bundle could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("content from {origin} is invalid:\n{diagnostics}")]
    Invalid {
        origin: String,
        diagnostics: Diagnostics,
    },
}

struct Current {
    bundle: Arc<Bundle>,
    fingerprint: String,
    checked_at: Instant,
    /// A fingerprint whose content failed to load: not retried until it changes.
    rejected: Option<String>,
}

pub struct ContentCache {
    source: Arc<dyn ContentSource>,
    refresh: Duration,
    clock: InstantSource,
    current: RwLock<Current>,
    /// Held by the one caller checking for a new version.
    checking: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for ContentCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContentCache")
            .field("source", &self.source.describe())
            .field("refresh", &self.refresh)
            .finish_non_exhaustive()
    }
}

async fn load_from(source: &dyn ContentSource) -> Result<(String, Bundle), LoadError> {
    let (fingerprint, files) = source.fetch_fingerprinted().await?;
    let bundle = Bundle::load(&files).map_err(|diagnostics| LoadError::Invalid {
        origin: source.describe(),
        diagnostics,
    })?;
    Ok((fingerprint, bundle))
}

impl ContentCache {
    /// Loads the bundle; without a valid first bundle there is nothing to serve.
    pub async fn load(
        source: Arc<dyn ContentSource>,
        refresh: Duration,
    ) -> Result<Self, LoadError> {
        Self::load_with_clock(source, refresh, Arc::new(Instant::now)).await
    }

    pub async fn load_with_clock(
        source: Arc<dyn ContentSource>,
        refresh: Duration,
        clock: InstantSource,
    ) -> Result<Self, LoadError> {
        let (fingerprint, bundle) = load_from(source.as_ref()).await?;
        let checked_at = clock();
        Ok(ContentCache {
            source,
            refresh,
            clock,
            current: RwLock::new(Current {
                bundle: Arc::new(bundle),
                fingerprint,
                checked_at,
                rejected: None,
            }),
            checking: tokio::sync::Mutex::new(()),
        })
    }

    /// The bundle to serve this request with, checking for a new version
    /// when the refresh interval has passed.
    pub async fn bundle(&self) -> Arc<Bundle> {
        if self.due() {
            // Others keep serving the current bundle while one caller checks.
            if let Ok(_checking) = self.checking.try_lock()
                && self.due()
            {
                self.refresh_now().await;
            }
        }
        self.current()
    }

    /// The bundle held now, without checking for a new one.
    pub fn current(&self) -> Arc<Bundle> {
        self.read(|c| c.bundle.clone())
    }

    fn read<T>(&self, f: impl FnOnce(&Current) -> T) -> T {
        // A poisoned lock still holds a consistent bundle: writers only swap fields.
        let guard = self.current.read().unwrap_or_else(|e| e.into_inner());
        f(&guard)
    }

    fn update(&self, f: impl FnOnce(&mut Current)) {
        let mut guard = self.current.write().unwrap_or_else(|e| e.into_inner());
        f(&mut guard);
    }

    fn due(&self) -> bool {
        let now = (self.clock)();
        self.read(|c| now.saturating_duration_since(c.checked_at) >= self.refresh)
    }

    async fn refresh_now(&self) {
        let now = (self.clock)();
        let fingerprint = match self.source.fingerprint().await {
            Ok(fingerprint) => fingerprint,
            Err(e) => {
                tracing::error!(source = %self.source.describe(), error = %e,
                    "cannot check for new content; serving the current bundle");
                self.update(|c| c.checked_at = now);
                return;
            }
        };
        let unchanged = self.read(|c| {
            c.fingerprint == fingerprint || c.rejected.as_deref() == Some(fingerprint.as_str())
        });
        if unchanged {
            self.update(|c| c.checked_at = now);
            return;
        }
        match load_from(self.source.as_ref()).await {
            Ok((loaded_fingerprint, bundle)) => {
                tracing::info!(source = %self.source.describe(), version = %bundle.version,
                    "loaded new content bundle");
                self.update(|c| {
                    c.bundle = Arc::new(bundle);
                    c.fingerprint = loaded_fingerprint;
                    c.checked_at = now;
                    c.rejected = None;
                });
            }
            Err(e) => {
                tracing::error!(source = %self.source.describe(), error = %e,
                    "new content not loaded; serving the previous bundle");
                // Broken content stays broken; an outage may pass by the next check.
                let broken = matches!(
                    e,
                    LoadError::Invalid { .. } | LoadError::Source(SourceError::Invalid(_))
                );
                self.update(|c| {
                    c.checked_at = now;
                    if broken {
                        c.rejected = Some(fingerprint);
                    }
                });
            }
        }
    }
}
