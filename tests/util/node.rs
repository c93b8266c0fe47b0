//! A `toolhost serve` process of its own: for tests that kill a node (`kill -9`) or run several
//! nodes on one shared store, which an in-process server cannot do.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::Value;

use super::{read, ADMIN_TOKEN};

pub const BIN: &str = env!("CARGO_BIN_EXE_toolhost");

/// A running `toolhost serve` child process, killed (SIGKILL) when dropped.
pub struct Node {
    child: Child,
    /// Where the node's stderr (its log) goes, for failure messages.
    log: tempfile::NamedTempFile,
    pub base: String,
    pub client: reqwest::Client,
}

impl Node {
    /// Starts a node with `args` after `serve --addr 127.0.0.1:0 --admin-token ADMIN_TOKEN`,
    /// waiting for its "listening" line.
    pub fn start(args: &[&str]) -> Node {
        match Self::try_start(args) {
            Ok(node) => node,
            Err(output) => panic!("node did not start:\n{output}"),
        }
    }

    /// A node on the embedded store in `data`, with the extra arguments `args`.
    pub fn start_in(data: &std::path::Path, args: &[String]) -> Node {
        let data = data.display().to_string();
        let mut all = vec!["--data", data.as_str()];
        all.extend(args.iter().map(String::as_str));
        Self::start(&all)
    }

    /// Like [`Node::start`], but a node that exits or never listens gives what it printed.
    pub fn try_start(args: &[&str]) -> Result<Node, String> {
        Self::try_start_with(args, &[])
    }

    /// Like [`Node::try_start`], with environment variables `env` set last (they override
    /// the defaults below, the anonymous-write limit among them).
    pub fn try_start_with(args: &[&str], env: &[(&str, &str)]) -> Result<Node, String> {
        let log = tempfile::NamedTempFile::new().expect("log file");
        let mut child = Command::new(BIN)
            .args([
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--admin-token",
                ADMIN_TOKEN,
            ])
            .args(args)
            .env("RUST_LOG", "warn")
            // Test load comes from one loopback address; the per-client limit is tested elsewhere.
            .env("TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE", "0")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(log.reopen().expect("log file"))
            .spawn()
            .expect("spawn toolhost");
        let stdout = child.stdout.take().expect("stdout");
        let mut reader = BufReader::new(stdout);
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut printed = String::new();
        while Instant::now() < deadline {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            printed.push_str(&line);
            if let Some(url) = line.trim().strip_prefix("toolhost listening on ") {
                // Keep draining stdout so the child never blocks on a full pipe.
                std::thread::spawn(move || for _ in reader.lines() {});
                return Ok(Node {
                    child,
                    log,
                    base: url.to_string(),
                    client: reqwest::Client::new(),
                });
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        printed.push_str(&std::fs::read_to_string(log.path()).unwrap_or_default());
        Err(printed)
    }

    /// What the node has logged so far (warnings and errors: `RUST_LOG=warn`).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The node's process id (its `/proc` entry: memory, threads).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `method path` with the admin token and an optional JSON body.
    pub async fn admin(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        let mut request = self
            .client
            .request(method.parse().expect("method"), self.url(path))
            .header("x-admin-token", ADMIN_TOKEN);
        if let Some(body) = body {
            request = request.json(body);
        }
        read(request.send().await.expect("request")).await
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        read(
            self.client
                .get(self.url(path))
                .send()
                .await
                .expect("request"),
        )
        .await
    }

    pub async fn post(&self, path: &str, body: &Value) -> (StatusCode, Value) {
        read(
            self.client
                .post(self.url(path))
                .json(body)
                .send()
                .await
                .expect("request"),
        )
        .await
    }

    /// `kill -9`: the process gets no chance to flush or finish anything.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
