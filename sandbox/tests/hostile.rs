//! Hostile handlers: escapes, limits and tampering. After each one, a neighbouring endpoint in
//! the same pool must still answer correctly.

mod util;

use sandbox::SandboxError;
use serde_json::json;
use util::*;

#[tokio::test]
async fn raw_ops_and_deno_internals_are_unreachable() {
    let (pool, host) = pool();
    let code = granted(
        "escape",
        r#"export default async function (req, ctx) {
            const found = [];
            const g = Function("return this")();
            const seen = new Set();
            const walk = (obj, path, depth) => {
                if (obj === null || (typeof obj !== "object" && typeof obj !== "function") || seen.has(obj) || depth > 4) return;
                seen.add(obj);
                for (const key of Reflect.ownKeys(obj)) {
                    const name = String(key);
                    if (/^op_|^Deno$|^__bootstrap$|^__infra$|^core$|^__v8x|^gc$|^ShadowRealm$|@@/.test(name)) found.push(path + "." + name);
                    let value;
                    try { value = obj[key]; } catch { continue; }
                    walk(value, path + "." + name, depth + 1);
                }
            };
            walk(g, "globalThis", 0);
            walk(ctx, "ctx", 0);
            const probes = {
                deno: typeof Deno,
                globalDeno: typeof globalThis.Deno,
                viaFunction: (() => { try { return typeof Function("return Deno")(); } catch (e) { return e.name; } })(),
                viaConstructor: (() => { try { return typeof ({}).constructor.constructor("return Deno.core.ops.op_kv_get")(); } catch (e) { return e.name; } })(),
                bootstrap: typeof globalThis.__bootstrap,
                sameGlobal: g === globalThis,
                sharedArrayBuffer: typeof SharedArrayBuffer,
                atomics: typeof Atomics,
                webAssembly: typeof WebAssembly,
            };
            return { found, probes };
        }"#,
    );
    let answer = body(&pool, &code, json!(null)).await;
    assert_eq!(answer["found"], json!([]));
    assert_eq!(
        answer["probes"],
        json!({
            "deno": "undefined",
            "globalDeno": "undefined",
            "viaFunction": "ReferenceError",
            "viaConstructor": "ReferenceError",
            "bootstrap": "undefined",
            "sameGlobal": true,
            "sharedArrayBuffer": "undefined",
            "atomics": "undefined",
            "webAssembly": "undefined",
        })
    );
    assert!(host.kv.lock().unwrap().is_empty());
    assert_neighbour_ok(&pool).await;
}

#[tokio::test]
async fn imports_of_other_modules_are_refused() {
    let (pool, _) = pool();
    for (slug, source) in [
        (
            "static-relative",
            "import x from './other.js'; export default () => x;",
        ),
        (
            "static-ext",
            "import { op_kv_get } from 'ext:core/ops'; export default () => typeof op_kv_get;",
        ),
        (
            "static-url",
            "import x from 'https://example.com/x.js'; export default () => x;",
        ),
        (
            "static-node",
            "import fs from 'node:fs'; export default () => fs;",
        ),
    ] {
        let e = err(invoke(&pool, &endpoint(slug, source), json!(null)).await);
        assert!(matches!(e, SandboxError::CompileError(_)), "{slug}: {e:?}");
    }
    let dynamic = endpoint(
        "dynamic",
        r#"export default async function () {
            const out = [];
            for (const spec of ["./other.js", "ext:core/ops", "ext:core/mod.js", "file:///handler.js", "data:text/javascript,export default 1"]) {
                try { await import(spec); out.push("imported " + spec); } catch (e) { out.push(e.name); }
            }
            return out;
        }"#,
    );
    let answer = body(&pool, &dynamic, json!(null)).await;
    for outcome in answer.as_array().unwrap() {
        assert!(
            !outcome.as_str().unwrap().starts_with("imported"),
            "{answer}"
        );
    }
    assert_neighbour_ok(&pool).await;
}

#[tokio::test]
async fn imports_the_engine_cannot_link_are_compile_errors() {
    // The QuickJS backend finds import edges with a text scan; an import it misses makes
    // deno_core panic while linking. The worker turns that into a compile error and lives on.
    let (pool, _) = pool();
    for (slug, source) in [
        (
            "comment-import",
            "import/**/x from './a.js'; export default () => x;",
        ),
        (
            "newline-import",
            "const s = 1\nimport\nx from './a.js'; export default () => x;",
        ),
    ] {
        let code = endpoint(slug, source);
        for _ in 0..2 {
            let e = err(invoke(&pool, &code, json!(null)).await);
            assert!(matches!(e, SandboxError::CompileError(_)), "{slug}: {e:?}");
        }
    }
    assert_neighbour_ok(&pool).await;
}

