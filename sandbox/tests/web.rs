//! The web platform inside a handler isolate (sandbox/src/ops/50_web.js): each WinterTC Minimum
//! Common API global exercised from a real isolate, timers tied to their call, and the parts of
//! deno_web a handler must not get.

mod util;

use std::time::{Duration, Instant};

use sandbox::SandboxError;
use serde_json::json;
use util::*;

#[tokio::test]
async fn url_encoding_base64_and_structured_clone() {
    let (pool, _) = pool();
    let code = endpoint(
        "web-basics",
        r#"export default async function () {
            const u = new URL("../b/./c?x=1&y=%20z#frag", "HTTPS://User:pw@EXAMPLE.com:443/a/d");
            const q = new URLSearchParams("a=1&b=2&a=3");
            q.append("c", "ä €");
            const bytes = new TextEncoder().encode("héllo €");
            const clone = structuredClone({ d: new Date(0), m: new Map([[1, { s: new Set([2]) }]]), b: new Uint8Array([1, 2]) });
            let badBase64;
            try { atob("*"); } catch (e) { badBase64 = [e.name, e instanceof DOMException]; }
            let fatal;
            try { new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array([0xff])); } catch (e) { fatal = e.name; }
            let cloneFn;
            try { structuredClone(() => 1); } catch (e) { cloneFn = e.name; }
            return {
                href: u.href, host: u.host, origin: u.origin, search: u.searchParams.get("y"),
                invalid: URL.canParse("http://[::1"), punycode: new URL("http://bücher.example/").hostname,
                all: q.getAll("a"), query: q.toString(),
                bytes: Array.from(bytes), text: new TextDecoder().decode(bytes),
                latin1: new TextDecoder("windows-1252").decode(new Uint8Array([0x80, 0xe9])),
                b64: btoa("hello"), unb64: atob("aGVsbG8="), badBase64, fatal,
                clone: [clone.d instanceof Date, clone.d.getTime(), clone.m.get(1).s.has(2), Array.from(clone.b)],
                cloneFn,
            };
        }"#,
    );
    let answer = body(&pool, &code, json!(null)).await;
    assert_eq!(
        answer,
        json!({
            "href": "https://User:pw@example.com/b/c?x=1&y=%20z#frag",
            "host": "example.com",
            "origin": "https://example.com",
            "search": " z",
            "invalid": false,
            "punycode": "xn--bcher-kva.example",
            "all": ["1", "3"],
            "query": "a=1&b=2&a=3&c=%C3%A4+%E2%82%AC",
            "bytes": [104, 195, 169, 108, 108, 111, 32, 226, 130, 172],
            "text": "héllo €",
            "latin1": "€é",
            "b64": "aGVsbG8=",
            "unb64": "hello",
            "badBase64": ["InvalidCharacterError", true],
            "fatal": "TypeError",
            "clone": [true, 0, true, [1, 2]],
            "cloneFn": "DataCloneError",
        })
    );
}

#[tokio::test]
async fn events_abort_timers_and_performance() {
    let (pool, _) = pool();
    let code = endpoint(
        "web-events",
        r#"export default async function () {
            const order = [];
            const target = new EventTarget();
            target.addEventListener("ping", (e) => order.push(`event:${e.type}:${e.detail}`));
            target.dispatchEvent(new CustomEvent("ping", { detail: 7 }));
            const controller = new AbortController();
            controller.signal.addEventListener("abort", () => order.push("aborted"));
            controller.abort(new Error("stop"));
            const t0 = performance.now();
            await new Promise((resolve) => setTimeout(() => { order.push("timeout"); resolve(); }, 20));
            const waited = performance.now() - t0;
            const cancelled = setTimeout(() => order.push("never"), 1);
            clearTimeout(cancelled);
            let ticks = 0;
            await new Promise((resolve) => {
                const id = setInterval(() => { ticks++; if (ticks === 3) { clearInterval(id); resolve(); } }, 1);
            });
            queueMicrotask(() => order.push("microtask"));
            const timedOut = await new Promise((resolve) => {
                const signal = AbortSignal.timeout(10);
                signal.addEventListener("abort", () => resolve([signal.reason.name, signal.reason instanceof DOMException]));
            });
            await new Promise((resolve) => setTimeout(resolve, 5));
            return {
                order, reason: controller.signal.reason.message, waited: waited >= 15, ticks, timedOut,
                domException: new DOMException("m", "NotFoundError").code,
                origin: typeof performance.timeOrigin,
            };
        }"#,
    );
    let answer = body(&pool, &code, json!(null)).await;
    assert_eq!(
        answer,
        json!({
            "order": ["event:ping:7", "aborted", "timeout", "microtask"],
            "reason": "stop",
            "waited": true,
            "ticks": 3,
            "timedOut": ["TimeoutError", true],
            "domException": 8,
            "origin": "number",
        })
    );
}

