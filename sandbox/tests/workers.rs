//! Workers-style handlers (`export default { async fetch(request, env, ctx) { ... } }`) and
//! handlers that refuse a caller by throwing a 4xx `status`: what they get, how they answer,
//! and the hostile shapes of both (a fetch that never settles, thrown values whose getters
//! throw or never return, a huge thrown message).

mod util;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use sandbox::{Invocation, SandboxError};
use serde_json::{json, Value};
use util::*;

/// A call as the server builds it: visible headers and the tool's URL.
fn call(input: Value) -> Invocation {
    let mut request = request_value(input);
    request["headers"] = json!({
        "accept": "application/json",
        "user-agent": "agent/1.0",
        "x-request-id": "req-1",
    });
    request["url"] = json!("https://tools.example/tools/weather");
    invocation_of(&request)
}

#[tokio::test]
async fn fetch_gets_a_standard_request_env_and_ctx() {
    let mut code = granted(
        "workers",
        r#"export default {
            greeting: "hello",
            async fetch(request, env, ctx) {
                const input = await request.json();
                ctx.waitUntil(new Promise((resolve) => setTimeout(resolve, 30))
                    .then(() => ctx.kv.set("after", input.city)));
                return Response.json({
                    input,
                    method: request.method,
                    url: request.url,
                    contentType: request.headers.get("content-type"),
                    agent: request.headers.get("user-agent"),
                    requestId: request.headers.get("x-request-id"),
                    cookie: request.headers.get("cookie"),
                    isRequest: request instanceof Request,
                    env: { ...env },
                    sameEnv: env === ctx.env,
                    kv: typeof ctx.kv.get,
                    files: typeof ctx.files.read,
                    log: typeof ctx.log.info,
                    respond: typeof ctx.respond,
                    greeting: this.greeting,
                    frozen: Object.isFrozen(ctx),
                    ctxKeys: Object.keys(ctx).sort(),
                }, { status: 201, headers: { "x-city": input.city } });
            },
        };"#,
    );
    code.env = BTreeMap::from([("API_BASE".to_owned(), "https://api.example".to_owned())]);
    for (mode, sandbox, host) in both_modes(test_config()) {
        let report = sandbox.invoke(&code, call(json!({"city": "Oslo"}))).await;
        let response = ok(report);
        assert_eq!(response.status, 201, "{mode}");
        assert_eq!(
            response.headers,
            vec![("x-city".to_owned(), "Oslo".to_owned())]
        );
        assert_eq!(
            response.body,
            json!({
                "input": {"city": "Oslo"},
                "method": "POST",
                "url": "https://tools.example/tools/weather",
                "contentType": "application/json",
                "agent": "agent/1.0",
                "requestId": "req-1",
                "cookie": null,
                "isRequest": true,
                "env": {"API_BASE": "https://api.example"},
                "sameEnv": true,
                "kv": "function",
                "files": "function",
                "log": "function",
                "respond": "function",
                "greeting": "hello",
                "frozen": true,
                "ctxKeys": ["charge", "env", "files", "httpGetJson", "kv", "log", "respond", "waitUntil"],
            }),
            "{mode}"
        );
        // ctx.waitUntil's work was done before the answer left.
        let kv = host.kv.lock().unwrap();
        assert!(
            kv.iter()
                .any(|((_, key), (value, _))| key == "after" && *value == json!("Oslo")),
            "{mode}: {kv:?}"
        );
    }
}

#[tokio::test]
async fn fetch_may_answer_any_status_or_a_plain_value_and_runs_on_every_call() {
    let (pool, _) = pool();
    let code = endpoint(
        "workers-status",
        r#"let calls = 0;
        export default {
            async fetch(request, env, ctx) {
                calls += 1;
                const { want } = await request.json();
                if (want === "plain") return { calls };
                if (want === "respond") return ctx.respond(202, { calls });
                return new Response(JSON.stringify({ calls }), { status: want });
            },
        };"#,
    );
    let answer = |want: Value| invoke(&pool, &code, json!({ "want": want }));
    let plain = ok(answer(json!("plain")).await);
    assert_eq!((plain.status, plain.body), (200, json!({"calls": 1})));
    let respond = ok(answer(json!("respond")).await);
    assert_eq!((respond.status, respond.body), (202, json!({"calls": 2})));
    for (n, status) in [(3, 404u16), (4, 503)] {
        let response = ok(answer(json!(status)).await);
        assert_eq!(
            (response.status, response.body),
            (status, json!({"calls": n}))
        );
    }
    // Without a `url` in `req` (not the server's call) the Request still has one.
    let code = endpoint(
        "workers-url",
        "export default { fetch: (request) => request.url };",
    );
    let mut without_url = request_value(json!(1));
    without_url.as_object_mut().unwrap().remove("url");
    let response = ok(pool.invoke(&code, invocation_of(&without_url)).await);
    assert_eq!(response.body, json!("http://localhost/"));
    assert_eq!(
        body(&pool, &code, json!(1)).await,
        json!("http://127.0.0.1/tools/test")
    );
}