#[tokio::test]
async fn broken_modules_are_compile_errors() {
    let (pool, _) = pool();
    for (slug, source) in [
        ("syntax", "export default function ( {"),
        ("no-default", "export const handler = () => 1;"),
        ("not-a-function", "export default 42;"),
        (
            "throws-on-load",
            "throw new Error('boom at load'); export default () => 1;",
        ),
    ] {
        let e = err(invoke(&pool, &endpoint(slug, source), json!(null)).await);
        assert!(matches!(e, SandboxError::CompileError(_)), "{slug}: {e:?}");
        assert_eq!(e.code(), "compile_error");
    }
    assert_neighbour_ok(&pool).await;
}

#[tokio::test]
async fn infinite_loop_times_out_and_the_isolate_is_replaced() {
    let (pool, _) = pool();
    let code = endpoint(
        "spin",
        "let calls = 0; export default (req) => { calls++; if (req.input === 'spin') for (;;) {} return calls; };",
    );
    assert_eq!(body(&pool, &code, json!("warm")).await, json!(1));
    assert_eq!(
        err(invoke(&pool, &code, json!("spin")).await),
        SandboxError::Timeout
    );
    assert_neighbour_ok(&pool).await;
    // A fresh isolate: module state starts over.
    assert_eq!(body(&pool, &code, json!("again")).await, json!(1));
    assert!(pool.stats().recycled >= 1);
}

#[tokio::test]
async fn busy_loop_across_awaits_times_out() {
    let (pool, _) = pool();
    let microtasks = endpoint(
        "microtasks",
        "export default async () => { for (;;) await null; };",
    );
    assert_eq!(
        err(invoke(&pool, &microtasks, json!(null)).await),
        SandboxError::Timeout
    );
    let ops = granted(
        "op-loop",
        "export default async (req, ctx) => { for (;;) await ctx.kv.get('k'); };",
    );
    assert_eq!(
        err(invoke(&pool, &ops, json!(null)).await),
        SandboxError::Timeout
    );
    assert_neighbour_ok(&pool).await;
}

#[tokio::test]
async fn catastrophic_regex_times_out() {
    let (pool, _) = pool();
    let code = endpoint(
        "redos",
        "export default () => /^(a+)+$/.test('a'.repeat(64) + 'b');",
    );
    assert_eq!(
        err(invoke(&pool, &code, json!(null)).await),
        SandboxError::Timeout
    );
    assert_neighbour_ok(&pool).await;
}

#[tokio::test]
async fn never_settling_promises_time_out() {
    let (pool, _) = pool();
    let idle = endpoint("never", "export default () => new Promise(() => {});");
    assert_eq!(
        err(invoke(&pool, &idle, json!(null)).await),
        SandboxError::Timeout
    );
    // Nothing was left running: the isolate serves the next call, not a cold start; the call
    // is still answered at its time limit, not at once.
    let created = pool.stats().isolates_created;
    let started = std::time::Instant::now();
    assert_eq!(
        err(invoke(&pool, &idle, json!(null)).await),
        SandboxError::Timeout
    );
    assert!(started.elapsed() >= test_config().default_limits.timeout);
    assert_eq!(pool.stats().isolates_created, created);
    let hanging_host = granted(
        "hang",
        "export default (req, ctx) => ctx.httpGetJson('https://hang.test/', { timeoutMs: 60000 });",
    );
    assert_eq!(
        err(invoke(&pool, &hanging_host, json!(null)).await),
        SandboxError::Timeout
    );
    assert_neighbour_ok(&pool).await;
}

#[tokio::test]
async fn top_level_infinite_loop_times_out() {
    let (pool, _) = pool();
    let code = endpoint("spin-at-load", "for (;;) {} export default () => 1;");
    assert_eq!(
        err(invoke(&pool, &code, json!(null)).await),
        SandboxError::Timeout
    );
    assert_neighbour_ok(&pool).await;
}

