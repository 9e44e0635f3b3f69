//! The local API server (`tutorflow serve`): every route of every function
//! on one port, through the same handler the Lambda functions use, and the
//! web page beside it ([`LocalSite`]).

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{Either, Full};
use hyper::body::Incoming as Body;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;

use super::App;
use super::intake::read_request;
use super::site::LocalSite;
use super::stream::{EventBody, HandlerResponse};

/// Accepts connections on `listener` until `shutdown` completes: the API only.
pub async fn serve(app: Arc<App>, listener: TcpListener, shutdown: impl Future<Output = ()>) {
    serve_with_site(app, Arc::new(LocalSite::default()), listener, shutdown).await;
}

/// [`serve`] with the web page and its local helpers.
pub async fn serve_with_site(
    app: Arc<App>,
    site: Arc<LocalSite>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(connection) => connection,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let (app, site) = (app.clone(), site.clone());
        let header_timeout =
            std::time::Duration::from_millis(app.service.config.server.header_timeout_ms);
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let (app, site) = (app.clone(), site.clone());
                async move { Ok::<_, Infallible>(respond(&app, &site, request).await) }
            });
            if let Err(e) = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(error = %e, "connection closed with an error");
            }
        });
    }
}

/// A whole response, or an event stream written as the turn runs.
type ServedBody = Either<Full<Bytes>, EventBody>;

async fn respond(app: &Arc<App>, site: &LocalSite, request: Request<Body>) -> Response<ServedBody> {
    let whole = |response: Response<Bytes>| response.map(|b| Either::Left(Full::new(b)));
    let request_id = uuid::Uuid::new_v4().to_string();
    let (parts, body) = request.into_parts();
    let incoming = match read_request(app, parts, body, request_id).await {
        Ok(incoming) => incoming,
        Err(refused) => return whole(*refused),
    };
    if let Some(answer) = site.respond(
        &incoming.method,
        incoming.uri.path(),
        &incoming.headers,
        &incoming.body,
    ) {
        let response =
            answer.unwrap_or_else(|p| p.to_response(incoming.uri.path(), &incoming.request_id));
        return whole(response);
    }
    match app.handle_streaming(incoming, None).await {
        HandlerResponse::Whole(response) => whole(response),
        HandlerResponse::Streamed(response) => response.map(Either::Right),
    }
}
