//! `ctx.kv.getEntry` and `ctx.kv.atomic()` from inside real isolates, in both modes: on threads
//! of this process, and in a worker process whose operations cross to this process's host and
//! are checked again there. Hostile arguments are refused with clear errors and write nothing.

mod util;

use std::sync::Arc;

use sandbox::{EndpointCode, Sandbox};
use serde_json::{json, Value};
use util::*;

/// The two ways handlers run, each with its own in-memory host, started.
async fn modes() -> Vec<(&'static str, Sandbox, Arc<MemoryHost>)> {
    let modes = both_modes(test_config());
    for (_, sandbox, _) in &modes {
        sandbox.start().await.unwrap();
    }
    modes
}

async fn run(sandbox: &Sandbox, code: &EndpointCode, input: Value) -> Value {
    ok(sandbox.invoke(code, request(input)).await).body
}

const ROUND_TRIP: &str = r#"export default async function (req, ctx) {
    const absent = await ctx.kv.getEntry("k");
    await ctx.kv.set("k", { n: 1 });
    const entry = await ctx.kv.getEntry("k");
    const committed = await ctx.kv.atomic()
        .check(entry)
        .check("fresh", null)
        .set("fresh", [1], { ttlSeconds: 60 })
        .sum("count", 5)
        .sum("count", -2)
        .delete("k")
        .commit();
    // The same check again: k has moved on (deleted), so it fails and writes nothing.
    const stale = await ctx.kv.atomic().check(entry).set("never", 1).commit();
    const fresh = await ctx.kv.getEntry("fresh");
    // A plain set moves the versionstamp: a check taken before it fails.
    await ctx.kv.set("fresh", [2]);
    const raced = await ctx.kv.atomic().check("fresh", fresh.versionstamp).sum("count", 1).commit();
    const count = await ctx.kv.getEntry("count");
    return { absent, entry, committed, stale, fresh, raced, count, k: await ctx.kv.get("k") };
}"#;

#[tokio::test(flavor = "multi_thread")]
async fn atomic_commits_check_versionstamps_in_both_modes() {
    for (mode, sandbox, host) in modes().await {
        let code = granted("atomic", ROUND_TRIP);
        let out = run(&sandbox, &code, json!(null)).await;
        assert_eq!(
            out["absent"],
            json!({ "key": "k", "value": null, "versionstamp": null }),
            "{mode}"
        );
        let stamp = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        let entry_stamp = stamp(&out["entry"]["versionstamp"]);
        assert!(sandbox::is_versionstamp(&entry_stamp), "{mode}: {out}");
        assert_eq!(out["entry"]["value"], json!({ "n": 1 }), "{mode}");
        assert_eq!(out["committed"]["ok"], json!(true), "{mode}: {out}");
        let committed = stamp(&out["committed"]["versionstamp"]);
        assert!(committed > entry_stamp, "{mode}: {out}");
        assert_eq!(out["stale"], json!({ "ok": false }), "{mode}");
        assert_eq!(
            out["fresh"],
            json!({ "key": "fresh", "value": [1], "versionstamp": committed }),
            "{mode}"
        );
        assert_eq!(out["raced"], json!({ "ok": false }), "{mode}");
        assert_eq!(out["count"]["value"], json!(3), "{mode}");
        assert_eq!(out["k"], json!(null), "{mode}");
        let kv = host.kv.lock().unwrap();
        let keys: Vec<&str> = kv.keys().map(|(_, k)| k.as_str()).collect();
        assert_eq!(keys, ["count", "fresh"], "{mode}: nothing else was written");
        assert_eq!(
            kv.get(&("atomic".into(), "fresh".into())),
            Some(&(json!([2]), None))
        );
    }
}

