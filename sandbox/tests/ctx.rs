//! The handler contract: what `req` and `ctx` give a handler, and how results and errors come
//! back.

mod util;

use sandbox::{ConsoleLevel, SandboxError};
use serde_json::json;
use util::*;

#[tokio::test]
async fn smoke_module_runs_and_returns_json() {
    let (pool, _) = pool();
    let code = endpoint(
        "smoke",
        r#"export default async function (req, ctx) {
            return { input: req.input, method: req.method, id: req.requestId, list: [1, 2].map(x => x * 2) };
        }"#,
    );
    let response = ok(invoke(&pool, &code, json!({ "q": "hi" })).await);
    assert_eq!(response.status, 200);
    assert!(response.headers.is_empty());
    assert_eq!(
        response.body,
        json!({ "input": { "q": "hi" }, "method": "POST", "id": "req-1", "list": [2, 4] })
    );
    // Warm path: the same isolate answers again.
    assert_eq!(body(&pool, &code, json!(null)).await["input"], json!(null));
    assert_eq!(pool.stats().isolates_created, 1);
}

#[tokio::test]
async fn undefined_result_is_null_and_sync_handlers_work() {
    let (pool, _) = pool();
    let code = endpoint("sync", "export default function () {}");
    assert_eq!(body(&pool, &code, json!(1)).await, json!(null));
}

#[tokio::test]
async fn respond_sets_status_and_allowed_headers() {
    let (pool, _) = pool();
    let code = endpoint(
        "respond",
        r#"export default async function (req, ctx) {
            return ctx.respond(201, { created: true }, { "Cache-Control": "no-store", "x-model": "m1" });
        }"#,
    );
    let response = ok(invoke(&pool, &code, json!(null)).await);
    assert_eq!(response.status, 201);
    assert_eq!(response.body, json!({ "created": true }));
    assert_eq!(
        response.headers,
        vec![
            ("cache-control".to_owned(), "no-store".to_owned()),
            ("x-model".to_owned(), "m1".to_owned())
        ]
    );
}

#[tokio::test]
async fn respond_refuses_bad_status_and_forbidden_headers() {
    let (pool, _) = pool();
    let status = endpoint(
        "bad-status",
        "export default (req, ctx) => ctx.respond(req.input, null);",
    );
    for bad in [
        json!(99),
        json!(101),
        json!(600),
        json!(200.5),
        json!("200"),
    ] {
        let err = err(invoke(&pool, &status, bad).await);
        assert!(
            matches!(err, SandboxError::InvalidResponse(ref m) if m.contains("200..599")),
            "{err:?}"
        );
    }
    let header = endpoint(
        "bad-header",
        "export default (req, ctx) => ctx.respond(200, null, { [req.input]: 'x' });",
    );
    for name in [
        "set-cookie",
        "x-payment-response",
        "content-type",
        "x-toolhost-receipt",
        "x-receipt-id",
        "x-accel-redirect",
        "x-sendfile",
    ] {
        let err = err(invoke(&pool, &header, json!(name)).await);
        assert!(
            matches!(err, SandboxError::InvalidResponse(ref m) if m.contains(name)),
            "{err:?}"
        );
    }
    // A look-alike object is a plain 200 body, not a response.
    let fake = endpoint(
        "fake-respond",
        "export default () => ({ status: 500, body: 1, headers: [['set-cookie', 'a']] });",
    );
    let response = ok(invoke(&pool, &fake, json!(null)).await);
    assert_eq!(response.status, 200);
    assert!(response.headers.is_empty());
}

