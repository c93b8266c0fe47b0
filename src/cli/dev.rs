//! `toolhost dev`: the tool served locally by the server itself. A `server::Server` on a
//! throwaway embedded store (no seeded catalog, sandbox workers of this binary, the same
//! outbound guard) gets the tool as its admin's own endpoint, free, so its capabilities are
//! granted and calls need no payment; `.env` becomes its secrets, so logs redact them as in
//! production. The directory is polled and every change is applied with the same create or
//! PATCH `deploy` sends; each call is printed from the endpoint's logs. The store is its own, so
//! `ctx.kv` and `ctx.files` are scratch data, never a deployed tool's; the outbound guard is
//! production's unless `--allow-private-upstreams` lets local upstreams in.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::Method;
use serde_json::json;

use super::api::{segment, Api, Credential};
use super::manage::{print_new_calls, publish, Base, Printed};
use super::output::{cell, Out, Tone};
use super::project::{fingerprint, Project};
use super::{Failure, Outcome};
use crate::config::{self, Config};
use crate::server::Server;

/// How often the directory is checked for changes and the logs for new calls.
const POLL_EVERY: Duration = Duration::from_millis(300);

pub(super) async fn run(dir: &Path, port: u16, private_upstreams: bool, out: &Out) -> Outcome {
    // Stamped before the first load: a file changed while the server starts (once the tool
    // answers, an editor's next save) is then seen as a change, never taken as what was loaded.
    let mut stamp = fingerprint(dir);
    let first = Project::load(dir)?;
    // The server's own warnings are worth seeing here: each failed call's code and message
    // (`request failed ... code=handler_error ...`), a worker that died. tower_http's line
    // for the same failure would only repeat it.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,tower_http=off")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .without_time()
        .try_init();
    let scratch = Scratch::create()?;
    let token = hex::encode(rand::random::<[u8; 24]>());
    let mut config = dev_config(&scratch.0, port, &token)?;
    if private_upstreams {
        config.outbound.allow_loopback = true;
        config.outbound.allow_private = true;
        eprintln!(
            "{}",
            out.paint(
                Tone::Warn,
                "dev: the handler may reach loopback and private networks (--allow-private-upstreams); a deployed tool may not"
            )
        );
    }
    let server = Server::bind(config)
        .await
        .map_err(|e| Failure::Local(format!("cannot serve on 127.0.0.1:{port}: {e}")))?;
    let base = format!("http://{}", server.local_addr());
    let (stop_server, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    let mut dev = Dev {
        api: Api::new(&base, Credential::Admin(token)),
        base,
        serving: None,
        secrets: BTreeMap::new(),
        printed: Printed::default(),
    };
    dev.apply(first, out).await;
    let stop = crate::server::shutdown_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => break,
            () = tokio::time::sleep(POLL_EVERY) => {}
        }
        let now = fingerprint(dir);
        if now != stamp {
            stamp = now;
            match Project::load(dir) {
                Ok(project) => dev.apply(project, out).await,
                Err(failure) => report(out, &failure, dev.serving.as_deref()),
            }
        }
        if let Some(slug) = dev.serving.clone() {
            if let Err(failure) = print_new_calls(&dev.api, &slug, 50, &mut dev.printed, out).await
            {
                report(out, &failure, Some(&slug));
            }
        }
    }
    let _ = stop_server.send(());
    let _ = running.await;
    println!("Stopped.");
    Ok(())
}