/// The glue takes a Response's body and headers without reading them through the Headers
/// object or a stream when it can, and builds the Request from its parts: every shape
/// answers as the standard classes would.
#[tokio::test]
async fn responses_and_requests_of_every_shape_read_as_the_standard_classes_would() {
    let (pool, _) = pool();
    let code = endpoint(
        "workers-shapes",
        r#"export default {
            async fetch(request) {
                const { want } = await request.json();
                switch (want) {
                    case "url": return Response.json(request.url);
                    case "headers": {
                        const headers = new Headers({ "Content-Type": "application/json" });
                        headers.append("X-Twice", "1");
                        headers.append("x-twice", "2");
                        return new Response('{"b":2}', { headers });
                    }
                    case "bytes": return new Response(new TextEncoder().encode('{"c":3}'));
                    case "stream": return new Response(new Blob(['{"d":', "4}"]).stream());
                    case "empty": return new Response(null, { status: 404 });
                    case "read": {
                        const response = Response.json({ e: 5 });
                        await response.text();
                        return response;
                    }
                    case "not-json": return new Response("plain text");
                    case "late-header": {
                        const response = Response.json({ f: 6 });
                        response.headers.set("x-late", "1");
                        return response;
                    }
                    case "locked": {
                        const response = Response.json({ g: 7 });
                        response.body.getReader();
                        return response;
                    }
                    case "text": return new Response('{"h":8}');
                    case "request-headers": return Response.json([...request.headers]);
                }
            },
        };"#,
    );
    let answer_with = |want: &str, url: &str, headers: Value| {
        let mut request = request_value(json!({ "want": want }));
        request["url"] = json!(url);
        request["headers"] = headers;
        pool.invoke(&code, invocation_of(&request))
    };
    let answer = |want: &str, url: &str| answer_with(want, url, json!({}));
    let url = "https://tools.example/tools/shapes";
    // Each call's URL as the Request constructor normalizes it, not the last one's.
    for (given, normalized) in [
        (
            "HTTPS://Tools.EXAMPLE/tools/a b?q=1",
            "https://tools.example/tools/a%20b?q=1",
        ),
        (url, url),
        (
            "https://tools.example:443/x/../tools/c",
            "https://tools.example/tools/c",
        ),
    ] {
        assert_eq!(ok(answer("url", given).await).body, json!(normalized));
    }
    let headers = ok(answer("headers", url).await);
    assert_eq!(headers.body, json!({"b": 2}));
    assert_eq!(
        headers.headers,
        vec![("x-twice".to_owned(), "1, 2".to_owned())]
    );
    for (want, body) in [("bytes", json!({"c": 3})), ("stream", json!({"d": 4}))] {
        let response = ok(answer(want, url).await);
        assert_eq!((response.body, response.headers), (body, vec![]), "{want}");
    }
    let empty = ok(answer("empty", url).await);
    assert_eq!((empty.status, empty.body), (404, Value::Null));
    // A body the handler already read cannot be read again, as `text()` says.
    assert!(
        matches!(err(answer("read", url).await), SandboxError::HandlerError(message) if message.contains("consumed")),
    );
    assert!(matches!(
        err(answer("not-json", url).await),
        SandboxError::InvalidResponse(message) if message.contains("not JSON")
    ));
    // A header set after `Response.json` is answered; a body a reader has locked is not read.
    let late = ok(answer("late-header", url).await);
    assert_eq!(
        (late.body, late.headers),
        (json!({"f": 6}), vec![("x-late".to_owned(), "1".to_owned())])
    );
    assert!(matches!(
        err(answer("locked", url).await),
        SandboxError::HandlerError(message) if message.contains("consumed")
    ));
    assert_eq!(ok(answer("text", url).await).body, json!({"h": 8}));
    // The caller's headers as the constructor takes them, whether they need its conversion
    // (whitespace trimmed, bytes past ASCII) or not.
    let headers = json!({
        "accept": "application/json",
        "user-agent": " agent/2.0\t",
        "accept-language": "é",
    });
    assert_eq!(
        ok(answer_with("request-headers", url, headers).await).body,
        json!([
            ["accept", "application/json"],
            ["accept-language", "é"],
            ["content-type", "application/json"],
            ["user-agent", "agent/2.0"],
        ])
    );
    let plain = json!({"x-request-id": "req-9", "user-agent": "agent/2.0 (x; y)"});
    assert_eq!(
        ok(answer_with("request-headers", url, plain).await).body,
        json!([
            ["content-type", "application/json"],
            ["user-agent", "agent/2.0 (x; y)"],
            ["x-request-id", "req-9"],
        ])
    );
}