#[tokio::test]
async fn thrown_errors_become_handler_errors_with_the_message_only() {
    let (pool, _) = pool();
    let code = endpoint(
        "throws",
        r#"export default async function (req) {
            if (req.input === "error") throw new TypeError("bad input");
            if (req.input === "string") throw "plain string";
            if (req.input === "cycle") { const a = {}; a.self = a; return a; }
            throw { get message() { throw new Error("nested"); } };
        }"#,
    );
    let e = err(invoke(&pool, &code, json!("error")).await);
    assert_eq!(e, SandboxError::HandlerError("bad input".to_owned()));
    let e = err(invoke(&pool, &code, json!("string")).await);
    assert_eq!(e, SandboxError::HandlerError("plain string".to_owned()));
    let e = err(invoke(&pool, &code, json!("cycle")).await);
    assert!(
        matches!(e, SandboxError::HandlerError(ref m) if m.contains("not JSON-serializable")),
        "{e:?}"
    );
    let e = err(invoke(&pool, &code, json!("getter")).await);
    assert!(matches!(e, SandboxError::HandlerError(_)), "{e:?}");
    assert_eq!(e.code(), "handler_error");
    // After all that, the same isolate still answers.
    assert_eq!(pool.stats().isolates_created, 1);
}

#[tokio::test]
async fn kv_works_when_granted() {
    let (pool, host) = pool();
    let code = granted(
        "kv",
        r#"export default async function (req, ctx) {
            await ctx.kv.set("a:1", { n: 1 });
            await ctx.kv.set("a:2", [2], { ttlSeconds: 60 });
            await ctx.kv.set("b:1", "other");
            const one = await ctx.kv.get("a:1");
            const missing = await ctx.kv.get("nope");
            const page = await ctx.kv.list({ prefix: "a:", limit: 1 });
            const next = await ctx.kv.list({ prefix: "a:", cursor: page.cursor });
            const deleted = await ctx.kv.delete("a:1");
            const again = await ctx.kv.delete("a:1");
            let quota;
            try { await ctx.kv.set("quota", 1); } catch (e) { quota = [e.code, e.message]; }
            return { one, missing, page, next, deleted, again, quota };
        }"#,
    );
    let answer = body(&pool, &code, json!(null)).await;
    assert_eq!(
        answer,
        json!({
            "one": { "n": 1 },
            "missing": null,
            "page": { "entries": [{ "key": "a:1", "value": { "n": 1 } }], "cursor": "a:1" },
            "next": { "entries": [{ "key": "a:2", "value": [2] }], "cursor": null },
            "deleted": true,
            "again": false,
            "quota": ["quota_exceeded", "kv quota exceeded"],
        })
    );
    let kv = host.kv.lock().unwrap();
    assert_eq!(
        kv.get(&("kv".into(), "a:2".into())),
        Some(&(json!([2]), Some(60)))
    );
}

#[tokio::test]
async fn kv_validates_sizes() {
    let (pool, _) = pool();
    let code = granted(
        "kv-sizes",
        r#"export default async function (req, ctx) {
            const out = [];
            for (const attempt of [
                () => ctx.kv.set("k".repeat(513), 1),
                () => ctx.kv.set("k", "v".repeat(70000)),
                () => ctx.kv.set("", 1),
                () => ctx.kv.set("k", 1n),
                () => ctx.kv.set("k", 1, { ttlSeconds: -1 }),
            ]) {
                try { await attempt(); out.push("accepted"); } catch (e) { out.push(e.code ?? e.name); }
            }
            return out;
        }"#,
    );
    assert_eq!(
        body(&pool, &code, json!(null)).await,
        json!([
            "too_large",
            "too_large",
            "invalid_argument",
            "TypeError",
            "TypeError"
        ])
    );
}

