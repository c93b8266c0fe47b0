//! Publish-time checks: create and PATCH load a JS source in the sandbox before storing it;
//! a source that cannot run is refused with 422 `compile_error` at its line, and nothing is
//! stored. Hostile modules are stopped by a call's limits while neighbours keep answering.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{assert_error, As, TestServer};

fn js(slug: &str, source: &str) -> Value {
    json!({
        "slug": slug, "title": "Checked", "description": "A module under check.",
        "priceUsd": 0, "source": source, "safetyAttestation": {"accepted": true},
    })
}

const GOOD: &str = "export default async function (req) { return { echo: req.input }; }";

/// Creates `slug` from `source` as `who`, expecting 422 `compile_error`; returns its details
/// after checking the slug was not stored.
async fn refused(server: &TestServer, who: As<'_>, slug: &str, source: &str) -> Value {
    let (status, body) = server
        .call("POST", "/ai/endpoints/create", who, Some(&js(slug, source)))
        .await;
    assert_error(status, &body, 422, "compile_error");
    let (status, _) = server.get(&format!("/ai/endpoints/{slug}")).await;
    assert_eq!(status, 404, "{slug}: a refused create stores nothing");
    body["error"]["details"].clone()
}

/// A source refused at create: slug, source, line, column (0: none), the line, a word of the
/// hint.
type Refusal = (
    &'static str,
    &'static str,
    u32,
    u32,
    &'static str,
    Option<&'static str>,
);

#[tokio::test]
async fn create_refuses_each_kind_of_source_that_cannot_run() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Checker").await;
    let who = As::Builder(&key);
    let cases: [Refusal; 8] = [
        (
            "double-json",
            "\"export default async function (req) { return 1; }\"",
            1,
            1,
            "\"export default async function (req) { return 1; }\"",
            Some("JSON string"),
        ),
        (
            "typescript",
            "interface In { text: string }\nexport default async function (req: In) { return 1; }",
            1,
            1,
            "interface In { text: string }",
            Some("TypeScript"),
        ),
        (
            "workers-without-fetch",
            "// a Worker\nexport default {\n  async handle(request) { return new Response('hi'); },\n};",
            2,
            1,
            "export default {",
            Some("fetch(request, env, ctx)"),
        ),
        (
            "common-js",
            "const x = 1;\nmodule.exports = async function () { return x; };",
            2,
            1,
            "module.exports = async function () { return x; };",
            Some("CommonJS"),
        ),
        (
            "with-import",
            "import _ from 'lodash';\nexport default async () => _.noop();",
            1,
            1,
            "import _ from 'lodash';",
            Some("imports nothing"),
        ),
        (
            "syntax-error",
            "const a = 1;\nexport default function ( {",
            2,
            28,
            "export default function ( {",
            None,
        ),
        (
            "throws-at-load",
            "const config = null;\nconst mode = config.mode;\nexport default () => mode;",
            2,
            21,
            "const mode = config.mode;",
            None,
        ),
        (
            "no-default",
            "export async function handler() { return 1; }",
            0,
            0,
            "",
            Some("default export"),
        ),
    ];
    for (slug, source, line, column, text, hint) in cases {
        let details = refused(&server, who, slug, source).await;
        assert_eq!(details["field"], "source", "{slug}: {details}");
        if line > 0 {
            assert_eq!(details["line"], line, "{slug}: {details}");
            assert_eq!(details["column"], column, "{slug}: {details}");
            assert_eq!(details["sourceLine"], text, "{slug}: {details}");
        }
        match hint {
            Some(word) => assert!(
                details["hint"].as_str().unwrap_or_default().contains(word),
                "{slug}: {details}"
            ),
            None => assert!(details.get("hint").is_none(), "{slug}: {details}"),
        }
    }
    // The admin's code is checked alike; a good module passes and answers.
    refused(&server, As::Admin, "admin-broken", "export default 42;").await;
    server.create(who, &js("checked-ok", GOOD)).await;
    let (status, body) = server.post("/tools/checked-ok", &json!({"a": 1})).await;
    assert_eq!(status, 200, "{body}");
    // A Workers-style object with a `fetch` method is a handler, not a mistake.
    let workers = "export default {\n  async fetch(request) { return Response.json(await request.json()); },\n};";
    server.create(who, &js("checked-workers", workers)).await;
    let (status, body) = server
        .post("/tools/checked-workers", &json!({"a": 1}))
        .await;
    assert_eq!((status.as_u16(), body), (200, json!({"a": 1})));
}

