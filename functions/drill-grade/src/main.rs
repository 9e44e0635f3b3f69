//! The `drill-grade` Lambda function: POST /threads/{threadId}/drill/grade.
//! Everything it does is in the shared library; this only starts it.

use tutorflow::api::routes::Function;
use tutorflow::startup::lambda;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::run(Function::DrillGrade).await
}