#[tokio::test]
async fn a_wait_until_rejection_is_logged_and_changes_nothing() {
    let (pool, _) = pool();
    let code = granted(
        "workers-reject",
        r#"export default {
            fetch(request, env, ctx) {
                ctx.waitUntil(Promise.reject(new Error("background failed")));
                ctx.waitUntil(42);
                return { ok: true };
            },
        };"#,
    );
    let report = invoke(&pool, &code, json!(1)).await;
    assert!(
        report
            .logs
            .iter()
            .any(|line| line.message.contains("background failed")),
        "{:?}",
        report.logs
    );
    assert_eq!(ok(report).body, json!({"ok": true}));
}

#[tokio::test]
async fn objects_without_a_fetch_method_are_not_handlers() {
    for (mode, sandbox, _) in both_modes(test_config()) {
        for source in [
            "export default { handle() { return 1; } };",
            "export default { fetch: 42 };",
            "export default { get fetch() { throw new Error('no'); } };",
            "export default null;",
            "export default 'fetch';",
        ] {
            let report = sandbox.check(&endpoint("checked", source)).await;
            assert!(
                matches!(report.result, Err(SandboxError::CompileError(ref m)) if m.contains("`fetch` method")),
                "{mode} {source}: {:?}",
                report.result
            );
        }
        let report = sandbox
            .check(&endpoint(
                "checked",
                "export default { get fetch() { return () => 1; } };",
            ))
            .await;
        assert_eq!(report.result.map(|r| r.status), Ok(204), "{mode}");
    }
}

#[tokio::test]
async fn thrown_4xx_statuses_refuse_the_caller() {
    let code = endpoint(
        "refusing",
        r#"export default async (req) => {
            switch (req.input) {
                case "error": throw Object.assign(new Error("bad city"), { status: 400 });
                case "object": throw { status: 404, message: "no such city" };
                case "response": throw new Response("city is required", { status: 422 });
                case "json-response": throw Response.json({ error: "later" }, { status: 429 });
                case "empty-response": throw new Response(null, { status: 403, statusText: "Not yours" });
                case "empty": throw { status: 401, message: "" };
                case "500": throw Object.assign(new Error("upstream down"), { status: 500 });
                case "server-response": throw new Response("broken", { status: 502 });
                case "399": throw { status: 399, message: "x" };
                case "string": throw { status: "400", message: "x" };
                case "fraction": throw { status: 400.5, message: "x" };
                case "capability": throw Object.assign(new Error("kv is not granted"), { status: 400, code: "capability_denied" });
            }
        };"#,
    );
    for (mode, sandbox, _) in both_modes(test_config()) {
        let thrown = |input: &'static str| {
            let sandbox = &sandbox;
            let code = &code;
            async move { err(sandbox.invoke(code, request(json!(input))).await) }
        };
        let refused = |status: u16, message: &str| SandboxError::HandlerRefused {
            status,
            message: message.to_owned(),
        };
        assert_eq!(thrown("error").await, refused(400, "bad city"), "{mode}");
        assert_eq!(thrown("object").await, refused(404, "no such city"));
        assert_eq!(thrown("response").await, refused(422, "city is required"));
        assert_eq!(
            thrown("json-response").await,
            refused(429, r#"{"error":"later"}"#)
        );
        assert_eq!(thrown("empty-response").await, refused(403, "Not yours"));
        assert_eq!(thrown("empty").await, refused(401, ""));
        assert_eq!(
            thrown("500").await,
            SandboxError::HandlerError("upstream down".into())
        );
        assert!(
            matches!(
                thrown("server-response").await,
                SandboxError::HandlerError(_)
            ),
            "{mode}"
        );
        for input in ["399", "string", "fraction"] {
            assert_eq!(
                thrown(input).await,
                SandboxError::HandlerError("x".into()),
                "{mode} {input}"
            );
        }
        assert_eq!(
            thrown("capability").await,
            SandboxError::CapabilityDenied("kv is not granted".into())
        );
    }
    // Refusing is an answer, not a fault: the isolate stays.
    let (pool, _) = pool();
    for input in ["error", "response", "object"] {
        assert!(matches!(
            err(invoke(&pool, &code, json!(input)).await),
            SandboxError::HandlerRefused { .. }
        ));
    }
    assert_eq!(pool.stats().isolates_created, 1);
}

