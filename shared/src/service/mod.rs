//! The use cases behind every endpoint, orchestrating the store, the
//! content bundle, the pure engine, the LLM layer and the integrations'
//! adapters. One [`Service`] is built per process (by the composition root,
//! `crate::startup`) and borrowed by every request. It speaks in domain
//! terms: who a request acts for ([`crate::model::Principal`]) and why it
//! failed ([`ServiceError`]); HTTP is the api's.

mod catalog;
mod debug;
mod drills;
pub mod error;
mod events;
mod exams;
mod idempotency;
mod lease;
pub mod lifecycle;
mod lockouts;
mod logs;
mod notifications;
pub mod profile;
mod reports;
pub mod runtimes;
mod sweep;
pub mod text_hygiene;
mod threads;
mod timeline;
mod transcribe;
mod turn;
mod views;
mod webhook;

use runtimes::CourseRuntimes;
use std::sync::Arc;

use chrono::{DateTime, Utc};

pub use catalog::{CourseDetail, CourseList, CourseSummary, CourseUnit, PrerequisiteEdge};
pub use error::{KeySource, ServiceError};
pub use idempotency::{Begun, ClientKeys, Idempotency, KeyHolder, Operation};
pub use lifecycle::{LifecycleChange, LifecycleResponse};
pub use lockouts::ExamGateway;
pub use logs::{LogFormat, ThreadLogs, TurnLogView};
pub use notifications::event_id;
pub use reports::{ConfusionLine, ReportCard, RevisitLine, ThreadSummaryReport, UnitLine};
pub use sweep::SweepReport;
pub use threads::ThreadFilter;
pub use transcribe::{TranscriptBody, UploadRequest, UploadTicket, UploadedAudio};
pub use turn::StreamedTurn;
pub use views::{ThreadList, ThreadReplay};

use crate::config::Config;
use crate::content::Bundle;
use crate::engine::practice::drill_token::TokenKeys;
use crate::engine::runtime::CourseRuntime;
use crate::integrations::outbound::Outbound;
use crate::integrations::teacher::TeacherAlerts;
use crate::llm::LlmStack;
use crate::llm::moderation::Moderator;
use crate::llm::transcription::OpenAiTranscriber;
use crate::store::{AudioStore, ContentCache, Store};

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

/// What every request borrows: the configuration, the state store, the
/// content, and the adapters the use cases call.
pub struct Service {
    pub config: Config,
    pub(crate) store: Arc<dyn Store>,
    pub(crate) content: Arc<ContentCache>,
    pub(crate) llm: LlmStack,
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
    runtimes: Arc<CourseRuntimes>,
    /// Turns waiting in this process for a thread (see `lease`).
    turn_queues: lease::TurnQueues,
}

/// The pieces the application is assembled on; tests supply their own.
pub struct AppParts {
    pub config: Config,
    pub store: Arc<dyn Store>,
    pub content: Arc<ContentCache>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn Ids>,
}

/// The adapters the use cases call, built from the configuration by the
/// composition root.
pub struct Adapters {
    pub llm: LlmStack,
    pub token_keys: TokenKeys,
    pub exams: ExamGateway,
    pub transcriber: Option<OpenAiTranscriber>,
    pub moderator: Option<Arc<dyn Moderator>>,
    pub audio: Option<AudioStore>,
    pub teacher_alerts: TeacherAlerts,
    pub outbound: Outbound,
}

impl Service {
    pub fn new(parts: AppParts, adapters: Adapters, runtimes: Arc<CourseRuntimes>) -> Service {
        Service {
            config: parts.config,
            store: parts.store,
            content: parts.content,
            clock: parts.clock,
            ids: parts.ids,
            llm: adapters.llm,
            token_keys: adapters.token_keys,
            exams: adapters.exams,
            transcriber: adapters.transcriber,
            moderator: adapters.moderator,
            audio: adapters.audio,
            teacher_alerts: adapters.teacher_alerts,
            outbound: adapters.outbound,
            runtimes,
            turn_queues: lease::TurnQueues::default(),
        }
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
        self.runtimes
            .get(bundle, course_id)
            .ok_or_else(|| ServiceError::not_found(format!("course `{course_id}` does not exist")))
    }

    /// Builds every course's runtime now rather than on its first request.
    pub async fn prepare_courses(&self) {
        let bundle = self.bundle().await;
        self.runtimes.prepare_in_background(bundle).await;
    }
}
