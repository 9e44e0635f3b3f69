//! The `support-viewed` Lambda function: POST /threads/{threadId}/exam/support-viewed.
//! Everything it does is in the shared library; this only starts it, with
//! its own routes, so that it links no other function's use cases.

use tutorflow::api::SupportViewedRoutes;
use tutorflow::startup::lambda;

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    lambda::run(SupportViewedRoutes).await
}
