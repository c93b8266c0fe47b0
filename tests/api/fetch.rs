//! A handler's `fetch` through the real server: a JS endpoint with the `fetch` capability and
//! `allowedHosts`, calling a peer over loopback HTTP (allowed only under the dev flag), and the
//! hostile cases: internal addresses in every spelling (without the flag), redirects to them,
//! hosts off the list, huge and slow answers, and no capability.

use std::convert::Infallible;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::HeaderMap;
use serde_json::{json, Value};

use crate::util::{assert_error, As, TestServer};

/// Runs the request the call gives (`url`, `init`) and reports what came back and how.
const PROBE: &str = r#"
export default async function (req) {
  const { url, init, read } = req.input;
  try {
    const response = await fetch(url, init);
    let body;
    if (read === "json") body = await response.json();
    else if (read === "bytes") body = (await response.arrayBuffer()).byteLength;
    else if (read === "stream") {
      const reader = response.body.getReader();
      let chunks = 0, text = "";
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks++;
        text += decoder.decode(value, { stream: true });
      }
      body = { chunks, text };
    } else body = await response.text();
    return { status: response.status, redirected: response.redirected, type: response.headers.get("x-peer"), body };
  } catch (e) {
    return { error: e.name, code: e.code, message: e.message };
  }
}
"#;

