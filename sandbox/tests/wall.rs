//! The wall around a worker process, tested from inside: the `wall-probe` feature lets a test
//! run native code in a worker after it started and confined itself, standing for an engine a
//! handler has compromised. Whatever that code tries (files, the server's memory, sockets, new
//! processes, tracing the server, `ctx` operations the worker forges) is refused, by the
//! kernel or by the server's own checks. Run with `cargo test -p sandbox --features wall-probe
//! --test wall`.

mod util;

use std::sync::Arc;
use std::time::Duration;

use sandbox::{EndpointCode, Probe, WorkerCommand, WorkerOptions, WorkerPool};
use serde_json::json;
use util::*;

fn workers() -> (WorkerPool, Arc<MemoryHost>) {
    let host = Arc::new(MemoryHost::default());
    let command = WorkerCommand {
        program: env!("CARGO_BIN_EXE_sandbox-worker").into(),
        args: Vec::new(),
        log_filter: "warn".into(),
    };
    (
        WorkerPool::new(
            test_config(),
            host.clone(),
            WorkerOptions {
                command,
                count: 1,
                recycle_after_dropped: WorkerOptions::DEFAULT_RECYCLE_AFTER_DROPPED,
            },
        ),
        host,
    )
}

/// Each escape and whether it was refused, from the probe's lines.
fn outcomes(lines: &[String]) -> Vec<(String, bool)> {
    lines
        .iter()
        .map(|line| {
            let (name, outcome) = line.split_once(": ").expect("`name: outcome`");
            (name.to_owned(), outcome.starts_with("refused"))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn native_code_in_a_worker_cannot_reach_files_sockets_processes_or_the_server() {
    let data_dir = std::env::temp_dir().join(format!("toolhost-wall-{}", std::process::id()));
    std::fs::create_dir_all(&data_dir).unwrap();
    std::fs::write(data_dir.join("admin_token"), "the-admin-token").unwrap();
    let (pool, _) = workers();
    let code = endpoint("probe", ECHO);
    ok(pool.invoke(&code, request(json!(1))).await);

    let lines = pool
        .probe(
            &code,
            Probe::Escape {
                data_dir: data_dir.display().to_string(),
                server_pid: std::process::id(),
            },
        )
        .await;
    eprintln!("the probe's attempts:\n{}", lines.join("\n"));
    let outcomes = outcomes(&lines);
    let expected = [
        "open_etc_passwd",
        "read_server_mem",
        "read_server_environ",
        "list_data_dir",
        "read_data_dir_file",
        "create_file_in_data_dir",
        "tcp_connect",
        "udp_socket",
        "unix_socket_connect",
        "execve",
        "ptrace_attach_server",
        "process_vm_readv_server",
    ];
    assert_eq!(
        outcomes.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        expected,
        "{lines:#?}"
    );
    let allowed: Vec<_> = lines.iter().filter(|l| l.contains(": allowed")).collect();
    assert!(allowed.is_empty(), "escapes not refused: {allowed:#?}");
    assert!(!data_dir.join("planted").exists());

    // The worker still serves calls after all that.
    assert_eq!(
        ok(pool.invoke(&code, request(json!(2))).await).body,
        json!({ "echo": 2 })
    );
    std::fs::remove_dir_all(&data_dir).ok();
    pool.shutdown().await;
}

/// A forged `ctx` operation is checked by the server against the code it sent, not trusted:
/// an endpoint with no call in progress in that worker, or without the capability, is refused.
#[tokio::test(flavor = "multi_thread")]
async fn operations_a_worker_forges_are_checked_by_the_server() {
    let (pool, host) = workers();
    host.kv.lock().unwrap().insert(
        ("victim".to_owned(), "secret".to_owned()),
        (json!("the victim's data"), None),
    );
    let slow = "export default async () => { const t = Date.now(); while (Date.now() - t < 1500) {} return 1; }";
    let no_kv = EndpointCode {
        limits: Some(sandbox::Limits {
            heap_bytes: 32 << 20,
            timeout: Duration::from_secs(5),
        }),
        ..endpoint("no-kv", slow)
    };
    let with_kv = EndpointCode {
        limits: no_kv.limits,
        ..granted("with-kv", slow)
    };
    let running: Vec<_> = [no_kv.clone(), with_kv.clone()]
        .into_iter()
        .map(|code| {
            let pool = pool.clone();
            tokio::spawn(async move { pool.invoke(&code, request(json!(0))).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;

    let forge_version = |slug: &str, version: &str, key: &str| Probe::ForgeKvGet {
        call: sandbox::NO_CALL,
        slug: slug.into(),
        version: version.into(),
        key: key.into(),
    };
    let forge = |slug: &str, key: &str| forge_version(slug, "v1", key);
    let victim = pool.probe(&no_kv, forge("victim", "secret")).await;
    assert_eq!(
        victim,
        ["forge_kv_get: refused (sandbox_internal)"],
        "{victim:?}"
    );
    // A version of an endpoint in progress that is not the one in progress (say, an old call's
    // of a deleted endpoint whose slug has a new owner): refused too.
    let stale = pool
        .probe(&no_kv, forge_version("with-kv", "v0", "nothing"))
        .await;
    assert_eq!(
        stale,
        ["forge_kv_get: refused (sandbox_internal)"],
        "{stale:?}"
    );
    let denied = pool.probe(&no_kv, forge("no-kv", "secret")).await;
    assert_eq!(
        denied,
        ["forge_kv_get: refused (capability_denied)"],
        "{denied:?}"
    );
    let too_long = pool
        .probe(&no_kv, forge("with-kv", &"k".repeat(100_000)))
        .await;
    assert_eq!(
        too_long,
        ["forge_kv_get: refused (too_large)"],
        "{too_long:?}"
    );
    // The path itself works: an endpoint in progress with the capability reads its own data.
    let own = pool.probe(&no_kv, forge("with-kv", "nothing")).await;
    assert_eq!(own, ["forge_kv_get: allowed (Value(None))"], "{own:?}");
    // The same, naming a call that is not in progress: refused, whatever the endpoint.
    let ended = pool
        .probe(
            &no_kv,
            Probe::ForgeKvGet {
                call: 1 << 40,
                slug: "with-kv".into(),
                version: "v1".into(),
                key: "nothing".into(),
            },
        )
        .await;
    assert_eq!(ended, ["forge_kv_get: refused (call_ended)"], "{ended:?}");

    for call in running {
        ok(call.await.unwrap());
    }
    pool.shutdown().await;
}

/// A worker that sends what is not a frame of the protocol is killed and replaced; the next
/// call runs on a new worker.
#[tokio::test(flavor = "multi_thread")]
async fn a_worker_that_breaks_the_protocol_is_replaced() {
    let (pool, _) = workers();
    let code = endpoint("echo", ECHO);
    ok(pool.invoke(&code, request(json!(1))).await);
    let before = pool.stats().await.worker_pids;
    pool.probe(&code, Probe::BreakProtocol).await;
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while pool.stats().await.worker_pids == before {
        assert!(
            std::time::Instant::now() < until,
            "the worker was not replaced"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        ok(pool.invoke(&code, request(json!(2))).await).body,
        json!({ "echo": 2 })
    );
    assert_eq!(pool.stats().await.worker_restarts, 1);
    pool.shutdown().await;
}

/// A worker that floods the server with `ctx` operations of one endpoint gets at most its
/// builder's share (128) in progress at once, well inside the worker's 4,096; the rest are
/// refused `resource_limit`, and the server serves the next call as usual.
#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_operations_from_a_worker_is_capped() {
    let (pool, _) = workers();
    let slow = EndpointCode {
        limits: Some(sandbox::Limits {
            heap_bytes: 32 << 20,
            timeout: Duration::from_secs(5),
        }),
        ..granted(
            "flooder",
            "export default async () => { const t = Date.now(); while (Date.now() - t < 2500) {} return 1; }",
        )
    };
    let running = {
        let pool = pool.clone();
        let slow = slow.clone();
        tokio::spawn(async move { pool.invoke(&slow, request(json!(0))).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let tally = pool
        .probe(
            &slow,
            Probe::FloodKvGet {
                slug: "flooder".into(),
                version: "v1".into(),
                key: "sleep-ms:1500".into(),
                count: 6000,
            },
        )
        .await;
    assert_eq!(
        tally,
        ["allowed: 128", "refused resource_limit: 5872"],
        "{tally:?}"
    );
    ok(running.await.unwrap());
    assert_eq!(
        ok(pool
            .invoke(&endpoint("echo", ECHO), request(json!(3)))
            .await)
        .body,
        json!({ "echo": 3 })
    );
    pool.shutdown().await;
}
