//! The `exam-submit` Lambda function: POST /threads/{threadId}/exam/mcq-submit.
//! Everything it does is in the shared library; this only starts it, with
//! its own routes, so that it links no other function's use cases.

use tutorflow::api::ExamSubmitRoutes;
use tutorflow::startup::lambda;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::run(ExamSubmitRoutes).await
}
