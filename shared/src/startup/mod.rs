//! The composition root: builds the application from the configuration
//! (the store and the content, the LLM providers, the integrations'
//! adapters, the authentication of callers) and, on Lambda, runs it
//! ([`lambda`]). It is the one module that knows every layer; no layer
//! knows it. docs/architecture.md shows where it sits.

pub mod lambda;

use std::sync::Arc;

use crate::api::auth::Authenticator;
use crate::api::routes::Function;
use crate::api::webhook::WebhookVerifier;
use crate::api::{AllRoutes, App, Routes};
use crate::config::{Config, ConfigError};
use crate::engine::practice::drill_token::TokenKeys;
use crate::integrations::exam_api::ExamApi;
use crate::integrations::outbound::{NotificationQueue, Outbound};
use crate::integrations::teacher::TeacherAlerts;
use crate::llm::moderation::{Moderator, OpenAiModerator};
use crate::llm::transcription::OpenAiTranscriber;
use crate::llm::{LlmSetupError, LlmStack, RetryPolicy};
use crate::secrets::{self, UnresolvedSecret};
use crate::service::runtimes::CourseRuntimes;
use crate::service::{Adapters, AppParts, ExamGateway, RandomIds, Service, SystemClock};
use crate::store::{AudioStore, ContentCache, LoadError, Store, StoreError};

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

/// Shortest accepted drill-token key.
const MIN_DRILL_KEY_BYTES: usize = 16;

/// The adapters one binary's use cases call. The composition root builds
/// only these, so that a function's package links no other: link-time
/// optimisation drops an adapter that is never built. The store, the
/// content, authentication, drill-token keys and the notification senders
/// are built everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    /// The LLM providers (tutor, safety judge, planner, drill grader,
    /// summarizer); without them every call is the offline one.
    pub llm: bool,
    /// The moderation model screening students' messages.
    pub moderation: bool,
    /// The transcription provider and the audio bucket.
    pub transcription: bool,
    /// The external exam API, where one is configured.
    pub exam_api: bool,
    /// The SQS queue notifications wait in on Lambda.
    pub notification_queue: bool,
    /// The courses' runtimes, built during init rather than on the first
    /// request (every route that reads a course).
    pub courses: bool,
}

impl Needs {
    /// Every adapter: the local server, the simulator, the tests.
    pub const ALL: Needs = Needs {
        llm: true,
        moderation: true,
        transcription: true,
        exam_api: true,
        notification_queue: true,
        courses: true,
    };

    /// The `notify` function: it sends what is queued, and calls nothing else.
    pub const NOTIFY: Needs = Needs {
        llm: false,
        moderation: false,
        transcription: false,
        exam_api: false,
        notification_queue: false,
        courses: false,
    };

    /// The `sweep` function: it ends idle sessions, whose reports go out
    /// as queued notifications.
    pub const SWEEP: Needs = Needs {
        notification_queue: true,
        ..Needs::NOTIFY
    };

    /// What the routes of `function` call (`None`: every route).
    pub const fn of(function: Option<Function>) -> Needs {
        let Some(function) = function else {
            return Needs::ALL;
        };
        let none = Needs::NOTIFY;
        match function {
            // The tutor and its safety checks; exam blocks; notifications.
            Function::Turn => Needs {
                llm: true,
                moderation: true,
                exam_api: true,
                notification_queue: true,
                courses: true,
                ..none
            },
            // The drill-grading model; the summary model; the lockouts of
            // the revisit list that both report.
            Function::DrillGrade | Function::Summary => Needs {
                llm: true,
                exam_api: true,
                courses: true,
                ..none
            },
            Function::ExamSubmit | Function::SupportViewed => Needs {
                exam_api: true,
                courses: true,
                ..none
            },
            Function::Transcribe => Needs {
                transcription: true,
                ..none
            },
        }
    }
}

/// What one binary serves, as far as its wiring is concerned: the adapters
/// its routes need, fixed when it is compiled.
pub trait Wiring {
    const NEEDS: Needs;
}

impl<R: Routes> Wiring for R {
    const NEEDS: Needs = Needs::of(R::FUNCTION);
}

