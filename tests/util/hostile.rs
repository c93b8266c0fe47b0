//! What the hostile suites share: a real `toolhost serve` to attack, a loopback peer that
//! answers slowly, and the resident memory of the server, sampled while attackers run.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A `toolhost serve` child process (its memory and its workers' are their own, unlike an
/// in-process server's) on a data dir of its own.
pub struct Served {
    pub node: super::node::Node,
    _dir: tempfile::TempDir,
}

impl Served {
    /// Starts one with `env` (the limits under test).
    pub fn start(env: &[(&str, &str)]) -> Served {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data").display().to_string();
        let node = super::node::Node::try_start_with(&["--data", &data], env)
            .unwrap_or_else(|printed| panic!("the server did not start:\n{printed}"));
        Served { node, _dir: dir }
    }

    pub fn url(&self, path: &str) -> String {
        self.node.url(path)
    }

    /// The server's resident set, with its sandbox workers' when `with_workers`, in bytes.
    pub fn rss(&self, with_workers: bool) -> u64 {
        rss(self.node.pid(), with_workers)
    }

    /// The proportional set of the server and its sandbox workers, in bytes: their resident
    /// pages with each page shared among them (the binary's text, mapped by every process)
    /// counted once, split among those mapping it. What they take of the machine's memory,
    /// where the sum of their resident sets counts each shared page once per process.
    pub fn pss(&self) -> u64 {
        sum_of(self.node.pid(), true, "smaps_rollup", "Pss:")
    }
}

/// A peer on loopback whose `GET /slow` answers `{}` after 3 s: requests to it stay in
/// progress. Answers its address (`127.0.0.1:port`).
pub async fn slow_peer() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let peer = listener.local_addr().unwrap();
    let slow = axum::Router::new().route(
        "/slow",
        axum::routing::get(|| async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            axum::Json(serde_json::json!({}))
        }),
    );
    tokio::spawn(async move { axum::serve(listener, slow).await });
    peer
}

/// The resident set of process `pid` and, with `children`, of its child processes (a server's
/// sandbox workers, retiring ones included), summed, in bytes.
pub fn rss(pid: u32, children: bool) -> u64 {
    sum_of(pid, children, "status", "VmRSS:")
}

/// The kB figure of the line starting with `field` in `/proc/<pid>/<file>`, summed over `pid`
/// and, with `children`, its child processes, in bytes.
fn sum_of(pid: u32, children: bool, file: &str, field: &str) -> u64 {
    // A child is listed under the thread that started it: the server starts workers from
    // any of its runtime's threads, so every thread's list is read.
    let others: Vec<String> = if children {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
            .flat_map(|list| {
                list.split_whitespace()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect()
    } else {
        Vec::new()
    };
    std::iter::once(pid.to_string())
        .chain(others)
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/{file}")).ok())
        .filter_map(|text| {
            let line = text.lines().find(|l| l.starts_with(field))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .sum::<u64>()
        * 1024
}

/// The highest of `measure`'s readings, taken every 50 ms until [`PeakRss::stop`].
pub struct PeakRss {
    peak: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    sampler: tokio::task::JoinHandle<()>,
}

impl PeakRss {
    /// Starts sampling, from `idle` (the reading before the attacks).
    pub fn sample(measure: impl Fn() -> u64 + Send + 'static, idle: u64) -> PeakRss {
        let peak = Arc::new(AtomicU64::new(idle));
        let stop = Arc::new(AtomicBool::new(false));
        let sampler = {
            let (peak, stop) = (peak.clone(), stop.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    peak.fetch_max(measure(), Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            })
        };
        PeakRss {
            peak,
            stop,
            sampler,
        }
    }

    /// Stops sampling; answers the peak.
    pub async fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.sampler.await.unwrap();
        self.peak.load(Ordering::Relaxed)
    }
}
