//! The `sweep` Lambda function: on a schedule (an EventBridge rule, no
//! HTTP route), ends the sessions left idle past their time to live.
//! Everything it does is in the shared library; this only starts it.

use tutorflow::startup::lambda;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::run_sweep().await
}
