//! The use cases behind every endpoint, orchestrating the store, the
//! content bundle, the pure engine and the LLM layer. One [`App`] is built
//! per process (at a Lambda's cold start, or by the local server) and
//! borrowed by every request.

mod catalog;
mod debug;
mod drills;
pub mod error;
mod events;
mod exams;
mod idempotency;
mod lease;
pub mod lifecycle;
mod logs;
mod notifications;
pub mod profile;
mod reports;
pub mod text_hygiene;
mod threads;
mod timeline;
mod transcribe;
mod turn;
mod views;
mod webhook;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

pub use catalog::{CourseDetail, CourseList, CourseSummary, CourseUnit, PrerequisiteEdge};
pub use error::{KeySource, ServiceError};
pub use exams::ExamGateway;
pub use idempotency::{Begun, ClientKeys, Idempotency, KeyHolder, Operation};
pub use lifecycle::{LifecycleChange, LifecycleResponse};
pub use logs::{LogFormat, ThreadLogs, TurnLogView};
pub use notifications::event_id;
pub use reports::{ConfusionLine, ReportCard, RevisitLine, ThreadSummaryReport, UnitLine};
pub use threads::ThreadFilter;
pub use transcribe::{TranscriptBody, UploadRequest, UploadTicket, UploadedAudio};
pub use turn::StreamedTurn;
pub use views::{ThreadList, ThreadReplay};

use crate::api::auth::Authenticator;
use crate::api::webhook::WebhookVerifier;
use crate::config::{Config, ConfigError};
use crate::content::Bundle;
use crate::engine::drill_token::TokenKeys;
use crate::engine::turn::CourseRuntime;
use crate::integrations::outbound::{NotificationQueue, Outbound};
use crate::integrations::teacher::TeacherAlerts;
use crate::llm::moderation::{Moderator, OpenAiModerator};
use crate::llm::transcription::OpenAiTranscriber;
use crate::llm::{LlmSetupError, LlmStack, RetryPolicy};
use crate::secrets::{self, UnresolvedSecret};
use crate::store::{AudioStore, ContentCache, LoadError, Store, StoreError};

pub(crate) const JSON: &str = "application/json";

/// A use case's successful response: status and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub status: u16,
    pub body: String,
    /// `application/json` unless a route answers in another format.
    pub content_type: &'static str,
}

impl Output {
    pub(crate) fn json<T: serde::Serialize>(
        status: u16,
        value: &T,
    ) -> Result<Output, ServiceError> {
        serde_json::to_string(value)
            .map(|body| Output {
                status,
                body,
                content_type: JSON,
            })
            .map_err(|e| ServiceError::internal(e.to_string()))
    }
}

/// The current time. Handed in so tests control it.
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// New ids and random seeds. Handed in so tests are reproducible.
pub trait Ids: Send + Sync {
    fn new_id(&self) -> String;
    fn seed(&self) -> u64;
}

pub struct RandomIds;

impl Ids for RandomIds {
    fn new_id(&self) -> String {
        uuid::Uuid::new_v4().to_string()
    }

