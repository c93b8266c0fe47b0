//! The builder's command line end to end: the `toolhost` binary run as a subprocess against a
//! real server on loopback (init, dev with reload, deploy, the live endpoint, a new revision,
//! logs, endpoints, secrets, revenue, call), its refusals with their exit codes, and the login
//! file's mode.

use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::util::TestServer;

const BIN: &str = env!("CARGO_BIN_EXE_toolhost");

/// Runs the CLI with a config dir and HOME of its own (never the user's), talking to one server.
struct Cli {
    home: tempfile::TempDir,
    server: String,
}

impl Cli {
    fn new(server: &TestServer) -> Cli {
        Cli {
            home: tempfile::tempdir().unwrap(),
            server: server.base.clone(),
        }
    }

    fn config_home(&self) -> std::path::PathBuf {
        self.home.path().join("config")
    }

    fn command(&self, args: &[&str], key: Option<&str>) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(BIN);
        command
            .args(args)
            .env_remove("TOOLHOST_BUILDER_KEY")
            .env("TOOLHOST_URL", &self.server)
            .env("XDG_CONFIG_HOME", self.config_home())
            .env("HOME", self.home.path())
            .env("NO_COLOR", "1")
            .env("RUST_LOG", "warn")
            .kill_on_drop(true);
        if let Some(key) = key {
            command.env("TOOLHOST_BUILDER_KEY", key);
        }
        command
    }

    /// Runs to the end with `stdin` (or nothing) on its standard input.
    async fn run_with(&self, args: &[&str], key: Option<&str>, stdin: Option<&str>) -> Output {
        let mut child = self
            .command(args, key)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        if let Some(text) = stdin {
            input.write_all(text.as_bytes()).await.unwrap();
        }
        drop(input);
        tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
            .await
            .expect("the CLI ends")
            .unwrap()
    }

    async fn run(&self, args: &[&str], key: Option<&str>) -> Output {
        self.run_with(args, key, None).await
    }
}

fn text(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[track_caller]
fn assert_exit(output: &Output, code: i32) {
    assert_eq!(output.status.code(), Some(code), "{}", text(output));
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(output)))
}

async fn post(url: &str, input: &Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(url)
        .json(input)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Calls `url` until its answer is `want`, for up to 30 s (a reload is polled, not pushed);
/// past that, fails with what `dev` reported on its standard error (a refused reload).
async fn until_answer(url: &str, input: &Value, want: &Value, stderr: &Stderr) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, body) = post(url, input).await;
        if status == 200 && &body == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{url} still answers {status} {body}, not {want}; dev printed on stderr:\n{}",
            stderr.text.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

type Lines = tokio::io::Lines<BufReader<tokio::process::ChildStdout>>;