#[tokio::test]
async fn files_work_when_granted_and_refuse_traversal() {
    let (pool, host) = pool();
    host.files.lock().unwrap().insert(
        ("files".into(), "assets/config.json".into()),
        br#"{"model":"m1"}"#.to_vec(),
    );
    let code = granted(
        "files",
        r#"export default async function (req, ctx) {
            const config = await ctx.files.readJson("./assets//config.json");
            await ctx.files.write("out/note.txt", "hello");
            await ctx.files.write("out/data.json", { a: 1 });
            const note = await ctx.files.read("out/note.txt");
            const data = await ctx.files.readJson("out/data.json");
            const missing = await ctx.files.read("missing.txt");
            const listed = await ctx.files.list("out/");
            const deleted = await ctx.files.delete("out/note.txt");
            const refused = [];
            for (const path of ["../secret", "/etc/passwd", "a/../../b", "a\\b", "a\u0000b", "dir/"]) {
                try { await ctx.files.read(path); refused.push("read " + path); }
                catch (e) { refused.push(e.code); }
            }
            try { await ctx.files.list("../"); } catch (e) { refused.push(e.code); }
            return { config, note, data, missing, listed, deleted, refused };
        }"#,
    );
    let answer = body(&pool, &code, json!(null)).await;
    assert_eq!(answer["config"], json!({ "model": "m1" }));
    assert_eq!(answer["note"], json!("hello"));
    assert_eq!(answer["data"], json!({ "a": 1 }));
    assert_eq!(answer["missing"], json!(null));
    assert_eq!(
        answer["listed"],
        json!([{ "path": "out/data.json", "size": 7 }, { "path": "out/note.txt", "size": 5 }])
    );
    assert_eq!(answer["deleted"], json!(true));
    assert_eq!(answer["refused"], json!(vec!["invalid_argument"; 7]));
    // Nothing escaped the endpoint's area.
    assert!(host
        .files
        .lock()
        .unwrap()
        .keys()
        .all(|(slug, _)| slug == "files"));
}

#[tokio::test]
async fn http_get_json_works_when_granted() {
    let (pool, host) = pool();
    let code = granted(
        "http",
        r#"export default async function (req, ctx) {
            const echo = await ctx.httpGetJson("https://api.test/v1?q=1", { headers: { "x-key": "k" }, timeoutMs: 250 });
            const refused = [];
            for (const url of ["http://169.254.169.254/latest", "file:///etc/passwd", "https://u:p@api.test/"]) {
                try { await ctx.httpGetJson(url); } catch (e) { refused.push(e.code); }
            }
            try { await ctx.httpGetJson("https://api.test/", { headers: { host: "evil" } }); } catch (e) { refused.push(e.code); }
            return { echo, refused };
        }"#,
    );
    let answer = body(&pool, &code, json!(null)).await;
    assert_eq!(
        answer["echo"],
        json!({ "url": "https://api.test/v1?q=1", "headers": { "x-key": "k" } })
    );
    assert_eq!(
        answer["refused"],
        json!([
            "ssrf_refused",
            "invalid_argument",
            "invalid_argument",
            "invalid_argument"
        ])
    );
    let calls = host.http_calls.lock().unwrap();
    assert_eq!(calls[0].0, "http");
    assert_eq!(calls[0].3, std::time::Duration::from_millis(250));
}

#[tokio::test]
async fn every_capability_is_refused_when_not_granted() {
    let (pool, host) = pool();
    let code = endpoint(
        "denied",
        r#"export default async function (req, ctx) {
            const attempts = {
                kv: () => ctx.kv.get("k"),
                kvSet: () => ctx.kv.set("k", 1),
                kvList: () => ctx.kv.list(),
                files: () => ctx.files.read("a.txt"),
                filesWrite: () => ctx.files.write("a.txt", "x"),
                http: () => ctx.httpGetJson("https://api.test/"),
                log: () => ctx.log("hello"),
                logWarn: () => ctx.log.warn("hello"),
            };
            const out = {};
            for (const [name, attempt] of Object.entries(attempts)) {
                try { await attempt(); out[name] = "allowed"; }
                catch (e) { out[name] = [e.code, e.message]; }
            }
            console.log("console is silent without logs");
            console.error("so is console.error");
            return out;
        }"#,
    );
    let report = invoke(&pool, &code, json!(null)).await;
    assert!(report.logs.is_empty());
    let answer = ok(report).body;
    for (name, capability) in [
        ("kv", "kv"),
        ("kvSet", "kv"),
        ("kvList", "kv"),
        ("files", "files"),
        ("filesWrite", "files"),
        ("http", "httpGetJson"),
    ] {
        assert_eq!(
            answer[name][0],
            json!("capability_denied"),
            "{name}: {answer}"
        );
        let message = answer[name][1].as_str().unwrap();
        assert!(
            message.contains(&format!("`{capability}`")),
            "{name}: {message}"
        );
    }
    // ctx.log behaves as console does without `logs`: nothing is written, nothing throws.
    assert_eq!(answer["log"], json!("allowed"), "{answer}");
    assert_eq!(answer["logWarn"], json!("allowed"), "{answer}");
    assert!(host.kv.lock().unwrap().is_empty());
    assert!(host.files.lock().unwrap().is_empty());
    assert!(host.http_calls.lock().unwrap().is_empty());

    // Uncaught, it fails the invocation with CapabilityDenied.
    let uncaught = endpoint(
        "denied-uncaught",
        "export default (req, ctx) => ctx.kv.get('k');",
    );
    let e = err(invoke(&pool, &uncaught, json!(null)).await);
    assert!(
        matches!(e, SandboxError::CapabilityDenied(ref m) if m.contains("`kv`")),
        "{e:?}"
    );
    assert_eq!(e.code(), "capability_denied");
}

