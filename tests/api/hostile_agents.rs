//! Anonymous callers cannot exhaust the server (issue 43): several hostile agents attack a
//! real `toolhost serve` process at once (validation amplification, held and slow bodies, slow
//! and oversized heads, idle connections, deep and wide JSON, unpaid calls to a paid tool, MCP
//! batches), each from a loopback address of its own (127.0.0.X, all routed to `lo` on Linux),
//! while victims from 127.0.0.1 call a free and a paid tool the whole time. Victims see no error, every attacker
//! gets a clear one, and the server's resident memory stays within 256 MiB of what it used
//! idle (docs/api.md, "Limits on anonymous callers").

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use alloy_signer_local::PrivateKeySigner;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::util::hostile::{PeakRss, Served};
use crate::util::{assert_error, payment_required, read, static_endpoint};

/// The bound on the server's memory under attack, over its idle resident set (docs/api.md).
const RSS_BOUND_OVER_IDLE: u64 = 256 * 1024 * 1024;
/// Limits of the server under attack: the defaults, except shorter timeouts (so the suite is
/// quick) and fewer connections per client (so the idle-connection attacker meets the cap
/// with few sockets). The anonymous-write limit is one of the walls: its default is set again
/// here because test nodes turn it off.
const LIMITS: &[(&str, &str)] = &[
    ("TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE", "600"),
    ("TOOLHOST_HEADER_READ_TIMEOUT_SECS", "2"),
    ("TOOLHOST_BODY_READ_TIMEOUT_SECS", "3"),
    ("TOOLHOST_BODY_GRACE_SECS", "1"),
    ("TOOLHOST_MAX_CONNECTIONS_PER_CLIENT", "64"),
];
const CONNECTIONS_PER_CLIENT: usize = 64;

impl Served {
    fn addr(&self) -> SocketAddr {
        self.node
            .base
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .expect("the base URL is an address")
    }
}

/// A client whose connections come from `source` (127.0.0.X).
fn client_from(source: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(source.parse::<IpAddr>().unwrap())
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

/// A raw connection to `server` from `source`.
async fn connect_from(source: &str, server: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::new(source.parse().unwrap(), 0))
        .unwrap();
    socket.connect(server).await.unwrap()
}

/// What the server sends before it closes `stream` (at most `limit` of waiting).
async fn answer(stream: &mut TcpStream, limit: Duration) -> String {
    let mut seen = Vec::new();
    let _ = tokio::time::timeout(limit, async {
        let mut buf = [0u8; 8192];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    String::from_utf8_lossy(&seen).into_owned()
}

fn head(path: &str, length: usize) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\r\n"
    )
}