/// `dev`'s standard error, read as it comes: a test waits for what `dev` reports there (a
/// reload is polled, so a fixed sleep loses the race on a loaded machine), and a pipe nobody
/// reads would stall `dev` once full.
struct Stderr {
    text: Arc<Mutex<String>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Stderr {
    fn read(pipe: tokio::process::ChildStderr) -> Stderr {
        let text = Arc::new(Mutex::new(String::new()));
        let sink = text.clone();
        let reader = tokio::spawn(async move {
            let mut lines = BufReader::new(pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut text = sink.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
        });
        Stderr { text, reader }
    }

    /// Waits up to 30 s for `needle` to be printed.
    async fn until_printed(&self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.text.lock().unwrap().contains(needle) {
            assert!(
                Instant::now() < deadline,
                "dev did not print {needle:?}: {}",
                self.text.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Everything printed, once `dev` has ended.
    async fn all(self) -> String {
        self.reader.await.unwrap();
        Arc::try_unwrap(self.text).unwrap().into_inner().unwrap()
    }
}

/// Starts `toolhost dev DIR --port 0`; answers the child, the rest of its stdout, its stderr
/// and the URL it serves the tool at.
async fn start_dev(cli: &Cli, dir: &str) -> (tokio::process::Child, Lines, Stderr, String) {
    start_dev_with(cli, dir, &[]).await
}

/// [`start_dev`] with more arguments to `toolhost dev`.
async fn start_dev_with(
    cli: &Cli,
    dir: &str,
    more: &[&str],
) -> (tokio::process::Child, Lines, Stderr, String) {
    let mut args = vec!["dev", dir, "--port", "0"];
    args.extend_from_slice(more);
    let mut dev = cli
        .command(&args, None)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = Stderr::read(dev.stderr.take().unwrap());
    let mut lines = BufReader::new(dev.stdout.take().unwrap()).lines();
    let serving = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.starts_with("Serving") {
                return line;
            }
        }
        panic!("dev ended before serving");
    })
    .await
    .expect("dev serves within 60 s");
    let url = serving
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap()
        .to_string();
    (dev, lines, stderr, url)
}

/// Stops `dev` with SIGTERM, as Ctrl-C would; answers what it printed since it started
/// serving. It must end cleanly.
async fn stop_dev(dev: &mut tokio::process::Child, lines: &mut Lines) -> String {
    // Past one poll, so the last calls are printed.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let stopped = std::process::Command::new("kill")
        .args(["-TERM", &dev.id().unwrap().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let mut printed = Vec::new();
    while let Ok(Some(line)) = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .unwrap()
    {
        printed.push(line);
    }
    let status = tokio::time::timeout(Duration::from_secs(20), dev.wait())
        .await
        .expect("dev stops on SIGTERM")
        .unwrap();
    assert!(status.success(), "{printed:?}");
    printed.join("\n")
}

const HANDLER_V2: &str = r#"/** @type {toolhost.Handler} */
export default async function (req, ctx) {
  return { greeting: `v2 ${req.input.name ?? "world"}`, token: ctx.env.LOCAL_TOKEN ?? null };
}
"#;

const HANDLER_V3: &str = r#"/** @type {toolhost.Handler} */
export default async function (req) {
  return { greeting: `v3 ${req.input.name ?? "world"}` };
}
"#;

#[tokio::test]
async fn init_dev_deploy_redeploy_and_manage_a_tool() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("CLI maker").await;
    let cli = Cli::new(&server);
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("Hello Tool");
    let dir_arg = dir.to_str().unwrap();

    // init: a working tool, the server's own handler types, and a refusal to overwrite.
    let init = cli.run(&["init", dir_arg], None).await;
    assert_exit(&init, 0);
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("toolhost.json")).unwrap()).unwrap();
    assert_eq!(manifest["slug"], "hello-tool");
    for field in [
        "title",
        "description",
        "priceUsd",
        "inputSchema",
        "outputSchema",
        "tags",
        "capabilities",
        "env",
        "files",
        "safetyAttestation",
    ] {
        assert!(manifest.get(field).is_some(), "manifest lacks {field}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("toolhost.d.ts")).unwrap(),
        server.text("/toolhost.d.ts").await,
        "init writes the types the server serves"
    );
    assert!(dir.join("handler.js").is_file());
    assert_exit(&cli.run(&["init", dir_arg], None).await, 2);

    // dev: served locally without payment, reloaded after an edit, each call printed.
    let (mut dev, mut lines, stderr, local) = start_dev(&cli, dir_arg).await;
    assert!(local.ends_with("/tools/hello-tool"), "{local}");
    let (status, body) = post(&local, &json!({"name": "Ada"})).await;
    assert_eq!(
        (status, body),
        (200, json!({"greeting": "Hello, Ada!"})),
        "the new tool answers in dev"
    );
    std::fs::write(dir.join(".env"), "LOCAL_TOKEN=dev-only\n").unwrap();
    std::fs::write(dir.join("handler.js"), HANDLER_V2).unwrap();
    until_answer(
        &local,
        &json!({"name": "Ada"}),
        &json!({"greeting": "v2 Ada", "token": "dev-only"}),
        &stderr,
    )
    .await;
    // A broken manifest is reported and the last good revision keeps serving.
    let good_manifest = std::fs::read_to_string(dir.join("toolhost.json")).unwrap();
    std::fs::write(dir.join("toolhost.json"), "{ not json").unwrap();
    stderr.until_printed("toolhost.json: not JSON").await;
    let (status, _) = post(&local, &json!({})).await;
    assert_eq!(status, 200);
    std::fs::write(dir.join("toolhost.json"), &good_manifest).unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    let printed = stop_dev(&mut dev, &mut lines).await;
    assert!(printed.contains("Reloaded hello-tool"), "{printed}");
    assert!(
        printed.contains("  200  "),
        "each call is printed: {printed}"
    );

    // deploy: created on the server, the live URL answers; .env stayed local.
    let deployed = cli.run(&["deploy", dir_arg], Some(&key)).await;
    assert_exit(&deployed, 0);
    let out = String::from_utf8_lossy(&deployed.stdout).to_string();
    assert!(out.contains("hello-tool: created, revision 1"), "{out}");
    assert!(out.contains("content safety  passed"), "{out}");
    assert!(out.contains("requested none; granted none"), "{out}");
    let live = server.url("/tools/hello-tool");
    assert!(out.contains(&live), "{out}");
    let (status, body) = post(&live, &json!({"name": "Bo"})).await;
    assert_eq!(
        (status, body),
        (200, json!({"greeting": "v2 Bo", "token": null}))
    );

    // edit, deploy: a new revision answers.
    std::fs::write(dir.join("handler.js"), HANDLER_V3).unwrap();
    let redeployed = cli.run(&["deploy", dir_arg, "--json"], Some(&key)).await;
    assert_exit(&redeployed, 0);
    let answer = stdout_json(&redeployed);
    assert_eq!(answer["manage"]["revision"], 2, "{answer}");
    let (status, body) = post(&live, &json!({"name": "Bo"})).await;
    assert_eq!((status, body), (200, json!({"greeting": "v3 Bo"})));
    let again = cli.run(&["deploy", dir_arg], Some(&key)).await;
    assert_exit(&again, 0);
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("unchanged, revision 2"),
        "{}",
        text(&again)
    );

    // call, and a test call of one's own endpoint.
    let called = cli
        .run(&["call", "hello-tool", "--input", r#"{"name":"Cy"}"#], None)
        .await;
    assert_exit(&called, 0);
    assert_eq!(stdout_json(&called), json!({"greeting": "v3 Cy"}));
    assert_exit(
        &cli.run(&["call", "hello-tool", "--input", r#"{"name": 7}"#], None)
            .await,
        3,
    );
    let test_call = cli.run(&["call", "hello-tool", "--test"], Some(&key)).await;
    assert_exit(&test_call, 0);

    // logs: every call to the live endpoint, oldest first.
    let logs = cli.run(&["logs", "hello-tool", "--json"], Some(&key)).await;
    assert_exit(&logs, 0);
    let entries: Vec<Value> = String::from_utf8_lossy(&logs.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ok = entries.iter().filter(|e| e["status"] == 200).count();
    assert!(
        ok >= 4,
        "two direct calls, call and the test call: {entries:?}"
    );
    let human = cli.run(&["logs", "hello-tool"], Some(&key)).await;
    assert_exit(&human, 0);
    assert!(String::from_utf8_lossy(&human.stdout).contains("  200  "));

    // logs --follow: the latest call, then each new one as it comes (not the older calls the
    // first page left out); SIGTERM ends it cleanly.
    let mut follow = cli
        .command(
            &["logs", "hello-tool", "--follow", "--json", "--limit", "1"],
            Some(&key),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut followed = BufReader::new(follow.stdout.take().unwrap()).lines();
    let mut next_entry = async || -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), followed.next_line())
            .await
            .expect("logs --follow prints within 30 s")
            .unwrap()
            .expect("a line");
        serde_json::from_str(&line).unwrap()
    };
    let latest = next_entry().await;
    assert_eq!(post(&live, &json!({"name": "Fo"})).await.0, 200);
    let new = next_entry().await;
    assert_ne!(new["id"], latest["id"]);
    let at = |entry: &Value| {
        let at = entry["at"].as_str().unwrap();
        time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339).unwrap()
    };
    assert!(
        at(&new) > at(&latest),
        "an older call printed as new: {new} after {latest}"
    );
    assert_eq!(new["status"], 200);
    std::process::Command::new("kill")
        .args(["-TERM", &follow.id().unwrap().to_string()])
        .status()
        .unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(20), follow.wait())
        .await
        .expect("logs --follow stops on SIGTERM")
        .unwrap();
    assert!(ended.success());

    // endpoints: listed, paused (503), resumed.
    let listed = cli.run(&["endpoints"], Some(&key)).await;
    assert_exit(&listed, 0);
    let table = String::from_utf8_lossy(&listed.stdout).to_string();
    assert!(
        table.starts_with("SLUG") && table.contains("hello-tool  active"),
        "{table}"
    );
    assert_exit(
        &cli.run(&["endpoints", "pause", "hello-tool"], Some(&key))
            .await,
        0,
    );
    assert_eq!(post(&live, &json!({})).await.0, 503);
    assert_exit(
        &cli.run(&["endpoints", "resume", "hello-tool"], Some(&key))
            .await,
        0,
    );
    assert_eq!(post(&live, &json!({})).await.0, 200);

    // secrets: a value from stdin, listed by name only, deleted.
    let set = cli
        .run_with(
            &["secrets", "set", "hello-tool", "API_TOKEN"],
            Some(&key),
            Some("s3cret-value\n"),
        )
        .await;
    assert_exit(&set, 0);
    let listed = cli
        .run(&["secrets", "list", "hello-tool", "--json"], Some(&key))
        .await;
    assert_exit(&listed, 0);
    let secrets = stdout_json(&listed);
    assert_eq!(secrets["secrets"][0]["name"], "API_TOKEN");
    assert!(!String::from_utf8_lossy(&listed.stdout).contains("s3cret-value"));
    assert_exit(
        &cli.run(
            &["secrets", "delete", "hello-tool", "API_TOKEN"],
            Some(&key),
        )
        .await,
        0,
    );

    // revenue: free calls earn nothing.
    let revenue = cli.run(&["revenue", "--json"], Some(&key)).await;
    assert_exit(&revenue, 0);
    assert_eq!(stdout_json(&revenue)["revenue"]["count"], 0);

    // delete: confirmed with --yes only when stdin is not a terminal.
    assert_exit(
        &cli.run(&["endpoints", "delete", "hello-tool"], Some(&key))
            .await,
        2,
    );
    assert_exit(
        &cli.run(&["endpoints", "delete", "hello-tool", "--yes"], Some(&key))
            .await,
        0,
    );
    assert_eq!(post(&live, &json!({})).await.0, 404);
}

const TS_HANDLER_V2: &str = r#"interface In { name?: string }
enum Version { Two = 2 }
const handler: toolhost.Handler<In> = async (req) => {
  return { greeting: `v${Version.Two} ${req.input.name ?? "world"}` };
};
export default handler;
"#;

/// Throws on line 5 (the interface and the type alias are gone from the JavaScript).
const TS_HANDLER_THROWS: &str = r#"interface In { name?: string }
type Name = string;
const handler: toolhost.Handler<In> = async (req) => {
  const name: Name = req.input.name ?? "world";
  throw new Error(`no greeting for ${name}`);
};
export default handler;
"#;

#[tokio::test]
async fn a_typescript_tool_goes_from_init_to_dev_to_deploy() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("TS maker").await;
    let cli = Cli::new(&server);
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("ts-tool");
    let dir_arg = dir.to_str().unwrap();
    assert_exit(&cli.run(&["init", dir_arg, "--ts"], None).await, 0);
    assert!(dir.join("handler.ts").is_file() && !dir.join("handler.js").exists());

    // dev serves init's TypeScript as it is, and reloads an edit.
    let (mut dev, mut lines, stderr, local) = start_dev(&cli, dir_arg).await;
    let (status, body) = post(&local, &json!({"name": "Ada"})).await;
    assert_eq!((status, body), (200, json!({"greeting": "Hello, Ada!"})));
    std::fs::write(dir.join("handler.ts"), TS_HANDLER_V2).unwrap();
    until_answer(
        &local,
        &json!({"name": "Ada"}),
        &json!({"greeting": "v2 Ada"}),
        &stderr,
    )
    .await;
    let printed = stop_dev(&mut dev, &mut lines).await;
    assert!(printed.contains("Reloaded ts-tool"), "{printed}");

    // deploy: the live endpoint answers, and keeps the TypeScript as its source.
    let deployed = cli.run(&["deploy", dir_arg, "--json"], Some(&key)).await;
    assert_exit(&deployed, 0);
    let answer = stdout_json(&deployed);
    assert_eq!(answer["manage"]["sourceLanguage"], "typescript", "{answer}");
    assert_eq!(answer["manage"]["source"], TS_HANDLER_V2, "{answer}");
    let live = server.url("/tools/ts-tool");
    let (status, body) = post(&live, &json!({"name": "Bo"})).await;
    assert_eq!((status, body), (200, json!({"greeting": "v2 Bo"})));

    // A handler that throws: the owner's logs point at its TypeScript line.
    std::fs::write(dir.join("handler.ts"), TS_HANDLER_THROWS).unwrap();
    assert_exit(&cli.run(&["deploy", dir_arg], Some(&key)).await, 0);
    assert_eq!(post(&live, &json!({"name": "Cy"})).await.0, 500);
    let logs = cli.run(&["logs", "ts-tool", "--json"], Some(&key)).await;
    assert_exit(&logs, 0);
    let failed: Vec<Value> = String::from_utf8_lossy(&logs.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["status"] == 500)
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["error"]["line"], 5, "{failed:?}");
    assert!(
        failed[0]["error"]["stack"][0]
            .as_str()
            .unwrap()
            .contains("handler.ts:5:"),
        "{failed:?}"
    );

