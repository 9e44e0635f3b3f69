//! The `transcribe` Lambda function: POST /transcribe, POST /transcribe/uploads.
//! Everything it does is in the shared library; this only starts it, with
//! its own routes, so that it links no other function's use cases.

use tutorflow::api::TranscribeRoutes;
use tutorflow::startup::lambda;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::run(TranscribeRoutes).await
}