#[tokio::test]
async fn env_is_frozen() {
    let (pool, _) = pool();
    let mut code = endpoint(
        "env",
        r#"export default async function (req, ctx) {
            const before = ctx.env.API_KEY;
            const attempts = [];
            for (const tamper of [
                () => { ctx.env.API_KEY = "stolen"; },
                () => { ctx.env.NEW = "x"; },
                () => { delete ctx.env.API_KEY; },
                () => { ctx.env = {}; },
                () => { ctx.kv = null; },
                () => { ctx.kv.get = () => 1; },
                () => { ctx.log.info = () => 1; },
            ]) {
                try { tamper(); attempts.push("changed"); } catch (e) { attempts.push(e.name); }
            }
            return { before, after: ctx.env.API_KEY, frozen: Object.isFrozen(ctx.env) && Object.isFrozen(ctx), attempts };
        }"#,
    );
    code.env.insert("API_KEY".to_owned(), "secret".to_owned());
    let answer = body(&pool, &code, json!(null)).await;
    assert_eq!(answer["before"], json!("secret"));
    assert_eq!(answer["after"], json!("secret"));
    assert_eq!(answer["frozen"], json!(true));
    assert_eq!(answer["attempts"], json!(vec!["TypeError"; 7]));
}

#[tokio::test]
async fn logs_are_collected_with_levels_and_kept_on_failure() {
    let (pool, _) = pool();
    let code = granted(
        "logs",
        r#"export default async function (req, ctx) {
            ctx.log("plain", 1, { a: true });
            ctx.log.warn("careful");
            ctx.log.error(new Error("oops"));
            console.log("from console");
            if (req.input === "fail") throw new Error("after logging");
            return "done";
        }"#,
    );
    let report = invoke(&pool, &code, json!("fail")).await;
    let messages: Vec<_> = report
        .logs
        .iter()
        .map(|line| (line.level, line.message.as_str()))
        .collect();
    assert_eq!(
        messages,
        vec![
            (ConsoleLevel::Info, "plain 1 {\"a\":true}"),
            (ConsoleLevel::Warn, "careful"),
            (ConsoleLevel::Error, "Error: oops"),
            (ConsoleLevel::Info, "from console"),
        ]
    );
    assert!(report.result.is_err());
    // Logs belong to one invocation.
    let report = invoke(&pool, &code, json!("ok")).await;
    assert_eq!(report.logs.len(), 4);
}

#[tokio::test]
async fn logs_are_capped_with_one_marker() {
    let config = sandbox::PoolConfig {
        max_log_lines: 5,
        max_log_bytes_per_invocation: 1000,
        ..test_config()
    };
    let (pool, _) = pool_with(config);
    let code = granted(
        "log-caps",
        r#"export default async function (req, ctx) {
            if (req.input === "lines") for (let i = 0; i < 50; i++) ctx.log("line " + i);
            else { ctx.log("short"); ctx.log("x".repeat(5000)); ctx.log("dropped"); }
            return "ok";
        }"#,
    );
    let report = invoke(&pool, &code, json!("lines")).await;
    assert_eq!(report.logs.len(), 6);
    assert_eq!(report.logs[4].message, "line 4");
    assert_eq!(report.logs[5].message, "[log truncated]");
    let report = invoke(&pool, &code, json!("bytes")).await;
    let messages: Vec<_> = report.logs.iter().map(|l| l.message.as_str()).collect();
    assert_eq!(messages, vec!["short", "[log truncated]"]);
}

