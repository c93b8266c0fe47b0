//! One builder cannot spend the `ctx` operations a worker has for every builder (issue 36).
//! An attacker's call that starts hundreds of slow `ctx.httpGetJson` requests at once gets
//! its call's share of outbound requests (`fetch` and `httpGetJson` together: 6 at once) and
//! `too_large` for the rest, while another builder's kv calls on the same worker go on. (The
//! server's own cap on one builder's operations in progress, for a worker that ignores the
//! call's share, is proven with a compromised worker in `sandbox/tests/wall.rs`.)

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{sandbox_isolation, As, TestServer};

/// Starts `n` `ctx.httpGetJson` requests at once and counts how they ended, by error code.
const FLOOD: &str = r#"
export default async function (req, ctx) {
  const settled = await Promise.allSettled(
    Array.from({ length: req.input.n }, () => ctx.httpGetJson(req.input.url)));
  const ended = {};
  for (const s of settled) {
    const key = s.status === "fulfilled" ? "ok" : (s.reason.code ?? s.reason.name);
    ended[key] = (ended[key] ?? 0) + 1;
  }
  return ended;
}
"#;

/// Counts in kv.
const COUNTER: &str = r#"
export default async function (req, ctx) {
  const n = ((await ctx.kv.get("n")) ?? 0) + 1;
  await ctx.kv.set("n", n);
  return { n };
}
"#;

fn js(slug: &str, source: &str, capabilities: Value) -> Value {
    json!({
        "slug": slug, "title": slug, "description": "A tenant.", "priceUsd": 0,
        "handlerType": "js_request_response", "source": source,
        "capabilities": capabilities, "safetyAttestation": {"accepted": true},
    })
}

#[tokio::test]
async fn one_builders_operations_cannot_crowd_out_another_builders() {
    // A peer that answers after 3 s: every request of the flood stays in progress.
    let peer = crate::util::hostile::slow_peer().await;
    let server = TestServer::start_with(|c| {
        c.outbound.allow_loopback = true;
        c.runtime.pool.default_limits.timeout = Duration::from_secs(20);
    })
    .await;
    let (_, attacker) = server.builder("Flooder").await;
    let (_, victim) = server.builder("Counter").await;
    server
        .create(
            As::Builder(&attacker),
            &js("flood", FLOOD, json!({"httpGetJson": true})),
        )
        .await;
    server.grant("flood", json!({"httpGetJson": true})).await;
    server
        .create(
            As::Builder(&victim),
            &js("count", COUNTER, json!({"kv": true})),
        )
        .await;
    server.grant("count", json!({"kv": true})).await;

    let input = json!({"n": 400, "url": format!("http://{peer}/slow")});
    let flood = server.post("/tools/flood", &input);
    let victims = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        for i in 1..=10 {
            let (status, body) = server.post("/tools/count", &json!({})).await;
            assert_eq!(status, 200, "the victim's call {i}: {body}");
            assert_eq!(body["n"], i, "{body}");
        }
    };
    let ((status, ended), ()) = tokio::join!(flood, victims);
    assert_eq!(status, 200, "{ended}");
    assert_eq!(ended, json!({"ok": 6, "too_large": 394}), "{ended}");
}

/// Writes `req.input.n` kv values of 60 KiB at once, counts how they ended, by error code, and
/// how many keys the endpoint then has.
const REWRITER: &str = r#"
export default async function (req, ctx) {
  const big = "x".repeat(60 * 1024);
  const settled = await Promise.allSettled(
    Array.from({ length: req.input.n }, (_, i) => ctx.kv.set(`k${i}`, big)));
  const ended = {};
  for (const s of settled) {
    const key = s.status === "fulfilled" ? "ok" : s.reason.code;
    ended[key] = (ended[key] ?? 0) + 1;
  }
  const message = settled.find((s) => s.status === "rejected")?.reason.message ?? null;
  let keys = 0;
  let cursor;
  do {
    const page = await ctx.kv.list({ cursor });
    keys += page.entries.length;
    cursor = page.cursor;
  } while (cursor);
  return { ended, message, keys };
}
"#;