#[tokio::test]
async fn memory_bomb_hits_the_heap_limit() {
    let (pool, _) = pool();
    let code = endpoint(
        "bomb",
        r#"export default () => {
            const chunk = "x".repeat(1 << 20);
            const hoard = [];
            for (;;) hoard.push(chunk + hoard.length);
        };"#,
    );
    let e = err(invoke(&pool, &code, json!(null)).await);
    assert_eq!(
        e,
        SandboxError::ResourceLimit("heap limit exceeded".to_owned())
    );
    assert_neighbour_ok(&pool).await;
    // The endpoint gets a fresh isolate and works again when it behaves.
    let fine = EndpointCodeExt::with_source(&code, "export default () => 'fine';");
    assert_eq!(body(&pool, &fine, json!(null)).await, json!("fine"));
}

#[tokio::test]
async fn huge_results_are_refused() {
    let (pool, _) = pool();
    let code = endpoint(
        "huge",
        "export default (req, ctx) => req.input === 'respond' ? ctx.respond(200, 'x'.repeat(2 << 20)) : 'x'.repeat(2 << 20);",
    );
    for input in ["plain", "respond"] {
        let e = err(invoke(&pool, &code, json!(input)).await);
        assert_eq!(
            e,
            SandboxError::ResourceLimit("result too large".to_owned())
        );
    }
    // Multi-byte characters: under the limit in UTF-16 units, over it in UTF-8 bytes.
    let wide = endpoint("wide", r"export default () => '\u00e9'.repeat(600 * 1024);");
    let e = err(invoke(&pool, &wide, json!(null)).await);
    assert_eq!(
        e,
        SandboxError::ResourceLimit("result too large".to_owned())
    );
    assert_neighbour_ok(&pool).await;
}

/// A handler's answer leaves the isolate as JSON text and is parsed once, where the server
/// needs its value: whatever a handler makes of it, a body over the result limit, or not JSON
/// as `serde_json` reads it (a lone surrogate, which `JSON.stringify` writes as an escape;
/// nesting past the parser's limit; a number out of range, which a web Response's text may
/// hold), is refused as it always was, in both places handlers run, and no worker dies of it.
/// A body nested just within the parser's limit is an answer (it once killed its worker: the
/// worker's frame nested it deeper than the server would parse).
#[tokio::test(flavor = "multi_thread")]
async fn answers_are_checked_as_json_text_in_both_modes() {
    let code = granted(
        "answers",
        r#"export default (req, ctx) => {
            const nest = (n) => { let v = 1; for (let i = 0; i < n; i++) v = [v]; return v; };
            switch (req.input) {
                case "huge": return "x".repeat(2 << 20);
                case "huge-respond": return ctx.respond(200, "x".repeat(2 << 20));
                case "huge-response": return new Response(JSON.stringify("x".repeat(2 << 20)));
                case "surrogate": return "\ud800";
                case "too-deep": return nest(200);
                case "out-of-range": return new Response("1e400");
                case "not-json-response": return new Response("{x}");
                case "deep": return nest(127);
                case "spaced": return new Response(" [1, 2] \n");
            }
        };"#,
    );
    let not_json = |e: &SandboxError| matches!(e, SandboxError::Internal(m) if m.starts_with("handler result is not JSON"));
    for (mode, sandbox, _) in both_modes(test_config()) {
        let call = |input: &str| sandbox.invoke(&code, request(json!(input)));
        for input in ["huge", "huge-respond", "huge-response"] {
            let e = err(call(input).await);
            assert_eq!(
                e,
                SandboxError::ResourceLimit("result too large".to_owned()),
                "{mode} {input}"
            );
        }
        for input in ["surrogate", "too-deep", "out-of-range"] {
            let e = err(call(input).await);
            assert!(not_json(&e), "{mode} {input}: {e:?}");
        }
        let e = err(call("not-json-response").await);
        assert!(
            matches!(&e, SandboxError::InvalidResponse(m) if m.contains("not JSON")),
            "{mode}: {e:?}"
        );
        let mut deep = ok(call("deep").await).body;
        let mut depth = 0;
        while let serde_json::Value::Array(mut inner) = deep {
            deep = inner.pop().unwrap();
            depth += 1;
        }
        assert_eq!((depth, deep), (127, json!(1)), "{mode}");
        assert_eq!(ok(call("spaced").await).body, json!([1, 2]), "{mode}");
        let stats = sandbox.stats().await;
        assert_eq!(stats.worker_restarts, 0, "{mode}: {stats:?}");
        sandbox.shutdown().await;
    }
}

