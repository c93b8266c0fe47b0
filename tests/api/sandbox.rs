//! Hostile handlers through the real HTTP stack: each must fail cleanly, the server must stay
//! up, and a neighbouring endpoint must keep answering correctly.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use crate::util::{assert_error, seed_fixture, TestServer};

/// Writes a seed dir with one JS endpoint per (slug, fixture file, capabilities).
fn seed_dir(dir: &Path, endpoints: &[(&str, &str, Value)]) {
    let hostile = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/hostile");
    std::fs::create_dir_all(dir.join("handlers")).unwrap();
    for (slug, file, capabilities) in endpoints {
        std::fs::copy(hostile.join(file), dir.join("handlers").join(file)).unwrap();
        let fixture = json!({
            "slug": slug, "title": slug, "description": format!("hostile scenario {file}"),
            "priceUsd": 0, "handlerType": "js_request_response", "tags": ["hostile"],
            "inputSchema": {"type": "object"}, "outputSchema": {},
            "capabilities": capabilities, "source": format!("handlers/{file}"), "exampleInput": {}
        });
        seed_fixture(dir, &fixture);
    }
}

fn none() -> Value {
    json!({})
}

fn all() -> Value {
    json!({"kv": true, "files": true, "httpGetJson": true, "fetch": true, "logs": true})
}

async fn hostile_server(
    endpoints: &[(&str, &str, Value)],
    allow_loopback: bool,
) -> (TestServer, tempfile::TempDir) {
    let fixtures = tempfile::tempdir().unwrap();
    let mut all_endpoints = vec![("neighbour", "neighbour.js", none())];
    all_endpoints.extend(endpoints.iter().cloned());
    seed_dir(fixtures.path(), &all_endpoints);
    let path = fixtures.path().to_path_buf();
    let server = TestServer::start_with(move |c| {
        c.seed_dir = Some(path);
        c.runtime.pool.default_limits.timeout = Duration::from_millis(500);
        c.runtime.pool.default_limits.heap_bytes = 32 * 1024 * 1024;
        c.outbound.allow_loopback = allow_loopback;
    })
    .await;
    (server, fixtures)
}

/// The neighbour answers exactly as it would on a fresh server.
async fn neighbour_is_fine(server: &TestServer) {
    let (status, body) = server.post("/tools/neighbour", &json!({"n": 1})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"ok": true, "echo": {"n": 1}, "protoClean": true, "sawGlobal": "undefined"})
    );
}

#[tokio::test]
async fn runaway_handlers_are_stopped_and_the_host_lives_on() {
    let (server, _f) = hostile_server(
        &[
            ("infinite-loop", "infinite-loop.js", none()),
            ("busy-across-awaits", "busy-across-awaits.js", none()),
            ("never-settles", "never-settles.js", none()),
        ],
        false,
    )
    .await;
    neighbour_is_fine(&server).await;
    for slug in ["infinite-loop", "busy-across-awaits", "never-settles"] {
        let (status, body) = server.post(&format!("/tools/{slug}"), &json!({})).await;
        assert_error(status, &body, 504, "timeout");
        neighbour_is_fine(&server).await;
        // The recycled endpoint still answers (with the same verdict) on the next call.
        let (status, _) = server.post(&format!("/tools/{slug}"), &json!({})).await;
        assert_eq!(status, 504, "{slug} second call");
    }
}

#[tokio::test]
async fn resource_bombs_end_with_resource_limit() {
    let (server, _f) = hostile_server(
        &[
            ("memory-bomb", "memory-bomb.js", none()),
            ("huge-result", "huge-result.js", none()),
        ],
        false,
    )
    .await;
    // The memory bomb normally reaches the heap limit first; on a loaded machine (or while the
    // engine collects garbage near the limit) the call's time limit may stop it first, and the
    // caller then gets `timeout` at the limit plus the grace. Either limit ends it. So may the
    // huge result's: building a result of megabytes on a loaded machine can take longer than
    // this suite's 500 ms limit, all the more in the fresh worker that replaced the one the bomb
    // left with a stuck isolate. Never a 200.
    for (slug, codes) in [
        ("memory-bomb", &["resource_limit", "timeout"][..]),
        ("huge-result", &["resource_limit", "timeout"][..]),
    ] {
        let (status, body) = server.post(&format!("/tools/{slug}"), &json!({})).await;
        assert_eq!(status.as_u16() / 100, 5, "{slug}: {body}");
        let code = body["error"]["code"].as_str().unwrap_or_default();
        assert!(codes.contains(&code), "{slug}: {body}");
        neighbour_is_fine(&server).await;
    }
}

#[tokio::test]
async fn deep_recursion_is_a_handler_error() {
    let (server, _f) =
        hostile_server(&[("deep-recursion", "deep-recursion.js", none())], false).await;
    let (status, body) = server.post("/tools/deep-recursion", &json!({})).await;
    assert_eq!(status, 500, "{body}");
    assert!(
        ["handler_error", "resource_limit"].contains(&body["error"]["code"].as_str().unwrap()),
        "{body}"
    );
    neighbour_is_fine(&server).await;
}