#[tokio::test]
async fn a_workers_handler_refuses_by_throwing_too() {
    let (pool, _) = pool();
    let code = endpoint(
        "workers-refusing",
        r#"export default {
            async fetch(request) {
                const { city } = await request.json();
                if (!city) throw Object.assign(new Error("city is required"), { status: 400 });
                throw new Response("unknown city " + city, { status: 404 });
            },
        };"#,
    );
    assert_eq!(
        err(invoke(&pool, &code, json!({})).await),
        SandboxError::HandlerRefused {
            status: 400,
            message: "city is required".into()
        }
    );
    assert_eq!(
        err(invoke(&pool, &code, json!({"city": "Atlantis"})).await),
        SandboxError::HandlerRefused {
            status: 404,
            message: "unknown city Atlantis".into()
        }
    );
}

#[tokio::test]
async fn hostile_thrown_values_are_a_clean_500_or_the_time_limit() {
    let (pool, _) = pool();
    let code = endpoint(
        "hostile-throw",
        r#"export default async (req) => {
            switch (req.input) {
                case "status-throws": throw { get status() { throw new Error("boom"); }, message: "m" };
                case "message-throws": throw { status: 400, get message() { throw new Error("boom"); } };
                case "proxy": throw new Proxy({}, { get() { throw new Error("boom"); }, getPrototypeOf() { throw new Error("boom"); } });
                case "huge": throw { status: 400, message: "x".repeat(1 << 20) };
                case "status-loops": throw { get status() { for (;;) {} } };
                case "message-loops": throw { status: 400, get message() { for (;;) {} } };
                case "response-body-never-ends": throw new Response(new ReadableStream({ pull() { return new Promise(() => {}); } }), { status: 400 });
            }
        };"#,
    );
    let thrown = |input: &'static str| invoke(&pool, &code, json!(input));
    assert_eq!(
        err(thrown("status-throws").await),
        SandboxError::HandlerError("m".into())
    );
    assert_eq!(
        err(thrown("message-throws").await),
        SandboxError::HandlerRefused {
            status: 400,
            message: "the handler threw a value that cannot be printed".into()
        }
    );
    assert_eq!(
        err(thrown("proxy").await),
        SandboxError::HandlerError("the handler threw a value that cannot be printed".into())
    );
    match err(thrown("huge").await) {
        SandboxError::HandlerRefused { status, message } => {
            assert_eq!(status, 400);
            assert_eq!(
                message.chars().count(),
                2049,
                "cut at 2048 characters and …"
            );
        }
        other => panic!("{other:?}"),
    }
    for input in ["status-loops", "message-loops", "response-body-never-ends"] {
        let started = Instant::now();
        assert_eq!(err(thrown(input).await), SandboxError::Timeout, "{input}");
        assert!(started.elapsed() < Duration::from_secs(5), "{input}");
    }
    assert_neighbour_ok(&pool).await;
    assert_eq!(
        body(&pool, &endpoint("after", ECHO), json!(1)).await,
        json!({"echo": 1})
    );
}

#[tokio::test]
async fn a_fetch_or_wait_until_that_never_settles_meets_the_time_limit() {
    for (mode, sandbox, _) in both_modes(test_config()) {
        for source in [
            "export default { fetch: () => new Promise(() => {}) };",
            "export default { fetch(request, env, ctx) { ctx.waitUntil(new Promise(() => {})); return 1; } };",
            "export default { async fetch() { for (;;) {} } };",
            "export default { get fetch() { return () => new Promise(() => {}); } };",
        ] {
            let started = Instant::now();
            let report = sandbox.invoke(&endpoint("stuck", source), request(json!(1))).await;
            assert_eq!(report.result, Err(SandboxError::Timeout), "{mode} {source}");
            assert!(started.elapsed() < Duration::from_secs(5), "{mode} {source}");
        }
        let fine = sandbox
            .invoke(&endpoint("neighbour", ECHO), request(json!(2)))
            .await;
        assert_eq!(ok(fine).body, json!({"echo": 2}), "{mode}");
    }
}

#[tokio::test]
async fn a_fetch_getter_that_never_returns_meets_the_time_limit_at_load() {
    for (mode, sandbox, _) in both_modes(test_config()) {
        let report = sandbox
            .check(&endpoint(
                "stuck",
                "export default { get fetch() { for (;;) {} } };",
            ))
            .await;
        assert_eq!(
            report.result.map(|r| r.status),
            Err(SandboxError::Timeout),
            "{mode}"
        );
    }
}
