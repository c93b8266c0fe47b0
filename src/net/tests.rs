//! End-to-end tests of the guarded client against local servers. Only loopback is ever
//! contacted: every non-loopback destination below must be refused before a connection.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::Path;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::{Json, Router};
use serde_json::{json, Value};

use super::test_server::{client, serve, serve_counting};
use super::{NetError, OutboundClient, OutboundRequest, StreamRequest};
use crate::config::OutboundPolicy;
use crate::error::ErrorCode;

fn redirect(status: StatusCode, to: String) -> Response {
    (status, [(header::LOCATION, to)]).into_response()
}

/// A peer with JSON, redirect, large, slow and echo routes. `other` is a second loopback server.
async fn peer(other: Option<String>) -> String {
    let other = other.unwrap_or_default();
    let router = Router::new()
        .route("/ok", get(|| async { Json(json!({"hello": "world"})) }))
        .route("/text", get(|| async { "plain text" }))
        .route(
            "/missing",
            get(|| async { (StatusCode::NOT_FOUND, Json(json!({}))) }),
        )
        .route(
            "/to/private",
            get(|| async { redirect(StatusCode::FOUND, "http://10.0.0.1/".into()) }),
        )
        .route(
            "/to/metadata",
            get(|| async {
                redirect(
                    StatusCode::FOUND,
                    "http://169.254.169.254/latest/meta-data/".into(),
                )
            }),
        )
        .route(
            "/to/mapped",
            get(|| async { redirect(StatusCode::FOUND, "http://[::ffff:127.0.0.1]/ok".into()) }),
        )
        .route(
            "/to/other",
            get({
                let other = other.clone();
                move || async move { redirect(StatusCode::FOUND, format!("{other}/echo")) }
            }),
        )
        .route(
            "/chain/{n}",
            get(|Path(n): Path<u32>| async move {
                if n == 0 {
                    Json(json!({"chain": "end"})).into_response()
                } else {
                    redirect(StatusCode::MOVED_PERMANENTLY, format!("/chain/{}", n - 1))
                }
            }),
        )
        .route(
            "/temp/echo",
            any(|| async { redirect(StatusCode::TEMPORARY_REDIRECT, "/echo".into()) }),
        )
        .route(
            "/see-other/echo",
            any(|| async { redirect(StatusCode::SEE_OTHER, "/echo".into()) }),
        )
        .route(
            "/echo",
            any(
                |method: axum::http::Method, headers: HeaderMap, body: String| async move {
                    let secret = headers
                        .get("x-secret")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string);
                    Json(json!({"method": method.as_str(), "body": body, "secret": secret}))
                },
            ),
        )
        .route("/big", get(|| async { "x".repeat(100 * 1024) }))
        .route(
            "/big-stream",
            get(|| async {
                let chunks = (0..100).map(|_| Ok::<_, std::io::Error>(vec![b'y'; 1024]));
                Body::from_stream(futures::stream::iter(chunks))
            }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(3)).await;
                "late"
            }),
        );
    serve(router).await
}

fn port(base: &str) -> u16 {
    base.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port")
}

async fn refusal(client: &OutboundClient, url: &str) -> NetError {
    match client.fetch(OutboundRequest::get(url)).await {
        Err(e) => e,
        Ok(r) => panic!("{url} should be refused, got HTTP {}", r.status),
    }
}

#[tokio::test]
async fn loopback_forms_are_refused_without_the_dev_flag() {
    let c = client(false);
    for url in [
        "http://127.0.0.1/",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://0177.0.0.1/",
        "http://0177.1/",
        "http://127.1/",
        "http://0x7f.1/",
        "http://127.0.0.1./",
        "http://[::1]/",
        "http://localhost/",
        "http://LOCALHOST:8080/",
    ] {
        assert_eq!(
            refusal(&c, url).await,
            NetError::SsrfRefused("a loopback address"),
            "{url}"
        );
    }
}

