//! The `drill-grade` Lambda function: POST /threads/{threadId}/drill/grade.
//! Everything it does is in the shared library; this only starts it, with
//! its own routes, so that it links no other function's use cases.

use tutorflow::api::DrillGradeRoutes;
use tutorflow::startup::lambda;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::run(DrillGradeRoutes).await
}
