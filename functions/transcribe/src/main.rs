//! The `transcribe` Lambda function: POST /transcribe, POST /transcribe/uploads.
//! Everything it does is in the shared library; this only starts it.

use tutorflow::api::routes::Function;
use tutorflow::startup::lambda;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::run(Function::Transcribe).await
}