    // A TypeScript syntax error is refused at its line, with the server's code.
    std::fs::write(
        dir.join("handler.ts"),
        "const x: = 1;\nexport default () => x;\n",
    )
    .unwrap();
    let refused = cli.run(&["deploy", dir_arg, "--json"], Some(&key)).await;
    assert_exit(&refused, 3);
    let answer = stdout_json(&refused);
    assert_eq!(answer["error"]["code"], "compile_error", "{answer}");
    assert_eq!(answer["error"]["details"]["line"], 1, "{answer}");
}

/// A tool directory made by `init` under `parent`, with `edit` applied to its manifest.
async fn tool(cli: &Cli, parent: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> String {
    let dir = parent.join(name);
    assert_exit(&cli.run(&["init", dir.to_str().unwrap()], None).await, 0);
    let path = dir.join("toolhost.json");
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut manifest);
    std::fs::write(&path, manifest.to_string()).unwrap();
    dir.to_str().unwrap().to_string()
}

#[tokio::test]
async fn refusals_have_distinct_exit_codes() {
    let server = TestServer::start().await;
    let (_, alice) = server.builder("Alice").await;
    let (_, bob) = server.builder("Bob").await;
    let cli = Cli::new(&server);
    let work = tempfile::tempdir().unwrap();
    let taken = tool(&cli, work.path(), "taken-slug", |_| {}).await;

    // Usage (2): unknown flags, no key anywhere.
    assert_exit(&cli.run(&["deploy", "--no-such-flag"], None).await, 2);
    let no_key = cli.run(&["deploy", &taken], None).await;
    assert_exit(&no_key, 2);
    assert!(String::from_utf8_lossy(&no_key.stderr).contains("toolhost login"));

    // Refused (3): a wrong key, with the server's code.
    let wrong = cli
        .run(
            &["deploy", &taken],
            Some(&format!("thb_{}", "0".repeat(64))),
        )
        .await;
    assert_exit(&wrong, 3);
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("invalid_builder_key"));

    // A slug another builder holds.
    assert_exit(&cli.run(&["deploy", &taken], Some(&alice)).await, 0);
    let clash = cli.run(&["deploy", &taken, "--json"], Some(&bob)).await;
    assert_exit(&clash, 3);
    assert!(String::from_utf8_lossy(&clash.stderr).contains("slug_taken"));
    assert_eq!(stdout_json(&clash)["error"]["code"], "slug_taken");

    // Content the safety scan blocks: code, message and the finding's field.
    let blocked = tool(&cli, work.path(), "blocked-tool", |m| {
        m["description"] = json!("Pay with card 4111 1111 1111 1111");
    })
    .await;
    let refused = cli.run(&["deploy", &blocked], Some(&alice)).await;
    assert_exit(&refused, 3);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("content_blocked"), "{stderr}");
    assert!(stderr.contains("description"), "{stderr}");
    assert_eq!(server.get("/ai/endpoints/blocked-tool").await.0, 404);

    // A bad manifest: refused here when it is not one (2), by the server when a field is
    // wrong (3).
    let unknown = tool(&cli, work.path(), "unknown-field", |m| {
        m["sauce"] = json!(true);
    })
    .await;
    let local = cli.run(&["deploy", &unknown], Some(&alice)).await;
    assert_exit(&local, 2);
    assert!(String::from_utf8_lossy(&local.stderr).contains("unknown field \"sauce\""));
    let bad_slug = tool(&cli, work.path(), "bad-slug", |m| {
        m["slug"] = json!("No Spaces!");
    })
    .await;
    let field = cli.run(&["deploy", &bad_slug], Some(&alice)).await;
    assert_exit(&field, 3);
    let no_manifest = cli
        .run(&["deploy", work.path().to_str().unwrap()], Some(&alice))
        .await;
    assert_exit(&no_manifest, 2);

    // Network (4): nothing listens there.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let unreachable = cli
        .run(&["endpoints", "--server", &closed], Some(&alice))
        .await;
    assert_exit(&unreachable, 4);
    assert!(String::from_utf8_lossy(&unreachable.stderr).contains("cannot reach"));
}