#[tokio::test]
async fn internal_ranges_are_refused_even_with_the_dev_flag() {
    let c = client(true);
    let cases = [
        ("http://10.0.0.1/", "a private address"),
        ("http://167772161/", "a private address"),
        ("http://192.168.0.1:8080/", "a private address"),
        ("https://172.16.5.4/", "a private address"),
        (
            "http://169.254.169.254/latest/meta-data/",
            "a link-local address",
        ),
        ("http://0xa9fea9fe/", "a link-local address"),
        ("http://100.64.1.1/", "a shared (CGNAT) address"),
        ("http://0.0.0.0/", "an unspecified address"),
        ("http://0/", "an unspecified address"),
        ("http://[::]/", "an unspecified address"),
        ("http://[::ffff:127.0.0.1]/", "an IPv4-mapped IPv6 address"),
        ("http://[::ffff:a9fe:a9fe]/", "an IPv4-mapped IPv6 address"),
        ("http://[fe80::1]/", "a link-local address"),
        ("http://[fd00::1]/", "a unique-local address"),
        ("http://[64:ff9b::a00:1]/", "a NAT64 address"),
        ("http://[2002:a00:1::]/", "a 6to4 address"),
        ("http://[2001::1]/", "a Teredo address"),
        ("http://224.0.0.1/", "a multicast address"),
        ("http://255.255.255.255/", "a broadcast address"),
        ("http://198.18.0.1/", "a benchmarking address"),
        ("http://192.0.2.1/", "a documentation address"),
        ("http://240.0.0.1/", "a reserved address"),
    ];
    for (url, reason) in cases {
        assert_eq!(
            refusal(&c, url).await,
            NetError::SsrfRefused(reason),
            "{url}"
        );
    }
}

#[tokio::test]
async fn malformed_and_non_http_urls_are_invalid() {
    let c = client(true);
    for url in [
        "not a url",
        "/relative/path",
        "ftp://example.com/",
        "file:///etc/passwd",
        "gopher://127.0.0.1/",
        "http://user:pass@127.0.0.1/",
        "http://user@127.0.0.1/",
    ] {
        let e = refusal(&c, url).await;
        assert_eq!(e.code(), ErrorCode::InvalidUrl, "{url}: {e}");
    }
}

