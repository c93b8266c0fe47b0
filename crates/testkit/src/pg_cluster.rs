//! Throwaway PostgreSQL clusters for tests: the store's conformance suite, the unit tests that
//! run on both engines, and the API and multi-node tests under `tests/`. It lives in the test
//! kit, a dev-dependency only, so the shipped binary carries none of it.
//!
//! A cluster runs the machine's own PostgreSQL server binaries (Debian's `postgresql` package,
//! which `scripts/setup.sh` installs), listens on a free loopback port with trust
//! authentication, keeps `fsync` on like production, and is removed when dropped. PostgreSQL
//! refuses to run as root, so as root the server runs as the `postgres` user.
//!
//! Creating a cluster takes a second or two (`initdb` writes some 1,200 files), so tests that
//! do not stop the server share one per test process ([`PgCluster::shared`]) and isolate
//! themselves in a schema of their own ([`PgCluster::fresh_url`]); a small watchdog process
//! removes the shared cluster when the test process exits. Tests that stop and start the
//! server ([`PgCluster::create`]) get a cluster of their own.

use std::io::{self, Write as _};
use std::net::TcpListener;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

/// The database every cluster has, empty.
pub const DATABASE: &str = "toolhost";

/// A running (or stopped) throwaway PostgreSQL cluster; see the module docs.
pub struct PgCluster {
    server: Server,
    /// Holds `data/`, the Unix socket and `server.log`.
    dir: PathBuf,
    port: u16,
    running: AtomicBool,
}

impl PgCluster {
    /// Creates a cluster of one's own and starts it. Fails, saying what to install, when
    /// PostgreSQL's server binaries are missing. Blocks for a second or two; async callers
    /// should use `spawn_blocking`.
    pub fn create() -> io::Result<PgCluster> {
        let server = Server::find()?;
        let dir = unique_temp_dir("toolhost-pg")?;
        server.own(&dir)?;
        if let Err(e) = server.init(&dir.join("data")) {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
        let mut cluster = PgCluster {
            server,
            dir,
            port: 0,
            running: AtomicBool::new(false),
        };
        // A port found free may be taken before the server binds it: try a few.
        let mut attempts = 0;
        loop {
            attempts += 1;
            cluster.port = free_port()?;
            match cluster.start() {
                Ok(()) => return Ok(cluster),
                Err(e) if attempts >= 5 => return Err(e),
                Err(_) => {}
            }
        }
    }

    /// This test process's shared cluster, created on first use (blocking, like
    /// [`create`](Self::create)) and removed by a watchdog once the process has exited. Never
    /// stop it: other tests are using it. Isolate a test in it with [`fresh_url`](Self::fresh_url).
    pub fn shared() -> io::Result<&'static PgCluster> {
        static SHARED: OnceLock<Result<PgCluster, String>> = OnceLock::new();
        let shared = SHARED.get_or_init(|| {
            let cluster = PgCluster::create().map_err(|e| e.to_string())?;
            cluster
                .remove_after_exit()
                .map_err(|e| format!("could not start the cluster's watchdog: {e}"))?;
            Ok(cluster)
        });
        shared.as_ref().map_err(|e| io::Error::other(e.clone()))
    }

    /// A URL like [`url`](Self::url) whose connections see only a new, empty schema: each
    /// caller gets a store of its own in one cluster (the server's `search_path` is set to that
    /// schema through the URL's `options`).
    pub async fn fresh_url(&self) -> io::Result<String> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let schema = format!(
            "test_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        );
        let (client, connection) = tokio_postgres::connect(&self.url(), tokio_postgres::NoTls)
            .await
            .map_err(io::Error::other)?;
        let connection = tokio::spawn(connection);
        let created = client
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .await
            .map_err(io::Error::other);
        drop(client);
        let _ = connection.await;
        created?;
        Ok(format!("{}?options=-csearch_path%3D{schema}", self.url()))
    }

