//! `toolhost pull`, `toolhost revisions`, `toolhost rollback` and `toolhost rollout`: the
//! newest revision back into a directory, the kept revisions, serving an older one again, and
//! gradual rollouts.

use std::path::Path;

use reqwest::Method;
use serde_json::{json, Value};

use super::api::{segment, Api};
use super::deployed::{self, Deployed};
use super::manage::{newest, newest_views};
use super::output::{cell, table, Out, Tone};
use super::project::{self, Project};
use super::{Failure, Global, Outcome, PullArgs, RollbackArgs, RolloutArgs};

fn endpoint_path(slug: &str) -> String {
    format!("/ai/endpoints/{}", segment(slug))
}

/// The slug of the tool in `dir`, from its manifest (whatever else the manifest holds).
fn slug_in(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(project::MANIFEST)).ok()?;
    let manifest: Value = serde_json::from_str(&text).ok()?;
    manifest["slug"].as_str().map(str::to_owned)
}

/// `toolhost pull`: writes the newest revision its owner put forward (the serving one, or the
/// one waiting for a grant or rolling out, which a deploy from the directory builds on):
/// manifest, handler, files.
/// Refuses, unless forced, to overwrite a directory changed since it last deployed to or
/// pulled from that server, or one that never did and differs: the edits would be lost.
pub(super) async fn pull(args: &PullArgs, out: &Out) -> Outcome {
    let dir = args.dir.as_path();
    let slug = match (&args.slug, slug_in(dir)) {
        (Some(given), _) => given.clone(),
        (None, Some(found)) => found,
        (None, None) => {
            return Err(Failure::Usage(format!(
                "{} has no {} naming the tool; give --slug",
                dir.display(),
                project::MANIFEST
            )))
        }
    };
    let api = Api::from_global(&args.global)?;
    api.require_key()?;
    let current = api.get(&endpoint_path(&slug)).await?;
    if current["manage"].is_null() {
        return Err(Failure::Usage(format!(
            "{slug} is not yours: only its owner can pull it"
        )));
    }
    if current["manage"]["source"].is_null() {
        return Err(Failure::Usage(format!(
            "{slug} has a built-in handler, not source to pull"
        )));
    }
    let (endpoint, manage) = &newest_views(&api, &endpoint_path(&slug), &current).await?;
    let local = Project::load(dir).ok().filter(|p| p.slug == slug);
    if let Some(local) = &local {
        let unchanged_since = deployed::load(dir, api.base(), &slug)
            .is_some_and(|record| record.digest == local.digest());
        let same_as_serving = local.patch_body(endpoint, manage).is_empty();
        if !unchanged_since && !same_as_serving && !args.force {
            return Err(Failure::Usage(format!(
                "{} has changes that are not on {} (edited since its last deploy or pull): \
                 pulling would overwrite them. Deploy them, or pull --force to drop them",
                dir.display(),
                api.base()
            )));
        }
    }
    let paths: Vec<String> = manage["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f["path"].as_str().map(str::to_owned))
        .collect();
    // Every file first, so a failure leaves the directory as it was.
    let mut files = Vec::with_capacity(paths.len());
    for path in &paths {
        let query: String = url::form_urlencoded::byte_serialize(path.as_bytes()).collect();
        let bytes = api
            .get_bytes(&format!("{}/files?path={query}", endpoint_path(&slug)))
            .await?;
        files.push((path, bytes));
    }
    let attestation = local.as_ref().and_then(|p| p.attestation().cloned());
    let mut written = project::write_pulled(dir, endpoint, manage, &paths, attestation)?;
    for (path, bytes) in &files {
        project::write_file(dir, path, bytes)?;
        written.push((*path).clone());
    }
    let pulled = Project::load(dir)?;
    let revision = newest(manage).unwrap_or_default();
    let serving = cell(&current["manage"]["revision"]);
    let record = Deployed {
        slug: slug.clone(),
        revision,
        digest: pulled.digest(),
    };
    deployed::save(dir, api.base(), record)?;
    if out.json {
        out.json(&json!({"ok": true, "slug": slug, "revision": revision,
            "dir": dir, "files": written}));
        return Ok(());
    }
    let what = if manage["pendingRevision"].as_u64() == Some(revision) {
        format!("waiting for a grant; revision {serving} serves")
    } else if manage["rollout"]["revision"].as_u64() == Some(revision) {
        let share = cell(&manage["rollout"]["share"]);
        format!("rolling out to {share}% of payers; revision {serving} serves the rest")
    } else {
        "serving".to_string()
    };
    println!(
        "{} {slug} revision {revision} ({what}) into {}: {}",
        out.paint(Tone::Good, "Pulled"),
        dir.display(),
        written.join(", ")
    );
    println!(
        "  secrets are not pulled (never shown back): .env is yours to fill for `toolhost dev`"
    );
    Ok(())
}

/// `toolhost revisions SLUG`: the kept revisions, newest first.
pub(super) async fn list(slug: &str, global: &Global, out: &Out) -> Outcome {
    let api = Api::from_global(global)?;
    api.require_key()?;
    let answer = api
        .get(&format!("{}/revisions", endpoint_path(slug)))
        .await?;
    if out.json {
        out.json(&answer);
        return Ok(());
    }
    let rows: Vec<Vec<String>> = answer["revisions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let fields: Vec<&str> = r["fields"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            vec![
                cell(&r["revision"]),
                cell(&r["state"]),
                cell(&r["basedOn"]),
                cell(&r["author"]),
                cell(&r["createdAt"]),
                format!("{} USD", cell(&r["priceUsd"])),
                if fields.is_empty() {
                    "-".to_string()
                } else {
                    fields.join(",")
                },
            ]
        })
        .collect();
    println!(
        "{}",
        table(
            &["REVISION", "STATE", "BASED ON", "BY", "CREATED", "PRICE", "CHANGED"],
            &rows
        )
    );
    println!(
        "the newest {} are kept, and the serving one; `toolhost rollback {slug} N` serves N again",
        cell(&answer["kept"])
    );
    Ok(())
}