/// `{"role":"r","goal":"g","constraints":[0,0,...]}` with `n` zeros: every zero breaks the
/// schema (constraints are strings).
fn zeros(n: usize) -> String {
    let mut body = String::from(r#"{"role":"r","goal":"g","constraints":["#);
    body.push_str(&vec!["0"; n].join(","));
    body.push_str("]}");
    body
}

async fn post_raw(client: &reqwest::Client, url: &str, body: String) -> (u16, usize, Value) {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("an answer");
    let status = response.status().as_u16();
    let bytes = response.bytes().await.expect("a body");
    (
        status,
        bytes.len(),
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// Validation amplification on a seeded paid tool: a body of many violations gets a bounded
/// answer listing the first of them, with their count; the issue's 1 MB body is refused
/// before it is parsed (more values than a body may hold).
async fn amplify_seeded(server: &Served) {
    let client = client_from("127.0.0.2");
    let url = server.url("/tools/creator-plan");
    let rounds = (0..4).map(|_| {
        let (client, url) = (client.clone(), url.clone());
        async move {
            let mut answered = 0;
            for _ in 0..5 {
                let (status, len, body) = post_raw(&client, &url, zeros(90_000)).await;
                assert!(len <= 64 * 1024, "a {len}-byte error answer");
                if status == 429 {
                    // Over this client's share of the body budget: such a body reserves what
                    // its parsed JSON will take.
                    assert_eq!(body["error"]["code"], "rate_limited");
                    continue;
                }
                answered += 1;
                assert_eq!(status, 422, "{body}");
                assert_eq!(body["error"]["code"], "input_invalid");
                assert!(len <= 64 * 1024, "a {len}-byte error answer");
                // A large document is validated up to its first violation.
                assert_eq!(body["error"]["details"]["violationCount"], 1);
                assert_eq!(body["error"]["details"]["truncated"], true);
            }
            answered
        }
    });
    let answered: usize = futures::future::join_all(rounds).await.into_iter().sum();
    assert!(answered >= 5, "{answered} of 20 validated");
    // From a client of its own: this one's refused bodies have spent its allowance.
    let fresh = client_from("127.0.0.12");
    let (status, _, body) = post_raw(&fresh, &url, zeros(500_000)).await;
    assert_error(
        reqwest::StatusCode::from_u16(status).unwrap(),
        &body,
        413,
        "body_too_large",
    );
}

/// Validation amplification on a builder's tool whose violations quote the input: each
/// quoted value is clipped.
async fn amplify_builder(server: &Served, slug: &str) {
    let client = client_from("127.0.0.3");
    let long = "x".repeat(10_000);
    let body: serde_json::Map<String, Value> = (0..20)
        .map(|i| (format!("{i}{long}"), Value::String(long.clone())))
        .collect();
    let body = Value::Object(body).to_string();
    let mut validated = 0;
    for _ in 0..5 {
        let (status, len, answer) = post_raw(
            &client,
            &server.url(&format!("/tools/{slug}")),
            body.clone(),
        )
        .await;
        if status == 429 {
            // Five 400 KB bodies are about the allowance of refused bytes.
            assert_refused_bytes(&answer);
            continue;
        }
        validated += 1;
        assert_eq!(status, 422, "{answer}");
        assert_eq!(answer["error"]["code"], "input_invalid");
        assert!(len <= 64 * 1024, "a {len}-byte error answer");
        let violation = &answer["error"]["details"]["violations"][0];
        assert!(
            violation["message"].as_str().unwrap().len() <= 512,
            "{violation}"
        );
        assert!(
            violation["pointer"].as_str().unwrap().len() <= 512,
            "{violation}"
        );
    }
    assert!(validated >= 3, "{validated} of 5 validated");
}

/// Bodies held back (all but their last bytes): a client holds at most its share of the body
/// budget (the rest are refused 429 before they are read), and each held body is cut off at
/// the body deadline (408).
async fn hold_bodies(server: &Served) {
    const LENGTH: usize = 1024 * 1024;
    let tasks = (0..30).map(|_| async move {
        let mut stream = connect_from("127.0.0.4", server.addr()).await;
        stream
            .write_all(head("/tools/receipt-echo", LENGTH).as_bytes())
            .await
            .unwrap();
        // Refused before the body is read: the answer comes at once.
        let mut first = [0u8; 1024];
        if let Ok(Ok(n)) =
            tokio::time::timeout(Duration::from_millis(500), stream.read(&mut first)).await
        {
            return String::from_utf8_lossy(&first[..n]).into_owned();
        }
        // A refusal slower than that (a loaded machine) may break this write; its answer is
        // read all the same.
        let body = vec![b' '; LENGTH - 10];
        let _ = stream.write_all(&body).await;
        answer(&mut stream, Duration::from_secs(10)).await
    });
    let answers = futures::future::join_all(tasks).await;
    let refused = answers
        .iter()
        .filter(|a| a.starts_with("HTTP/1.1 429") && a.contains("rate_limited"))
        .count();
    let cut = answers
        .iter()
        .filter(|a| a.starts_with("HTTP/1.1 408") && a.contains("request_timeout"))
        .count();
    assert!(refused >= 10, "{answers:?}");
    assert!(cut >= 5, "{answers:?}");
    // Nothing else: a connection reset before the answer could be read aside, each got one
    // of the two.
    let unanswered = answers.iter().filter(|a| a.is_empty()).count();
    assert_eq!(refused + cut + unanswered, answers.len(), "{answers:?}");
}

/// A body trickled in a byte at a time is cut off once its rate falls below the minimum.
async fn trickle_bodies(server: &Served) {
    let tasks = (0..10).map(|_| async move {
        let mut stream = connect_from("127.0.0.5", server.addr()).await;
        stream
            .write_all(head("/tools/receipt-echo", 1000).as_bytes())
            .await
            .unwrap();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(8) {
            if stream.write_all(b" ").await.is_err() {
                break;
            }
            let mut buf = [0u8; 1024];
            if let Ok(Ok(n)) =
                tokio::time::timeout(Duration::from_millis(300), stream.read(&mut buf)).await
            {
                return String::from_utf8_lossy(&buf[..n]).into_owned();
            }
        }
        String::new()
    });
    for answer in futures::future::join_all(tasks).await {
        assert!(
            answer.starts_with("HTTP/1.1 408") && answer.contains("request_timeout"),
            "{answer:?}"
        );
    }
}

/// A request head trickled in is cut off at the header read timeout.
async fn trickle_heads(server: &Served) {
    let tasks = (0..10).map(|_| async move {
        let mut stream = connect_from("127.0.0.6", server.addr()).await;
        let started = Instant::now();
        for byte in b"POST /tools/receipt-echo HTTP/1.1\r\nx-slow: "
            .iter()
            .cycle()
        {
            if stream.write_all(&[*byte]).await.is_err() {
                break;
            }
            let mut buf = [0u8; 64];
            match tokio::time::timeout(Duration::from_millis(200), stream.read(&mut buf)).await {
                Ok(Ok(_)) | Ok(Err(_)) => break,
                Err(_) => {}
            }
            assert!(
                started.elapsed() < Duration::from_secs(8),
                "a trickled head is still open"
            );
        }
    });
    futures::future::join_all(tasks).await;
}

/// Large request heads: each connection buffers at most the head limit (64 KiB; hyper's own
/// default is 400 KiB), then gets 431 at once.
async fn huge_heads(server: &Served) {
    let tasks = (0..20).map(|_| async move {
        let mut stream = connect_from("127.0.0.10", server.addr()).await;
        let mut head = b"GET /healthz HTTP/1.1\r\nx-huge: ".to_vec();
        head.resize(100 * 1024, b'a');
        stream.write_all(&head).await.unwrap();
        let mut buf = [0u8; 1024];
        match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf)).await {
            Ok(Ok(n)) => String::from_utf8_lossy(&buf[..n]).into_owned(),
            _ => String::new(),
        }
    });
    for answer in futures::future::join_all(tasks).await {
        assert!(answer.starts_with("HTTP/1.1 431"), "{answer:?}");
    }
}

/// Idle connections: one client holds at most its share; more are answered 503 `overloaded`.
async fn idle_connections(server: &Served) {
    let mut held = Vec::new();
    for _ in 0..CONNECTIONS_PER_CLIENT {
        held.push(connect_from("127.0.0.7", server.addr()).await);
    }
    // The server counts a connection when it accepts it; give it a moment to take them all.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut refused = 0;
    for _ in 0..8 {
        let mut extra = connect_from("127.0.0.7", server.addr()).await;
        extra
            .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        let answer = answer(&mut extra, Duration::from_secs(3)).await;
        if answer.starts_with("HTTP/1.1 503") && answer.contains("overloaded") {
            refused += 1;
        }
    }
    assert_eq!(refused, 8);
    drop(held);
}

/// Deep and wide JSON is refused before it is parsed; once the bytes of its refused bodies
/// are over its allowance, the client's next bodies are refused before they are read.
async fn shapes(server: &Served) {
    let client = client_from("127.0.0.8");
    let url = server.url("/tools/receipt-echo");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let wide = format!("[{}]", vec!["0"; 400_000].join(","));
    let mut seen = std::collections::BTreeMap::new();
    for _ in 0..5 {
        for (body, expected) in [
            (&deep, (400, "malformed_json")),
            (&wide, (413, "body_too_large")),
        ] {
            let (status, _, answer) = post_raw(&client, &url, body.clone()).await;
            if status == 429 {
                assert_refused_bytes(&answer);
            } else {
                assert_error(
                    reqwest::StatusCode::from_u16(status).unwrap(),
                    &answer,
                    expected.0,
                    expected.1,
                );
            }
            *seen.entry(status).or_insert(0) += 1;
        }
    }
    assert!(
        seen.contains_key(&400) && seen.contains_key(&413) && seen.contains_key(&429),
        "{seen:?}"
    );
}

/// The 429 of a client whose refused bodies are over their allowance.
fn assert_refused_bytes(answer: &Value) {
    assert_eq!(answer["error"]["code"], "rate_limited", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("refused request bodies"), "{message}");
}

/// MCP batches of `tools/list` (each answered with the whole tool list) are refused past a
/// few messages, before any is answered.
async fn mcp_batches(server: &Served) {
    let client = client_from("127.0.0.11");
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let batch = json!(vec![list; 2000]).to_string();
    for _ in 0..5 {
        let (status, len, body) = post_raw(&client, &server.url("/ai/mcp"), batch.clone()).await;
        assert_eq!(
            (status, &body["error"]["code"]),
            (400, &json!(-32600)),
            "{body}"
        );
        assert!(len < 1024, "a {len}-byte answer");
    }
}

/// Unpaid calls to a paid tool are anonymous requests like any other: past the client's
/// burst they are refused 429 with `Retry-After`.
async fn unpaid_calls(server: &Served) {
    let client = client_from("127.0.0.9");
    let url = server.url("/tools/receipt-echo-paid");
    let mut limited = 0;
    for _ in 0..200 {
        let response = client.post(&url).json(&json!({})).send().await.unwrap();
        let retry = response.headers().get("retry-after").is_some();
        let (status, body) = read(response).await;
        match status.as_u16() {
            402 => {}
            429 => {
                assert_eq!(body["error"]["code"], "rate_limited");
                assert!(retry);
                limited += 1;
            }
            other => panic!("{other}: {body}"),
        }
    }
    assert!(limited >= 50, "{limited} of 200 limited");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn anonymous_attackers_cannot_exhaust_the_server_or_disturb_its_callers() {
    let server = Arc::new(
        tokio::task::spawn_blocking(|| Served::start(LIMITS))
            .await
            .unwrap(),
    );
    let victim = reqwest::Client::new();
    // A builder's tool with a schema to break.
    let (_, builder) = server
        .node
        .admin(
            "POST",
            "/ai/admin/builders",
            Some(&json!({"name": "Target"})),
        )
        .await;
    let key = builder["builderKey"].as_str().unwrap();
    let mut endpoint = static_endpoint("integers-only");
    endpoint["inputSchema"] =
        json!({"type": "object", "additionalProperties": {"type": "integer"}});
    let created = victim
        .post(server.url("/ai/endpoints/create"))
        .header("x-builder-key", key)
        .json(&endpoint)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 200, "{}", created.text().await.unwrap());

    let paid_url = server.url("/tools/receipt-echo-paid");
    let required = payment_required(&victim, &paid_url, &json!({})).await;
    let signer = PrivateKeySigner::random();
    let free_call = || async {
        let response = victim
            .post(server.url("/tools/receipt-echo"))
            .json(&json!({}))
            .send()
            .await
            .expect("the free call is answered");
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        (status.as_u16() == 200)
            .then_some(())
            .ok_or(format!("free: {status} {body}"))
    };
    let paid_call = || async {
        let (name, value) = crate::payments::pay(&signer, &required, 2, |_| {});
        let response = victim
            .post(&paid_url)
            .header(name, value)
            .json(&json!({}))
            .send()
            .await
            .expect("the paid call is answered");
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        (status.as_u16() == 200)
            .then_some(())
            .ok_or(format!("paid: {status} {body}"))
    };
    // Warm up, then take the idle resident set.
    for _ in 0..5 {
        free_call().await.unwrap();
        paid_call().await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle = server.rss(true);

    let done = AtomicBool::new(false);
    let peak = {
        let server = server.clone();
        PeakRss::sample(move || server.rss(true), idle)
    };
    let victims = async {
        let (mut calls, mut errors) = (0, Vec::new());
        while !done.load(Ordering::Relaxed) {
            // Paced under the anonymous write limit, which the free calls spend.
            for result in [free_call().await, paid_call().await] {
                calls += 1;
                if let Err(e) = result {
                    errors.push(e);
                }
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        (calls, errors)
    };
    let attackers = async {
        tokio::join!(
            amplify_seeded(&server),
            amplify_builder(&server, "integers-only"),
            hold_bodies(&server),
            trickle_bodies(&server),
            trickle_heads(&server),
            huge_heads(&server),
            idle_connections(&server),
            shapes(&server),
            unpaid_calls(&server),
            mcp_batches(&server),
        );
        done.store(true, Ordering::Relaxed);
    };
    let started = Instant::now();
    let ((calls, errors), ()) = tokio::join!(victims, attackers);
    let peak = peak.stop().await;
    eprintln!(
        "hostile agents: {:.1} s, victims made {calls} calls; server and workers RSS idle {} MiB, peak {} MiB",
        started.elapsed().as_secs_f64(),
        idle >> 20,
        peak >> 20
    );
    assert!(errors.is_empty(), "victims saw errors: {errors:?}");
    assert!(calls >= 10, "{calls}");
    assert!(
        peak.saturating_sub(idle) <= RSS_BOUND_OVER_IDLE,
        "RSS grew from {} MiB to {} MiB",
        idle >> 20,
        peak >> 20
    );
}

/// The body budget: bytes are reserved before they are read, from the server's budget (503
/// `overloaded` when spent) and the client's share of it (429 `rate_limited`), and given back
/// when the request is done; a client with a small body still fits beside the held ones.
#[tokio::test]
async fn bodies_in_flight_are_reserved_from_the_budget_and_given_back() {
    const MIB: usize = 1024 * 1024;
    let server = crate::util::TestServer::start_with(|c| {
        c.limits.admission.body_budget_bytes = 2 * MIB + MIB / 2;
        c.limits.admission.body_budget_per_client_bytes = 2 * MIB;
    })
    .await;
    let addr: SocketAddr = server.base.trim_start_matches("http://").parse().unwrap();
    // 127.0.0.2 holds two bodies of 1 MiB, its whole share.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = connect_from("127.0.0.2", addr).await;
        stream
            .write_all(head("/tools/receipt-echo", MIB).as_bytes())
            .await
            .unwrap();
        stream.write_all(&[b' '; 1000]).await.unwrap();
        held.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let refused = |source: &'static str| async move {
        let mut stream = connect_from(source, addr).await;
        stream
            .write_all(head("/tools/receipt-echo", MIB).as_bytes())
            .await
            .unwrap();
        answer(&mut stream, Duration::from_secs(5)).await
    };
    let over_share = refused("127.0.0.2").await;
    assert!(
        over_share.starts_with("HTTP/1.1 429") && over_share.contains("rate_limited"),
        "{over_share}"
    );
    assert!(over_share.contains("retry-after: 1"), "{over_share}");
    // Another client's 1 MiB does not fit in what is left of the server's budget.
    let over_budget = refused("127.0.0.3").await;
    assert!(
        over_budget.starts_with("HTTP/1.1 503") && over_budget.contains("overloaded"),
        "{over_budget}"
    );
    assert!(over_budget.contains("retry-after: 1"), "{over_budget}");
    // A small body still fits.
    let (status, body) = server.post("/tools/receipt-echo", &json!({})).await;
    assert_eq!(status, 200, "{body}");
    // Closing the held bodies gives their bytes back: a chunked body of 1 MiB less a little,
    // reserved step by step as it grows, now fits.
    drop(held);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut stream = connect_from("127.0.0.3", addr).await;
    stream
        .write_all(
            b"POST /tools/receipt-echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
              transfer-encoding: chunked\r\nconnection: close\r\n\r\n",
        )
        .await
        .unwrap();
    let chunk = vec![b' '; 100 * 1024];
    for _ in 0..9 {
        let mut framed = format!("{:x}\r\n", chunk.len()).into_bytes();
        framed.extend_from_slice(&chunk);
        framed.extend_from_slice(b"\r\n");
        stream.write_all(&framed).await.unwrap();
    }
    stream.write_all(b"2\r\n{}\r\n0\r\n\r\n").await.unwrap();
    let answered = answer(&mut stream, Duration::from_secs(5)).await;
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
}

/// Refused bodies are paid for: the bytes of bodies answered with a client error are charged
/// to their client, and past its allowance its next body is refused 429 before it is read
/// (a body the bucket still covers passes). Bodies answered with success spend nothing, and
/// one client's refusals do not touch another's allowance.
#[tokio::test]
async fn the_bytes_of_refused_bodies_are_limited_per_client() {
    const KIB: u64 = 1024;
    let server = crate::util::TestServer::start_with(|c| {
        c.limits.admission.refused_body_bytes_per_sec = 8 * KIB;
        c.limits.admission.refused_body_burst_bytes = 256 * KIB;
    })
    .await;
    let url = server.url("/tools/receipt-echo");
    let attacker = client_from("127.0.0.2");
    // 1 MiB of bodies answered 200: nothing spent.
    let valid = json!({"pad": "x".repeat(100 * 1024)}).to_string();
    for _ in 0..10 {
        let (status, _, answer) = post_raw(&attacker, &url, valid.clone()).await;
        assert_eq!(status, 200, "{answer}");
    }
    // 100 KB bodies refused (too deep): two fit the 256 KiB allowance, the third does not.
    let deep = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
    for _ in 0..2 {
        let (status, _, answer) = post_raw(&attacker, &url, deep.clone()).await;
        assert_error(
            reqwest::StatusCode::from_u16(status).unwrap(),
            &answer,
            400,
            "malformed_json",
        );
    }
    let response = attacker
        .post(&url)
        .header("content-type", "application/json")
        .body(deep.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    let retry: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    // 100 KB less the ~56 KiB left, at 8 KiB/s.
    assert!((4..=8).contains(&retry), "retry after {retry} s");
    let (_, answer) = read(response).await;
    assert_refused_bytes(&answer);
    // What is left still covers a small body.
    let (status, _, answer) = post_raw(&attacker, &url, "{}".into()).await;
    assert_eq!(status, 200, "{answer}");
    // Another client is untouched.
    let (status, _, answer) = post_raw(&client_from("127.0.0.3"), &url, deep).await;
    assert_eq!(status, 400, "{answer}");
}

/// A client past its allowance of refused bytes has its next body drained at its bucket's
/// rate, not as fast as it sends: a request behind that body on the same connection is
/// answered only once the body is drained, and the client reads its 429, not a reset.
#[tokio::test]
async fn a_client_in_debt_has_its_bodies_drained_at_its_buckets_rate() {
    const KIB: usize = 1024;
    let server = crate::util::TestServer::start_with(|c| {
        c.limits.admission.refused_body_bytes_per_sec = 128 * KIB as u64;
        c.limits.admission.refused_body_burst_bytes = 64 * KIB as u64;
    })
    .await;
    let addr: SocketAddr = server.base.trim_start_matches("http://").parse().unwrap();
    // Into debt: a refused body (too deep) larger than the allowance.
    let deep = format!("{}{}", "[".repeat(40_000), "]".repeat(40_000));
    let (status, _, answer) = post_raw(
        &client_from("127.0.0.2"),
        &server.url("/tools/receipt-echo"),
        deep,
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    // 512 KiB refused for the debt, then a health check behind it on the same connection.
    let body = vec![b' '; 512 * KIB];
    let mut sent = head("/tools/receipt-echo", body.len()).into_bytes();
    sent.extend_from_slice(&body);
    sent.extend_from_slice(b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n");
    let (mut reader, mut writer) = connect_from("127.0.0.2", addr).await.into_split();
    let started = Instant::now();
    let writing = tokio::spawn(async move {
        writer.write_all(&sent).await.unwrap();
        writer
    });
    let mut seen = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), reader.read_to_end(&mut seen))
        .await
        .unwrap()
        .unwrap();
    let elapsed = started.elapsed();
    drop(writing.await.unwrap());
    let seen = String::from_utf8_lossy(&seen);
    assert!(seen.starts_with("HTTP/1.1 429"), "{seen}");
    assert!(seen.contains("refused request bodies"), "{seen}");
    assert!(seen.contains("HTTP/1.1 200"), "{seen}");
    // The health check is read with the body's last chunk (hyper reads at most 64 KiB at a
    // time): 512 KiB less a burst and that chunk, at 128 KiB/s, is 3 s (as fast as it is
    // sent: milliseconds).
    assert!(elapsed >= Duration::from_secs(2), "drained in {elapsed:?}");
}

/// A client that keeps asking after its 429s has them answered at its pace (here 20 a second
/// after a burst of 40), not as fast as it asks; another client is answered meanwhile.
#[tokio::test]
async fn a_client_ignoring_retry_after_gets_its_refusals_at_a_pace() {
    let server = crate::util::TestServer::start_with(|c| {
        c.limits.anonymous_writes = Some(toolhost::config::RateLimit {
            per_minute: 60,
            burst: 1,
        });
        c.limits.admission.rate_limited_answers_per_client_per_sec = 20;
    })
    .await;
    let url = server.url("/tools/receipt-echo");
    let ignoring = client_from("127.0.0.2");
    let started = Instant::now();
    let mut refused = 0;
    for _ in 0..100 {
        let (status, _, answer) = post_raw(&ignoring, &url, "{}".into()).await;
        if status == 429 {
            assert_eq!(answer["error"]["code"], "rate_limited", "{answer}");
            refused += 1;
        }
    }
    let elapsed = started.elapsed();
    // The bucket refills at one a second: a few of the hundred pass.
    assert!(refused >= 90, "{refused}");
    // 90 refusals and more, less a burst of 40, at 20 a second: 2.5 s and more (unpaced: well
    // under 1 s).
    assert!(elapsed >= Duration::from_millis(2500), "{elapsed:?}");
    let (status, _, answer) = post_raw(&client_from("127.0.0.3"), &url, "{}".into()).await;
    assert_eq!(status, 200, "{answer}");
}

/// A client opening connections faster than its pace (here 5 a second, bursts of 10) has each
/// served in its turn: none is refused, the ones past its burst wait (the last about 2 s), and
/// another client is served meanwhile.
#[tokio::test]
async fn new_connections_are_served_at_their_clients_pace() {
    let server = crate::util::TestServer::start_with(|c| {
        c.limits.admission.new_connections_per_client_per_sec = 5;
    })
    .await;
    let addr: SocketAddr = server.base.trim_start_matches("http://").parse().unwrap();
    let started = Instant::now();
    let health = |source: &'static str| async move {
        let mut stream = connect_from(source, addr).await;
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            .await
            .unwrap();
        let answer = answer(&mut stream, Duration::from_secs(20)).await;
        (answer, started.elapsed())
    };
    let paced = futures::future::join_all((0..20).map(|_| health("127.0.0.2")));
    let other = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        health("127.0.0.3").await
    };
    let (paced, (other, other_at)) = tokio::join!(paced, other);
    for (answer, _) in &paced {
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    }
    assert!(other.starts_with("HTTP/1.1 200"), "{other:?}");
    let last = paced.iter().map(|(_, at)| *at).max().unwrap();
    assert!(
        last >= Duration::from_millis(1500),
        "the last was served after {last:?}"
    );
    assert!(other_at < last, "{other_at:?} vs {last:?}");
}