#[tokio::test]
async fn patch_checks_a_new_source_and_keeps_the_old_one_on_refusal() {
    let server = TestServer::start().await;
    let (key, created) = server.builder_with("Patcher", &js("patched", GOOD)).await;
    let revision = created["manage"]["revision"].clone();
    let (status, body) = server
        .call(
            "PATCH",
            "/ai/endpoints/patched",
            As::Builder(&key),
            Some(&json!({"source": "export default {\n  handle() {}\n}", "title": "Changed"})),
        )
        .await;
    assert_error(status, &body, 422, "compile_error");
    assert_eq!(body["error"]["details"]["line"], 1, "{body}");
    let (_, now) = server
        .call("GET", "/ai/endpoints/patched", As::Builder(&key), None)
        .await;
    assert_eq!(now["manage"]["source"], GOOD, "{now}");
    assert_eq!(now["manage"]["revision"], revision, "{now}");
    assert_eq!(now["endpoint"]["title"], "Checked", "{now}");
    // A PATCH that leaves the source alone does not load it again; a good one is stored.
    server
        .patch(As::Builder(&key), "patched", &json!({"title": "Renamed"}))
        .await;
    let fixed = "export default async () => ({ fixed: true });";
    server
        .patch(As::Builder(&key), "patched", &json!({"source": fixed}))
        .await;
    let (status, body) = server.post("/tools/patched", &json!({})).await;
    assert_eq!((status.as_u16(), body), (200, json!({"fixed": true})));
}

#[tokio::test]
async fn hostile_modules_are_stopped_by_a_calls_limits_and_neighbours_answer() {
    let server = TestServer::start_with(|c| {
        c.runtime.pool.default_limits.timeout = Duration::from_secs(2);
        c.runtime.pool.default_limits.heap_bytes = 32 << 20;
    })
    .await;
    let (_, key) = server.builder("Hostile").await;
    let who = As::Builder(&key);
    server.create(who, &js("neighbour", GOOD)).await;
    // Calls of a neighbour during the checks all answer.
    let neighbour = server.neighbour_answers("/tools/neighbour", json!({"n": 1}));
    let hostile = async {
        let started = Instant::now();
        let details = refused(
            &server,
            who,
            "spins",
            "for (;;) {}\nexport default () => 1;",
        )
        .await;
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "{:?}",
            started.elapsed()
        );
        assert!(details.get("line").is_none(), "{details}");
        let (status, body) = server
            .call(
                "POST",
                "/ai/endpoints/create",
                who,
                Some(&js(
                    "hoards",
                    "const keep = [];\nfor (;;) keep.push(new Array(1e5).fill(7));\nexport default () => 1;",
                )),
            )
            .await;
        assert_error(status, &body, 422, "compile_error");
        assert!(
            body["error"]["message"].as_str().unwrap().contains("heap"),
            "{body}"
        );
        // Near the 256 KiB source cap, nested as deep as it goes: the parser's stack limit.
        let deep = format!(
            "export default () => {}1{};",
            "[".repeat(120_000),
            "]".repeat(120_000)
        );
        refused(&server, who, "nested", &deep).await;
        // A large module that is fine passes.
        let big = format!(
            "const data = {};\n{GOOD}",
            json!(vec!["x".repeat(100); 2000])
        );
        server.create(who, &js("large-ok", &big)).await;
    };
    let (answered, ()) = tokio::join!(neighbour, hostile);
    assert_eq!(answered, 20);
    let (status, _) = server.post("/tools/large-ok", &json!({})).await;
    assert_eq!(status, 200);
}

const SECRET: &str = "sk-diagnostics-5e1d9c04b7";

/// Throws at line 4 (the `new` at column 7), from `check`, called by the default export
/// (line 7). (A `\` line continuation drops the next line's indentation.)
const THROWS_ITS_SECRET: &str = "const prefix = 'upstream refused key ';\n\
function check(env) {\n\
  if (env.MODE === 'strict')\n\
    throw new Error(prefix + env.API_KEY);\n\
}\n\
export default async function (req, ctx) {\n\
  check(ctx.env);\n\
  return { ok: true };\n\
}\n";

