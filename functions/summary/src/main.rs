//! The `summary` Lambda function: GET /threads/{threadId}/summary, GET /threads/{threadId}/logs, GET /threads/{threadId}, GET /me/threads, GET /me/courses/{courseId}/report.
//! Everything it does is in the shared library; this only starts it, with
//! its own routes, so that it links no other function's use cases.

use tutorflow::api::SummaryRoutes;
use tutorflow::startup::lambda;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::run(SummaryRoutes).await
}