/// The local server: loopback only, the admin token only this process knows, no seeded
/// catalog, JavaScript in one sandbox worker process as `serve` runs it.
fn dev_config(scratch: &Path, port: u16, token: &str) -> Result<Config, Failure> {
    let seed = scratch.join("seed");
    std::fs::create_dir_all(seed.join("catalog"))
        .map_err(|e| Failure::Local(format!("cannot prepare {}: {e}", seed.display())))?;
    let mut config = Config::new(scratch.join("data"));
    config.addr = SocketAddr::from(([127, 0, 0, 1], port));
    config.admin_token = Some(token.to_string());
    config.seed_dir = Some(seed);
    // One person calling their own tool in a loop is not abuse.
    config.limits.anonymous_writes = None;
    config.runtime.isolation = config::worker_isolation(
        1,
        sandbox::WorkerOptions::DEFAULT_RECYCLE_AFTER_DROPPED,
        std::env::var("RUST_LOG").unwrap_or_else(|_| "warn".to_owned()),
    )
    .map_err(Failure::Local)?;
    Ok(config)
}

struct Dev {
    api: Api,
    base: String,
    /// The slug being served, once a create succeeded.
    serving: Option<String>,
    /// The `.env` last given to the endpoint as secrets.
    secrets: BTreeMap<String, String>,
    /// How far the endpoint's calls are printed.
    printed: Printed,
}

impl Dev {
    /// Makes the served endpoint what `project` says; a refusal is printed and the previous
    /// revision (if any) keeps serving.
    async fn apply(&mut self, project: Project, out: &Out) {
        let previous = self.serving.clone();
        match self.try_apply(project).await {
            Ok((slug, revision, action)) => {
                if previous.as_deref() != Some(slug.as_str()) {
                    println!(
                        "{} {slug} at {}/tools/{slug} (revision {revision}, no payment; Ctrl-C to stop)",
                        out.paint(Tone::Good, "Serving"),
                        self.base
                    );
                } else if action != "unchanged" {
                    println!(
                        "{} {slug}: revision {revision}",
                        out.paint(Tone::Good, "Reloaded")
                    );
                }
            }
            Err(failure) => report(out, &failure, self.serving.as_deref()),
        }
    }

    async fn try_apply(
        &mut self,
        project: Project,
    ) -> Result<(String, String, &'static str), Failure> {
        let project = project.free();
        if let Some(old) = self.serving.clone().filter(|s| *s != project.slug) {
            self.api
                .send(
                    Method::DELETE,
                    &format!("/ai/endpoints/{}", segment(&old)),
                    None,
                )
                .await?;
            self.serving = None;
            self.secrets.clear();
        }
        let (answer, mut action) = publish(&self.api, &project, &Base::default()).await?;
        self.serving = Some(project.slug.clone());
        let mut revision = answer["manage"]["revision"].clone();
        if project.dotenv != self.secrets {
            let gone: Vec<&String> = self
                .secrets
                .keys()
                .filter(|name| !project.dotenv.contains_key(*name))
                .collect();
            self.api
                .send(
                    Method::POST,
                    &format!("/ai/endpoints/{}/secrets", segment(&project.slug)),
                    Some(&json!({"set": project.dotenv, "delete": gone})),
                )
                .await?;
            self.secrets = project.dotenv.clone();
            action = "updated";
            // A secrets change is a revision of its own.
            let now = self
                .api
                .get(&format!("/ai/endpoints/{}", segment(&project.slug)))
                .await?;
            revision = now["manage"]["revision"].clone();
        }
        Ok((project.slug, cell(&revision), action))
    }
}

/// A failure while serving: printed, and the server goes on.
fn report(out: &Out, failure: &Failure, serving: Option<&str>) {
    out.failure(failure);
    match serving {
        Some(slug) => eprintln!("  (still serving the last good revision of {slug})"),
        None => eprintln!("  (waiting for a change to try again)"),
    }
}

/// The temporary directory of the local server's store, removed when `dev` ends.
struct Scratch(PathBuf);

impl Scratch {
    fn create() -> Result<Scratch, Failure> {
        let path = std::env::temp_dir().join(format!(
            "toolhost-dev-{}-{}",
            std::process::id(),
            hex::encode(rand::random::<[u8; 6]>())
        ));
        std::fs::create_dir_all(&path)
            .map_err(|e| Failure::Local(format!("cannot create {}: {e}", path.display())))?;
        Ok(Scratch(path))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
