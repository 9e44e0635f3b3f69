//! HTTP glue shared by the Lambda functions and the local server: routing,
//! request parsing, authentication, errors. One implementation, no second
//! code path.

pub mod auth;
pub mod body;
pub mod deployment;
mod failure;
pub mod handler;
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