#[cfg(unix)]
#[tokio::test]
async fn login_stores_the_key_for_its_server_only_readable_by_the_user() {
    use std::os::unix::fs::PermissionsExt;

    let server = TestServer::start().await;
    let (_, key) = server.builder("Logger").await;
    let cli = Cli::new(&server);
    let file = cli.config_home().join("toolhost").join("config.json");

    // A wrong key is refused and nothing is stored.
    let wrong = cli
        .run_with(&["login"], None, Some(&format!("thb_{}\n", "1".repeat(64))))
        .await;
    assert_exit(&wrong, 3);
    assert!(!file.exists());

    // An older file with a looser mode is replaced by a private one.
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "{}").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let login = cli
        .run_with(&["login"], None, Some(&format!("{key}\n")))
        .await;
    assert_exit(&login, 0);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the login file is the user's only");
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(stored["builderKey"], key);
    assert_eq!(stored["server"], server.base);

    // Later commands use it without a key in the environment...
    assert_exit(&cli.run(&["endpoints"], None).await, 0);
    // ...but never send it to another server (here the same one under another name).
    let elsewhere = server.base.replace("127.0.0.1", "localhost");
    let other = cli.run(&["endpoints", "--server", &elsewhere], None).await;
    assert_exit(&other, 2);
}

