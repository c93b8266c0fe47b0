//! `toolhost pull`, `toolhost revisions` and `toolhost rollback`: the serving revision back into
//! a directory, the kept revisions, and serving an older one again.

use std::path::Path;

use reqwest::Method;
use serde_json::{json, Value};

use super::api::{segment, Api};
use super::deployed::{self, Deployed};
use super::output::{cell, table, Out, Tone};
use super::project::{self, Project};
use super::{Failure, Global, Outcome, PullArgs, RollbackArgs};

fn endpoint_path(slug: &str) -> String {
    format!("/ai/endpoints/{}", segment(slug))
}

/// The slug of the tool in `dir`, from its manifest (whatever else the manifest holds).
fn slug_in(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(project::MANIFEST)).ok()?;
    let manifest: Value = serde_json::from_str(&text).ok()?;
    manifest["slug"].as_str().map(str::to_owned)
}

/// `toolhost pull`: writes the serving revision (manifest, handler, files) into the directory.
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
    let (endpoint, manage) = (&current["endpoint"], &current["manage"]);
    if manage.is_null() {
        return Err(Failure::Usage(format!(
            "{slug} is not yours: only its owner can pull it"
        )));
    }
    if manage["source"].is_null() {
        return Err(Failure::Usage(format!(
            "{slug} has a built-in handler, not source to pull"
        )));
    }
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
    let revision = manage["revision"].as_u64().unwrap_or_default();
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
    println!(
        "{} {slug} revision {revision} (serving) into {}: {}",
        out.paint(Tone::Good, "Pulled"),
        dir.display(),
        written.join(", ")
    );
    if let Some(pending) = manage["pendingRevision"].as_u64() {
        println!(
            "  {}",
            out.paint(
                Tone::Warn,
                &format!(
                    "revision {pending} waits for a grant and is not pulled; a deploy from here replaces it"
                )
            )
        );
    }
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