/// A handler answering with a web `Response` cannot get past the limits through its body: a
/// body too large is refused like any result, one that never ends is cut by the time limit,
/// and a neighbour still answers.
#[tokio::test]
async fn web_response_bodies_are_bounded() {
    let (pool, _) = pool();
    let code = endpoint(
        "response-bodies",
        r#"export default (req) => {
            if (req.input === "huge") return new Response(JSON.stringify("x".repeat(2 << 20)));
            return new Response(new ReadableStream({ pull(c) { return new Promise(() => {}); } }));
        };"#,
    );
    let e = err(invoke(&pool, &code, json!("huge")).await);
    assert_eq!(
        e,
        SandboxError::ResourceLimit("result too large".to_owned())
    );
    let e = err(invoke(&pool, &code, json!("endless")).await);
    assert_eq!(e, SandboxError::Timeout);
    assert_neighbour_ok(&pool).await;
}

#[tokio::test]
async fn deep_recursion_is_a_handler_error() {
    let (pool, _) = pool();
    let code = endpoint(
        "recursion",
        r#"export default (req) => {
            if (req.input === "json") { let v = []; for (let i = 0; i < 1e5; i++) v = [v]; return v; }
            const f = (n) => f(n + 1) + 1;
            return f(0);
        };"#,
    );
    let e = err(invoke(&pool, &code, json!("call")).await);
    assert!(matches!(e, SandboxError::HandlerError(_)), "{e:?}");
    let e = err(invoke(&pool, &code, json!("json")).await);
    assert!(matches!(e, SandboxError::HandlerError(_)), "{e:?}");
    assert_neighbour_ok(&pool).await;
}

#[tokio::test]
async fn prototype_pollution_stays_inside_its_endpoint() {
    let (pool, _) = pool();
    let polluter = endpoint(
        "polluter",
        r#"export default () => {
            Object.prototype.polluted = "yes";
            Array.prototype.map = () => "hijacked";
            JSON.stringify = () => '"hijacked"';
            globalThis.leak = "A's global";
            return [1].map((x) => x);
        };"#,
    );
    assert_eq!(body(&pool, &polluter, json!(null)).await, json!("hijacked"));
    let victim = endpoint(
        "victim",
        r#"export default () => ({
            polluted: ({}).polluted ?? null,
            map: [1, 2].map((x) => x * 2),
            leak: globalThis.leak ?? null,
        });"#,
    );
    assert_eq!(
        body(&pool, &victim, json!(null)).await,
        json!({ "polluted": null, "map": [2, 4], "leak": null })
    );
    assert_neighbour_ok(&pool).await;
}

#[tokio::test]
async fn tampering_with_builtins_does_not_break_the_glue() {
    let (pool, host) = pool();
    let code = granted(
        "tamper",
        r#"export default async (req, ctx) => {
            if (req.input === "tamper") {
                JSON.parse = () => ({ hijacked: true });
                JSON.stringify = () => "{}";
                Object.freeze = (o) => o;
                Promise.prototype.then = function () { throw new Error("then hijacked"); };
                Object.defineProperty(Object.prototype, "then", { get() { return undefined; }, configurable: true });
                Array.prototype.push = () => { throw new Error("push hijacked"); };
                globalThis.console = { log() { throw new Error("console hijacked"); } };
                return "tampered";
            }
            await ctx.kv.set("after", { ok: true });
            ctx.log("still logging");
            return { value: await ctx.kv.get("after"), input: req.input };
        }"#,
    );
    assert_eq!(body(&pool, &code, json!("tamper")).await, json!("tampered"));
    let report = invoke(&pool, &code, json!({ "real": 1 })).await;
    assert_eq!(report.logs[0].message, "still logging");
    assert_eq!(
        ok(report).body,
        json!({ "value": { "ok": true }, "input": { "real": 1 } })
    );
    assert_eq!(
        host.kv
            .lock()
            .unwrap()
            .get(&("tamper".into(), "after".into()))
            .map(|(v, _)| v.clone()),
        Some(json!({ "ok": true }))
    );
    assert_neighbour_ok(&pool).await;
}

/// Builds a variant of an endpoint with new source (and so a new version).
trait EndpointCodeExt {
    fn with_source(&self, source: &str) -> Self;
}