#[tokio::test]
async fn dev_serves_a_paid_tool_free_with_its_capabilities_granted() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Counter maker").await;
    let cli = Cli::new(&server);
    let work = tempfile::tempdir().unwrap();
    let dir = tool(&cli, work.path(), "counter", |m| {
        m["priceUsd"] = json!(0.01);
        m["capabilities"] = json!({"kv": true, "logs": true});
        m["inputSchema"] = json!({"type": "object"});
        m["outputSchema"] = json!({});
    })
    .await;
    std::fs::write(
        Path::new(&dir).join("handler.js"),
        r#"export default async function (req, ctx) {
  if (req.input.fail) throw new Error("asked to fail");
  const count = ((await ctx.kv.get("count")) ?? 0) + 1;
  await ctx.kv.set("count", count);
  ctx.log.info(`count is ${count}`);
  return { count };
}
"#,
    )
    .unwrap();
    let (mut dev, mut lines, stderr, local) = start_dev(&cli, &dir).await;
    assert_eq!(post(&local, &json!({})).await, (200, json!({"count": 1})));
    assert_eq!(post(&local, &json!({})).await, (200, json!({"count": 2})));
    assert_eq!(post(&local, &json!({"fail": true})).await.0, 500);
    let printed = stop_dev(&mut dev, &mut lines).await;
    assert!(printed.contains("[info] count is 2"), "{printed}");
    assert!(printed.contains("  500  "), "{printed}");
    let stderr = stderr.all().await;
    assert!(
        stderr.contains("code=handler_error") && stderr.contains("asked to fail"),
        "a failed call's code and message are printed: {stderr}"
    );

    // On the server the same manifest is paid and its capabilities wait for the admin.
    let deployed = cli.run(&["deploy", &dir], Some(&key)).await;
    assert_exit(&deployed, 0);
    let out = String::from_utf8_lossy(&deployed.stdout).to_string();
    assert!(out.contains("requested kv, logs; granted none"), "{out}");
    assert!(out.contains("0.01 USD"), "{out}");
    let unpaid = cli.run(&["call", "counter"], None).await;
    assert_exit(&unpaid, 3);
    assert!(
        String::from_utf8_lossy(&unpaid.stderr).contains("the server refused ("),
        "{}",
        text(&unpaid)
    );
}

/// `dev` serves a Workers-style module as the server does, and prints a refusal (a thrown
/// 4xx status) with its code, message and position.
#[tokio::test]
async fn dev_serves_a_workers_style_tool_and_prints_its_refusals() {
    let server = TestServer::start().await;
    let cli = Cli::new(&server);
    let work = tempfile::tempdir().unwrap();
    let dir = tool(&cli, work.path(), "weather", |m| {
        m["inputSchema"] = json!({"type": "object"});
        m["outputSchema"] = json!({});
        m["env"] = json!({"UNITS": "metric"});
    })
    .await;
    std::fs::write(
        Path::new(&dir).join("handler.js"),
        r#"export default {
  async fetch(request, env) {
    const { city } = await request.json();
    if (!city) throw Object.assign(new Error("city is required"), { status: 400 });
    return Response.json({ city, units: env.UNITS }, { status: 201 });
  },
};
"#,
    )
    .unwrap();
    let (mut dev, mut lines, _stderr, local) = start_dev(&cli, &dir).await;
    assert_eq!(
        post(&local, &json!({"city": "Oslo"})).await,
        (201, json!({"city": "Oslo", "units": "metric"}))
    );
    let (status, body) = post(&local, &json!({})).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"],
        json!({"code": "handler_refused", "message": "city is required"})
    );
    let printed = stop_dev(&mut dev, &mut lines).await;
    assert!(
        printed.contains("  201  ") && printed.contains("  400  "),
        "{printed}"
    );
    assert!(
        printed.contains("handler_refused: city is required") && printed.contains("handler.js:4:"),
        "{printed}"
    );
}

