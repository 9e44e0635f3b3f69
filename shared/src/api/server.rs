//! The local API server (`tutorflow serve`): every route of every function
//! on one port, through the same handler the Lambda functions use, and the
//! web page beside it ([`LocalSite`]).

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming as Body;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use super::handler::Incoming;
use super::problem::Problem;
use super::site::LocalSite;
use crate::service::App;

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
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let (app, site) = (app.clone(), site.clone());
                async move { Ok::<_, Infallible>(respond(&app, &site, request).await) }
            });
            if let Err(e) = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(error = %e, "connection closed with an error");
            }
        });
    }
}

/// Largest body read from a connection: transcription takes audio up to
/// its inline limit; every JSON route has its own, smaller limit.
fn read_limit(app: &App) -> usize {
    let audio = usize::try_from(app.config.transcription.max_inline_bytes).unwrap_or(usize::MAX);
    app.config.limits.max_body_bytes.max(audio)
}

async fn respond(app: &App, site: &LocalSite, request: Request<Body>) -> Response<Full<Bytes>> {
    let request_id = uuid::Uuid::new_v4().to_string();
    let (parts, body) = request.into_parts();
    let body = match Limited::new(body, read_limit(app)).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => {
            let problem =
                Problem::too_large(format!("the body is larger than {} bytes", read_limit(app)));
            let response = problem.to_response(parts.uri.path(), &request_id);
            return response.map(Full::new);
        }
    };
    if let Some(answer) = site.respond(&parts.method, parts.uri.path(), &parts.headers, &body) {
        let response = answer.unwrap_or_else(|p| p.to_response(parts.uri.path(), &request_id));
        return response.map(Full::new);
    }
    let incoming = Incoming {
        method: parts.method,
        uri: parts.uri,
        headers: parts.headers,
        body,
        request_id,
        authorizer_claims: None,
    };
    app.handle(incoming, None).await.map(Full::new)
}