impl EndpointCodeExt for sandbox::EndpointCode {
    fn with_source(&self, source: &str) -> Self {
        sandbox::EndpointCode {
            source: source.to_owned(),
            version: format!("{}+", self.version),
            ..self.clone()
        }
    }
}

#[tokio::test]
async fn a_panicking_host_fails_only_the_call() {
    let (pool, _) = pool();
    // The host's deliberate panics print their backtrace (symbolized, of a debug build, when
    // RUST_BACKTRACE is set) inside the call: give it time beyond the 1.5 s default, which
    // this test is not about.
    let code = sandbox::EndpointCode {
        limits: Some(sandbox::Limits {
            heap_bytes: 32 * 1024 * 1024,
            timeout: std::time::Duration::from_secs(20),
        }),
        ..granted(
            "host-panic",
            r#"let calls = 0;
            export default async (req, ctx) => {
                calls++;
                const codes = [];
                try { await ctx.kv.get("panic-now"); } catch (e) { codes.push(e.code); }
                try { await ctx.httpGetJson("https://panic.test/"); } catch (e) { codes.push(e.code); }
                return { calls, codes };
            };"#,
        )
    };
    assert_eq!(
        body(&pool, &code, json!(null)).await,
        json!({ "calls": 1, "codes": ["sandbox_internal", "sandbox_internal"] })
    );
    // Same isolate, still alive.
    assert_eq!(
        body(&pool, &code, json!(null)).await,
        json!({ "calls": 2, "codes": ["sandbox_internal", "sandbox_internal"] })
    );
    assert_neighbour_ok(&pool).await;
}

/// Runaways of every kind, each timed, in both places isolates run (threads of this process
/// and a worker process): the caller is answered by the time limit plus the grace, plus a
/// margin for a loaded machine, whatever the engine is doing: running bytecode, collecting
/// garbage near the heap limit, or inside one long built-in. Prints the time each took.
#[tokio::test(flavor = "multi_thread")]
async fn every_runaway_is_answered_by_its_time_limit() {
    use std::time::{Duration, Instant};
    // What a loaded machine may add, including a cold start or a worker replacing one that
    // held a stuck isolate.
    const MARGIN: Duration = Duration::from_secs(3);
    let cases = [
        ("loop", "export default () => { for (;;) {} };"),
        ("await loop", "export default async () => { for (;;) await null; };"),
        ("regex", "export default () => /^(a+)+$/.test('a'.repeat(64) + 'b');"),
        ("never settles", "export default () => new Promise(() => {});"),
        ("loop at load", "for (;;) {} export default () => 1;"),
        (
            "heap bomb",
            "export default () => { const h = []; for (;;) h.push('x'.repeat(1 << 20) + h.length); };",
        ),
        (
            "garbage churn near the heap limit",
            "export default () => { const keep = []; for (let i = 0; ; i++) { keep.push({ i, s: 'y' + i }); if (keep.length > 300000) keep.length = 150000; } };",
        ),
        (
            "long built-in: sort",
            "export default () => { for (;;) Array.from({ length: 300000 }, (_, i) => String((i * 7919) % 300007)).sort(); };",
        ),
        (
            "long built-in: JSON",
            "export default () => { const a = Array.from({ length: 200000 }, (_, i) => ({ i, t: 'z' + i })); for (;;) JSON.parse(JSON.stringify(a)); };",
        ),
    ];
    let config = test_config();
    let bound = config.default_limits.timeout + config.timeout_grace + MARGIN;
    let host = std::sync::Arc::new(MemoryHost::default());
    let worker = sandbox::WorkerCommand {
        program: env!("CARGO_BIN_EXE_sandbox-worker").into(),
        args: Vec::new(),
        log_filter: "error".into(),
    };
    let places = [
        (
            "in-process",
            sandbox::Sandbox::new(config.clone(), host.clone(), sandbox::Isolation::InProcess),
        ),
        (
            "worker",
            sandbox::Sandbox::new(
                config.clone(),
                host.clone(),
                sandbox::Isolation::Workers(sandbox::WorkerOptions {
                    command: worker,
                    count: 1,
                    recycle_after_dropped: sandbox::WorkerOptions::DEFAULT_RECYCLE_AFTER_DROPPED,
                }),
            ),
        ),
    ];
    let mut table = Vec::new();
    for (place, sandbox) in &places {
        sandbox.start().await.unwrap();
        for (n, (case, source)) in cases.iter().enumerate() {
            let code = endpoint(&format!("runaway-{n}"), source);
            let started = Instant::now();
            let report = sandbox.invoke(&code, request(json!(null))).await;
            let took = started.elapsed();
            let outcome = err(report);
            table.push(format!(
                "{place:>10} | {case:<34} | {took:>9.2?} | {}",
                outcome.code()
            ));
            assert!(
                matches!(
                    outcome,
                    SandboxError::Timeout | SandboxError::ResourceLimit(_)
                ),
                "{place} {case}: {outcome:?}"
            );
            assert!(
                took <= bound,
                "{place} {case}: answered after {took:?} (bound {bound:?})"
            );
        }
        let neighbour = endpoint("neighbour", ECHO);
        let answer = sandbox.invoke(&neighbour, request(json!(1))).await;
        assert_eq!(ok(answer).body, json!({ "echo": 1 }), "{place}");
        sandbox.shutdown().await;
    }
    eprintln!(
        "time limit {:?}, grace {:?}:\n{}",
        config.default_limits.timeout,
        config.timeout_grace,
        table.join("\n")
    );
}