#[tokio::test]
async fn loopback_is_reachable_with_the_dev_flag_in_any_spelling() {
    let base = peer(None).await;
    let p = port(&base);
    let c = client(true);
    for url in [
        format!("{base}/ok"),
        format!("http://2130706433:{p}/ok"),
        format!("http://0x7f000001:{p}/ok"),
        format!("http://127.1:{p}/ok"),
        format!("http://localhost:{p}/ok"),
    ] {
        let r = c
            .fetch(OutboundRequest::get(url.clone()))
            .await
            .expect(&url);
        assert_eq!(r.status, 200, "{url}");
        assert_eq!(&r.body[..], br#"{"hello":"world"}"#);
    }
}

#[tokio::test]
async fn redirects_to_internal_addresses_are_refused() {
    let other = peer(None).await;
    let base = peer(Some(other.clone())).await;
    let c = client(true);
    for (path, reason) in [
        ("/to/private", "a private address"),
        ("/to/metadata", "a link-local address"),
        ("/to/mapped", "an IPv4-mapped IPv6 address"),
    ] {
        assert_eq!(
            refusal(&c, &format!("{base}{path}")).await,
            NetError::SsrfRefused(reason)
        );
    }
    // A loopback hop is allowed with the dev flag; the final URL is the other server's.
    let r = c
        .fetch(OutboundRequest::get(format!("{base}/to/other")))
        .await
        .expect("loopback hop");
    assert_eq!(r.status, 200);
    assert_eq!(r.final_url, format!("{other}/echo"));
    // Without the flag the very first hop is refused.
    assert_eq!(
        refusal(&client(false), &format!("{base}/to/other")).await,
        NetError::SsrfRefused("a loopback address")
    );
}

#[tokio::test]
async fn redirects_are_capped() {
    let base = peer(None).await;
    let c = client(true);
    let r = c
        .fetch(OutboundRequest::get(format!("{base}/chain/3")))
        .await
        .expect("3 hops");
    assert_eq!(r.status, 200);
    assert_eq!(r.final_url, format!("{base}/chain/0"));
    let e = refusal(&c, &format!("{base}/chain/4")).await;
    assert_eq!(e, NetError::TooManyRedirects(3));
    assert_eq!(e.code(), ErrorCode::TooManyRedirects);
}

#[tokio::test]
async fn redirect_methods_and_credentials() {
    let other = peer(None).await;
    let base = peer(Some(other)).await;
    let c = client(true);
    let body = || json!({"a": 1});

    let r = c
        .fetch(OutboundRequest::post_json(
            format!("{base}/temp/echo"),
            body(),
        ))
        .await
        .expect("307");
    let echoed: Value = serde_json::from_slice(&r.body).expect("json");
    assert_eq!(echoed["method"], "POST");
    assert_eq!(echoed["body"], r#"{"a":1}"#);

    let r = c
        .fetch(OutboundRequest::post_json(
            format!("{base}/see-other/echo"),
            body(),
        ))
        .await
        .expect("303");
    let echoed: Value = serde_json::from_slice(&r.body).expect("json");
    assert_eq!(echoed["method"], "GET");
    assert_eq!(echoed["body"], "");

    // Same origin keeps caller headers; another origin (other port) does not get them.
    let mut same = OutboundRequest::get(format!("{base}/echo"));
    same.headers
        .insert("x-secret", "s3cret".parse().expect("header"));
    let echoed: Value =
        serde_json::from_slice(&c.fetch(same).await.expect("same").body).expect("json");
    assert_eq!(echoed["secret"], "s3cret");
    let mut cross = OutboundRequest::get(format!("{base}/to/other"));
    cross
        .headers
        .insert("x-secret", "s3cret".parse().expect("header"));
    let echoed: Value =
        serde_json::from_slice(&c.fetch(cross).await.expect("cross").body).expect("json");
    assert_eq!(echoed["secret"], Value::Null);
}

#[tokio::test]
async fn response_size_is_capped() {
    let base = peer(None).await;
    let c = client(true);
    for path in ["/big", "/big-stream"] {
        let e = refusal(&c, &format!("{base}{path}")).await;
        assert_eq!(e, NetError::ResponseTooLarge(64 * 1024), "{path}");
        assert_eq!(e.code(), ErrorCode::ResponseTooLarge);
    }
}

#[tokio::test]
async fn slow_upstreams_time_out() {
    let base = peer(None).await;
    let mut req = OutboundRequest::get(format!("{base}/slow"));
    req.timeout = Some(Duration::from_millis(200));
    let started = Instant::now();
    let e = client(true).fetch(req).await.expect_err("timeout");
    assert_eq!(e.code(), ErrorCode::Timeout);
    assert!(started.elapsed() < Duration::from_secs(2));

    // A per-call timeout cannot extend the policy's.
    let short = OutboundClient::new(&OutboundPolicy {
        allow_loopback: true,
        allow_private: false,
        timeout: Duration::from_millis(200),
        max_response_bytes: 1024,
        max_redirects: 3,
    });
    let mut req = OutboundRequest::get(format!("{base}/slow"));
    req.timeout = Some(Duration::from_secs(30));
    let started = Instant::now();
    assert_eq!(
        short.fetch(req).await.expect_err("timeout"),
        NetError::Timeout(200)
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn host_allow_list_applies_to_every_hop() {
    let other = peer(None).await;
    let base = peer(Some(other.replace("127.0.0.1", "localhost"))).await;
    let c = client(true);
    let allow = vec!["127.0.0.1".to_string()];
    let mut req = OutboundRequest::get(format!("{base}/ok"));
    req.allow_hosts = Some(&allow);
    assert_eq!(c.fetch(req).await.expect("allowed").status, 200);

    let mut req = OutboundRequest::get(format!("{base}/to/other"));
    req.allow_hosts = Some(&allow);
    let e = c.fetch(req).await.expect_err("second hop not allowed");
    assert_eq!(e, NetError::HostNotAllowed("localhost".into()));
    assert_eq!(e.code(), ErrorCode::HostNotAllowed);

    let only_example = vec!["*.example.com".to_string()];
    let e = c
        .get_json(
            &format!("{base}/ok"),
            HeaderMap::new(),
            None,
            Some(&only_example),
        )
        .await
        .expect_err("not allowed");
    assert_eq!(e.code(), ErrorCode::HostNotAllowed);
}

#[tokio::test]
async fn get_json_parses_json_and_rejects_the_rest() {
    let base = peer(None).await;
    let c = client(true);
    let v = c
        .get_json(&format!("{base}/ok"), HeaderMap::new(), None, None)
        .await
        .expect("json");
    assert_eq!(v, json!({"hello": "world"}));
    let e = c
        .get_json(&format!("{base}/text"), HeaderMap::new(), None, None)
        .await
        .expect_err("text");
    assert_eq!(e, NetError::NotJson);
    let e = c
        .get_json(&format!("{base}/missing"), HeaderMap::new(), None, None)
        .await
        .expect_err("404");
    assert_eq!(e.code(), ErrorCode::UpstreamError);
    assert_eq!(
        e.to_string(),
        "upstream request failed: the upstream answered HTTP 404"
    );
}

/// A server with one JSON route, for counting connections.
fn ok_router() -> Router {
    Router::new().route("/ok", get(|| async { Json(json!({"hello": "world"})) }))
}

/// A handler `fetch` of `url`, its body read or not by the caller.
fn stream_get(url: String, allow_hosts: &[String]) -> StreamRequest<'_> {
    StreamRequest {
        method: reqwest::Method::GET,
        url,
        headers: HeaderMap::new(),
        body: None,
        follow_redirects: true,
        allow_hosts,
        deadline: tokio::time::Instant::now() + Duration::from_secs(5),
    }
}

#[tokio::test]
async fn sequential_requests_share_one_connection() {
    let (base, accepted) = serve_counting(ok_router()).await;
    let url = format!("{base}/ok");
    let c = client(true);
    let clone = c.clone();
    for i in 0..6 {
        let c = if i % 2 == 0 { &c } else { &clone };
        c.get_json(&url, HeaderMap::new(), None, None)
            .await
            .expect("json");
    }
    let r = c.fetch(OutboundRequest::get(&url)).await.expect("fetch");
    assert_eq!(r.status, 200);
    // A streamed body read to its end gives the connection back too.
    let allow = vec!["127.0.0.1".to_string()];
    for _ in 0..2 {
        let opened = c.open(stream_get(url.clone(), &allow)).await.expect("open");
        assert_eq!(
            &opened.body.bytes().await.expect("body")[..],
            br#"{"hello":"world"}"#
        );
    }
    // A client per request opened one connection each (9 here).
    assert_eq!(accepted.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn names_resolving_to_loopback_are_refused_before_connecting() {
    let (base, accepted) = serve_counting(ok_router()).await;
    let url = format!("http://localhost:{}/ok", port(&base));
    let refused = NetError::SsrfRefused("a loopback address");
    // The URL check lets a name through; the shared client's resolver refuses its addresses.
    let c = client(false);
    let e = c
        .get_json(&url, HeaderMap::new(), None, None)
        .await
        .expect_err("refused");
    assert_eq!(e, refused);
    let allow = vec!["localhost".to_string()];
    let e = c
        .open(stream_get(url.clone(), &allow))
        .await
        .expect_err("refused");
    assert_eq!(e, refused);
    assert_eq!(accepted.load(Ordering::Relaxed), 0, "nothing connected");

    // The same name resolves and connects where loopback is allowed, under that client's own
    // pool: the refusing client above still refuses afterwards.
    client(true)
        .get_json(&url, HeaderMap::new(), None, None)
        .await
        .expect("loopback allowed");
    assert_eq!(accepted.load(Ordering::Relaxed), 1);
    let e = c
        .get_json(&url, HeaderMap::new(), None, None)
        .await
        .expect_err("still refused");
    assert_eq!(e, refused);
    assert_eq!(accepted.load(Ordering::Relaxed), 1);
}

#[tokio::test]
async fn streamed_redirects_to_another_origin_drop_the_caller_headers() {
    let other = peer(None).await;
    let base = peer(Some(other)).await;
    let c = client(true);
    let allow = vec!["127.0.0.1".to_string()];
    let echo = |path: &str| {
        let mut req = stream_get(format!("{base}{path}"), &allow);
        req.headers
            .insert("x-secret", "s3cret".parse().expect("header"));
        req
    };
    let same = c.open(echo("/echo")).await.expect("same origin");
    let echoed: Value = same.body.json().await.expect("json");
    assert_eq!(echoed["secret"], "s3cret");
    let cross = c.open(echo("/to/other")).await.expect("cross origin");
    assert!(cross.redirected);
    let echoed: Value = cross.body.json().await.expect("json");
    assert_eq!(echoed["secret"], Value::Null);
}

#[test]
fn errors_map_to_api_errors() {
    let api: crate::error::ApiError = NetError::SsrfRefused("a private address").into();
    assert_eq!(api.status, StatusCode::FORBIDDEN);
    assert_eq!(api.code, ErrorCode::SsrfRefused);
    assert_eq!(
        api.message,
        "outbound request refused: the host resolves to a private address"
    );
    let api: crate::error::ApiError = NetError::Timeout(5000).into();
    assert_eq!(api.status, StatusCode::GATEWAY_TIMEOUT);
}

/// utime + stime from a `/proc/.../stat` file, in clock ticks (USER_HZ, 1/100 s on Linux).
fn cpu_ticks(path: &str) -> u64 {
    let stat = std::fs::read_to_string(path).expect("proc stat");
    // The command name is in parentheses and may hold spaces; fields 3.. follow it.
    let fields: Vec<&str> = stat[stat.rfind(')').expect("comm") + 2..]
        .split(' ')
        .collect();
    let field = |n: usize| fields[n - 3].parse::<u64>().expect("a tick count");
    field(14) + field(15)
}

/// What outbound requests cost in CPU: 2,000 sequential `get_json` calls to a loopback server.
/// The server runs on another runtime's thread, so the client thread's user+sys time is the
/// client's own (the process total includes the server). A measurement, not a check: run with
/// `cargo test --lib net::tests::get_json_cpu_cost -- --ignored --nocapture`.
#[test]
#[ignore = "measurement: prints CPU time, asserts nothing about it"]
fn get_json_cpu_cost() {
    const REQUESTS: usize = 2_000;
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("server runtime");
    let (base, accepted) = server.block_on(serve_counting(ok_router()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("client runtime");
    let url = format!("{base}/ok");
    let (thread, process, wall) = (
        cpu_ticks("/proc/thread-self/stat"),
        cpu_ticks("/proc/self/stat"),
        Instant::now(),
    );
    runtime.block_on(async {
        let c = client(true);
        for _ in 0..REQUESTS {
            c.get_json(&url, HeaderMap::new(), None, None)
                .await
                .expect("json");
        }
    });
    println!(
        "{REQUESTS} get_json: client thread {} ms CPU, process {} ms CPU, wall {} ms, \
         {} connections",
        (cpu_ticks("/proc/thread-self/stat") - thread) * 10,
        (cpu_ticks("/proc/self/stat") - process) * 10,
        wall.elapsed().as_millis(),
        accepted.load(Ordering::Relaxed),
    );
}