/// What the configuration names that needs no secret: the store, the
/// content cache, the audio bucket, the notification queue. A Lambda
/// function opens them during its init phase and builds the [`App`] on its
/// first invocation, once the secrets can be read (see `crate::secrets`).
#[derive(Clone)]
pub struct Resources {
    store: Arc<dyn Store>,
    content: Arc<ContentCache>,
    audio: Option<AudioStore>,
    notification_queue: Option<NotificationQueue>,
    runtimes: Arc<CourseRuntimes>,
}

impl Resources {
    /// Opens those that `W` needs, all at once: on a cold start the
    /// content bundle's download from S3 overlaps the clients' setup
    /// instead of following it.
    pub async fn open<W: Wiring>(config: &Config) -> Result<Resources, StartupError> {
        let needs = const { W::NEEDS };
        let audio = async {
            match &config.transcription.upload_bucket {
                Some(_) if !needs.transcription => None,
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
                Some(_) if !needs.notification_queue => None,
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
            runtimes: Arc::default(),
        })
    }

    /// Builds every course's runtime, which requests would otherwise wait
    /// for on their course's first turn.
    pub async fn prepare_courses(&self) {
        let bundle = self.content.bundle().await;
        self.runtimes.prepare_in_background(bundle).await;
    }
}

impl App {
    /// Builds everything the configuration names: the store, the content
    /// cache, LLM providers, authentication. Secrets are read through `env`.
    pub async fn from_config(
        config: Config,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> Result<App, StartupError> {
        let resources = Resources::open::<AllRoutes>(&config).await?;
        App::from_resources::<AllRoutes>(config, resources, env)
    }

    /// The app for `W` over resources opened earlier; secrets are read
    /// through `env`.
    pub fn from_resources<W: Wiring>(
        config: Config,
        resources: Resources,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> Result<App, StartupError> {
        let parts = AppParts {
            config,
            store: resources.store,
            content: resources.content,
            clock: Arc::new(SystemClock),
            ids: Arc::new(RandomIds),
        };
        build::<W>(
            parts,
            resources.audio,
            resources.notification_queue,
            resources.runtimes,
            env,
        )
    }

    /// The app over parts the caller supplies (tests, the simulator), with
    /// no audio bucket and no notification queue.
    pub fn assemble(
        parts: AppParts,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> Result<App, StartupError> {
        build::<AllRoutes>(parts, None, None, Arc::default(), env)
    }
}

fn build<W: Wiring>(
    parts: AppParts,
    audio: Option<AudioStore>,
    notification_queue: Option<NotificationQueue>,
    runtimes: Arc<CourseRuntimes>,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<App, StartupError> {
    let needs = const { W::NEEDS };
    let config = &parts.config;
    let llm = if needs.llm {
        LlmStack::from_config(&config.llm, env, RetryPolicy::default())?
    } else {
        LlmStack::default()
    };
    let auth = Authenticator::from_config(&config.auth, env)?;
    let webhooks = WebhookVerifier::from_config(
        &config.auth.webhooks,
        config.auth.webhook_tolerance_seconds,
        env,
    )?;
    let token_keys = token_keys(config, env)?;
    let transcriber = if needs.transcription {
        OpenAiTranscriber::from_config(&config.transcription, env, RetryPolicy::default())?
    } else {
        None
    };
    let moderator = if needs.moderation {
        OpenAiModerator::from_config(config, env, RetryPolicy::default())?
            .map(|m| Arc::new(m) as Arc<dyn Moderator>)
    } else {
        None
    };
    let exam_api = if needs.exam_api {
        ExamApi::from_config(&config.exam_api, env)?
    } else {
        None
    };
    let exams = match exam_api {
        Some(api) => ExamGateway::External(api),
        None => ExamGateway::BuiltIn,
    };
    let teacher_alerts = TeacherAlerts::from_config(config, env)?;
    let mut outbound = Outbound::from_config(config, env)?;
    outbound.set_queue(notification_queue);
    let adapters = Adapters {
        llm,
        token_keys,
        exams,
        transcriber,
        moderator,
        audio,
        teacher_alerts,
        outbound,
    };
    Ok(App {
        service: Service::new(parts, adapters, runtimes),
        auth,
        webhooks,
    })
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