/// Each attempt in turn; the error's `code` (or its class when it has none) or "accepted".
const HOSTILE: &str = r#"export default async function (req, ctx) {
    const big = "v".repeat(60000);
    const attempts = {
        numberVersionstamp: () => ctx.kv.atomic().check("k", 5).commit(),
        missingVersionstamp: () => ctx.kv.atomic().check("k").commit(),
        objectVersionstamp: () => ctx.kv.atomic().check({ key: "k", versionstamp: {} }).commit(),
        numberKey: () => ctx.kv.atomic().check(5, null).commit(),
        malformedVersionstamp: () => ctx.kv.atomic().check("k", "not-a-versionstamp").set("w", 1).commit(),
        upperCaseVersionstamp: () => ctx.kv.atomic().check("k", "0000000000000000000A").set("w", 1).commit(),
        sumNaN: () => ctx.kv.atomic().sum("n", NaN).commit(),
        sumInfinity: () => ctx.kv.atomic().sum("n", Infinity).commit(),
        sumFraction: () => ctx.kv.atomic().sum("n", 1.5).commit(),
        sumUnsafe: () => ctx.kv.atomic().sum("n", 2 ** 53).commit(),
        sumString: () => ctx.kv.atomic().sum("n", "1").commit(),
        sumBigInt: () => ctx.kv.atomic().sum("n", 1n).commit(),
        setBigInt: () => ctx.kv.atomic().set("w", 1n).commit(),
        setTtl: () => ctx.kv.atomic().set("w", 1, { ttlSeconds: 0 }).commit(),
        longKey: () => ctx.kv.atomic().set("k".repeat(513), 1).commit(),
        emptyKey: () => ctx.kv.atomic().delete("").commit(),
        bigValue: () => ctx.kv.atomic().set("w", "v".repeat(70000)).commit(),
        tooManyOps: () => {
            const op = ctx.kv.atomic();
            for (let i = 0; i < 100; i++) op.set("w" + i, i);
            return op.check("k", null).commit();
        },
        tooManyBytes: () => {
            const op = ctx.kv.atomic();
            for (let i = 0; i < 18; i++) op.set("w" + i, big);
            return op.commit();
        },
        // A mutation the host refuses (a sum over text) fails the commit whole.
        sumOverText: async () => {
            await ctx.kv.set("text", "12");
            return ctx.kv.atomic().set("w", 1).sum("text", 1).commit();
        },
    };
    const out = {};
    for (const [name, attempt] of Object.entries(attempts)) {
        try { await attempt(); out[name] = "accepted"; } catch (e) { out[name] = e.code ?? e.name; }
    }
    return out;
}"#;

#[tokio::test(flavor = "multi_thread")]
async fn hostile_atomics_are_refused_and_write_nothing_in_both_modes() {
    for (mode, sandbox, host) in modes().await {
        let code = granted("hostile", HOSTILE);
        let out = run(&sandbox, &code, json!(null)).await;
        assert_eq!(
            out,
            json!({
                "numberVersionstamp": "TypeError",
                "missingVersionstamp": "TypeError",
                "objectVersionstamp": "TypeError",
                "numberKey": "TypeError",
                "malformedVersionstamp": "invalid_argument",
                "upperCaseVersionstamp": "invalid_argument",
                "sumNaN": "TypeError",
                "sumInfinity": "TypeError",
                "sumFraction": "TypeError",
                "sumUnsafe": "TypeError",
                "sumString": "TypeError",
                "sumBigInt": "TypeError",
                "setBigInt": "TypeError",
                "setTtl": "TypeError",
                "longKey": "too_large",
                "emptyKey": "invalid_argument",
                "bigValue": "too_large",
                "tooManyOps": "too_large",
                "tooManyBytes": "too_large",
                "sumOverText": "invalid_sum",
            }),
            "{mode}"
        );
        let kv = host.kv.lock().unwrap();
        let keys: Vec<&str> = kv.keys().map(|(_, k)| k.as_str()).collect();
        assert_eq!(keys, ["text"], "{mode}: only the plain set landed");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn atomic_kv_needs_the_kv_capability_in_both_modes() {
    for (mode, sandbox, host) in modes().await {
        let code = endpoint(
            "no-kv",
            r#"export default async function (req, ctx) {
                const out = [];
                for (const attempt of [
                    () => ctx.kv.getEntry("k"),
                    () => ctx.kv.atomic().sum("n", 1).commit(),
                ]) {
                    try { await attempt(); out.push("accepted"); } catch (e) { out.push(e.code); }
                }
                return out;
            }"#,
        );
        let out = run(&sandbox, &code, json!(null)).await;
        assert_eq!(
            out,
            json!(["capability_denied", "capability_denied"]),
            "{mode}"
        );
        assert!(host.kv.lock().unwrap().is_empty(), "{mode}");
    }
}
