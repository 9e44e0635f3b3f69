//! The Lambda bootstrap every function's `main` calls with its own routes:
//! load the configuration and open the store and content during init, read
//! the secrets and build the app on the first invocation (the Parameters
//! and Secrets extension serves only then), then hand each event to
//! `api::lambda`. Everything here is generic over the function's routes, so
//! that its binary links only the adapters and use cases they reach.

use std::sync::Arc;

use aws_lambda_events::event::sqs::SqsEvent;
use lambda_http::lambda_runtime::{self, LambdaEvent};
use lambda_http::{Error, Request, service_fn};
use tokio::sync::OnceCell;

use super::{Needs, Resources, Wiring};
use crate::api::lambda::{STREAMING_ENV, deliver_batch, serve, serve_streaming};
use crate::api::routes::Function;
use crate::api::{App, Routes, logging};
use crate::config::Config;
use crate::secrets::SecretResolver;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// What the init phase prepares for the first invocation, for a binary
/// wired as `W`.
struct ColdStart<W> {
    config: Config,
    resources: Resources,
    secrets: SecretResolver,
    app: OnceCell<Arc<App>>,
    wiring: std::marker::PhantomData<W>,
}

impl<W: Wiring + Send + Sync> ColdStart<W> {
    /// Configuration, store, content and the secret resolver, read once
    /// per sandbox; a failure ends the init phase.
    async fn open() -> Result<Arc<ColdStart<W>>, Error> {
        let cold = async {
            let config = Config::load(None, env)?;
            let secrets = SecretResolver::from_env(env)?;
            // The shared HTTPS client (every function's notifier uses it)
            // loads the root certificates on a blocking thread while the
            // content bundle downloads, not on the first invocation.
            let (resources, ()) = tokio::try_join!(
                async { Ok::<_, Error>(Resources::open::<W>(&config).await?) },
                async {
                    tokio::task::spawn_blocking(|| drop(crate::http_client::shared())).await?;
                    Ok(())
                },
            )?;
            // The first request would otherwise wait while its course's
            // runtime is built.
            if const { W::NEEDS.courses } {
                resources.prepare_courses().await;
            }
            Ok::<_, Error>(ColdStart {
                config,
                resources,
                secrets,
                app: OnceCell::new(),
                wiring: std::marker::PhantomData,
            })
        };
        Ok(Arc::new(cold.await.inspect_err(
            |e| tracing::error!(error = %e, "cold start failed"),
        )?))
    }

    /// The app, built on first use. A failure is not kept: the next
    /// invocation tries again (a secret created after the deploy, a
    /// throttled read).
    async fn app(&self) -> Result<&Arc<App>, Error> {
        self.app
            .get_or_try_init(|| async {
                let secrets = self.secrets.fetch(&self.config).await?;
                let app = App::from_resources::<W>(
                    self.config.clone(),
                    self.resources.clone(),
                    &secrets.lookup(env),
                )?;
                Ok::<_, Error>(Arc::new(app))
            })
            .await
            .inspect_err(|e| tracing::error!(error = %e, "startup failed"))
    }
}

/// Runs the function whose routes are `routes` until the Lambda runtime
/// stops it.
pub async fn run<R: Routes>(routes: R) -> Result<(), Error> {
    logging::init(env);
    let cold = ColdStart::<R>::open().await?;
    let name = R::FUNCTION.map_or("all routes", Function::name);
    // Only the turn function streams, so no other links the streamed turn.
    let streams = const { matches!(R::FUNCTION, Some(Function::Turn)) };
    let streaming =
        streams && env(STREAMING_ENV).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    tracing::info!(function = name, streaming, "ready");
    if streaming {
        return lambda_http::run_with_streaming_response(service_fn(move |event: Request| {
            let cold = cold.clone();
            async move {
                let app = cold.app().await?;
                Ok::<_, Error>(serve_streaming(app, routes, event).await)
            }
        }))
        .await;
    }
    lambda_http::run(service_fn(move |event: Request| {
        let cold = cold.clone();
        async move {
            let app = cold.app().await?;
            Ok::<_, Error>(serve(app, routes, event).await)
        }
    }))
    .await
}

/// The `notify` function's wiring: it delivers queued notifications and
/// calls nothing else.
struct Notify;

impl Wiring for Notify {
    const NEEDS: Needs = Needs::NOTIFY;
}

/// Runs the `notify` function: SQS batches of queued notifications.
pub async fn run_notify() -> Result<(), Error> {
    logging::init(env);
    let cold = ColdStart::<Notify>::open().await?;
    tracing::info!(function = "notify", "ready");
    lambda_runtime::run(lambda_runtime::service_fn(
        move |event: LambdaEvent<SqsEvent>| {
            let cold = cold.clone();
            async move {
                let app = cold.app().await?;
                Ok::<_, Error>(deliver_batch(app, event.payload).await)
            }
        },
    ))
    .await
}

/// The `sweep` function's wiring: the store, the content and the
/// notification queue.
struct Sweep;

impl Wiring for Sweep {
    const NEEDS: Needs = Needs::SWEEP;
}

/// Runs the `sweep` function: each scheduled event (any payload) ends the
/// sessions left idle past their time to live and answers what it did.
pub async fn run_sweep() -> Result<(), Error> {
    logging::init(env);
    let cold = ColdStart::<Sweep>::open().await?;
    tracing::info!(function = "sweep", "ready");
    lambda_runtime::run(lambda_runtime::service_fn(
        move |_event: LambdaEvent<serde_json::Value>| {
            let cold = cold.clone();
            async move {
                let app = cold.app().await?;
                app.sweep_idle()
                    .await
                    .map_err(|e| Error::from(format!("idle sweep failed: {e:?}")))
            }
        },
    ))
    .await
}
