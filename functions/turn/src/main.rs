//! The `turn` Lambda function: POST /threads, POST /threads/{threadId}/turn, POST /threads/{threadId}/pause|resume|end, POST /webhooks/turn.
//! Everything it does is in the shared library; this only starts it, with
//! its own routes, so that it links no other function's use cases.

use tutorflow::api::TurnRoutes;
use tutorflow::startup::lambda;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::run(TurnRoutes).await
}
