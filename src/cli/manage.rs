//! The commands that manage a builder's endpoints on a server: `deploy`, `login`, `logs`,
//! `endpoints`, `secrets`, `revenue`. Each is one or a few API requests and a
//! printout of the answer.

use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

use reqwest::Method;
use serde_json::{json, Value};

use super::api::{refusal, segment, Api};
use super::deployed::{self, Deployed};
use super::output::{capability_list, cell, log_entry, table, usd, Out, Tone};
use super::project::Project;
use super::{
    profile, DeployArgs, EndpointsAction, EndpointsArgs, Failure, Global, LogsArgs, Outcome,
    RevenueArgs, SecretsAction, SecretsArgs,
};

/// How often `logs --follow` asks for new calls.
const FOLLOW_EVERY: Duration = Duration::from_secs(1);

fn endpoint_path(slug: &str) -> String {
    format!("/ai/endpoints/{}", segment(slug))
}

/// `toolhost deploy`: creates the endpoint, or updates the one the builder owns to what the
/// directory says; the server's refusal (a taken slug, blocked content, a bad field) is the
/// command's failure.
pub(super) async fn deploy(args: &DeployArgs, out: &Out) -> Outcome {
    let (dir, global) = (args.dir.as_path(), &args.global);
    let project = Project::load(dir)?;
    let api = Api::from_global(global)?;
    api.require_key()?;
    let record = deployed::load(dir, api.base(), &project.slug);
    // Progress for people watching (stderr on a terminal): what goes up, then the outcome.
    let watching = !out.json && std::io::stderr().is_terminal();
    if watching {
        eprintln!(
            "{}",
            out.paint(
                Tone::Dim,
                &format!(
                    "uploading {} to {}: {} …",
                    project.slug,
                    api.base(),
                    project.upload_summary()
                )
            )
        );
    }
    let base = Base {
        named: record.map(|r| r.revision),
        force: args.force,
        rollout_share: args.share,
    };
    let (answer, action) = publish(&api, &project, &base).await?;
    // What this directory now is on the server: the newest revision it went into.
    if let Some(revision) = newest(&answer["manage"]) {
        let record = Deployed {
            slug: project.slug.clone(),
            revision,
            digest: project.digest(),
        };
        deployed::save(dir, api.base(), record)?;
    }
    if out.json {
        out.json(&answer);
    } else {
        print_deployed(out, &answer, action);
    }
    Ok(())
}

/// The revision a deploy says it was made on.
#[derive(Default)]
pub(super) struct Base {
    /// The one the directory last deployed to or pulled from; `None`: the newest the server
    /// has (a directory with no record, and `dev`, which owns its server).
    pub(super) named: Option<u64>,
    /// Deploy even when the endpoint moved on since `named`.
    pub(super) force: bool,
    /// Roll the new revision out to this percentage of payers instead of serving it whole.
    pub(super) rollout_share: Option<u8>,
}

/// The newest revision its owner put forward, which a change builds on: the one waiting for a
/// grant, else the one rolling out, else the serving one.
pub(super) fn newest(manage: &Value) -> Option<u64> {
    manage["pendingRevision"]
        .as_u64()
        .or_else(|| manage["rollout"]["revision"].as_u64())
        .or_else(|| manage["revision"].as_u64())
}

/// Creates or updates `project` as `api`'s credential; answers the create or PATCH answer
/// (`{endpoint, manage}`) and what was done. An update is made on `base`: the server refuses
/// it (409 `revision_conflict`) when the endpoint has moved on since, unless forced.
pub(super) async fn publish(
    api: &Api,
    project: &Project,
    base: &Base,
) -> Result<(Value, &'static str), Failure> {
    let path = endpoint_path(&project.slug);
    let current = api.exchange(Method::GET, &path, None, &[]).await?;
    let body = project.create_body();
    let create = || api.send(Method::POST, "/ai/endpoints/create", Some(&body));
    if base.rollout_share.is_some() && current.status != 200 {
        return Err(Failure::Usage(format!(
            "{} is not on {} yet: a new tool serves whole; --share rolls out a new revision of one that serves",
            project.slug,
            api.base()
        )));
    }
    match current.status {
        404 => Ok((create().await?, "created")),
        // Another builder's endpoint shows no `manage`: create then gives the server's own
        // answer (409 slug_taken).
        200 if current.body["manage"].is_null() => Ok((create().await?, "created")),
        200 => {
            let (endpoint, manage) = newest_views(api, &path, &current.body).await?;
            let mut patch = project.patch_body(&endpoint, &manage);
            if patch.is_empty() {
                return Ok((current.body, "unchanged"));
            }
            if let Some(named) = base.named.or(newest(&manage)) {
                patch.insert("baseRevision".into(), json!(named));
            }
            if base.force {
                patch.insert("force".into(), json!(true));
            }
            if let Some(share) = base.rollout_share {
                patch.insert("rolloutShare".into(), json!(share));
            }
            let answer = api
                .send(Method::PATCH, &path, Some(&Value::Object(patch)))
                .await?;
            Ok((answer, "updated"))
        }
        _ => Err(refusal(current)),
    }
}