#[tokio::test]
async fn endpoints_never_see_each_others_storage() {
    let (pool, _) = pool();
    let writer = granted(
        "writer",
        "export default async (req, ctx) => { await ctx.kv.set('shared', 'mine'); await ctx.files.write('f.txt', 'mine'); }",
    );
    let reader = granted(
        "reader",
        "export default async (req, ctx) => [await ctx.kv.get('shared'), await ctx.files.read('f.txt')];",
    );
    ok(invoke(&pool, &writer, json!(null)).await);
    assert_eq!(body(&pool, &reader, json!(null)).await, json!([null, null]));
}

#[tokio::test]
async fn unhandled_rejections_are_logged_not_fatal() {
    let (pool, _) = pool();
    let code = granted(
        "rejections",
        r#"export default async function (req, ctx) {
            if (req.input === "leave") {
                Promise.reject(new Error("nobody listens"));
                ctx.kv.get(42).then(() => {});
                return "left";
            }
            return "next";
        }"#,
    );
    let report = invoke(&pool, &code, json!("leave")).await;
    let logs: Vec<_> = report.logs.iter().map(|l| l.message.clone()).collect();
    assert_eq!(ok(report).body, json!("left"));
    assert!(
        logs.iter().any(|l| l.contains("nobody listens")),
        "{logs:?}"
    );
    let report = invoke(&pool, &code, json!("next")).await;
    assert_eq!(ok(report).body, json!("next"));
    assert_eq!(pool.stats().isolates_created, 1);
}

/// A Workers-style handler answers with a standard `Response`: its status, its headers through
/// the same allow-list as `ctx.respond` (content-type and content-length are the server's), its
/// JSON body.
#[tokio::test]
async fn a_web_response_sets_status_headers_and_body() {
    let (pool, _) = pool();
    let code = endpoint(
        "web-response",
        r#"export default async (req) => {
            switch (req.input) {
                case "json": return Response.json({ error: "bad input" }, { status: 400, headers: { "x-reason": "nope" } });
                case "text": return new Response('{"created":true}', { status: 201, headers: { "content-type": "text/plain", "Cache-Control": "no-store" } });
                case "empty": return new Response(null, { status: 204 });
                case "stream": return new Response(new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode("[1,")); c.enqueue(new TextEncoder().encode("2]")); c.close(); } }));
                case "not-json": return new Response("hello");
                case "cookie": return new Response("1", { headers: { "set-cookie": "a=b" } });
                case "look-alike": return { status: 500, headers: new Headers(), text: async () => "1" };
            }
        }"#,
    );
    let answer = |input: &str| invoke(&pool, &code, json!(input));

    let response = ok(answer("json").await);
    assert_eq!(response.status, 400);
    assert_eq!(response.body, json!({ "error": "bad input" }));
    assert_eq!(
        response.headers,
        vec![("x-reason".to_owned(), "nope".to_owned())]
    );

    let response = ok(answer("text").await);
    assert_eq!(response.status, 201);
    assert_eq!(response.body, json!({ "created": true }));
    assert_eq!(
        response.headers,
        vec![("cache-control".to_owned(), "no-store".to_owned())]
    );

    let response = ok(answer("empty").await);
    assert_eq!((response.status, response.body), (204, json!(null)));

    let response = ok(answer("stream").await);
    assert_eq!((response.status, response.body), (200, json!([1, 2])));

    let refused = err(answer("not-json").await);
    assert!(
        matches!(refused, SandboxError::InvalidResponse(ref m) if m.contains("not JSON")),
        "{refused:?}"
    );
    let refused = err(answer("cookie").await);
    assert!(
        matches!(refused, SandboxError::InvalidResponse(ref m) if m.contains("set-cookie")),
        "{refused:?}"
    );
    // Something shaped like a Response is a plain body, as with ctx.respond.
    let response = ok(answer("look-alike").await);
    assert_eq!(response.status, 200);
    assert!(response.headers.is_empty());
}