/// A deploy names the revision its directory was made on: a change made elsewhere since (here
/// the price, as the dashboard would) is not set back but refused; `pull` brings the serving
/// revision (manifest, handler and files) and refuses to drop local edits unless forced;
/// `revisions` lists what is kept and `rollback` serves an older one again.
#[tokio::test]
async fn deploy_refuses_to_set_back_a_change_made_elsewhere_and_pull_brings_it() {
    let server = TestServer::start().await;
    let (_, builder_key) = server.builder("Puller").await;
    let cli = Cli::new(&server);
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("pull-me");
    let dir_arg = dir.to_str().unwrap();
    let key = Some(builder_key.as_str());
    assert_exit(&cli.run(&["init", dir_arg], None).await, 0);
    std::fs::create_dir_all(dir.join("data")).unwrap();
    std::fs::write(dir.join("data/words.txt"), "alpha beta\n").unwrap();
    let manifest_path = dir.join("toolhost.json");
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    manifest["files"] = json!(["data/words.txt"]);
    std::fs::write(&manifest_path, manifest.to_string()).unwrap();
    assert_exit(&cli.run(&["deploy", dir_arg], key).await, 0);

    // The price is raised elsewhere: revision 2.
    let raised = server
        .patch(
            crate::util::As::Builder(&builder_key),
            "pull-me",
            &json!({"priceUsd": 0.25}),
        )
        .await;
    assert_eq!(raised["manage"]["revision"], 2, "{raised}");

    // A deploy of a local edit made on revision 1 is refused; nothing changes.
    std::fs::write(dir.join("handler.js"), HANDLER_V2).unwrap();
    let refused = cli.run(&["deploy", dir_arg], key).await;
    assert_exit(&refused, 3);
    assert!(
        text(&refused).contains("revision_conflict"),
        "{}",
        text(&refused)
    );
    let (_, now) = server.get("/ai/endpoints/pull-me").await;
    assert_eq!(now["endpoint"]["priceUsd"], 0.25, "{now}");

    // Pull refuses to drop the local edit, then with --force brings revision 2.
    assert_exit(&cli.run(&["pull", dir_arg], key).await, 2);
    let pulled = cli.run(&["pull", dir_arg, "--force"], key).await;
    assert_exit(&pulled, 0);
    assert!(text(&pulled).contains("revision 2"), "{}", text(&pulled));
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    assert_eq!(manifest["priceUsd"], 0.25, "{manifest}");
    assert_eq!(manifest["files"], json!(["data/words.txt"]));
    assert_ne!(
        std::fs::read_to_string(dir.join("handler.js")).unwrap(),
        HANDLER_V2
    );
    // Made on revision 2 now, the edit deploys and keeps the raised price.
    assert_exit(&cli.run(&["deploy", dir_arg], key).await, 0);
    std::fs::write(dir.join("handler.js"), HANDLER_V2).unwrap();
    let deployed = cli.run(&["deploy", dir_arg, "--json"], key).await;
    assert_exit(&deployed, 0);
    let answer = stdout_json(&deployed);
    assert_eq!(answer["manage"]["revision"], 3, "{answer}");
    assert_eq!(answer["endpoint"]["priceUsd"], 0.25);

    // Into a new directory by slug: manifest, handler and the file's bytes.
    let fresh = work.path().join("fresh");
    let fresh_arg = fresh.to_str().unwrap();
    let pulled = cli
        .run(&["pull", fresh_arg, "--slug", "pull-me"], key)
        .await;
    assert_exit(&pulled, 0);
    assert_eq!(
        std::fs::read_to_string(fresh.join("data/words.txt")).unwrap(),
        "alpha beta\n"
    );
    assert_eq!(
        std::fs::read_to_string(fresh.join("handler.js")).unwrap(),
        HANDLER_V2
    );
    assert_exit(&cli.run(&["deploy", fresh_arg], key).await, 0);

    // The kept revisions, and a rollback to the first.
    let listed = cli.run(&["revisions", "pull-me"], key).await;
    assert_exit(&listed, 0);
    let listing = text(&listed);
    assert!(
        listing.contains("serving") && listing.contains("priceUsd"),
        "{listing}"
    );
    let rolled = cli.run(&["rollback", "pull-me", "1"], key).await;
    assert_exit(&rolled, 0);
    assert!(
        text(&rolled).contains("revision 1 serves"),
        "{}",
        text(&rolled)
    );
    let (_, now) = server.get("/ai/endpoints/pull-me").await;
    assert_eq!(now["endpoint"]["priceUsd"], 0, "{now}");
    let missing = cli.run(&["rollback", "pull-me", "40"], key).await;
    assert_exit(&missing, 3);
    assert!(
        text(&missing).contains("revision_not_found"),
        "{}",
        text(&missing)
    );
}

