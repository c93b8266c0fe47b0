//! `POST /ai/builders/drafts/run`: a builder test-runs a module before publishing it. The run
//! answers what a call would (status, body, logs, an error at its line), under a call's time
//! limit, with no capability but `logs`: a draft cannot reach any endpoint's kv, files or
//! secrets, and nothing it does is stored.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{assert_compile_error_hinting, assert_error, js_endpoint, As, TestServer};

const RUN: &str = "/ai/builders/drafts/run";

async fn run(server: &TestServer, who: As<'_>, body: &Value) -> (reqwest::StatusCode, Value) {
    server.call("POST", RUN, who, Some(body)).await
}

#[tokio::test]
async fn a_draft_answers_with_its_result_logs_and_errors_at_their_line() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Drafter").await;
    let who = As::Builder(&key);

    // A result, the handler's own status and headers, its log lines and env.
    let source = "export default async function (req, ctx) {\n  console.log('got', req.input.text);\n  ctx.log.warn('slug', req.endpoint.slug);\n  return ctx.respond(201, { upper: req.input.text.toUpperCase(), mode: ctx.env.MODE }, { 'x-draft': 'yes' });\n}";
    let (status, body) = run(
        &server,
        who,
        &json!({"source": source, "input": {"text": "hi"}, "env": {"MODE": "fast"}, "slug": "my-tool"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let ran = &body["run"];
    assert_eq!(ran["status"], 201, "{body}");
    assert_eq!(ran["body"], json!({"upper": "HI", "mode": "fast"}));
    assert_eq!(ran["headers"]["x-draft"], "yes");
    let lines: Vec<(&str, &str)> = ran["logs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["level"].as_str().unwrap(), l["message"].as_str().unwrap()))
        .collect();
    assert_eq!(lines, [("info", "got hi"), ("warn", "slug my-tool")]);
    assert!(ran["durationMs"].is_u64());
    assert!(ran.get("error").is_none(), "{body}");

    // A throw at run time: the status a call would get, the error at its line and column.
    let thrower = "export default async function (req) {\n  const x = req.input.missing;\n  return x.field;\n}";
    let (status, body) = run(&server, who, &json!({"source": thrower})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["run"]["status"], 500);
    assert_eq!(body["run"]["body"], Value::Null);
    let error = &body["run"]["error"];
    assert_eq!(error["code"], "handler_error", "{body}");
    assert_eq!(error["line"], 3, "{body}");
    assert!(error["column"].as_u64().unwrap() > 1, "{body}");
    assert!(
        error["stack"][0].as_str().unwrap().contains(":3:"),
        "{body}"
    );

    // A module that does not load is refused as at publish, at its line.
    let broken = "export default async function (req) {\n  return { a: 1 ;\n}";
    let (status, body) = run(&server, who, &json!({"source": broken})).await;
    assert_error(status, &body, 422, "compile_error");
    assert_eq!(body["error"]["details"]["field"], "source");
    assert_eq!(body["error"]["details"]["line"], 2, "{body}");

    // Every field error at once, as create answers them.
    let (status, body) = run(
        &server,
        who,
        &json!({"source": "", "env": {"1BAD": "x"}, "slug": "No Slug"}),
    )
    .await;
    assert_error(status, &body, 422, "invalid_field");
    let pointers: Vec<&str> = body["error"]["details"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["pointer"].as_str().unwrap())
        .collect();
    assert_eq!(pointers, ["/source", "/env/1BAD", "/slug"], "{body}");
    let (status, body) = run(&server, who, &json!({"source": "x", "capabilities": {}})).await;
    assert_error(status, &body, 422, "invalid_body");

    // Nothing was published.
    let (_, mine) = server
        .call("GET", "/ai/builders/endpoints", who, None)
        .await;
    assert_eq!(mine["endpoints"], json!([]), "{mine}");
}

#[tokio::test]
async fn only_builders_run_drafts() {
    let server = TestServer::start().await;
    let body = json!({"source": "export default () => 1"});
    let (status, answer) = run(&server, As::Nobody, &body).await;
    assert_error(status, &answer, 401, "unauthorized");
    let (status, answer) = run(&server, As::Builder("thb_not-a-key"), &body).await;
    assert_eq!(status, 401, "{answer}");
    // The admin token is not a builder key.
    let (status, answer) = run(&server, As::Admin, &body).await;
    assert_eq!(status, 401, "{answer}");
}

#[tokio::test]
async fn a_runaway_draft_is_stopped_by_a_calls_limits() {
    let server = TestServer::start_with(|c| {
        // Long enough for the cold start every draft makes on a loaded machine (the budget
        // includes loading the module), short enough for a loop.
        c.runtime.pool.default_limits.timeout = Duration::from_secs(2);
        c.runtime.pool.default_limits.heap_bytes = 32 << 20;
    })
    .await;
    let (_, key) = server.builder("Looper").await;
    let started = Instant::now();
    let (status, body) = run(
        &server,
        As::Builder(&key),
        &json!({"source": "export default async function () { for (;;) {} }"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["run"]["status"], 504, "{body}");
    assert_eq!(body["run"]["error"]["code"], "timeout", "{body}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // Memory: the heap limit ends it.
    let hog = "export default async function () { const a = []; for (;;) a.push(new Array(100000).fill('x')); }";
    let (status, body) = run(&server, As::Builder(&key), &json!({"source": hog})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["run"]["status"], 500, "{body}");
    assert_eq!(body["run"]["error"]["code"], "resource_limit", "{body}");
    // The pool is fine afterwards.
    let (status, body) = run(
        &server,
        As::Builder(&key),
        &json!({"source": "export default async function () { return 7; }"}),
    )
    .await;
    assert_eq!(
        (status.as_u16(), &body["run"]["body"]),
        (200, &json!(7)),
        "{body}"
    );
}

#[tokio::test]
async fn a_draft_cannot_reach_an_endpoints_kv_files_secrets_or_the_network() {
    let server = TestServer::start().await;
    // A published endpoint with kv, files, env and a secret, all granted.
    let (key, _) = server.builder_with("Owner", &js_endpoint("vault")).await;
    server
        .grant("vault", json!({"kv": true, "httpGetJson": true}))
        .await;
    let (status, body) = server
        .call(
            "POST",
            "/ai/endpoints/vault/secrets",
            As::Builder(&key),
            Some(&json!({"set": {"API_KEY": "sv-draft-must-not-see"}})),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    // The same owner's draft, claiming to be that endpoint, reaches none of it: its kv and
    // files are a scratch of its own, empty at the start; the network is refused.
    let scratch = "export default async function (req, ctx) { \
        const before = await ctx.kv.get('k'); await ctx.kv.set('k', 'mine'); \
        await ctx.files.write('notes.txt', 'draft'); \
        return { before, after: await ctx.kv.get('k'), theirs: await ctx.files.read('data/stopwords.txt'), \
                 files: (await ctx.files.list()).map((f) => f.path ?? f) }; }";
    for _ in 0..2 {
        let (status, body) = run(
            &server,
            As::Builder(&key),
            &json!({"source": scratch, "slug": "vault"}),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            body["run"]["body"],
            json!({"before": null, "after": "mine", "theirs": null, "files": ["notes.txt"]}),
            "a scratch of its own, new each run: {body}"
        );
    }
    let (status, file) = server
        .call_text(
            "GET",
            "/ai/endpoints/vault/files?path=notes.txt",
            As::Builder(&key),
            None,
        )
        .await;
    assert_eq!(status, 404, "the endpoint's files are untouched: {file}");
    let probes = [
        (
            "httpGetJson",
            "await ctx.httpGetJson('https://example.com/')",
        ),
        ("fetch", "await fetch('https://example.com/')"),
    ];
    for (what, probe) in probes {
        let source =
            format!("export default async function (req, ctx) {{ return {{ got: {probe} }}; }}");
        let (status, body) = run(
            &server,
            As::Builder(&key),
            &json!({"source": source, "slug": "vault"}),
        )
        .await;
        assert_eq!(status, 200, "{what}: {body}");
        assert_eq!(body["run"]["status"], 500, "{what}: {body}");
        assert_eq!(
            body["run"]["error"]["code"], "capability_denied",
            "{what}: {body}"
        );
    }
    let source = "export default async function (req, ctx) { return { env: ctx.env }; }";
    let (status, text) = server
        .call_text(
            "POST",
            RUN,
            As::Builder(&key),
            Some(&json!({"source": source, "slug": "vault"})),
        )
        .await;
    assert_eq!(status, 200, "{text}");
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["run"]["body"], json!({"env": {}}), "{text}");
    assert!(!text.contains("sv-draft-must-not-see"));

    // And it left nothing behind: the endpoint has no invocations.
    assert_eq!(server.handler_runs("vault").await, 0);
}

#[tokio::test]
async fn each_draft_runs_in_a_fresh_isolate() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Fresh").await;
    // The same source twice, and under the same label: nothing a run leaves in its globals is
    // seen by the next one.
    let source = "export default async function () { globalThis.runs = (globalThis.runs || 0) + 1; return globalThis.runs; }";
    for _ in 0..2 {
        let (status, body) = run(
            &server,
            As::Builder(&key),
            &json!({"source": source, "slug": "same-label"}),
        )
        .await;
        assert_eq!(
            (status.as_u16(), &body["run"]["body"]),
            (200, &json!(1)),
            "{body}"
        );
    }
}

#[tokio::test]
async fn draft_runs_spend_anonymous_write_tokens() {
    let server = TestServer::start_with(|c| {
        c.limits.anonymous_writes = Some(toolhost::config::RateLimit {
            per_minute: 1,
            burst: 2,
        });
    })
    .await;
    let (_, key) = server.builder("Busy").await;
    let body = json!({"source": "export default () => 1"});
    for _ in 0..2 {
        let (status, answer) = run(&server, As::Builder(&key), &body).await;
        assert_eq!(status, 200, "{answer}");
    }
    let (status, answer) = run(&server, As::Builder(&key), &body).await;
    assert_error(status, &answer, 429, "rate_limited");
}

/// A TypeScript draft (`sourceLanguage: typescript`) is transpiled as at publish: it runs, and
/// its syntax and run-time errors point at the TypeScript lines.
#[tokio::test]
async fn a_typescript_draft_runs_and_its_errors_point_at_the_typescript() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Typed drafter").await;
    let who = As::Builder(&key);

    let typed = "interface In { text: string }\n\nexport default async function (req: { input: In }) {\n  const text: string = req.input.text;\n  return { upper: text.toUpperCase() as string };\n}";
    let (status, body) = run(
        &server,
        who,
        &json!({"source": typed, "sourceLanguage": "typescript", "input": {"text": "ts"}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["run"]["body"], json!({"upper": "TS"}), "{body}");

    // The same source sent as JavaScript is refused, with the hint to say it is TypeScript.
    let (status, body) = run(&server, who, &json!({"source": typed})).await;
    assert_compile_error_hinting(status, &body, "sourceLanguage");

    // A syntax error at the TypeScript line.
    let broken = "type T = { a: number };\n\nexport default (req: T) => {\n  return { a: 1 ;\n};";
    let (status, body) = run(
        &server,
        who,
        &json!({"source": broken, "sourceLanguage": "typescript"}),
    )
    .await;
    assert_error(status, &body, 422, "compile_error");
    assert_eq!(body["error"]["details"]["line"], 4, "{body}");

    // A throw at run time, at its TypeScript line (types and blank lines come before it).
    let thrower = "type Input = { missing?: { field: number } };\n\n\nexport default async function (req: { input: Input }): Promise<number> {\n  const x = req.input.missing as { field: number };\n  return x.field;\n}";
    let (status, body) = run(
        &server,
        who,
        &json!({"source": thrower, "sourceLanguage": "typescript"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["run"]["error"]["code"], "handler_error", "{body}");
    assert_eq!(body["run"]["error"]["line"], 6, "{body}");
}

/// A builder flooding draft runs with scratch writes is held to its quotas: each scratch to an
/// endpoint's, all its drafts and endpoints together to the builder's. Each scratch is wiped
/// after its run with its charge given back, so the flood leaves nothing in the store and the
/// builder's own endpoint can use its full quota after.
#[tokio::test]
async fn draft_scratch_floods_are_held_to_quotas_and_leave_nothing() {
    let server = TestServer::start_with(|c| {
        c.runtime.quotas.kv_keys = 40;
        c.runtime.quotas.builder_kv_keys = 60;
    })
    .await;
    let writer = |keys: u32| {
        format!(
            "export default async function (req, ctx) {{ let written = 0, refused = null; \
             for (let i = 0; i < {keys}; i++) {{ \
               try {{ await ctx.kv.set('k' + i, 'x'.repeat(200)); written++; }} \
               catch (e) {{ refused = String(e.message || e); break; }} }} \
             await new Promise((r) => setTimeout(r, 300)); return {{ written, refused }}; }}"
        )
    };
    let create = json!({
        "slug": "keeper", "title": "Keeper", "description": "Writes its keys.", "priceUsd": 0,
        "source": writer(40), "capabilities": {"kv": true}, "safetyAttestation": {"accepted": true},
    });
    let (builder, key) = server.builder("Flooder").await;
    server.create(As::Builder(&key), &create).await;
    server.grant("keeper", json!({"kv": true})).await;

    // Four drafts at once, each trying to write twice its scratch's quota.
    let runs = futures::future::join_all((0..4).map(|_| {
        let body = json!({"source": writer(80)});
        let server = &server;
        let key = &key;
        async move { run(server, As::Builder(key), &body).await }
    }))
    .await;
    let mut total = 0;
    for (status, body) in &runs {
        assert_eq!(*status, 200, "{body}");
        let answer = &body["run"]["body"];
        let written = answer["written"].as_u64().unwrap();
        assert!(
            written <= 40,
            "one scratch over an endpoint's quota: {body}"
        );
        assert!(
            answer["refused"]
                .as_str()
                .unwrap_or_default()
                .contains("quota"),
            "{body}"
        );
        total += written;
    }
    assert!(total >= 40, "the drafts wrote nothing: {runs:?}");

    // Nothing of the drafts is left, and their charges are given back: the builder's totals
    // count nothing (a scratch's entries go with the usage record that counts them), and its
    // endpoint writes its full quota.
    let store = &server.app.store;
    let left = store.builder_usage(toolhost::store::HandlerSpace::Kv, &builder);
    let left = left.await.unwrap();
    assert_eq!(
        left,
        None,
        "the drafts' totals: {:?}",
        left.as_deref().map(String::from_utf8_lossy)
    );
    let (status, body) = server.post("/tools/keeper", &json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"written": 40, "refused": null}), "{body}");
}
