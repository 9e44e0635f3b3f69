//! Streamed turns through the local server, with an OpenAI-compatible
//! stand-in that streams the reply in Chat Completions chunks at a fixed
//! pace (a real model's tokens arrive every few tens of milliseconds).
//!
//! `cargo bench -p tutorflow --bench stream [-- TURNS PACE_MS]`
//!
//! Printed: the time from the stand-in writing the token that makes text
//! showable (the end of the reply's first sentence) to the first `delta`
//! event reaching the client; the whole turn streamed and not streamed
//! (the difference is what streaming costs); and the process's resident
//! memory with that many streams held open at once. Client, server and
//! stand-in share one process and two cores, so the figures are upper
//! bounds on the server's own work.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tutorflow::api::App;
use tutorflow::api::auth::dev_token;
use tutorflow::api::server;
use tutorflow::config::{Config, ProviderKind};
use tutorflow::llm::sse::SseParser;

const SECRET: &str = "bench-jwt-secret-0123456789abcdef";
/// Pieces of the reply's JSON the stand-in sends, one per pace.
const PIECE_CHARS: usize = 4;
/// Where the first showable text ends: the first sentence.
const FIRST_SENTENCE: &str = "Good question! ";

fn env(key: &str) -> Option<String> {
    match key {
        "TUTORFLOW_DEV_JWT_SECRET" => Some(SECRET.into()),
        "TUTORFLOW_DEV_DRILL_SECRET" => Some("bench-drill-secret-0123456789abcdef".into()),
        _ => None,
    }
}

fn reply() -> String {
    json!({
        "mapped_units": [],
        "action": "SOCRATIC_QUESTION",
        "target_unit_id": "whole-numbers",
        "tutor_text": format!("{FIRST_SENTENCE}When we add 47 and 38, we can add the tens first and then the ones. What do the tens make together?"),
        "turn_analysis": {"student_intent": "question", "understanding_signal": "uncertain", "suggested_prereq_units": [], "answer_text": null}
    })
    .to_string()
}