/// Timers left behind by one call never fire in the next call on the same isolate
/// (fixtures/hostile/timer-outlives-call.js).
#[tokio::test]
async fn timers_do_not_outlive_their_call() {
    let (pool, _) = pool();
    let code = endpoint(
        "timer-outlives-call",
        include_str!("../../fixtures/hostile/timer-outlives-call.js"),
    );
    assert_eq!(
        body(&pool, &code, json!(null)).await,
        json!({ "leaked": null })
    );
    for _ in 0..3 {
        let armed = ok(invoke(&pool, &code, json!({ "phase": "arm" })).await);
        assert_eq!(armed.body, json!({ "armed": true }));
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert_eq!(
            body(&pool, &code, json!(null)).await,
            json!({ "leaked": null })
        );
    }
    assert_eq!(pool.stats().isolates_created, 1);
    assert_neighbour_ok(&pool).await;
}

/// Thousands of intervals: bounded by the time limit when the handler waits, stopped with the
/// call when it answers, and the isolate answers the next call promptly.
#[tokio::test]
async fn an_interval_storm_ends_with_its_call() {
    let (pool, _) = pool();
    // 4 s rather than the suite's 1.5: the call after the timeout starts a fresh isolate and
    // arms 5,000 intervals, which a debug build on a busy 2-core machine took over 1.5 s to
    // get through (CI of 50e1522).
    let code = sandbox::EndpointCode {
        limits: Some(sandbox::Limits {
            heap_bytes: 32 * 1024 * 1024,
            timeout: std::time::Duration::from_secs(4),
        }),
        ..endpoint(
            "interval-storm",
            include_str!("../../fixtures/hostile/interval-storm.js"),
        )
    };
    let started = std::time::Instant::now();
    let e = err(invoke(&pool, &code, json!({ "wait": true })).await);
    assert_eq!(e, SandboxError::Timeout);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(
        body(&pool, &code, json!(null)).await,
        json!({ "ticking": true })
    );
    // The third call shares its isolate with the second, whose storm must not keep it from
    // answering within its time limit. (Not a tighter bound: arming 5,000 intervals took over
    // a second in a debug build beside a release build, CI of d68b846.)
    let started = std::time::Instant::now();
    assert_eq!(
        body(&pool, &code, json!(null)).await,
        json!({ "ticking": true })
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(4));
    assert_neighbour_ok(&pool).await;
}

/// An endless ReadableStream read into memory hits the heap limit; Blobs (bytes outside the
/// JS heap) hit the isolate's blob budget.
#[tokio::test]
async fn huge_streams_and_blobs_are_bounded() {
    let (pool, _) = pool();
    let code = endpoint(
        "huge-stream",
        include_str!("../../fixtures/hostile/huge-stream.js"),
    );
    let e = err(invoke(&pool, &code, json!({ "kind": "stream" })).await);
    assert_eq!(
        e,
        SandboxError::ResourceLimit("heap limit exceeded".to_owned())
    );
    let e = err(invoke(&pool, &code, json!({ "kind": "blob" })).await);
    assert!(
        matches!(e, SandboxError::HandlerError(ref m) if m.contains("blobs in this isolate")),
        "{e:?}"
    );
    assert_neighbour_ok(&pool).await;
}
