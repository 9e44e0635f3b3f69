//! The API's boundary and its deployment: authentication against real
//! token shapes, the JSON contracts and docs/openapi.yaml against the code,
//! the API Gateway events and the `cargo lambda watch` router, the SAM
//! template, and secrets read through the Lambda extension.

#[path = "../lambda_support/mod.rs"]
mod lambda_support;
#[path = "../openapi_support/mod.rs"]
mod openapi_support;

mod auth;
mod contracts;
mod infra_template;
mod lambda_events;
mod lambda_router;
mod openapi;
mod secrets_extension;
