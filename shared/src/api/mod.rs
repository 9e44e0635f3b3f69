//! HTTP glue shared by the Lambda functions and the local server: routing,
//! request parsing, authentication, errors. One implementation, no second
//! code path.

pub mod auth;
pub mod body;
pub mod deployment;
mod dispatch;
mod failure;
pub mod handler;
pub mod incoming;
pub mod intake;
pub mod lambda;
pub mod logging;
pub mod problem;
mod request_keys;
pub mod routes;
pub mod server;
pub mod site;
pub mod stream;
pub mod webhook;

pub use dispatch::{
    AllRoutes, DrillGradeRoutes, ExamSubmitRoutes, Routes, SummaryRoutes, SupportViewedRoutes,
    TranscribeRoutes, TurnRoutes,
};

use crate::service::{Service, ServiceError, SweepReport};

/// The application every entry point serves (each Lambda function, the
/// local server): the use cases, behind the authentication of their
/// callers. The composition root (`crate::startup`) builds it.
pub struct App {
    pub(crate) service: Service,
    /// Checks students' tokens.
    pub(crate) auth: auth::Authenticator,
    /// Checks integrations' signatures.
    pub(crate) webhooks: webhook::WebhookVerifier,
}

impl App {
    /// Ends the sessions left idle past their time to live (the scheduled
    /// sweep; `tutorflow sweep`).
    pub async fn sweep_idle(&self) -> Result<SweepReport, ServiceError> {
        self.service.sweep_idle().await
    }

    /// Whether voice notes can be transcribed here.
    pub fn transcription_available(&self) -> bool {
        self.service.transcription_available()
    }

    /// Builds every course's runtime now, so that no request waits for it.
    pub async fn prepare_courses(&self) {
        self.service.prepare_courses().await;
    }
}