/// `toolhost call` of a paid tool says what it costs and whom it pays, then pays like an
/// agent: with a developer credit or a wallet's key (an x402 payment signed as the official
/// clients sign), printing the receipt after.
#[tokio::test]
async fn call_names_the_price_and_pays_with_a_credit_or_a_wallet() {
    let server = TestServer::start().await;
    let mut body = crate::util::static_endpoint("paid-hello");
    body["priceUsd"] = json!(0.01);
    server.builder_with("Hello Seller", &body).await;
    let cli = Cli::new(&server);

    let unpaid = cli.run(&["call", "paid-hello"], None).await;
    assert_exit(&unpaid, 3);
    let said = text(&unpaid);
    for part in [
        "0.01 USD a call",
        "Hello Seller",
        "--credit",
        "--wallet-key",
    ] {
        assert!(said.contains(part), "{part}: {said}");
    }

    let issued = server
        .call(
            "POST",
            "/ai/admin/credits",
            crate::util::As::Admin,
            Some(&json!({"amountUsd": 1})),
        )
        .await
        .1;
    let token = issued["credit"]["token"].as_str().unwrap().to_string();
    let paid = cli
        .run(&["call", "paid-hello", "--credit", &token], None)
        .await;
    assert_exit(&paid, 0);
    assert!(
        text(&paid).contains("paying 0.01 USD a call"),
        "{}",
        text(&paid)
    );
    assert!(text(&paid).contains("receipt rcpt_"), "{}", text(&paid));
    assert_eq!(stdout_json(&paid)["greeting"], "hello");

    let work = tempfile::tempdir().unwrap();
    let wallet = work.path().join("wallet.key");
    let signer = alloy_signer_local::PrivateKeySigner::random();
    std::fs::write(&wallet, format!("0x{}\n", hex::encode(signer.to_bytes()))).unwrap();
    let wallet_arg = wallet.to_str().unwrap();
    let paid = cli
        .run(&["call", "paid-hello", "--wallet-key", wallet_arg], None)
        .await;
    assert_exit(&paid, 0);
    assert!(text(&paid).contains("receipt rcpt_"), "{}", text(&paid));
    let receipt = {
        let stderr = String::from_utf8_lossy(&paid.stderr).to_string();
        let at = stderr.find("rcpt_").unwrap();
        stderr[at..].split(':').next().unwrap().to_string()
    };
    let (status, stored) = server.get(&format!("/ai/receipts/{receipt}")).await;
    assert_eq!(status, 200, "{stored}");

    // Bad input is the command's refusal before anything is paid.
    std::fs::write(&wallet, "not a key").unwrap();
    let bad = cli
        .run(&["call", "paid-hello", "--wallet-key", wallet_arg], None)
        .await;
    assert_exit(&bad, 2);
    assert!(!text(&bad).contains("not a key"), "the file is not echoed");
    let both = cli
        .run(
            &[
                "call",
                "paid-hello",
                "--credit",
                &token,
                "--wallet-key",
                wallet_arg,
            ],
            None,
        )
        .await;
    assert_exit(&both, 2);
}

/// `toolhost events` and `toolhost payouts`: the feed, where payouts go (a refused address
/// says its fix), the balances in USD.
#[tokio::test]
async fn events_and_payouts_from_the_command_line() {
    let server = TestServer::start().await;
    let (key, _) = server
        .builder_with("Feed Reader", &crate::util::static_endpoint("feed-me"))
        .await;
    let key = Some(key.as_str());
    let cli = Cli::new(&server);
    let events = cli.run(&["events", "--since", "1h"], key).await;
    assert_exit(&events, 0);
    assert!(
        text(&events).contains("endpoint_created"),
        "{}",
        text(&events)
    );
    let json = cli
        .run(&["events", "--slug", "feed-me", "--json"], key)
        .await;
    assert_exit(&json, 0);
    assert_eq!(stdout_json(&json)["events"][0]["endpointSlug"], "feed-me");

    let none = cli.run(&["payouts", "settings"], key).await;
    assert_exit(&none, 0);
    assert!(
        text(&none).contains("No payout settings yet"),
        "{}",
        text(&none)
    );
    let cli = &cli;
    let settings = |pay_to: &'static str, network: &'static str| {
        let args = [
            "payouts",
            "settings",
            "--pay-to",
            pay_to,
            "--network",
            network,
            "--minimum-usd",
            "1",
        ];
        async move { cli.run(&args, key).await }
    };
    let checksummed = "0x000000000000000000000000000000000000dEaD";
    let refused = settings("0x000000000000000000000000000000000000dead", "eip155:84532").await;
    assert_exit(&refused, 3);
    assert!(
        text(&refused).contains(checksummed),
        "the checksummed form is named: {}",
        text(&refused)
    );
    let wrong_network = settings(checksummed, "eip155:1").await;
    assert_exit(&wrong_network, 3);
    assert!(
        text(&wrong_network).contains("eip155:84532"),
        "{}",
        text(&wrong_network)
    );
    let saved = settings(checksummed, "eip155:84532").await;
    assert_exit(&saved, 0);
    assert!(text(&saved).contains(&format!("Payouts go to {checksummed}")));
    let balance = cli.run(&["payouts"], key).await;
    assert_exit(&balance, 0);
    assert!(
        text(&balance).contains("Collected and unpaid: 0 USD"),
        "{}",
        text(&balance)
    );
    let nothing = cli.run(&["payouts", "create"], key).await;
    assert_exit(&nothing, 3);
}

/// `toolhost dev` keeps production's outbound guard (no loopback or private upstreams) unless
/// told otherwise with an explicit dev-only flag, which then lets a local upstream in.
#[tokio::test]
async fn dev_reaches_a_local_upstream_only_when_told() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}/data", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/data",
        axum::routing::get(|| async { axum::Json(json!({"n": 7})) }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let server = TestServer::start().await;
    let cli = Cli::new(&server);
    let work = tempfile::tempdir().unwrap();
    let dir = tool(&cli, work.path(), "upstreamer", |m| {
        m["capabilities"] = json!({"httpGetJson": true});
        m["inputSchema"] = json!({"type": "object"});
        m["outputSchema"] = json!({});
    })
    .await;
    std::fs::write(
        Path::new(&dir).join("handler.js"),
        "export default async (req, ctx) => ({ got: await ctx.httpGetJson(req.input.url) });\n",
    )
    .unwrap();
    let input = json!({ "url": upstream });

    let (mut dev, mut lines, _, local) = start_dev(&cli, &dir).await;
    let (status, body) = post(&local, &input).await;
    assert_ne!(status, 200, "loopback is refused by default: {body}");
    stop_dev(&mut dev, &mut lines).await;

    let (mut dev, mut lines, stderr, local) =
        start_dev_with(&cli, &dir, &["--allow-private-upstreams"]).await;
    let (status, body) = post(&local, &input).await;
    assert_eq!((status, body), (200, json!({"got": {"n": 7}})));
    stop_dev(&mut dev, &mut lines).await;
    assert!(
        stderr.all().await.contains("--allow-private-upstreams"),
        "dev says what it allows"
    );
}