#[tokio::test]
async fn headers_request_response_blob_and_streams() {
    let (pool, _) = pool();
    let code = endpoint(
        "web-fetch-types",
        r#"export default async function () {
            const h = new Headers({ "Content-Type": "text/plain" });
            h.append("x-a", "1");
            h.append("X-A", "2");
            let badHeader;
            try { h.set("bad name", "v"); } catch (e) { badHeader = e.name; }
            const req = new Request("https://api.example/items?q=1", {
                method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: 1 }),
            });
            const res = Response.json({ ok: true }, { status: 201, headers: { "x-b": "y" } });
            const blob = new Blob(["ab", new Uint8Array([99])], { type: "text/plain" });
            const stream = new ReadableStream({
                start(c) { c.enqueue("a"); c.enqueue("b"); c.close(); },
            });
            const upper = stream.pipeThrough(new TransformStream({
                transform(chunk, c) { c.enqueue(chunk.toUpperCase()); },
            }));
            const chunks = [];
            await upper.pipeTo(new WritableStream({ write(chunk) { chunks.push(chunk); } }));
            const streamed = await new Response(new Blob(["x", "y"]).stream()).text();
            const bodyUsed = new Response("once");
            await bodyUsed.text();
            let twice;
            try { await bodyUsed.text(); } catch (e) { twice = e.name; }
            return {
                headers: [...h], badHeader,
                req: [req.method, req.url, req.headers.get("content-type"), await req.json()],
                res: [res.status, res.headers.get("content-type"), res.headers.get("x-b"), await res.json()],
                text: await new Response("héllo").text(),
                bytes: Array.from(new Uint8Array(await new Response(new Uint8Array([1, 2, 3])).arrayBuffer())),
                blob: [blob.size, blob.type, await blob.text(), await blob.slice(1).text()],
                chunks, streamed, twice,
                redirect: Response.redirect("https://example.com/", 302).headers.get("location"),
            };
        }"#,
    );
    let answer = body(&pool, &code, json!(null)).await;
    assert_eq!(
        answer,
        json!({
            "headers": [["content-type", "text/plain"], ["x-a", "1, 2"]],
            "badHeader": "TypeError",
            "req": ["POST", "https://api.example/items?q=1", "application/json", { "n": 1 }],
            "res": [201, "application/json", "y", { "ok": true }],
            "text": "héllo",
            "bytes": [1, 2, 3],
            "blob": [3, "text/plain", "abc", "bc"],
            "chunks": ["A", "B"],
            "streamed": "xy",
            "twice": "TypeError",
            "redirect": "https://example.com/",
        })
    );
}

/// Only the chosen globals: nothing from deno_web that shares state or reaches beyond the
/// isolate (`fetch` is there, behind its capability: sandbox/tests/fetch.rs).
#[tokio::test]
async fn deno_web_extras_are_not_installed() {
    let (pool, _) = pool();
    let code = endpoint(
        "web-extras",
        r#"export default async function () {
            const names = ["BroadcastChannel", "MessageChannel", "MessagePort", "Worker", "location",
                "CompressionStream", "DecompressionStream", "Deno", "window", "self",
                "FileReader", "URLPattern", "ImageData", "DOMMatrix", "Window", "WebSocket"];
            const present = names.filter((name) => name in globalThis);
            let client;
            try { new Request("https://a.example/", { client: {} }); } catch (e) { client = e.name; }
            // With no way to make a blob URL, one names nothing.
            const blobUrl = (await new Request("blob:null/00000000-0000-0000-0000-000000000000").blob()).size;
            return {
                present, client, blobUrl,
                objectUrl: [typeof URL.createObjectURL, typeof URL.revokeObjectURL],
            };
        }"#,
    );
    let answer = body(&pool, &code, json!(null)).await;
    assert_eq!(
        answer,
        json!({
            "present": [],
            "client": "TypeError",
            "blobUrl": 0,
            "objectUrl": ["undefined", "undefined"],
        })
    );
}

/// A timer still pending when its call answers never fires: not later in the idle isolate,
/// not in the next call on it. The second call would see the first call's mark on a shared
/// global.
#[tokio::test]
async fn a_timer_never_fires_after_its_call() {
    let (pool, _) = pool();
    let code = endpoint(
        "web-timer-leak",
        r#"export default async function (req) {
            if (req.input === "arm") {
                setTimeout(() => { globalThis.leaked = "timeout"; }, 30);
                setInterval(() => { globalThis.leaked = "interval"; }, 10);
                AbortSignal.timeout(30).addEventListener("abort", () => { globalThis.leaked = "abort-signal"; });
                Promise.resolve().then(() => Promise.resolve()).then(() => {
                    setTimeout(() => { globalThis.leaked = "late-timeout"; }, 0);
                });
                return "armed";
            }
            await new Promise((resolve) => setTimeout(resolve, 100));
            return globalThis.leaked ?? "clean";
        }"#,
    );
    assert_eq!(body(&pool, &code, json!("arm")).await, json!("armed"));
    tokio::time::sleep(Duration::from_millis(80)).await;
    assert_eq!(body(&pool, &code, json!("check")).await, json!("clean"));
    assert_eq!(pool.stats().isolates_created, 1);
}