/// One builder's writes are paced (issue 36): the bytes its handlers write are taken from a
/// bucket of its own (here 1 MiB at once, then 256 KiB a second), so an attacker rewriting
/// 60 KiB values gets its burst and the writes that fit within 250 ms of waiting, and
/// `resource_limit` for the rest, which write nothing; another builder's writes at the same
/// moment draw on their own bucket and all pass.
#[tokio::test]
async fn one_builders_writes_are_paced_and_anothers_are_not() {
    let server = TestServer::start_with(|c| {
        c.runtime.quotas.builder_write_burst_bytes = 1 << 20;
        c.runtime.quotas.builder_write_bytes_per_sec = 256 << 10;
    })
    .await;
    let (_, attacker) = server.builder("Rewriter").await;
    let (_, victim) = server.builder("Counter").await;
    for (who, slug, source) in [
        (&attacker, "rewrite", REWRITER),
        (&victim, "count", COUNTER),
    ] {
        server
            .create(As::Builder(who), &js(slug, source, json!({"kv": true})))
            .await;
        server.grant(slug, json!({"kv": true})).await;
    }

    let forty = json!({"n": 40});
    let rewrite = async {
        let started = std::time::Instant::now();
        let answer = server.post("/tools/rewrite", &forty).await;
        (answer, started.elapsed())
    };
    let victims = async {
        for i in 1..=5 {
            let (status, body) = server.post("/tools/count", &json!({})).await;
            assert_eq!(status, 200, "the victim's call {i}: {body}");
            assert_eq!(body["n"], i, "{body}");
        }
    };
    let (((status, body), took), ()) = tokio::join!(rewrite, victims);
    assert_eq!(status, 200, "{body}");
    // Each write is its key (2-3 bytes) and 61,442 bytes of JSON: 17 fit the 1 MiB burst,
    // 1 more within 250 ms at 256 KiB a second (62.5 ms per 16 KiB: ~4 KiB to spare after the
    // 17th, so the 18th waits ~220 ms), and the rest would wait longer. Writes reach the pace
    // a few at a time, so a slower store (PostgreSQL commits each) lets the bucket refill
    // while the call runs: at most what 256 KiB a second refilled over the whole call, more.
    let ok = body["ended"]["ok"].as_u64().unwrap_or(0);
    let refused = body["ended"]["resource_limit"].as_u64().unwrap_or(0);
    let refilled = (took.as_secs_f64() * f64::from(256 << 10) / 61_445.0).ceil() as u64;
    assert!(
        (17..=19 + refilled).contains(&ok),
        "{body} (the call took {took:?})"
    );
    assert_eq!(
        ok + refused,
        40,
        "every write either ran or was refused: {body}"
    );
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("262144 bytes a second"),
        "the message names the pace: {body}"
    );
    assert_eq!(body["keys"], ok, "a refused write wrote nothing: {body}");
}

/// Tries each `ctx` op after `req.input.wait` ms and says how each ended: `{ok}` or `{code}`.
const LINGER: &str = r#"
export default async function (req, ctx) {
  if (req.input.wait) await new Promise((resolve) => setTimeout(resolve, req.input.wait));
  const tried = {};
  const attempt = async (name, op) => {
    try { tried[name] = { ok: (await op()) ?? null }; } catch (e) { tried[name] = { code: e.code }; }
  };
  await attempt("kvSet", () => ctx.kv.set("secret", "the old owner's"));
  await attempt("filesRead", () => ctx.files.read("note.txt"));
  await attempt("filesWrite", () => ctx.files.write("note.txt", "overwritten by the old owner"));
  await attempt("kvGet", () => ctx.kv.get("secret"));
  await attempt("kvList", () => ctx.kv.list());
  return tried;
}
"#;

