//! `toolhost backup`: saves a backup of a server's embedded store and key files (the admin's
//! command), checked whole before it is kept. `toolhost restore` (the server binary's own
//! command, beside `serve`) makes a data dir of it.

use std::path::{Path, PathBuf};

use serde_json::json;
use toolhost_values::backup as format;

use super::api::{Api, Credential};
use super::output::{Out, Tone};
use super::{BackupArgs, Failure, Outcome};

pub(super) async fn backup(args: &BackupArgs, out: &Out) -> Outcome {
    let server = Api::from_global(&args.global)?.base().to_owned();
    let api = Api::new(&server, Credential::Admin(args.admin_token.clone()));
    if args.out.exists() {
        return Err(Failure::Usage(format!(
            "{} exists; a backup is never written over a file",
            args.out.display()
        )));
    }
    // Saved under a name of its own until it is whole and checked, then renamed.
    let partial = partial_name(&args.out);
    let local = |e: std::io::Error| Failure::Local(format!("{}: {e}", partial.display()));
    let mut file = std::io::BufWriter::new(
        toolhost_values::keyfile::create_owner_only(&partial).map_err(local)?,
    );
    let saved = async {
        let (headers, bytes) = api.download("/ai/admin/backup", &mut file).await?;
        std::io::Write::flush(&mut file).map_err(local)?;
        let check = std::fs::File::open(&partial).map_err(local)?;
        let records = format::check(check)
            .map_err(|e| Failure::Check(format!("the backup {server} sent does not hold: {e}")))?;
        std::fs::rename(&partial, &args.out).map_err(local)?;
        Ok::<_, Failure>((headers, bytes, records))
    }
    .await;
    let (headers, bytes, records) = saved.inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })?;
    let count = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
    };
    let (entries, key_files) = (count("x-backup-entries"), count("x-backup-key-files"));
    if out.json {
        out.json(&json!({
            "ok": true,
            "file": args.out.display().to_string(),
            "bytes": bytes,
            "records": records,
            "entries": entries,
            "keyFiles": key_files,
        }));
    } else {
        println!(
            "{} {} ({bytes} bytes: {} entries, {} key files), checked whole",
            out.paint(Tone::Good, "saved"),
            args.out.display(),
            entries.map_or("?".into(), |n| n.to_string()),
            key_files.map_or("?".into(), |n| n.to_string()),
        );
        println!(
            "It holds the server's keys (admin token, secrets master key, receipt key): keep it as you keep the data dir. Restore it with `toolhost restore --from {} --data NEW_DIR`.",
            args.out.display()
        );
    }
    Ok(())
}

/// `FILE.partial`, beside `FILE`.
fn partial_name(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    path.with_file_name(name)
}