#[tokio::test]
async fn pollution_and_tampering_stay_inside_their_endpoint() {
    let (server, _f) = hostile_server(
        &[
            ("prototype-polluter", "prototype-polluter.js", none()),
            ("tamper-globals", "tamper-globals.js", all()),
        ],
        false,
    )
    .await;
    let (status, body) = server.post("/tools/prototype-polluter", &json!({})).await;
    assert_eq!(status, 200, "{body}");
    neighbour_is_fine(&server).await;

    let (status, body) = server.post("/tools/tamper-globals", &json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["before"], "object");
    assert_eq!(
        body["after"], "object",
        "ctx members cannot be replaced: {body}"
    );
    assert_eq!(body["logType"], "function", "{body}");
    let (status, body) = server.post("/tools/tamper-globals", &json!({})).await;
    assert_eq!(
        status, 200,
        "the tampering endpoint itself still works: {body}"
    );
    neighbour_is_fine(&server).await;
}

#[tokio::test]
async fn raw_ops_and_other_modules_are_unreachable() {
    let (server, _f) = hostile_server(
        &[
            ("reach-ops", "reach-ops.js", all()),
            ("dynamic-import", "dynamic-import.js", all()),
        ],
        false,
    )
    .await;
    let (status, body) = server.post("/tools/reach-ops", &json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["deno"], "undefined", "{body}");
    assert_eq!(body["core"], "threw", "{body}");
    assert_eq!(body["opsKeys"], "threw", "{body}");
    assert_eq!(body["viaFunction"], "undefined", "{body}");
    assert_eq!(body["viaConstructor"], "undefined", "{body}");
    assert_eq!(body["suspicious"], json!([]), "{body}");

    let (status, body) = server.post("/tools/dynamic-import", &json!({})).await;
    assert_eq!(status, 200, "{body}");
    for (spec, verdict) in body.as_object().unwrap() {
        assert_eq!(verdict, "refused", "import({spec})");
    }
    neighbour_is_fine(&server).await;
}

#[tokio::test]
async fn capabilities_not_granted_are_denied() {
    let (server, _f) = hostile_server(
        &[
            ("probe-none", "capability-probe.js", none()),
            ("probe-all", "capability-probe.js", all()),
        ],
        false,
    )
    .await;
    let (status, body) = server.post("/tools/probe-none", &json!({})).await;
    assert_eq!(status, 200, "{body}");
    for cap in ["kv", "files", "httpGetJson", "fetch"] {
        assert_eq!(body[cap], "capability_denied", "{cap}: {body}");
    }
    // Without `logs`, `ctx.log` does nothing rather than throw (README, "JavaScript handlers").
    assert_eq!(body["logs"], "ok", "{body}");
    let (status, body) = server.post("/tools/probe-all", &json!({})).await;
    assert_eq!(status, 200, "{body}");
    for cap in ["kv", "files", "logs"] {
        assert_eq!(body[cap], "ok", "{cap}: {body}");
    }
    assert_ne!(body["httpGetJson"], "capability_denied", "{body}");
    assert_eq!(body["fetch"], "host_not_allowed", "{body}");
}

#[tokio::test]
async fn http_get_json_refuses_internal_addresses() {
    let (server, _f) = hostile_server(&[("http-probe", "http-probe.js", all())], false).await;
    for url in [
        "http://127.0.0.1:1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://0.0.0.0/",
        "http://2130706433/",
        "http://0x7f000001/",
        "http://10.0.0.1/",
        "http://[::ffff:127.0.0.1]/",
        "http://localhost/",
    ] {
        let (status, body) = server.post("/tools/http-probe", &json!({"url": url})).await;
        assert_eq!(status, 200, "{url}: {body}");
        assert_eq!(body["fetched"], false, "{url}: {body}");
        assert_eq!(body["code"], "ssrf_refused", "{url}: {body}");
    }
    neighbour_is_fine(&server).await;
}