/// Reads what the endpoint has: its kv and its file.
const READER: &str = r#"
export default async function (req, ctx) {
  return {
    secret: (await ctx.kv.get("secret")) ?? null,
    keys: (await ctx.kv.list()).entries.length,
    note: await ctx.files.read("note.txt"),
  };
}
"#;

/// A deleted slug's next owner shares nothing with the old owner's calls still running
/// (issue 36, 4): the delete stops the old call (in worker processes: answered 404 at once, its
/// ops refused as of a call that ended) and the host refuses the ops of a deleted endpoint
/// (`endpoint_deleted`, what an in-process sandbox meets), so it can neither read the file the
/// new owner uploaded nor write into the new owner's kv or files; the new owner starts with none
/// of the old data; and the old owner's logs are not the new owner's.
#[tokio::test]
async fn a_deleted_slugs_next_owner_shares_nothing_with_the_old_calls() {
    // Without the reservation that keeps a deleted slug its former owner's for a while (or
    // once it is over), another builder may claim it at once.
    let server = TestServer::start_with(|c| {
        c.runtime.pool.default_limits.timeout = Duration::from_secs(20);
        c.retention.deleted_slugs = Duration::ZERO;
    })
    .await;
    let caps = json!({"kv": true, "files": true, "logs": true});
    let (_, old) = server.builder("Old owner").await;
    let (_, new) = server.builder("New owner").await;
    server
        .create(As::Builder(&old), &js("shared-slug", LINGER, caps.clone()))
        .await;
    server.grant("shared-slug", caps.clone()).await;
    let (status, first) = server.post("/tools/shared-slug", &json!({})).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["kvSet"], json!({"ok": null}), "{first}");
    assert_eq!(first["kvGet"], json!({"ok": "the old owner's"}), "{first}");

    let wait = json!({"wait": 2500});
    let lingering = server.post("/tools/shared-slug", &wait);
    let takeover = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (status, body) = server
            .call(
                "DELETE",
                "/ai/endpoints/shared-slug",
                As::Builder(&old),
                None,
            )
            .await;
        assert_eq!(status, 200, "{body}");
        let mut created = js("shared-slug", READER, caps.clone());
        created["files"] = json!({"note.txt": "the new owner's own"});
        server.create(As::Builder(&new), &created).await;
        server.grant("shared-slug", caps.clone()).await;
    };
    let started = Instant::now();
    let ((status, tried), ()) = tokio::join!(lingering, takeover);
    if matches!(sandbox_isolation(), sandbox::Isolation::InProcess) {
        // The call runs on to its end; each of its ops is refused by the host.
        assert_eq!(status, 200, "{tried}");
        for op in ["kvSet", "filesRead", "filesWrite", "kvGet", "kvList"] {
            assert_eq!(
                tried[op],
                json!({"code": "endpoint_deleted"}),
                "{op}: {tried}"
            );
        }
    } else {
        // The delete stopped the call: answered at once, its code in the worker refused
        // everything it tries from then on (`call_ended`). Its ops run at 2.5 s: wait past it.
        assert_eq!(status, 404, "{tried}");
        assert_eq!(tried["error"]["code"], "endpoint_not_found", "{tried}");
        assert!(
            started.elapsed() < Duration::from_millis(2500),
            "stopped at once"
        );
        tokio::time::sleep(Duration::from_millis(3000).saturating_sub(started.elapsed())).await;
    }

    let (status, seen) = server.post("/tools/shared-slug", &json!({})).await;
    assert_eq!(status, 200, "{seen}");
    assert_eq!(
        seen,
        json!({"secret": null, "keys": 0, "note": "the new owner's own"}),
        "the new owner sees only its own data"
    );
    let (status, logs) = server
        .call(
            "GET",
            "/ai/endpoints/shared-slug/logs",
            As::Builder(&new),
            None,
        )
        .await;
    assert_eq!(status, 200, "{logs}");
    assert_eq!(
        logs["entries"].as_array().map(Vec::len),
        Some(1),
        "only the new owner's own call: {logs}"
    );
}