/// A handler that throws still has its timers cancelled.
#[tokio::test]
async fn timers_are_cancelled_when_the_call_throws() {
    let (pool, _) = pool();
    let code = endpoint(
        "web-timer-throw",
        r#"export default async function (req) {
            if (req.input === "arm") {
                setTimeout(() => { globalThis.leaked = true; }, 10);
                throw new Error("after arming");
            }
            await new Promise((resolve) => setTimeout(resolve, 60));
            return globalThis.leaked ?? "clean";
        }"#,
    );
    let e = err(invoke(&pool, &code, json!("arm")).await);
    assert!(
        matches!(e, SandboxError::HandlerError(ref m) if m.contains("after arming")),
        "{e:?}"
    );
    assert_eq!(body(&pool, &code, json!("check")).await, json!("clean"));
    assert_eq!(pool.stats().isolates_created, 1);
}

/// A timer longer than the call's time limit cannot hold the call past it.
#[tokio::test]
async fn waiting_on_a_timer_is_bounded_by_the_time_limit() {
    let (pool, _) = pool();
    let code = endpoint(
        "web-timer-long",
        "export default () => new Promise((resolve) => setTimeout(resolve, 60_000));",
    );
    let started = Instant::now();
    let e = err(invoke(&pool, &code, json!(null)).await);
    assert!(matches!(e, SandboxError::Timeout), "{e:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_neighbour_ok(&pool).await;
}

/// `Temporal` (the engine binding's polyfill, about a megabyte of heap) is an accessor until a
/// handler reads it: a handler that never reads it does not pay for it. A source that names it
/// gets it read before its module runs, as a web global it names; one that reaches it
/// without naming it (a computed name) loads it on that first read. Either way it works, and
/// the global ends up as the data property ECMAScript defines. Its time zones work (they did
/// not before: the polyfill looked them up through the global `Intl`, which the glue refuses).
#[tokio::test]
async fn temporal_loads_when_first_read() {
    let (pool, _) = pool();
    // "Tempo" + "ral": this source does not name it, so nothing reads it ahead of time.
    let unnamed = endpoint(
        "temporal-unnamed",
        r#"const name = "Tempo" + "ral";
        const kind = (d) => (d === undefined ? "absent" : "get" in d ? "accessor" : "data");
        export default async function () {
            const before = kind(Object.getOwnPropertyDescriptor(globalThis, name));
            const T = globalThis[name];
            const after = Object.getOwnPropertyDescriptor(globalThis, name);
            return {
                before, after: kind(after),
                flags: [after.writable, after.enumerable, after.configurable],
                tag: Object.prototype.toString.call(T),
                date: T.PlainDate.from("2024-02-28").add({ days: 1 }).toString(),
                instant: T.Instant.from("2020-01-01T00:00:00Z").epochMilliseconds,
            };
        }"#,
    );
    assert_eq!(
        body(&pool, &unnamed, json!(null)).await,
        json!({
            "before": "accessor",
            "after": "data",
            "flags": [true, false, true],
            "tag": "[object Temporal]",
            "date": "2024-02-29",
            "instant": 1577836800000u64,
        })
    );
    // Time zones come from the engine binding's own zone data (the polyfill's private
    // `Intl.DateTimeFormat`); formatting for a locale stays refused, as `Intl` is.
    let named = endpoint(
        "temporal-named",
        r#"const d = Object.getOwnPropertyDescriptor(globalThis, "Temporal");
        const attempt = (f) => { try { return f(); } catch (e) { return `${e.name}: ${e.message}`; } };
        export default async () => ({
            atLoad: "value" in d,
            days: Temporal.PlainDate.from("2024-03-01").since("2024-02-01").days,
            instant: Temporal.Instant.fromEpochMilliseconds(0).toString(),
            beforeYearOne: ["-000001-06-01T00:00:00Z", "0000-06-01T00:00:00Z"]
                .map((s) => Temporal.Instant.from(s).toString()),
            now: typeof Temporal.Now.instant().toString(),
            zone: Temporal.Now.timeZoneId(),
            springForward: Temporal.ZonedDateTime.from("2024-03-10T01:30:00[America/New_York]")
                .add({ hours: 1 }).toString(),
            berlin: Temporal.Instant.from("2024-07-01T12:00:00Z").toZonedDateTimeISO("Europe/Berlin")
                .toString(),
            unknownZone: attempt(() => Temporal.ZonedDateTime.from("2024-01-01T00:00[Mars/Olympus]")),
            locale: attempt(() => Temporal.PlainDate.from("2024-02-28").toLocaleString()),
        });"#,
    );
    let refused = "TypeError: Intl.DateTimeFormat is not supported in toolhost handlers \
                   (no ECMA-402 locale data); format in your own code or in the caller";
    assert_eq!(
        body(&pool, &named, json!(null)).await,
        json!({
            "atLoad": true,
            "days": 29,
            "instant": "1970-01-01T00:00:00Z",
            "beforeYearOne": ["-000001-06-01T00:00:00Z", "0000-06-01T00:00:00Z"],
            "now": "string",
            "zone": "UTC",
            "springForward": "2024-03-10T03:30:00-04:00[America/New_York]",
            "berlin": "2024-07-01T14:00:00+02:00[Europe/Berlin]",
            "unknownZone": "RangeError: Unrecognized time zone Mars/Olympus",
            "locale": refused,
        })
    );
    // Assigning it before it is read replaces it, as for any writable global.
    let replaced = endpoint(
        "temporal-replaced",
        r#"export default async () => {
            globalThis["Tempo" + "ral"] = 7;
            return globalThis["Tempo" + "ral"];
        };"#,
    );
    assert_eq!(body(&pool, &replaced, json!(null)).await, json!(7));
}

