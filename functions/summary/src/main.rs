//! The `summary` Lambda function: GET /threads/{threadId}/summary, GET /threads/{threadId}/logs, GET /threads/{threadId}, GET /me/threads, GET /me/courses/{courseId}/report.
//! Everything it does is in the shared library; this only starts it.

use tutorflow::api::routes::Function;
use tutorflow::startup::lambda;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::run(Function::Summary).await
}
