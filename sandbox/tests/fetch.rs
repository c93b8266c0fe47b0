//! `fetch` from inside real isolates, in both modes (threads of this process and worker
//! processes, whose requests cross the pipe and are checked again): the capability, the
//! request checks, the per-call caps, the streamed body and its cap, aborts, and the end of
//! the call cancelling what it left open. The host is the test's [`MemoryHost`]; the server's
//! SSRF guard and real HTTP are tested through the API suite (tests/api/fetch.rs).

mod util;

use sandbox::{Sandbox, SandboxError};
use serde_json::{json, Value};
use util::*;

async fn run(sandbox: &Sandbox, slug: &str, source: &str) -> Result<Value, SandboxError> {
    let code = granted(slug, source);
    sandbox
        .invoke(&code, request(json!({})))
        .await
        .result
        .map(|response| response.body)
}

/// Runs `source` with the capability and answers its body, or panics naming the mode.
async fn body_of(mode: &str, sandbox: &Sandbox, source: &str) -> Value {
    match run(sandbox, "fetcher", source).await {
        Ok(body) => body,
        Err(err) => panic!("{mode}: {err:?}"),
    }
}

/// Waits (1 s at most) for `done`: a worker's cancellations reach the host as frames of their
/// own, which may arrive just after the call's answer.
async fn eventually(mode: &str, what: &str, done: impl Fn() -> bool) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(1);
    while !done() {
        assert!(std::time::Instant::now() < until, "{mode}: {what}");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

async fn neighbour_ok(mode: &str, sandbox: &Sandbox) {
    let neighbour = endpoint("neighbour", ECHO);
    let report = sandbox.invoke(&neighbour, request(json!({ "n": 1 }))).await;
    assert_eq!(
        report.result.map(|r| r.body).ok(),
        Some(json!({ "echo": { "n": 1 } })),
        "{mode}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_the_capability_fetch_rejects_with_capability_denied() {
    let source = r#"export default async () => {
        try { await fetch("https://api.test/x"); return "sent"; }
        catch (e) { return { type: e.constructor.name, code: e.code, isTypeError: e instanceof TypeError }; }
    };"#;
    for (mode, sandbox, host) in both_modes(test_config()) {
        let mut code = granted("no-fetch", source);
        code.capabilities.fetch = false;
        let body = sandbox.invoke(&code, request(json!({}))).await.result;
        assert_eq!(
            body.map(|r| r.body).ok(),
            Some(json!({ "type": "TypeError", "code": "capability_denied", "isTypeError": true })),
            "{mode}"
        );
        assert!(host.fetches.lock().unwrap().is_empty(), "{mode}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_the_client_owns_are_refused_before_they_leave() {
    let source = r#"export default async () => {
        const codes = {};
        const attempt = async (name, f) => { try { await f(); codes[name] = "sent"; } catch (e) { codes[name] = e.code ?? e.name; } };
        await attempt("host", () => fetch("https://api.test/", { headers: { host: "evil.test" } }));
        await attempt("length", () => fetch("https://api.test/", { method: "POST", body: "x", headers: { "content-length": "100" } }));
        await attempt("te", () => fetch("https://api.test/", { headers: { "transfer-encoding": "chunked" } }));
        await attempt("connection", () => fetch("https://api.test/", { headers: { connection: "upgrade" } }));
        await attempt("proxy", () => fetch("https://api.test/", { headers: { "proxy-authorization": "x" } }));
        await attempt("credentials", () => fetch("https://user:pw@api.test/"));
        await attempt("scheme", () => fetch("file:///etc/passwd"));
        await attempt("connect", () => fetch("https://api.test/", { method: "CONNECT" }));
        await attempt("private", () => fetch("http://127.0.0.1/"));
        return codes;
    };"#;
    for (mode, sandbox, host) in both_modes(test_config()) {
        let body = body_of(mode, &sandbox, source).await;
        for name in ["host", "length", "te", "connection", "proxy", "credentials"] {
            assert_eq!(body[name], "invalid_argument", "{mode} {name}: {body}");
        }
        // deno_fetch's Request refuses these two itself.
        assert_eq!(body["scheme"], "invalid_argument", "{mode}: {body}");
        assert_eq!(body["connect"], "TypeError", "{mode}: {body}");
        assert_eq!(body["private"], "ssrf_refused", "{mode}: {body}");
        let sent = host.fetches.lock().unwrap();
        assert_eq!(
            sent.len(),
            1,
            "{mode}: only the private address reached the host"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn fetch_sends_any_method_headers_and_body_and_streams_the_response() {
    let source = r#"export default async () => {
        const posted = await fetch("https://api.test/echo", {
            method: "post", headers: { "x-key": "k1", "content-type": "application/json" },
            body: JSON.stringify({ a: 1 }),
        });
        const json = await posted.json();
        const text = await (await fetch("https://api.test/t", { method: "PUT", body: new URLSearchParams({ q: "1 2" }) })).text();
        const bytes = await (await fetch(new Request("https://api.test/b", { method: "PATCH", body: new Uint8Array([104, 105]) }))).arrayBuffer();
        const blob = await (await fetch("https://api.test/blob", { method: "POST", body: new Blob(["blob!"]) })).json();
        const streamed = await fetch("https://api.test/s");
        const reader = streamed.body.getReader();
        let chunks = 0, length = 0;
        for (;;) { const { done, value } = await reader.read(); if (done) break; chunks++; length += value.byteLength; }
        const manual = await fetch("https://moved.test/", { redirect: "manual" });
        let refused;
        try { await fetch("https://moved.test/", { redirect: "error" }); } catch (e) { refused = e instanceof TypeError; }
        return {
            status: posted.status, ok: posted.ok, type: posted.headers.get("content-type"),
            url: posted.url, json, text: JSON.parse(text).body, bytes: bytes.byteLength, blob: blob.body,
            chunks, length, manual: manual.status, refused,
        };
    };"#;
    for (mode, sandbox, host) in both_modes(test_config()) {
        let body = body_of(mode, &sandbox, source).await;
        assert_eq!(body["status"], 200, "{mode}: {body}");
        assert_eq!(body["ok"], true);
        assert_eq!(body["type"], "application/json");
        assert_eq!(body["url"], "https://api.test/echo");
        assert_eq!(body["json"]["method"], "POST", "{mode}: {body}");
        assert_eq!(body["json"]["body"], "{\"a\":1}");
        let headers = body["json"]["headers"].as_array().unwrap().clone();
        assert!(
            headers.contains(&json!(["x-key", "k1"])),
            "{mode}: {headers:?}"
        );
        assert!(
            headers.contains(&json!(["accept", "*/*"])),
            "{mode}: {headers:?}"
        );
        assert_eq!(body["text"], "q=1+2", "{mode}: {body}");
        assert!(body["bytes"].as_u64().unwrap() > 2);
        assert_eq!(body["blob"], "blob!");
        assert!(
            body["chunks"].as_u64().unwrap() > 1,
            "the body came in chunks: {body}"
        );
        assert!(body["length"].as_u64().unwrap() > 10);
        assert_eq!(body["manual"], 302);
        assert_eq!(body["refused"], true);
        let sent = host.fetches.lock().unwrap().clone();
        let methods: Vec<&str> = sent.iter().map(|(_, r)| r.method.as_str()).collect();
        assert_eq!(
            methods,
            ["POST", "PUT", "PATCH", "POST", "GET", "GET", "GET"],
            "{mode}"
        );
        assert_eq!(sent[2].1.body.as_deref(), Some(&b"hi"[..]));
        assert!(!sent[5].1.follow_redirects && sent[0].1.follow_redirects);
        assert!(sent.iter().all(
            |(slug, r)| slug == "fetcher" && r.timeout <= test_config().default_limits.timeout
        ));
        eventually(mode, "every body was released", || {
            host.bodies.lock().unwrap().is_empty()
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endless_response_errors_its_stream_at_the_cap() {
    let mut config = test_config();
    config.fetch.max_response_body_bytes = 256 * 1024;
    let source = r#"export default async () => {
        const response = await fetch("https://endless.test/");
        try { await response.text(); return "read it all"; }
        catch (e) { return { code: e.code, isTypeError: e instanceof TypeError }; }
    };"#;
    for (mode, sandbox, host) in both_modes(config.clone()) {
        let body = body_of(mode, &sandbox, source).await;
        assert_eq!(
            body,
            json!({ "code": "response_too_large", "isTypeError": true }),
            "{mode}"
        );
        eventually(mode, "the body was released", || {
            host.cancelled.lock().unwrap().len() == 1
        })
        .await;
        neighbour_ok(mode, &sandbox).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn fetches_of_a_call_are_capped_at_once_and_in_all() {
    let mut config = test_config();
    config.fetch.max_concurrent = 3;
    config.fetch.max_per_call = 4;
    let source = r#"export default async () => {
        const open = [];
        for (let i = 0; i < 3; i++) open.push(await fetch("https://api.test/" + i));
        let fourth;
        try { await fetch("https://api.test/4"); } catch (e) { fourth = e.code; }
        await open[0].text();
        await open[1].body.cancel();
        await fetch("https://api.test/5");
        let sixth;
        try { await fetch("https://api.test/6"); } catch (e) { sixth = e.code; }
        return { fourth, sixth };
    };"#;
    for (mode, sandbox, host) in both_modes(config.clone()) {
        let body = body_of(mode, &sandbox, source).await;
        assert_eq!(
            body,
            json!({ "fourth": "too_large", "sixth": "too_large" }),
            "{mode}"
        );
        assert_eq!(host.fetches.lock().unwrap().len(), 4, "{mode}");
        // The next call starts afresh, and the bodies the last one left open were released.
        let body = body_of(mode, &sandbox, source).await;
        assert_eq!(body["fourth"], "too_large", "{mode}");
        eventually(mode, "the bodies left open were released", || {
            host.bodies.lock().unwrap().is_empty()
        })
        .await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_end_of_a_call_and_an_abort_cancel_its_fetches() {
    let source = r#"export default async () => {
        const controller = new AbortController();
        const pending = fetch("https://hang.test/", { signal: controller.signal });
        setTimeout(() => controller.abort(), 20);
        let aborted;
        try { await pending; } catch (e) { aborted = e.name; }
        const reading = new AbortController();
        const response = await fetch("https://endless.test/", { signal: reading.signal });
        const reader = response.body.getReader();
        await reader.read();
        reading.abort();
        let mid;
        try { await reader.read(); } catch (e) { mid = e.name; }
        // Left open when the call returns.
        const left = await fetch("https://endless.test/");
        await left.body.getReader().read();
        return { aborted, mid };
    };"#;
    for (mode, sandbox, host) in both_modes(test_config()) {
        let body = body_of(mode, &sandbox, source).await;
        assert_eq!(
            body,
            json!({ "aborted": "AbortError", "mid": "AbortError" }),
            "{mode}"
        );
        eventually(
            mode,
            "the aborted body and the one left open were released",
            || host.cancelled.lock().unwrap().len() == 2 && host.bodies.lock().unwrap().is_empty(),
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fetch_that_never_answers_ends_with_the_calls_time_limit() {
    let source = r#"export default async (req) => {
        if (req.input.warm) return "warm";
        await fetch("https://hang.test/");
        return "answered";
    };"#;
    let code = granted("hanger", source);
    for (mode, sandbox, _host) in both_modes(test_config()) {
        let warm = sandbox
            .invoke(&code, request(json!({ "warm": true })))
            .await;
        assert!(warm.result.is_ok(), "{mode}: {warm:?}");
        let started = std::time::Instant::now();
        let result = sandbox.invoke(&code, request(json!({}))).await.result;
        assert!(
            matches!(result, Err(SandboxError::Timeout)),
            "{mode}: {result:?}"
        );
        let took = started.elapsed();
        assert!(took < std::time::Duration::from_secs(3), "{mode}: {took:?}");
        neighbour_ok(mode, &sandbox).await;
    }
}