/// A local peer: echoes requests, streams, redirects to internal addresses, and answers
/// without end (fast or slowly).
async fn peer() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let chunks = |n: usize, size: usize, every: Duration| {
        let stream = futures::stream::unfold(0usize, move |i| async move {
            if i == n {
                return None;
            }
            tokio::time::sleep(every).await;
            Some((
                Ok::<_, Infallible>(Bytes::from(vec![b'a' + (i % 26) as u8; size])),
                i + 1,
            ))
        });
        Body::from_stream(stream)
    };
    let app = axum::Router::new()
        .route(
            "/echo",
            axum::routing::any(
                |method: axum::http::Method, headers: HeaderMap, body: Bytes| async move {
                    let header = |name: &str| {
                        headers
                            .get(name)
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned)
                    };
                    (
                        [("x-peer", "echo")],
                        axum::Json(json!({
                            "method": method.as_str(),
                            "custom": header("x-custom"),
                            "contentType": header("content-type"),
                            "authorization": header("authorization"),
                            "body": String::from_utf8_lossy(&body),
                        })),
                    )
                },
            ),
        )
        .route(
            "/stream",
            axum::routing::get(move || async move { chunks(5, 10, Duration::from_millis(5)) }),
        )
        .route(
            "/huge",
            axum::routing::get(
                move || async move { chunks(usize::MAX, 64 * 1024, Duration::ZERO) },
            ),
        )
        .route(
            "/drip",
            axum::routing::get(
                move || async move { chunks(usize::MAX, 1, Duration::from_millis(50)) },
            ),
        )
        .route(
            "/to-metadata",
            axum::routing::get(|| async {
                axum::response::Redirect::temporary("http://169.254.169.254/latest/meta-data/")
            }),
        )
        .route(
            "/to-echo",
            axum::routing::post(|| async { axum::response::Redirect::to("/echo") }),
        );
    let to_localhost = format!("http://localhost:{}/echo", addr.port());
    let app = app.route(
        "/to-localhost",
        axum::routing::get(
            move || async move { axum::response::Redirect::temporary(&to_localhost) },
        ),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

async fn server(allow_loopback: bool) -> TestServer {
    TestServer::start_with(move |c| {
        c.outbound.allow_loopback = allow_loopback;
        c.runtime.pool.default_limits.timeout = Duration::from_millis(1500);
        c.runtime.pool.fetch.max_response_body_bytes = 1024 * 1024;
    })
    .await
}

/// Creates a JS endpoint running [`PROBE`]; no `hosts`: no `allowedHosts` at all.
async fn create(server: &TestServer, slug: &str, capabilities: Value, hosts: &[&str]) {
    let mut endpoint = json!({
        "slug": slug, "title": slug, "description": "Fetches.", "priceUsd": 0,
        "handlerType": "js_request_response", "source": PROBE,
        "capabilities": capabilities, "allowedHosts": hosts,
    });
    if hosts.is_empty() {
        endpoint.as_object_mut().unwrap().remove("allowedHosts");
    }
    server.create(As::Admin, &endpoint).await;
}

async fn probe(server: &TestServer, slug: &str, input: Value) -> Value {
    let (status, body) = server.post(&format!("/tools/{slug}"), &input).await;
    assert_eq!(status, 200, "{input}: {body}");
    body
}

#[tokio::test]
async fn fetch_calls_an_allowed_peer_with_any_method_headers_and_body() {
    let peer = peer().await;
    let server = server(true).await;
    create(&server, "fetcher", json!({"fetch": true}), &["127.0.0.1"]).await;
    let url = |path: &str| format!("http://{peer}{path}");

    let posted = probe(
        &server,
        "fetcher",
        json!({"url": url("/echo"), "read": "json", "init": {
            "method": "POST", "body": "{\"n\":1}",
            "headers": {"content-type": "application/json", "x-custom": "c1", "authorization": "Bearer t"},
        }}),
    )
    .await;
    assert_eq!(
        posted,
        json!({"status": 200, "redirected": false, "type": "echo", "body": {
            "method": "POST", "custom": "c1", "contentType": "application/json",
            "authorization": "Bearer t", "body": "{\"n\":1}",
        }})
    );
    let deleted = probe(
        &server,
        "fetcher",
        json!({"url": url("/echo"), "init": {"method": "DELETE"}}),
    )
    .await;
    assert!(
        deleted["body"].as_str().unwrap().contains("\"DELETE\""),
        "{deleted}"
    );
    let bytes = probe(
        &server,
        "fetcher",
        json!({"url": url("/echo"), "read": "bytes", "init": {"method": "PUT", "body": "12345"}}),
    )
    .await;
    assert!(bytes["body"].as_u64().unwrap() > 5, "{bytes}");
    let streamed = probe(
        &server,
        "fetcher",
        json!({"url": url("/stream"), "read": "stream"}),
    )
    .await;
    assert_eq!(
        streamed["body"]["text"],
        "aaaaaaaaaabbbbbbbbbbccccccccccddddddddddeeeeeeeeee"
    );
    assert!(
        streamed["body"]["chunks"].as_u64().unwrap() >= 2,
        "{streamed}"
    );
    // A POST redirected with 303 semantics by `Redirect::to` is followed as a GET.
    let followed = probe(
        &server,
        "fetcher",
        json!({"url": url("/to-echo"), "read": "json", "init": {"method": "POST", "body": "x"}}),
    )
    .await;
    assert_eq!(followed["redirected"], true, "{followed}");
    assert_eq!(followed["body"]["method"], "GET", "{followed}");
    let manual = probe(
        &server,
        "fetcher",
        json!({"url": url("/to-echo"), "init": {"method": "POST", "redirect": "manual"}}),
    )
    .await;
    assert_eq!(manual["status"], 303, "{manual}");
}

#[tokio::test]
async fn fetch_refuses_internal_addresses_in_every_spelling() {
    // No dev flag: loopback is as internal as the rest.
    let server = server(false).await;
    let listed = ["127.0.0.1", "0.0.0.0", "169.254.169.254", "10.0.0.1"];
    create(&server, "fetcher", json!({"fetch": true}), &listed).await;
    for url in [
        "http://127.0.0.1:1/",
        "http://127.1/",
        "http://0x7f000001/",
        "http://2130706433/",
        "http://0177.0.0.1/",
        "http://0.0.0.0/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
    ] {
        let body = probe(&server, "fetcher", json!({"url": url})).await;
        assert_eq!(body["code"], "ssrf_refused", "{url}: {body}");
        assert_eq!(body["error"], "TypeError", "{url}: {body}");
    }
    // Not even nameable in allowedHosts, so refused before any address is looked at.
    for url in [
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[fc00::1]/",
        "http://localhost/",
        "https://example.com/",
    ] {
        let body = probe(&server, "fetcher", json!({"url": url})).await;
        assert_eq!(body["code"], "host_not_allowed", "{url}: {body}");
    }
    let body = probe(
        &server,
        "fetcher",
        json!({"url": "http://user:secret@127.0.0.1/"}),
    )
    .await;
    assert_eq!(body["code"], "invalid_argument", "{body}");
}

#[tokio::test]
async fn redirects_are_checked_again_and_only_allowed_hosts_are_reached() {
    let peer = peer().await;
    let server = server(true).await;
    // The metadata address is listed too: the redirect to it is refused for its address.
    let hosts = ["127.0.0.1", "169.254.169.254"];
    create(&server, "fetcher", json!({"fetch": true}), &hosts).await;
    create(&server, "unlisted", json!({"fetch": true}), &[]).await;
    let url = |path: &str| format!("http://{peer}{path}");
    let body = probe(&server, "fetcher", json!({"url": url("/to-metadata")})).await;
    assert_eq!(body["code"], "ssrf_refused", "{body}");
    let body = probe(&server, "fetcher", json!({"url": url("/to-localhost")})).await;
    assert_eq!(body["code"], "host_not_allowed", "{body}");
    let body = probe(
        &server,
        "fetcher",
        json!({"url": url("/to-metadata"), "init": {"redirect": "error"}}),
    )
    .await;
    assert_eq!(body["error"], "TypeError", "{body}");
    // An endpoint without allowedHosts reaches nothing, not any public host.
    let body = probe(&server, "unlisted", json!({"url": url("/echo")})).await;
    assert_eq!(body["code"], "host_not_allowed", "{body}");
    let body = probe(
        &server,
        "fetcher",
        json!({"url": url("/echo"), "init": {"headers": {"host": "evil.example"}}}),
    )
    .await;
    assert_eq!(body["code"], "invalid_argument", "{body}");
}

#[tokio::test]
async fn huge_and_slow_answers_end_at_their_caps_and_neighbours_are_fine() {
    let peer = peer().await;
    let server = server(true).await;
    create(&server, "fetcher", json!({"fetch": true}), &["127.0.0.1"]).await;
    let url = |path: &str| format!("http://{peer}{path}");
    let body = probe(
        &server,
        "fetcher",
        json!({"url": url("/huge"), "read": "bytes"}),
    )
    .await;
    assert_eq!(body["code"], "response_too_large", "{body}");
    let started = Instant::now();
    let (status, body) = server
        .post("/tools/fetcher", &json!({"url": url("/drip")}))
        .await;
    assert_error(status, &body, 504, "timeout");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let body = probe(
        &server,
        "fetcher",
        json!({"url": url("/echo"), "read": "json", "init": {"method": "POST", "body": "ok"}}),
    )
    .await;
    assert_eq!(
        body["body"]["body"], "ok",
        "the endpoint answers again: {body}"
    );
}

#[tokio::test]
async fn fetch_without_the_capability_is_denied() {
    let peer = peer().await;
    let server = server(true).await;
    create(&server, "plain", json!({}), &["127.0.0.1"]).await;
    let body = probe(
        &server,
        "plain",
        json!({"url": format!("http://{peer}/echo")}),
    )
    .await;
    assert_eq!(body["code"], "capability_denied", "{body}");
    assert_eq!(body["error"], "TypeError", "{body}");
}
