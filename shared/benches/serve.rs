//! Load on the local API server as a developer runs it: the embedded SQLite
//! store, the repository's content and the offline tutor (targets:
//! p50 under 5 ms, over 1,000 turns/s on 2 cores).
//!
//! `cargo bench -p tutorflow --bench serve [-- SECONDS CONNECTIONS [MODE]]`
//!
//! MODE is `guided` (the default) or `teach_me`: lessons on the units with
//! authored plans, which students work through, finish, extend and close.
//!
//! Each connection owns its own conversations (a real app's students do
//! not share threads), sends turns back to back over keep-alive HTTP/1.1,
//! and every latency is recorded. The measured window starts once every
//! connection has sent one warm-up turn on each of its threads (the
//! slowest warm-up turn is printed apart). The load generator runs in the same
//! process, on the same two cores, so the figures are a lower bound.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tutorflow::api::App;
use tutorflow::api::auth::dev_token;
use tutorflow::api::server;
use tutorflow::config::Config;

const THREADS_PER_CONNECTION: usize = 4;
const MESSAGES: [&str; 4] = [
    "how do I add fractions with different denominators?",
    "I think 2/3 + 1/4 is 3/7",
    "what is 15% of 80?",
    "can you explain the order of operations",
];
/// A lesson's messages: taking part, a practice request, a guess, being stuck.
const LESSON_MESSAGES: [&str; 4] = [
    "I see, so you do the same to the top and the bottom",
    "can I have a practice question?",
    "is it 3/5?",
    "I'm not sure, can you explain again?",
];
const LESSON_UNITS: [&str; 4] = ["fractions", "ratios", "whole-numbers", "percentages"];

fn env(key: &str) -> Option<String> {
    match key {
        "TUTORFLOW_DEV_JWT_SECRET" => Some("bench-jwt-secret-0123456789abcdef".into()),
        "TUTORFLOW_DEV_DRILL_SECRET" => Some("bench-drill-secret-0123456789abcdef".into()),
        _ => None,
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let seconds: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(10);
    let connections: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(16);
    let lesson = match args.get(2).map(String::as_str) {
        None | Some("guided") => false,
        Some("teach_me") => true,
        Some(other) => panic!("MODE is guided or teach_me, not {other}"),
    };
    let messages = if lesson { LESSON_MESSAGES } else { MESSAGES };

    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.store.sqlite_path = dir.path().join("bench.sqlite");
    config.content.dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let app = Arc::new(App::from_config(config, &env).await.unwrap());
    // As `tutorflow serve` does before it listens.
    app.prepare_courses().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server::serve(app, listener, std::future::pending()));

    // Every connection warms up first (its threads created, one turn on
    // each), then all start the measured window together; the warm-up
    // turns are reported apart.
    let ready = Arc::new(tokio::sync::Barrier::new(connections));
    let mut workers = Vec::new();
    for c in 0..connections {
        let base = base.clone();
        let ready = ready.clone();
        workers.push(tokio::spawn(async move {
            let http = reqwest::Client::builder()
                .pool_max_idle_per_host(1)
                .build()
                .unwrap();
            let token = dev_token(
                "bench-jwt-secret-0123456789abcdef",
                &format!("bench-student-{c}"),
                Duration::from_secs(3600),
            );
            let turn = |thread: &str, message: &str| {
                http.post(format!("{base}/threads/{thread}/turn"))
                    .bearer_auth(&token)
                    .json(&json!({"messageText": message}))
                    .send()
            };
            let mut threads = Vec::new();
            let mut warm_up = Vec::new();
            for t in 0..THREADS_PER_CONNECTION {
                let body = if lesson {
                    json!({"courseId": "prealgebra", "mode": "teach_me", "unitId": LESSON_UNITS[t % LESSON_UNITS.len()]})
                } else {
                    json!({"courseId": "prealgebra"})
                };
                let r: serde_json::Value = http
                    .post(format!("{base}/threads"))
                    .bearer_auth(&token)
                    .json(&body)
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                let thread = r["threadId"].as_str().unwrap().to_owned();
                let started = Instant::now();
                let warm = turn(&thread, messages[t % messages.len()]).await.unwrap();
                assert_eq!(warm.status(), 200, "warm-up turn");
                warm_up.push(started.elapsed().as_secs_f64() * 1e3);
                threads.push(thread);
            }
            ready.wait().await;
            let window = Instant::now();
            let deadline = window + Duration::from_secs(seconds);
            let mut latencies = Vec::new();
            let mut failures = 0usize;
            let mut n = THREADS_PER_CONNECTION;
            while Instant::now() < deadline {
                let thread = &threads[n % threads.len()];
                let started = Instant::now();
                let status = turn(thread, messages[n % messages.len()])
                    .await
                    .map(|r| r.status().as_u16());
                if matches!(status, Ok(200)) {
                    latencies.push(started.elapsed().as_secs_f64() * 1e3);
                } else {
                    failures += 1;
                }
                n += 1;
            }
            (latencies, failures, warm_up, window, Instant::now())
        }));
    }
    let mut latencies = Vec::new();
    let mut warm_up = Vec::new();
    let mut failures = 0;
    let mut window: Option<(Instant, Instant)> = None;
    for w in workers {
        let (l, f, warm, from, to) = w.await.unwrap();
        latencies.extend(l);
        warm_up.extend(warm);
        failures += f;
        window = Some(window.map_or((from, to), |(a, b)| (a.min(from), b.max(to))));
    }
    let (from, to) = window.unwrap();
    let elapsed = (to - from).as_secs_f64();
    let first_turn = warm_up.iter().copied().fold(0.0, f64::max);
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| latencies[((latencies.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "local server, SQLite + offline tutor, {}, {connections} connections, {seconds} s: {} turns, {:.0} turns/s, p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, {failures} failed (slowest warm-up turn {first_turn:.0} ms)",
        if lesson { "teach_me" } else { "guided" },
        latencies.len(),
        latencies.len() as f64 / elapsed,
        at(0.50),
        at(0.95),
        at(0.99),
    );
}