    fn seed(&self) -> u64 {
        fastrand::u64(..)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("state store: {0}")]
    Store(#[from] StoreError),
    #[error("content: {0}")]
    Content(#[from] LoadError),
    #[error("LLM setup: {0}")]
    Llm(#[from] LlmSetupError),
    #[error("{0}")]
    Secret(String),
}

impl From<UnresolvedSecret> for StartupError {
    fn from(e: UnresolvedSecret) -> Self {
        match e {
            UnresolvedSecret::Malformed(e) => StartupError::Config(e),
            unset => StartupError::Secret(unset.to_string()),
        }
    }
}

/// What every request borrows.
pub struct App {
    pub config: Config,
    pub(crate) store: Arc<dyn Store>,
    pub(crate) content: Arc<ContentCache>,
    pub(crate) llm: LlmStack,
    pub(crate) auth: Authenticator,
    pub(crate) webhooks: WebhookVerifier,
    pub(crate) token_keys: TokenKeys,
    pub(crate) exams: ExamGateway,
    pub(crate) transcriber: Option<OpenAiTranscriber>,
    /// Screens messages alongside the tutor call, where configured.
    pub(crate) moderator: Option<Arc<dyn Moderator>>,
    pub(crate) audio: Option<AudioStore>,
    pub(crate) teacher_alerts: TeacherAlerts,
    pub(crate) outbound: Outbound,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) ids: Arc<dyn Ids>,
    /// Search indexes and compiled patterns per course, for one content version.
    runtimes: Mutex<(String, HashMap<String, Arc<CourseRuntime>>)>,
    /// Turns waiting in this process for a thread (see `lease`).
    pub(crate) turn_queues: lease::TurnQueues,
}

/// The pieces an [`App`] is assembled from; tests supply their own.
pub struct AppParts {
    pub config: Config,
    pub store: Arc<dyn Store>,
    pub content: Arc<ContentCache>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn Ids>,
}

/// Shortest accepted drill-token key.
const MIN_DRILL_KEY_BYTES: usize = 16;

/// What the configuration names that needs no secret: the store, the
/// content cache, the audio bucket. A Lambda function opens them during
/// its init phase and builds the [`App`] on its first invocation, once the
/// secrets can be read (see `crate::secrets`).
#[derive(Clone)]
pub struct Resources {
    store: Arc<dyn Store>,
    content: Arc<ContentCache>,
    audio: Option<AudioStore>,
    notification_queue: Option<NotificationQueue>,
}

impl Resources {
    /// Opens them all at once: on a cold start the content bundle's
    /// download from S3 overlaps the clients' setup instead of following it.
    pub async fn open(config: &Config) -> Result<Resources, StartupError> {
        let audio = async {
            match &config.transcription.upload_bucket {
                Some(bucket) => Some(AudioStore::new(
                    crate::store::s3_client(config.transcription.endpoint_url.as_deref(), None)
                        .await,
                    bucket,
                    &config.transcription,
                )),
                None => None,
            }
        };
        let notification_queue = async {
            let n = &config.notifications;
            match &n.queue_url {
                Some(url) => Some(NotificationQueue::new(
                    crate::store::sqs_client(
                        n.queue_endpoint_url.as_deref(),
                        config.store.region.as_deref(),
                    )
                    .await,
                    url,
                )),
                None => None,
            }
        };
        let (store, content, audio, notification_queue) = tokio::join!(
            crate::store::open(&config.store),
            crate::store::open_content(&config.content),
            audio,
            notification_queue,
        );
        Ok(Resources {
            store: store?,
            content: Arc::new(content?),
            audio,
            notification_queue,
        })
    }
}

impl App {
    /// Builds everything the configuration names: the store, the content
    /// cache, LLM providers, authentication. Secrets are read through `env`.
    pub async fn from_config(
        config: Config,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> Result<App, StartupError> {
        let resources = Resources::open(&config).await?;
        App::from_resources(config, resources, env)
    }

    /// The app over resources opened earlier; secrets are read through `env`.
    pub fn from_resources(
        config: Config,
        resources: Resources,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> Result<App, StartupError> {
        let mut app = App::assemble(
            AppParts {
                config,
                store: resources.store,
                content: resources.content,
                clock: Arc::new(SystemClock),
                ids: Arc::new(RandomIds),
            },
            env,
        )?;
        app.audio = resources.audio;
        app.outbound.set_queue(resources.notification_queue);
        Ok(app)
    }

    pub fn assemble(
        parts: AppParts,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> Result<App, StartupError> {
        let config = parts.config;
        let llm = LlmStack::from_config(&config.llm, env, RetryPolicy::default())?;
        let auth = Authenticator::from_config(&config.auth, env)?;
        let webhooks = WebhookVerifier::from_config(
            &config.auth.webhooks,
            config.auth.webhook_tolerance_seconds,
            env,
        )?;
        let token_keys = token_keys(&config, env)?;
        let transcriber =
            OpenAiTranscriber::from_config(&config.transcription, env, RetryPolicy::default())?;
        let moderator = OpenAiModerator::from_config(&config, env, RetryPolicy::default())?
            .map(|m| Arc::new(m) as Arc<dyn Moderator>);
        let exams = ExamGateway::from_config(&config, env)?;
        let teacher_alerts = TeacherAlerts::from_config(&config, env)?;
        let outbound = Outbound::from_config(&config, env)?;
        Ok(App {
            teacher_alerts,
            outbound,
            llm,
            auth,
            webhooks,
            token_keys,
            exams,
            transcriber,
            moderator,
            audio: None,
            store: parts.store,
            content: parts.content,
            clock: parts.clock,
            ids: parts.ids,
            runtimes: Mutex::new((String::new(), HashMap::new())),
            turn_queues: lease::TurnQueues::default(),
            config,
        })
    }

    /// Whether voice notes can be transcribed here.
    pub fn transcription_available(&self) -> bool {
        self.transcriber.is_some()
    }

    /// The bundle to serve this request from (refreshed when due).
    pub(crate) async fn bundle(&self) -> Arc<Bundle> {
        self.content.bundle().await
    }

    /// The runtime of `course_id` in `bundle`, built once per content version.
    pub(crate) fn runtime(
        &self,
        bundle: &Arc<Bundle>,
        course_id: &str,
    ) -> Result<Arc<CourseRuntime>, ServiceError> {
        let mut cache = self.runtimes.lock().unwrap_or_else(|e| e.into_inner());
        if cache.0 != bundle.version {
            *cache = (bundle.version.clone(), HashMap::new());
        }
        if let Some(rt) = cache.1.get(course_id) {
            return Ok(rt.clone());
        }
        let rt = Arc::new(
            CourseRuntime::new(bundle.clone(), course_id).ok_or_else(|| {
                ServiceError::not_found(format!("course `{course_id}` does not exist"))
            })?,
        );
        cache.1.insert(course_id.to_owned(), rt.clone());
        Ok(rt)
    }
}

/// The keys drill tokens are sealed with: `drills.token_secret` seals and
/// opens; each of `drills.retired_token_secrets` still opens the tokens it
/// sealed, so a secret can be rotated without failing the drills on screen.
fn token_keys(
    config: &Config,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<TokenKeys, StartupError> {
    let reference = config.drills.token_secret.as_deref().ok_or_else(|| {
        StartupError::Secret("drills.token_secret is required: it seals drill tokens".into())
    })?;
    let current = token_secret("drills.token_secret", reference, env)?;
    let retired = config
        .drills
        .retired_token_secrets
        .iter()
        .map(|reference| token_secret("drills.retired_token_secrets", reference, env))
        .collect::<Result<Vec<_>, _>>()?;
    let retired: Vec<&[u8]> = retired.iter().map(Vec::as_slice).collect();
    TokenKeys::new(&current, &retired).map_err(|e| StartupError::Secret(e.to_string()))
}

fn token_secret(
    setting: &str,
    reference: &str,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<Vec<u8>, StartupError> {
    let secret = secrets::resolve(setting, reference, env)?;
    if secret.len() < MIN_DRILL_KEY_BYTES {
        return Err(StartupError::Secret(format!(
            "{setting}: {reference} must be at least {MIN_DRILL_KEY_BYTES} bytes"
        )));
    }
    Ok(secret.into_bytes())
}
