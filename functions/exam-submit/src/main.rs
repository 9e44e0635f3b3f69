//! The `exam-submit` Lambda function: POST /threads/{threadId}/exam/mcq-submit.
//! Everything it does is in the shared library; this only starts it.

use tutorflow::api::routes::Function;
use tutorflow::startup::lambda;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::run(Function::ExamSubmit).await
}