#[tokio::test]
async fn a_failed_call_shows_its_owner_why_and_where_with_secrets_redacted() {
    let server = TestServer::start().await;
    let mut body = js("leaky", THROWS_ITS_SECRET);
    body["env"] = json!({"MODE": "strict"});
    let (key, _) = server.builder_with("Diagnosed", &body).await;
    let owner = As::Builder(&key);
    let (status, _) = server
        .call(
            "POST",
            "/ai/endpoints/leaky/secrets",
            owner,
            Some(&json!({"set": {"API_KEY": SECRET}})),
        )
        .await;
    assert_eq!(status, 200);

    // The caller: today's code and message, without the secret, a position or a stack.
    let (status, text) = server
        .call_text("POST", "/tools/leaky", As::Nobody, Some(&json!({})))
        .await;
    assert_eq!(status, 500, "{text}");
    assert!(!text.contains(SECRET), "{text}");
    let answer: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        answer["error"]["message"],
        "handler error: upstream refused key [REDACTED]"
    );
    assert_eq!(answer["error"].as_object().unwrap().len(), 2, "{text}");
    assert!(
        !text.contains("handler.js") && !text.contains("stack"),
        "{text}"
    );

    // The owner's log entry: code, message, line, column and the handler's frames.
    let (status, text) = server
        .call_text("GET", "/ai/endpoints/leaky/logs", owner, None)
        .await;
    assert_eq!(status, 200);
    assert!(!text.contains(SECRET), "{text}");
    let logs: Value = serde_json::from_str(&text).unwrap();
    let error = &logs["entries"][0]["error"];
    assert_eq!(error["code"], "handler_error", "{logs}");
    assert_eq!(
        error["message"], "handler error: upstream refused key [REDACTED]",
        "{logs}"
    );
    assert_eq!(
        (error["line"].as_u64(), error["column"].as_u64()),
        (Some(4), Some(7)),
        "{logs}"
    );
    assert_eq!(
        error["stack"],
        json!(["at check (handler.js:4:7)", "at default (handler.js:7:1)"]),
        "{logs}"
    );

    // The owner's event carries the same error.
    let (status, text) = server
        .call_text(
            "GET",
            "/ai/builders/events?since=1h&endpointSlug=leaky",
            owner,
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert!(!text.contains(SECRET), "{text}");
    let feed: Value = serde_json::from_str(&text).unwrap();
    let failed = feed["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "invocation_failed")
        .unwrap_or_else(|| panic!("{feed}"));
    assert_eq!(failed["data"]["error"], *error, "{feed}");
    assert_eq!(failed["data"]["status"], 500, "{feed}");

    // A call that succeeds keeps no error.
    server
        .patch(owner, "leaky", &json!({"env": {"MODE": "lenient"}}))
        .await;
    let (status, _) = server.post("/tools/leaky", &json!({})).await;
    assert_eq!(status, 200);
    let (_, logs) = server
        .call("GET", "/ai/endpoints/leaky/logs", owner, None)
        .await;
    assert!(logs["entries"][0].get("error").is_none(), "{logs}");
}

/// The `pointer`s of a 422's `details.errors`, checking each names its field and has a message.
fn pointers(body: &Value) -> Vec<String> {
    let errors = body["error"]["details"]["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("{body}"));
    errors
        .iter()
        .map(|e| {
            assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{e}");
            assert!(e["code"].is_string() && e["field"].is_string(), "{e}");
            e["pointer"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[tokio::test]
async fn create_and_patch_report_every_field_error_in_one_answer() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Careless").await;
    let who = As::Builder(&key);
    // Wrong shapes: a string for a boolean, a string for a price, an unknown field.
    let mut body = js("shapes", GOOD);
    body["capabilities"] = json!({"kv": "httpGetJson"});
    body["priceUsd"] = json!("cheap");
    body["colour"] = json!("blue");
    let (status, answer) = server
        .call("POST", "/ai/endpoints/create", who, Some(&body))
        .await;
    assert_error(status, &answer, 422, "invalid_body");
    let mut found = pointers(&answer);
    found.sort();
    assert_eq!(
        found,
        ["/capabilities/kv", "/colour", "/priceUsd"],
        "{answer}"
    );
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(!message.contains("line 1 column"), "{answer}");

    // Wrong values: each field's check runs and reports.
    let mut body = js("X", GOOD);
    body["title"] = json!("");
    body["tags"] = json!(["ok", ""]);
    body["env"] = json!({"1BAD": "x"});
    body["allowedHosts"] = json!(["not a host"]);
    let (status, answer) = server
        .call("POST", "/ai/endpoints/create", who, Some(&body))
        .await;
    assert_error(status, &answer, 422, "invalid_field");
    assert_eq!(
        pointers(&answer),
        ["/slug", "/title", "/tags/1", "/env/1BAD", "/allowedHosts"],
        "{answer}"
    );
    assert_eq!(answer["error"]["details"]["field"], "slug", "{answer}");

    // PATCH alike, and nothing of a refused PATCH is stored.
    server.create(who, &js("careful", GOOD)).await;
    let patch = json!({"title": "", "description": "ok", "priceUsd": 0.0001, "tags": [""]});
    let (status, answer) = server
        .call("PATCH", "/ai/endpoints/careful", who, Some(&patch))
        .await;
    assert_error(status, &answer, 422, "invalid_field");
    assert_eq!(
        pointers(&answer),
        ["/title", "/priceUsd", "/tags/0"],
        "{answer}"
    );
    let (_, now) = server.get("/ai/endpoints/careful").await;
    assert_eq!(
        now["endpoint"]["description"], "A module under check.",
        "{now}"
    );
    let (status, answer) = server
        .call(
            "PATCH",
            "/ai/endpoints/careful",
            who,
            Some(&json!({"status": "sleeping", "tags": "one"})),
        )
        .await;
    assert_error(status, &answer, 422, "invalid_body");
    let mut found = pointers(&answer);
    found.sort();
    assert_eq!(found, ["/status", "/tags"], "{answer}");
}
