//! The `notify` Lambda function: delivers the signed outbound notifications
//! the other functions queue in SQS (an SQS event source, no HTTP route).
//! Everything it does is in the shared library; this only starts it.

use tutorflow::startup::lambda;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::run_notify().await
}
