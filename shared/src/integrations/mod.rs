//! Adapters for the systems tutorflow talks to besides its store and its
//! LLM providers: an external exam API, the teacher-alert webhook and the
//! outbound notifications to integrations and an LMS, with the signature
//! all of these webhooks share. The use cases in `service` call them; they
//! know nothing of the use cases.

pub mod exam_api;
pub mod outbound;
pub mod signature;
pub mod teacher;