/// `Temporal`'s functions read as native code, as a built-in `Temporal`'s do in V8: the
/// polyfill is cached once per process without its source text (422 KB that every isolate
/// using it kept a copy of). It works as before, and its errors keep their stack.
#[tokio::test]
async fn temporal_functions_read_as_native_code() {
    let (pool, _) = pool();
    let code = endpoint(
        "temporal-text",
        r#"export default async () => {
            let stack = "";
            try { Temporal.PlainDate.from("2024-13-45"); } catch (e) { stack = e.stack; }
            return {
                plainDate: String(Temporal.PlainDate).includes("[native code]"),
                from: Temporal.PlainDate.from.toString().includes("[native code]"),
                add: Function.prototype.toString.call(Temporal.PlainDate.prototype.add)
                    .includes("[native code]"),
                longest: Math.max(...Object.values(Object.getOwnPropertyDescriptors(
                    Temporal.PlainDate.prototype)).map((d) => String(d.value ?? d.get).length)),
                date: Temporal.PlainDate.from("2024-02-28").add({ days: 1 }).toString(),
                stack: stack.includes("temporal-polyfill"),
            };
        };"#,
    );
    // Two isolates, the second a new one: each evaluates the polyfill from the cache.
    for _ in 0..2 {
        let answer = body(&pool, &code, json!(null)).await;
        assert_eq!(answer["plainDate"], json!(true), "{answer}");
        assert_eq!(answer["from"], json!(true), "{answer}");
        assert_eq!(answer["add"], json!(true), "{answer}");
        assert!(answer["longest"].as_u64().unwrap() < 80, "{answer}");
        assert_eq!(answer["date"], json!("2024-02-29"));
        assert_eq!(answer["stack"], json!(true), "{answer}");
        pool.retire("temporal-text");
    }
}

/// Every isolate restores the runtime's own scripts from the startup snapshot without their
/// source text (each restored context kept a copy of it, about 170 KB), so their functions
/// read as native code, as a built-in's or a browser's do, in V8's form; a handler's own
/// functions keep their source, and errors keep their lines.
#[tokio::test]
async fn runtime_functions_read_as_native_code_and_handlers_keep_their_source() {
    let (pool, _) = pool();
    let code = endpoint(
        "function-text",
        r#"function mine(a) { return a + 1; }
        class Thing { size() { return 1; } }
        export default async () => {
            let stack = "";
            try { null.property; } catch (e) { stack = e.stack; }
            return {
                builtin: Math.max.toString(),
                called: Function.prototype.toString.call(JSON.parse),
                runtime: String(setTimeout),
                ownToString: Object.hasOwn(setTimeout, "toString"),
                mine: mine.toString(),
                thing: String(Thing),
                arrow: ((x) => x * 2).toString(),
                line: stack.includes(":5:"),
            };
        };"#,
    );
    assert_eq!(
        body(&pool, &code, json!(null)).await,
        json!({
            "builtin": "function max() { [native code] }",
            "called": "function parse() { [native code] }",
            "runtime": "function setTimeout() { [native code] }",
            "ownToString": false,
            "mine": "function mine(a) { return a + 1; }",
            "thing": "class Thing { size() { return 1; } }",
            "arrow": "(x) => x * 2",
            "line": true,
        })
    );
}
