//! The `turn` Lambda function: POST /threads, POST /threads/{threadId}/turn, POST /threads/{threadId}/pause|resume|end, POST /webhooks/turn.
//! Everything it does is in the shared library; this only starts it.

use tutorflow::api::routes::Function;
use tutorflow::startup::lambda;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::run(Function::Turn).await
}