/// A minimal HTTP/1.1 server streaming the reply in chunked SSE at `pace`,
/// noting when it wrote the piece that completes the first sentence.
async fn stand_in(listener: TcpListener, pace: Duration, marks: Arc<Mutex<Vec<Instant>>>) {
    loop {
        let Ok((mut socket, _)) = listener.accept().await else {
            continue;
        };
        let marks = marks.clone();
        tokio::spawn(async move {
            let mut request = Vec::new();
            let mut buf = [0u8; 8192];
            // Headers, then the body's declared length.
            loop {
                let n = socket.read(&mut buf).await.unwrap_or(0);
                if n == 0 {
                    return;
                }
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request);
                if let Some(end) = text.find("\r\n\r\n") {
                    let length = text[..end]
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(0);
                    if request.len() >= end + 4 + length {
                        break;
                    }
                }
            }
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
            if socket.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            let reply = reply();
            let chars: Vec<char> = reply.chars().collect();
            let mut sent = String::new();
            let mut marked = false;
            for piece in chars.chunks(PIECE_CHARS) {
                let text: String = piece.iter().collect();
                sent.push_str(&text);
                let event = format!(
                    "data: {}\n\n",
                    json!({"object": "chat.completion.chunk", "model": "stand-in", "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
                );
                let chunk = format!("{:x}\r\n{event}\r\n", event.len());
                if socket.write_all(chunk.as_bytes()).await.is_err() {
                    return;
                }
                // The piece after the sentence's end: the guard releases a
                // sentence once it sees what follows it.
                if !marked && sent.contains(&format!("{FIRST_SENTENCE}W")) {
                    marks.lock().unwrap().push(Instant::now());
                    marked = true;
                }
                tokio::time::sleep(pace).await;
            }
            let end = "data: {\"object\":\"chat.completion.chunk\",\"model\":\"stand-in\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
            let chunk = format!("{:x}\r\n{end}\r\n0\r\n\r\n", end.len());
            let _ = socket.write_all(chunk.as_bytes()).await;
        });
    }
}

/// One turn: (first delta instant, whole turn time).
async fn turn(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    thread: &str,
    stream: bool,
) -> (Option<Instant>, Duration) {
    let started = Instant::now();
    let mut request = http
        .post(format!("{base}/threads/{thread}/turn"))
        .bearer_auth(token)
        .json(&json!({"messageText": "how do I add 47 and 38?"}));
    if stream {
        request = request.header("Accept", "text/event-stream");
    }
    let mut response = request.send().await.unwrap();
    assert_eq!(response.status(), 200);
    let mut parser = SseParser::default();
    let mut first = None;
    while let Some(chunk) = response.chunk().await.unwrap() {
        if first.is_none()
            && parser
                .push(&chunk)
                .iter()
                .any(|e| e.event.as_deref() == Some("delta"))
        {
            first = Some(Instant::now());
        }
    }
    (first, started.elapsed())
}

fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let turns: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(30);
    let pace = Duration::from_millis(args.get(1).and_then(|s| s.parse().ok()).unwrap_or(20));

    let marks = Arc::new(Mutex::new(Vec::new()));
    let model = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let model_url = format!("http://{}/v1", model.local_addr().unwrap());
    tokio::spawn(stand_in(model, pace, marks.clone()));

    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config.store.sqlite_path = dir.path().join("bench.sqlite");
    config.content.dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    config.llm.tutor = ProviderKind::OpenaiCompatible;
    config.llm.openai_compatible.base_url = model_url;
    let app = Arc::new(App::from_config(config, &env).await.unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server::serve(app, listener, std::future::pending()));

    let http = reqwest::Client::new();
    let token = dev_token(SECRET, "bench-stream", Duration::from_secs(3600));
    let new_thread = || async {
        let r: serde_json::Value = http
            .post(format!("{base}/threads"))
            .bearer_auth(&token)
            .json(&json!({"courseId": "prealgebra"}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        r["threadId"].as_str().unwrap().to_owned()
    };

    let mut to_delta = Vec::new();
    let mut streamed = Vec::new();
    let mut whole = Vec::new();
    for i in 0..turns + 3 {
        let thread = new_thread().await;
        marks.lock().unwrap().clear();
        let (first, took) = turn(&http, &base, &token, &thread, true).await;
        let mark = marks.lock().unwrap().first().copied();
        let thread = new_thread().await;
        let (_, plain) = turn(&http, &base, &token, &thread, false).await;
        if i < 3 {
            continue; // warm-up: content runtime, connections
        }
        if let (Some(first), Some(mark)) = (first, mark) {
            to_delta.push(first.saturating_duration_since(mark));
        }
        streamed.push(took);
        whole.push(plain);
    }
    for list in [&mut to_delta, &mut streamed, &mut whole] {
        list.sort();
    }
    println!("streamed turns: {turns}, stand-in pace {pace:?} per {PIECE_CHARS}-character piece");
    if to_delta.is_empty() {
        println!("no delta was timed");
    } else {
        println!(
            "showable token → first delta at the client: p50 {:?}, p90 {:?}, max {:?}",
            percentile(&to_delta, 0.5),
            percentile(&to_delta, 0.9),
            to_delta.last().unwrap()
        );
    }
    let mean = |l: &[Duration]| l.iter().sum::<Duration>() / l.len() as u32;
    println!(
        "whole turn: streamed p50 {:?} (mean {:?}), not streamed p50 {:?} (mean {:?})",
        percentile(&streamed, 0.5),
        mean(&streamed),
        percentile(&whole, 0.5),
        mean(&whole)
    );

    // Memory: `OPEN` streams at once, each held open by the paced stand-in.
    const OPEN: usize = 100;
    let mut threads = Vec::new();
    for _ in 0..OPEN {
        threads.push(new_thread().await);
    }
    let before = resident_kib();
    let mut open = Vec::new();
    for thread in &threads {
        let request = http
            .post(format!("{base}/threads/{thread}/turn"))
            .bearer_auth(&token)
            .header("Accept", "text/event-stream")
            .json(&json!({"messageText": "how do I add 47 and 38?"}));
        open.push(tokio::spawn(request.send()));
    }
    // Halfway through the stand-in's reply every stream is open.
    tokio::time::sleep(pace * 20).await;
    let during = resident_kib();
    for handle in open {
        let mut response = handle.await.unwrap().unwrap();
        while response.chunk().await.unwrap().is_some() {}
    }
    println!(
        "resident memory: {before} KiB before, {during} KiB with {OPEN} streams open: ~{} KiB per open stream (client side included)",
        during.saturating_sub(before) / OPEN as u64
    );
}