/// `toolhost rollback SLUG REVISION`: serves a kept revision again.
pub(super) async fn rollback(args: &RollbackArgs, out: &Out) -> Outcome {
    let api = Api::from_global(&args.global)?;
    api.require_key()?;
    let body = json!({"revision": args.revision});
    let answer = api
        .send(
            Method::POST,
            &format!("{}/rollback", endpoint_path(&args.slug)),
            Some(&body),
        )
        .await?;
    if out.json {
        out.json(&answer);
        return Ok(());
    }
    let manage = &answer["manage"];
    if manage["revision"].as_u64() == Some(args.revision) {
        println!(
            "{} {}: revision {} serves",
            out.paint(Tone::Good, "Rolled back"),
            args.slug,
            args.revision
        );
    } else {
        println!(
            "{}: revision {} waits for the admin to grant {}; revision {} serves meanwhile",
            args.slug,
            args.revision,
            cell(&manage["capabilityGrant"]["pendingRevision"]["missing"]),
            cell(&manage["revision"])
        );
    }
    Ok(())
}

/// `toolhost rollout SLUG [--share P [--revision N] | --promote | --end]`: starts a rollout or
/// changes its share, promotes or ends it; then (and by itself) shows both revisions' calls.
pub(super) async fn rollout(args: &RolloutArgs, out: &Out) -> Outcome {
    let api = Api::from_global(&args.global)?;
    api.require_key()?;
    let path = format!("{}/rollout", endpoint_path(&args.slug));
    let done = if args.promote {
        api.send(Method::POST, &format!("{path}/promote"), None)
            .await?;
        Some("the revision rolling out now serves every call".to_string())
    } else if args.end {
        api.send(Method::DELETE, &path, None).await?;
        Some("rollout ended: the serving revision serves every call".to_string())
    } else if let Some(share) = args.share {
        let mut body = json!({ "share": share });
        if let Some(revision) = args.revision {
            body["revision"] = json!(revision);
        }
        api.send(Method::POST, &path, Some(&body)).await?;
        None
    } else {
        None
    };
    let status = api.get(&path).await?;
    if out.json {
        out.json(&status);
        return Ok(());
    }
    if let Some(done) = done {
        println!("{} {}: {done}", out.paint(Tone::Good, "Done"), args.slug);
    }
    let rollout = &status["rollout"];
    if rollout.is_null() {
        println!(
            "{}: no rollout; revision {} serves every call",
            args.slug,
            cell(&status["servingRevision"])
        );
        return Ok(());
    }
    println!(
        "{}: revision {} serves {}% of payers, revision {} the rest (since {})",
        args.slug,
        cell(&rollout["revision"]),
        cell(&rollout["share"]),
        cell(&rollout["serving"]["revision"]),
        cell(&rollout["startedAt"])
    );
    let ms = |v: &Value| v.as_f64().map_or("-".to_string(), |ms| format!("{ms:.1}"));
    let rate = |v: &Value| {
        v.as_f64()
            .map_or("-".to_string(), |r| format!("{:.2}%", r * 100.0))
    };
    let row = |role: &str, calls: &Value| {
        vec![
            cell(&calls["revision"]),
            role.to_string(),
            cell(&calls["calls"]),
            cell(&calls["serverErrors"]),
            rate(&calls["errorRate"]),
            cell(&calls["clientErrors"]),
            ms(&calls["p50Ms"]),
            ms(&calls["p95Ms"]),
            ms(&calls["p99Ms"]),
        ]
    };
    println!(
        "{}",
        table(
            &[
                "REVISION",
                "ROLE",
                "CALLS",
                "5XX",
                "ERROR RATE",
                "4XX",
                "P50 MS",
                "P95 MS",
                "P99 MS",
            ],
            &[
                row("serving", &rollout["serving"]),
                row("rolling out", &rollout["candidate"]),
            ],
        )
    );
    println!(
        "  promote: toolhost rollout {0} --promote    end: toolhost rollout {0} --end",
        args.slug
    );
    Ok(())
}