/// The newest revision its owner put forward ([`newest`]), in the shape of the owner's view
/// (`endpoint`, `manage`), which is what a change builds on: the view itself, or, when a
/// revision waits for a grant or rolls out, that revision's content in its place.
pub(super) async fn newest_views(
    api: &Api,
    path: &str,
    current: &Value,
) -> Result<(Value, Value), Failure> {
    let (mut endpoint, mut manage) = (current["endpoint"].clone(), current["manage"].clone());
    let Some(newer) = newest(&manage).filter(|n| manage["revision"].as_u64() != Some(*n)) else {
        return Ok((endpoint, manage));
    };
    let revision = api.get(&format!("{path}/revisions/{newer}")).await?;
    let content = &revision["content"];
    for field in [
        "title",
        "description",
        "tags",
        "priceUsd",
        "inputSchema",
        "outputSchema",
    ] {
        endpoint[field] = content[field].clone();
    }
    endpoint["pricingMode"] = json!(if content["priceUsd"].as_f64() == Some(0.0) {
        "free_public_utility"
    } else {
        "fixed_price_success_receipt"
    });
    for (view, field) in [
        ("exampleInput", "exampleInput"),
        ("requestedCapabilities", "requestedCapabilities"),
        ("allowedHosts", "allowedHosts"),
        ("source", "source"),
        ("sourceLanguage", "sourceLanguage"),
        ("env", "env"),
    ] {
        manage[view] = content[field].clone();
    }
    Ok((endpoint, manage))
}

fn print_deployed(out: &Out, answer: &Value, action: &str) {
    let endpoint = &answer["endpoint"];
    let manage = &answer["manage"];
    let rollout = &manage["rollout"];
    if rollout.is_null() {
        println!(
            "{} {}: {action}, revision {}",
            out.paint(Tone::Good, "Deployed"),
            cell(&endpoint["slug"]),
            cell(&manage["revision"])
        );
    } else {
        println!(
            "{} {}: revision {} rolls out to {}% of payers; revision {} serves the rest \
             (toolhost rollout {} to compare, promote or end)",
            out.paint(Tone::Good, "Deployed"),
            cell(&endpoint["slug"]),
            cell(&rollout["revision"]),
            cell(&rollout["share"]),
            cell(&manage["revision"]),
            cell(&endpoint["slug"])
        );
    }
    if let Some(pending) = manage["pendingRevision"].as_u64() {
        let missing = &manage["capabilityGrant"]["pendingRevision"]["missing"];
        println!(
            "  {}",
            out.paint(
                Tone::Warn,
                &format!(
                    "revision {pending} waits for the admin to grant {}; revision {} serves meanwhile",
                    missing
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(", "),
                    cell(&manage["revision"])
                )
            )
        );
    }
    let status = cell(&endpoint["status"]);
    let status_tone = if status == "active" {
        Tone::Good
    } else {
        Tone::Warn
    };
    println!("  status          {}", out.paint(status_tone, &status));
    let safety = &endpoint["contentSafety"];
    let verdict = match safety["status"].as_str() {
        Some("passed") | Some("approved") => out.paint(Tone::Good, &cell(&safety["status"])),
        Some("review") => out.paint(
            Tone::Warn,
            "review: held (paused, unlisted) until the admin decides",
        ),
        Some(other) => out.paint(Tone::Bad, other),
        None => "not scanned".to_string(),
    };
    println!("  content safety  {verdict}");
    for finding in safety["findings"].as_array().into_iter().flatten() {
        println!(
            "    {} {} at {}: {}",
            cell(&finding["outcome"]),
            cell(&finding["ruleId"]),
            cell(&finding["field"]),
            cell(&finding["excerpt"])
        );
    }
    let requested = capability_list(&manage["requestedCapabilities"]);
    let granted = capability_list(&manage["grantedCapabilities"]);
    let note = if requested != granted {
        out.paint(Tone::Warn, " (the admin grants capabilities)")
    } else {
        String::new()
    };
    println!("  capabilities    requested {requested}; granted {granted}{note}");
    println!("  price           {} USD", cell(&endpoint["priceUsd"]));
    println!("  live at         {}", cell(&endpoint["url"]));
}