/// `deploy --share` rolls a new revision out beside the serving one; `rollout` shows both
/// revisions' calls, changes the share, promotes or ends it; `pull` during a rollout brings
/// the rolling-out revision, so a deploy from it builds on it without a conflict.
#[tokio::test]
async fn deploy_rolls_out_to_a_share_and_rollout_compares_promotes_and_ends() {
    let server = TestServer::start().await;
    let (_, builder_key) = server.builder("Roller").await;
    let cli = Cli::new(&server);
    let key = Some(builder_key.as_str());
    let work = tempfile::tempdir().unwrap();
    let dir = tool(&cli, work.path(), "rolled", |_| {}).await;
    let handler = std::path::Path::new(&dir).join("handler.js");
    let new_source =
        |version: &str| format!("export default async () => ({{ version: '{version}' }});\n");
    // A new tool serves whole: --share is for one that serves already.
    let refused = cli.run(&["deploy", &dir, "--share", "10"], key).await;
    assert_exit(&refused, 2);
    assert_exit(&cli.run(&["deploy", &dir], key).await, 0);
    assert_exit(&cli.run(&["deploy", &dir, "--share", "0"], key).await, 2);

    std::fs::write(&handler, new_source("v2")).unwrap();
    let rolled = cli.run(&["deploy", &dir, "--share", "100"], key).await;
    assert_exit(&rolled, 0);
    assert!(
        text(&rolled).contains("revision 2 rolls out to 100% of payers; revision 1 serves"),
        "{}",
        text(&rolled)
    );
    // Free calls from this machine are one payer: all on revision 2 at 100 %.
    let url = server.url("/tools/rolled");
    for _ in 0..3 {
        let (status, body) = post(&url, &json!({})).await;
        assert_eq!((status, &body["version"]), (200, &json!("v2")), "{body}");
    }
    let shown = cli.run(&["rollout", "rolled"], key).await;
    assert_exit(&shown, 0);
    let shown = text(&shown);
    assert!(
        shown.contains("revision 2 serves 100% of payers"),
        "{shown}"
    );
    assert!(
        shown.contains("rolling out") && shown.contains("P95 MS"),
        "{shown}"
    );
    let status = stdout_json(&cli.run(&["rollout", "rolled", "--json"], key).await);
    assert_eq!(status["rollout"]["candidate"]["calls"], 3, "{status}");
    assert_eq!(status["rollout"]["serving"]["calls"], 0, "{status}");

    // The share changes; the rolling-out revision is what pull brings and deploy builds on.
    let changed = cli
        .run(&["rollout", "rolled", "--share", "40", "--json"], key)
        .await;
    assert_exit(&changed, 0);
    assert_eq!(stdout_json(&changed)["rollout"]["share"], 40);
    let fresh = work.path().join("fresh");
    let fresh_arg = fresh.to_str().unwrap();
    let pulled = cli.run(&["pull", fresh_arg, "--slug", "rolled"], key).await;
    assert_exit(&pulled, 0);
    assert!(
        text(&pulled).contains("revision 2 (rolling out to 40% of payers"),
        "{}",
        text(&pulled)
    );
    assert_eq!(
        std::fs::read_to_string(fresh.join("handler.js")).unwrap(),
        new_source("v2")
    );
    std::fs::write(fresh.join("handler.js"), new_source("v3")).unwrap();
    let again = cli.run(&["deploy", fresh_arg, "--share", "40"], key).await;
    assert_exit(&again, 0);
    assert!(
        text(&again).contains("revision 3 rolls out"),
        "{}",
        text(&again)
    );

    // Ended, the serving revision answers everyone; rolled out again and promoted, it serves.
    let ended = cli.run(&["rollout", "rolled", "--end"], key).await;
    assert_exit(&ended, 0);
    assert!(
        text(&ended).contains("no rollout; revision 1 serves"),
        "{}",
        text(&ended)
    );
    let (_, body) = post(&url, &json!({})).await;
    assert_ne!(body["version"], "v3", "{body}");
    let nothing = cli.run(&["rollout", "rolled", "--promote"], key).await;
    assert_exit(&nothing, 3);
    assert!(text(&nothing).contains("no_rollout"), "{}", text(&nothing));
    let again = cli
        .run(
            &["rollout", "rolled", "--share", "100", "--revision", "3"],
            key,
        )
        .await;
    assert_exit(&again, 0);
    let promoted = cli.run(&["rollout", "rolled", "--promote"], key).await;
    assert_exit(&promoted, 0);
    assert!(
        text(&promoted).contains("no rollout; revision 3 serves"),
        "{}",
        text(&promoted)
    );
    let (_, body) = post(&url, &json!({})).await;
    assert_eq!(body["version"], "v3", "{body}");
}