    /// Spawns a shell that waits for this process to exit, then stops the server and removes
    /// its directory: for a cluster that is never dropped.
    fn remove_after_exit(&self) -> io::Result<()> {
        let pg_ctl = self.server.bin.join("pg_ctl");
        let run_as = if self.server.as_postgres {
            "runuser -u postgres -- "
        } else {
            ""
        };
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; \
             {run_as}'{pg_ctl}' stop -m immediate -D '{data}' >/dev/null 2>&1; rm -rf '{dir}'",
            pid = std::process::id(),
            pg_ctl = pg_ctl.display(),
            data = self.dir.join("data").display(),
            dir = self.dir.display(),
        );
        Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        Ok(())
    }

    /// A client program of the server's own release (`pg_dump`, `pg_restore`, `createdb`), run
    /// as the calling user: it reaches the server over TCP, as an operator's would.
    pub fn client_tool(&self, name: &str) -> Command {
        Command::new(self.server.bin.join(name))
    }

    /// Creates database `name` with the server's own `createdb`, as an operator would, and
    /// returns its URL.
    pub fn create_database(&self, name: &str) -> io::Result<String> {
        let output = self
            .client_tool("createdb")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                name,
            ])
            .output()?;
        if !output.status.success() {
            return Err(io::Error::other(format!(
                "createdb {name}: {}",
                String::from_utf8_lossy(&output.stderr)
            )));
        }
        Ok(format!(
            "postgres://postgres@127.0.0.1:{}/{name}",
            self.port
        ))
    }

    /// `postgres://postgres@127.0.0.1:<port>/toolhost`.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{DATABASE}", self.port)
    }

    /// The server's data directory (tests look at what is at rest there).
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Starts the server again after [`stop`](Self::stop): same data, same port. Waits until
    /// it accepts connections (after crash recovery, since `stop` is immediate).
    pub fn start(&self) -> io::Result<()> {
        let mut options = format!(
            "-p {} -k '{}' -c listen_addresses=127.0.0.1 -c fsync=on",
            self.port,
            self.dir.display()
        );
        if self.server.major_version >= 14 {
            // Crash recovery (after `stop`) syncs the data directory with one syncfs() rather
            // than an fsync() per file, which takes seconds.
            options.push_str(" -c recovery_init_sync_method=syncfs");
        }
        let output = self
            .server
            .command("pg_ctl")
            .arg("start")
            .arg("-w")
            .args(["-t", "60"])
            .arg("-D")
            .arg(self.dir.join("data"))
            .arg("-l")
            .arg(self.dir.join("server.log"))
            .args(["-o", &options])
            .stdin(Stdio::null())
            .output();
        match check("start the PostgreSQL server", output) {
            Ok(_) => {
                self.running.store(true, Ordering::SeqCst);
                Ok(())
            }
            Err(e) => Err(io::Error::other(format!(
                "{e}\nserver log:\n{}",
                self.log_tail()
            ))),
        }
    }

    /// Stops the server at once, as a crash would (`pg_ctl stop -m immediate`): committed
    /// transactions must survive it.
    pub fn stop(&self) -> io::Result<()> {
        let output = self
            .server
            .command("pg_ctl")
            .arg("stop")
            .arg("-w")
            .args(["-m", "immediate"])
            .arg("-D")
            .arg(self.dir.join("data"))
            .stdin(Stdio::null())
            .output();
        check("stop the PostgreSQL server", output)?;
        self.running.store(false, Ordering::SeqCst);
        Ok(())
    }

    /// The end of the server's log, for failure messages.
    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        if self.running.load(Ordering::SeqCst) {
            if let Err(e) = self.stop() {
                eprintln!("pg_cluster: {e}");
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The server binaries, and whether they must run as the `postgres` user.
struct Server {
    bin: PathBuf,
    as_postgres: bool,
    /// 15 for PostgreSQL 15.x.
    major_version: u32,
}

impl Server {
    /// `$TOOLHOST_PG_BINDIR`, else the newest `/usr/lib/postgresql/*/bin` (Debian), else the
    /// directory of `pg_ctl` on `PATH`.
    fn find() -> io::Result<Server> {
        let complete = |dir: &Path| {
            ["initdb", "pg_ctl", "postgres"]
                .iter()
                .all(|b| dir.join(b).is_file())
        };
        let mut candidates = Vec::new();
        if let Some(dir) = std::env::var_os("TOOLHOST_PG_BINDIR") {
            candidates.push(PathBuf::from(dir));
        }
        let mut debian: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let version = e.file_name().to_str()?.parse().ok()?;
                Some((version, e.path().join("bin")))
            })
            .collect();
        debian.sort();
        candidates.extend(debian.into_iter().rev().map(|(_, bin)| bin));
        if let Some(path) = std::env::var_os("PATH") {
            candidates.extend(std::env::split_paths(&path));
        }
        let bin = candidates
            .into_iter()
            .find(|d| complete(d))
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found in \
                 $TOOLHOST_PG_BINDIR, /usr/lib/postgresql/*/bin or PATH: install the \
                 `postgresql` package (scripts/setup.sh does)",
                )
            })?;
        let mut server = Server {
            bin,
            as_postgres: effective_uid() == Some(0),
            major_version: 0,
        };
        // "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
        let version = check(
            "run postgres --version",
            server.command("postgres").arg("--version").output(),
        )?;
        let version = String::from_utf8_lossy(&version.stdout);
        server.major_version = version
            .split_whitespace()
            .nth(2)
            .and_then(|v| v.split('.').next())
            .and_then(|major| major.parse().ok())
            .ok_or_else(|| io::Error::other(format!("unexpected postgres --version: {version}")))?;
        Ok(server)
    }

    /// A command running one of the server binaries, as `postgres` when we are root.
    fn command(&self, program: &str) -> Command {
        let program = self.bin.join(program);
        if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            Command::new(program)
        }
    }

    /// Hands a directory we created to the user the server runs as.
    fn own(&self, dir: &Path) -> io::Result<()> {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        if self.as_postgres {
            let output = Command::new("chown").arg("postgres:").arg(dir).output();
            check("chown the cluster directory to postgres", output)?;
        }
        Ok(())
    }

    /// `initdb`, then the `toolhost` database, created in single-user mode (no server needed).
    /// Both skip fsync: that would take seconds here and protect only a throwaway directory.
    fn init(&self, data: &Path) -> io::Result<()> {
        check(
            "initdb",
            self.command("initdb")
                .arg("-D")
                .arg(data)
                .args(["-A", "trust", "-U", "postgres", "-E", "UTF8"])
                .args(["--locale=C", "--no-sync"])
                .stdin(Stdio::null())
                .output(),
        )?;
        // Single-user mode creates the database without starting a server.
        let mut single = self
            .command("postgres")
            // Without fsync, like `initdb --no-sync`: a crash while creating a test
            // cluster loses nothing of value. The server itself runs with fsync on.
            .args(["--single", "-F", "-D"])
            .arg(data)
            .arg("postgres")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        if let Some(mut stdin) = single.stdin.take() {
            stdin.write_all(format!("CREATE DATABASE {DATABASE};\n").as_bytes())?;
        }
        let output = single.wait_with_output();
        let output = check("create the toolhost database (single-user mode)", output)?;
        let said = String::from_utf8_lossy(&output.stdout);
        if said.contains("ERROR") {
            return Err(io::Error::other(format!(
                "creating the toolhost database failed: {said}"
            )));
        }
        Ok(())
    }
}

/// Turns a failed or unsuccessful command into an error carrying its output.
fn check(what: &str, output: io::Result<Output>) -> io::Result<Output> {
    let output = output.map_err(|e| io::Error::new(e.kind(), format!("could not {what}: {e}")))?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(io::Error::other(format!(
            "could not {what} ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )))
    }
}

/// The owner of `/proc/self`, which is this process's effective uid.
fn effective_uid() -> Option<u32> {
    std::fs::metadata("/proc/self").ok().map(|m| m.uid())
}

fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A new, empty directory in the temp dir.
fn unique_temp_dir(stem: &str) -> io::Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "{stem}-{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir(&dir)?;
    Ok(dir)
}