/// `toolhost login`: checks the key against the server, then stores both.
pub(super) async fn login(global: &Global, out: &Out) -> Outcome {
    let mut global = global.clone();
    if global.builder_key.as_deref().is_none_or(str::is_empty) {
        global.builder_key = Some(read_secret("Builder key: ")?);
    }
    let api = Api::from_parts(&global, profile::load().unwrap_or(None))?;
    let answer = api.get("/ai/builders/endpoints").await?;
    let stored = profile::Profile {
        server: api.base().to_string(),
        builder_key: global.builder_key.unwrap_or_default(),
    };
    let path = profile::save(&stored)?;
    if out.json {
        out.json(
            &json!({"ok": true, "server": stored.server, "builderId": answer["builderId"],
            "config": path}),
        );
    } else {
        println!(
            "Logged in to {} as builder {} (stored in {}, readable by you only)",
            stored.server,
            cell(&answer["builderId"]),
            path.display()
        );
    }
    Ok(())
}

/// One line from stdin, prompting on a terminal; for values that should not be in argv.
fn read_secret(prompt: &str) -> Result<String, Failure> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        eprint!("{prompt}");
        let _ = std::io::stderr().flush();
    }
    let mut line = String::new();
    stdin
        .lock()
        .read_line(&mut line)
        .map_err(|e| Failure::Local(format!("cannot read stdin: {e}")))?;
    let value = line.trim_end_matches(['\n', '\r']).to_string();
    if value.is_empty() {
        return Err(Failure::Usage(format!(
            "{} expected on stdin",
            prompt.trim_end_matches([':', ' '])
        )));
    }
    Ok(value)
}

/// `toolhost logs`: the latest calls oldest first; with `--follow`, then each new one.
pub(super) async fn logs(args: &LogsArgs, out: &Out) -> Outcome {
    let api = Api::from_global(&args.global)?;
    api.require_key()?;
    let mut printed = Printed::default();
    print_new_calls(&api, &args.slug, args.limit, &mut printed, out).await?;
    if !args.follow {
        return Ok(());
    }
    let stop = crate::server::shutdown_signal();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => return Ok(()),
            () = tokio::time::sleep(FOLLOW_EVERY) => {}
        }
        print_new_calls(&api, &args.slug, args.limit, &mut printed, out).await?;
    }
}

/// How far a follower of an endpoint's calls has printed.
#[derive(Default)]
pub(super) struct Printed {
    /// The first round is over (it prints the newest `limit` calls, and no more).
    started: bool,
    /// The newest call printed (or passed over by the first round's `limit`).
    newest: Option<String>,
}

/// Calls a later round prints at most: the server keeps 1,000 per endpoint.
const MOST_NEW_CALLS: usize = 1000;

/// Prints, oldest first, the newest `limit` calls on the first round, then on each round every
/// call since the newest one printed: the log pages newest first, so later rounds page back
/// until they reach it (a page of `limit` would show older calls as new ones).
pub(super) async fn print_new_calls(
    api: &Api,
    slug: &str,
    limit: u16,
    printed: &mut Printed,
    out: &Out,
) -> Outcome {
    let path = format!("{}/logs", endpoint_path(slug));
    let mut new: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    'pages: loop {
        let page_limit = if printed.started { 50 } else { limit };
        let query = match &cursor {
            Some(cursor) => format!("?limit={page_limit}&cursor={}", segment(cursor)),
            None => format!("?limit={page_limit}"),
        };
        let page = api.get(&format!("{path}{query}")).await?;
        for entry in page["entries"].as_array().into_iter().flatten() {
            if printed.newest.as_deref() == entry["id"].as_str() {
                break 'pages;
            }
            new.push(entry.clone());
        }
        cursor = page["nextCursor"].as_str().map(str::to_owned);
        // The first round stops at its limit; a later one with nothing printed before has
        // no call to stop at, and prints the newest page.
        if !printed.started
            || printed.newest.is_none()
            || new.len() >= MOST_NEW_CALLS
            || cursor.is_none()
        {
            break;
        }
    }
    printed.started = true;
    if let Some(newest) = new.first() {
        printed.newest = newest["id"].as_str().map(str::to_owned);
    }
    for entry in new.iter().rev() {
        if out.json {
            out.json(entry);
        } else {
            println!("{}", log_entry(out, entry));
        }
    }
    Ok(())
}

/// `toolhost endpoints [list|pause|resume|delete]`.
pub(super) async fn endpoints(args: &EndpointsArgs, out: &Out) -> Outcome {
    let api = Api::from_global(&args.global)?;
    api.require_key()?;
    let (slug, status) = match args.action.as_ref().unwrap_or(&EndpointsAction::List) {
        EndpointsAction::List => return list_endpoints(&api, out).await,
        EndpointsAction::Delete { slug, yes } => {
            confirm_delete(slug, *yes)?;
            let answer = api.send(Method::DELETE, &endpoint_path(slug), None).await?;
            if out.json {
                out.json(&answer);
            } else {
                println!("Deleted {slug}, with its secrets, files, kv data and logs");
            }
            return Ok(());
        }
        EndpointsAction::Pause { slug } => (slug, "paused"),
        EndpointsAction::Resume { slug } => (slug, "active"),
    };
    let answer = api
        .send(
            Method::PATCH,
            &endpoint_path(slug),
            Some(&json!({"status": status})),
        )
        .await?;
    if out.json {
        out.json(&answer);
    } else {
        println!(
            "{slug}: {} (revision {})",
            cell(&answer["endpoint"]["status"]),
            cell(&answer["manage"]["revision"])
        );
    }
    Ok(())
}