#[tokio::test]
async fn http_get_json_rechecks_redirects() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let peer = listener.local_addr().unwrap();
    let app = axum::Router::new()
        .route(
            "/data",
            axum::routing::get(|| async { axum::Json(json!({"hello": "world"})) }),
        )
        .route(
            "/to-metadata",
            axum::routing::get(|| async {
                axum::response::Redirect::temporary("http://169.254.169.254/latest/meta-data/")
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let (server, _f) = hostile_server(&[("http-probe", "http-probe.js", all())], true).await;
    let (_, body) = server
        .post(
            "/tools/http-probe",
            &json!({"url": format!("http://{peer}/data")}),
        )
        .await;
    assert_eq!(
        body,
        json!({"fetched": true, "body": {"hello": "world"}}),
        "loopback works under the dev flag"
    );
    let (_, body) = server
        .post(
            "/tools/http-probe",
            &json!({"url": format!("http://{peer}/to-metadata")}),
        )
        .await;
    assert_eq!(body["fetched"], false, "{body}");
    assert_eq!(body["code"], "ssrf_refused", "{body}");
}

#[tokio::test]
async fn thrown_errors_show_only_the_message() {
    let (server, _f) = hostile_server(&[("http-probe", "http-probe.js", none())], false).await;
    // Without the capability the probe's own catch sees capability_denied…
    let (_, body) = server
        .post("/tools/http-probe", &json!({"url": "https://example.com"}))
        .await;
    assert_eq!(body["code"], "capability_denied", "{body}");
    // …and a malformed call through the catalog endpoint (JS not found) is an input error.
    let (status, body) = server.post("/tools/no-such", &json!({})).await;
    assert_error(status, &body, 404, "endpoint_not_found");
}

/// JavaScript runs in a worker process, not in the server: killing it while a call runs
/// costs that call a clean 500, the server stays up, and the next calls get new workers.
#[tokio::test]
async fn a_killed_worker_costs_only_the_calls_it_held() {
    let (server, _f) =
        hostile_server(&[("infinite-loop", "infinite-loop.js", none())], false).await;
    neighbour_is_fine(&server).await;
    let before = server.app.runtime.pool().stats().await;
    assert_eq!(before.worker_pids.len(), 1, "{before:?}");
    assert!(!before.worker_pids.contains(&std::process::id()));

    let held = tokio::spawn({
        let client = server.client.clone();
        let url = server.url("/tools/infinite-loop");
        async move { client.post(url).json(&json!({})).send().await.unwrap() }
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    for pid in &before.worker_pids {
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
    }
    let (status, body) = crate::util::read(held.await.unwrap()).await;
    assert_eq!(status, 500, "{body}");
    assert_error(status, &body, 500, "internal_error");

    neighbour_is_fine(&server).await;
    let after = server.app.runtime.pool().stats().await;
    assert!(after.worker_restarts >= 1, "{after:?}");
    assert!(after
        .worker_pids
        .iter()
        .all(|p| !before.worker_pids.contains(p)));
    let metrics = server.text("/metrics").await;
    assert!(
        metrics.contains("toolhost_sandbox_worker_processes "),
        "{metrics}"
    );
    assert!(
        metrics.contains("toolhost_sandbox_worker_restarts_total "),
        "{metrics}"
    );
    // The builder whose call was running goes to the quarantine worker.
    assert!(
        metrics.contains("toolhost_sandbox_quarantined_builders 1\n"),
        "{metrics}"
    );
    // ... not the heavy worker: its call never ended to report a burst.
    assert!(
        metrics.contains("toolhost_sandbox_heavy_builders 0\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("toolhost_sandbox_worker_recycles_total 0"),
        "{metrics}"
    );
}

/// The web platform's hostile cases over HTTP: timers left behind never fire in the next call,
/// an interval storm ends with its call, and an endless stream or a pile of Blobs is answered
/// 5xx on time while the neighbour keeps answering.
#[tokio::test]
async fn timers_streams_and_blobs_stay_inside_their_call() {
    let (server, _f) = hostile_server(
        &[
            ("timer-outlives-call", "timer-outlives-call.js", none()),
            ("interval-storm", "interval-storm.js", none()),
            ("huge-stream", "huge-stream.js", none()),
        ],
        false,
    )
    .await;
    for _ in 0..2 {
        let (status, body) = server
            .post("/tools/timer-outlives-call", &json!({"phase": "arm"}))
            .await;
        assert_eq!(status, 200, "{body}");
        tokio::time::sleep(Duration::from_millis(50)).await;
        let (status, body) = server.post("/tools/timer-outlives-call", &json!({})).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body, json!({"leaked": null}));
    }
    neighbour_is_fine(&server).await;

    let (status, body) = server
        .post("/tools/interval-storm", &json!({"wait": true}))
        .await;
    assert_error(status, &body, 504, "timeout");
    neighbour_is_fine(&server).await;
    // The storm's builder lost an isolate: its thread now yields the cores, and on a saturated
    // machine (other suites running) a call can pass the 500 ms limit. Each call must still
    // answer, in a few tries.
    for _ in 0..2 {
        let mut answers = Vec::new();
        for _ in 0..3 {
            let (status, body) = server.post("/tools/interval-storm", &json!({})).await;
            if status == 200 {
                assert_eq!(body, json!({"ticking": true}));
                break;
            }
            assert_error(status, &body, 504, "timeout");
            answers.push(body);
        }
        assert!(answers.len() < 3, "{answers:?}");
    }

    // As with the memory bomb above, the time limit may stop the stream before the heap limit
    // on a loaded machine; never a 200.
    for (kind, codes) in [
        ("stream", &["resource_limit", "timeout"][..]),
        ("blob", &["handler_error", "timeout"][..]),
    ] {
        let started = std::time::Instant::now();
        let (status, body) = server
            .post("/tools/huge-stream", &json!({"kind": kind}))
            .await;
        assert_eq!(status.as_u16() / 100, 5, "{kind}: {body}");
        let code = body["error"]["code"].as_str().unwrap_or_default();
        assert!(codes.contains(&code), "{kind}: {body}");
        assert!(started.elapsed() < Duration::from_secs(10), "{kind}");
        neighbour_is_fine(&server).await;
    }
}