async fn list_endpoints(api: &Api, out: &Out) -> Outcome {
    let answer = api.get("/ai/builders/endpoints").await?;
    if out.json {
        out.json(&answer);
        return Ok(());
    }
    let rows: Vec<Vec<String>> = answer["endpoints"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| {
            let endpoint = &item["endpoint"];
            vec![
                cell(&endpoint["slug"]),
                cell(&endpoint["status"]),
                cell(&endpoint["priceUsd"]),
                cell(&item["manage"]["revision"]),
                cell(&endpoint["contentSafety"]["status"]),
                cell(&endpoint["url"]),
            ]
        })
        .collect();
    if rows.is_empty() {
        println!("No endpoints yet: `toolhost init` then `toolhost deploy`.");
    } else {
        println!(
            "{}",
            table(
                &["SLUG", "STATUS", "PRICE USD", "REVISION", "SAFETY", "URL"],
                &rows
            )
        );
    }
    Ok(())
}

/// Deleting is for good: asked on a terminal, refused elsewhere without `--yes`.
fn confirm_delete(slug: &str, yes: bool) -> Outcome {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(Failure::Usage(format!(
            "deleting {slug} removes its data for good; add --yes to confirm"
        )));
    }
    eprint!("Delete {slug} with its secrets, files, kv data and logs? Type the slug to confirm: ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    if line.trim() == slug {
        Ok(())
    } else {
        Err(Failure::Usage("not confirmed; nothing deleted".into()))
    }
}

/// `toolhost secrets list|set|delete`.
pub(super) async fn secrets(args: &SecretsArgs, out: &Out) -> Outcome {
    let api = Api::from_global(&args.global)?;
    api.require_key()?;
    let (slug, change) = match &args.action {
        SecretsAction::List { slug } => (slug, None),
        SecretsAction::Set { slug, name, value } => {
            let value = match value {
                Some(value) => value.clone(),
                None => read_secret(&format!("Value of {name}: "))?,
            };
            (slug, Some(json!({"set": {name: value}})))
        }
        SecretsAction::Delete { slug, names } => (slug, Some(json!({"delete": names}))),
    };
    let path = format!("{}/secrets", endpoint_path(slug));
    let answer = match &change {
        Some(body) => api.send(Method::POST, &path, Some(body)).await?,
        None => api.get(&path).await?,
    };
    if out.json {
        out.json(&answer);
        return Ok(());
    }
    let rows: Vec<Vec<String>> = answer["secrets"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| vec![cell(&s["name"]), cell(&s["updatedAt"])])
        .collect();
    if rows.is_empty() {
        println!("{slug} has no secrets");
    } else {
        println!("{}", table(&["NAME", "UPDATED"], &rows));
    }
    Ok(())
}

/// `toolhost revenue`.
pub(super) async fn revenue(args: &RevenueArgs, out: &Out) -> Outcome {
    let api = Api::from_global(&args.global)?;
    api.require_key()?;
    let since: String = url::form_urlencoded::byte_serialize(args.since.as_bytes()).collect();
    let answer = api
        .get(&format!("/ai/builders/revenue?since={since}"))
        .await?;
    if out.json {
        out.json(&answer);
        return Ok(());
    }
    let revenue = &answer["revenue"];
    println!(
        "Since {}: {} calls, gross {} USD, fee {} USD, net {} USD",
        cell(&answer["since"]),
        cell(&revenue["count"]),
        cell(&revenue["grossUsd"]),
        cell(&revenue["feeUsd"]),
        cell(&revenue["netUsd"])
    );
    println!(
        "  collected net {} (what payouts draw on), uncollected net {} (recorded only, or pending on-chain: not paid out)",
        usd(&revenue["collected"]["netUnits"]),
        usd(&revenue["uncollected"]["netUnits"])
    );
    let rows: Vec<Vec<String>> = revenue["byEndpoint"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(slug, r)| {
            vec![
                slug.clone(),
                cell(&r["count"]),
                cell(&r["grossUsd"]),
                cell(&r["feeUsd"]),
                cell(&r["netUsd"]),
            ]
        })
        .collect();
    if !rows.is_empty() {
        println!(
            "\n{}",
            table(
                &["ENDPOINT", "CALLS", "GROSS USD", "FEE USD", "NET USD"],
                &rows
            )
        );
    }
    Ok(())
}
