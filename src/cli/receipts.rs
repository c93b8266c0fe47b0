//! `toolhost receipt verify` and `toolhost log monitor` (docs/receipt-log.md): a call's answer
//! checked offline against the receipt log's key, and a log watched over time so that a fork
//! or a rewritten history is caught, with the two signed checkpoints that prove it.
//!
//! Both trust a key, not a server: `verify` takes the log's verifier key (`--key`), and
//! `monitor` pins the key it first saw in its state file. Fetching the key from the server
//! being checked is allowed for `verify`, and said so: it proves the answer matches what that
//! server publishes now, which is weaker.

use std::path::Path;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use toolhost_tlog::{hash, verify, Checkpoint, Hash, Verifier};

use super::api::{segment, Api, Credential};
use super::output::{Out, Tone};
use super::{Failure, Global, LogAction, LogArgs, Outcome, ReceiptAction, ReceiptArgs};
use toolhost_values::canonical::canonical_json;

/// `toolhost receipt …`.
pub(super) async fn receipt(args: &ReceiptArgs, out: &Out) -> Outcome {
    match &args.action {
        ReceiptAction::Verify { file, key } => {
            verify_answer(file, key.as_deref(), &args.global, out).await
        }
        ReceiptAction::Refund {
            receipt_id,
            reason,
            amount_usd,
            admin_token,
        } => {
            let mut api = Api::from_global(&args.global)?;
            match admin_token.as_deref().filter(|t| !t.is_empty()) {
                Some(token) => api = Api::new(api.base(), Credential::Admin(token.to_string())),
                None => api.require_key()?,
            }
            let mut body = json!({"reason": reason});
            if let Some(amount) = amount_usd {
                let amount: serde_json::Number = amount.trim().parse().map_err(|_| {
                    Failure::Usage(format!("--amount-usd {amount:?} is not a number of USD"))
                })?;
                body["amountUsd"] = Value::Number(amount);
            }
            let path = format!("/ai/receipts/{}/refund", segment(receipt_id));
            let answer = api.send(reqwest::Method::POST, &path, Some(&body)).await?;
            let refund = &answer["refund"];
            if out.json {
                out.json(&answer);
            } else {
                println!(
                    "{} refunded {} of {} atomic units of {} ({}), to {}",
                    out.paint(Tone::Good, "ok"),
                    refund["amount"].as_str().unwrap_or("?"),
                    refund["charged"].as_str().unwrap_or("?"),
                    refund["receiptId"].as_str().unwrap_or("?"),
                    refund["refundId"].as_str().unwrap_or("?"),
                    refund["returnedTo"].as_str().unwrap_or("?"),
                );
            }
            Ok(())
        }
    }
}

/// `toolhost log …`.
pub(super) async fn log(args: &LogArgs, out: &Out) -> Outcome {
    match &args.action {
        LogAction::Monitor {
            state,
            interval,
            once,
        } => {
            let api = Api::from_global(&args.global)?;
            loop {
                monitor_once(&api, state, out).await?;
                if *once {
                    return Ok(());
                }
                tokio::time::sleep(Duration::from_secs(*interval)).await;
            }
        }
    }
}

/// A check that did not hold: exit 5.
fn broken(message: impl Into<String>) -> Failure {
    Failure::Check(message.into())
}

fn decode_hashes(list: &Value) -> Result<Vec<Hash>, Failure> {
    list.as_array()
        .ok_or_else(|| broken("the proof is not a list of hashes"))?
        .iter()
        .map(|h| {
            h.as_str()
                .and_then(|h| BASE64.decode(h).ok())
                .and_then(|h| Hash::try_from(h).ok())
                .ok_or_else(|| broken("a proof hash is not 32 bytes of base64"))
        })
        .collect()
}

fn parse_key(text: &str) -> Result<Verifier, Failure> {
    Verifier::parse(text.trim())
        .map_err(|e| Failure::Usage(format!("{text:?} is not a verifier key: {e}")))
}

/// The checkpoint of `note`, signed by `verifier`'s key under the log's name.
fn open(verifier: &Verifier, note: &str) -> Result<Checkpoint, Failure> {
    let text = verifier.open(note).map_err(|e| {
        broken(format!(
            "the checkpoint is not signed by the log's key ({e})"
        ))
    })?;
    let checkpoint = Checkpoint::parse(text)
        .map_err(|e| broken(format!("the checkpoint does not parse: {e}")))?;
    if checkpoint.origin != verifier.name() {
        return Err(broken(format!(
            "the checkpoint is of log {:?}, the key of {:?}",
            checkpoint.origin,
            verifier.name()
        )));
    }
    Ok(checkpoint)
}

/// When the checkpoint was signed, from its `timestamp` extension line.
fn signed_at(checkpoint: &Checkpoint) -> Option<String> {
    let ms: i128 = checkpoint
        .extensions
        .iter()
        .find_map(|line| line.strip_prefix("timestamp "))?
        .parse()
        .ok()?;
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(ms * 1_000_000).ok()?;
    at.format(&time::format_description::well_known::Rfc3339)
        .ok()
}

/// The receipt and its place in the log, wherever the answer keeps them.
fn receipt_and_log(answer: &Value) -> Option<(&Value, &Value)> {
    let pairs = [
        (&answer["receipt"], &answer["receiptLog"]),
        (
            &answer["_meta"]["toolhost/receipt"],
            &answer["_meta"]["toolhost/receiptLog"],
        ),
        (
            &answer["result"]["_meta"]["toolhost/receipt"],
            &answer["result"]["_meta"]["toolhost/receiptLog"],
        ),
    ];
    pairs
        .into_iter()
        .find(|(receipt, log)| receipt.is_object() && log.is_object())
}

async fn verify_answer(file: &Path, key: Option<&str>, global: &Global, out: &Out) -> Outcome {
    let text = if file == Path::new("-") {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(file)
    }
    .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", file.display())))?;
    let answer: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::Usage(format!("{} is not JSON: {e}", file.display())))?;
    let (receipt_value, log) = receipt_and_log(&answer).ok_or_else(|| {
        Failure::Usage(format!(
            "{} holds no receipt with its receiptLog (an answer of a call that got a receipt)",
            file.display()
        ))
    })?;
    let note = log["checkpoint"]
        .as_str()
        .ok_or_else(|| broken("the receiptLog has no checkpoint"))?;
    let (verifier, fetched_from) = match key {
        Some(key) => (parse_key(key)?, None),
        None => {
            let api = Api::from_global(global)?;
            let info = api.get("/.well-known/receipt-log").await?;
            // A free call's receipt is proven by its batch, under the batches' own key.
            let batches = &info["batches"];
            let named = note.lines().next();
            let key = match named.is_some_and(|name| batches["origin"] == name) {
                true => &batches["verifierKey"],
                false => &info["verifierKey"],
            };
            (
                parse_key(key.as_str().unwrap_or_default())?,
                Some(api.base().to_owned()),
            )
        }
    };
    let checkpoint = open(&verifier, note)?;
    let index = log["leafIndex"]
        .as_u64()
        .ok_or_else(|| broken("the receiptLog has no leafIndex"))?;
    if log["treeSize"].as_u64() != Some(checkpoint.size) {
        return Err(broken(format!(
            "the proof is of a tree of {}, the checkpoint of {}",
            log["treeSize"], checkpoint.size
        )));
    }
    let entry = canonical_json(receipt_value);
    verify::inclusion(
        &hash::leaf(entry.as_bytes()),
        index,
        checkpoint.size,
        &decode_hashes(&log["inclusionProof"])?,
        &checkpoint.root,
    )
    .map_err(|e| {
        broken(format!(
            "the receipt is not leaf {index} of the tree the checkpoint signs ({e}): it was changed, or the proof is another receipt's"
        ))
    })?;
    own_signature_holds(receipt_value, &verifier.public_key())?;
    let field = |name: &str| receipt_value[name].as_str().unwrap_or("?").to_owned();
    let at = signed_at(&checkpoint).unwrap_or_else(|| "an unknown time".into());
    if out.json {
        out.json(&json!({
            "ok": true,
            "receiptId": field("receiptId"),
            "leafIndex": index,
            "treeSize": checkpoint.size,
            "log": checkpoint.origin,
            "signedAt": signed_at(&checkpoint),
            "keyFetchedFrom": fetched_from,
        }));
    } else {
        println!(
            "{} receipt {} ({} USD, {}, paid by {}) is leaf {index} of the {} receipts of {}, signed at {at}",
            out.paint(Tone::Good, "verified:"),
            field("receiptId"),
            field("priceUsd"),
            field("paymentMethod"),
            receipt_value["payer"].as_str().unwrap_or("nobody"),
            checkpoint.size,
            checkpoint.origin,
        );
        if let Some(server) = fetched_from {
            println!(
                "{}",
                out.paint(
                    Tone::Warn,
                    &format!("the log's key was fetched from {server}, not given with --key: this shows the answer matches what that server publishes now")
                )
            );
        }
    }
    Ok(())
}

/// The receipt's own signature (docs/payments.md, "Verifying a receipt"): the log's key, over
/// the canonical JSON of the receipt without `signature`. A `v3` receipt may have none (a free
/// call's): the checkpoint that includes it, checked before, is its proof.
fn own_signature_holds(receipt: &Value, public_key: &[u8; 32]) -> Outcome {
    let signature = &receipt["signature"];
    if signature.is_null() {
        return match receipt["schema"].as_str() {
            Some("toolhost.receipt.v1" | "toolhost.receipt.v2") | None => Err(broken(
                "the receipt has no signature, and receipts of its schema are always signed",
            )),
            Some(_) => Ok(()),
        };
    }
    if signature["publicKey"].as_str() != Some(BASE64.encode(public_key).as_str()) {
        return Err(broken(
            "the receipt is signed by another key than the log's",
        ));
    }
    let mut signed = receipt.clone();
    if let Some(fields) = signed.as_object_mut() {
        fields.remove("signature");
    }
    let value = signature["value"]
        .as_str()
        .and_then(|v| BASE64.decode(v).ok())
        .and_then(|v| <[u8; 64]>::try_from(v).ok())
        .map(|v| ed25519_dalek::Signature::from_bytes(&v));
    let key = ed25519_dalek::VerifyingKey::from_bytes(public_key).ok();
    let holds = match (key, value) {
        (Some(key), Some(value)) => {
            ed25519_dalek::Verifier::verify(&key, canonical_json(&signed).as_bytes(), &value)
                .is_ok()
        }
        _ => false,
    };
    match holds {
        true => Ok(()),
        false => Err(broken("the receipt's own signature does not hold")),
    }
}

/// What a monitor saw: the key it pinned and the last checkpoint it checked.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Seen {
    verifier_key: String,
    checkpoint: String,
}

fn load_seen(path: &Path) -> Result<Option<Seen>, Failure> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
            Failure::Local(format!(
                "the state file {} is unreadable: {e}",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Failure::Local(format!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}

/// Writes the state through a new file renamed into place: a crash never leaves half of it.
fn save_seen(path: &Path, seen: &Seen) -> Result<(), Failure> {
    let fail = |e: std::io::Error| Failure::Local(format!("cannot write {}: {e}", path.display()));
    let text = serde_json::to_string_pretty(seen).unwrap_or_default();
    let fresh = path.with_extension("json.new");
    std::fs::write(&fresh, text + "\n").map_err(fail)?;
    std::fs::rename(&fresh, path).map_err(fail)
}

/// Evidence of a log's misbehaviour: what was seen, what is shown now, both signed.
fn misbehaviour(what: &str, seen: &str, now: &str) -> Failure {
    broken(format!(
        "{what}\n--- the checkpoint seen before ---\n{seen}--- the checkpoint served now ---\n{now}"
    ))
}

/// One check of the log against what was seen; the state moves on only when it holds.
async fn monitor_once(api: &Api, state: &Path, out: &Out) -> Outcome {
    let info = api.get("/.well-known/receipt-log").await?;
    let key = info["verifierKey"].as_str().unwrap_or_default().to_owned();
    let seen = load_seen(state)?;
    if let Some(seen) = &seen {
        if seen.verifier_key != key {
            return Err(broken(format!(
                "the log's key changed: pinned {}, served now {key}",
                seen.verifier_key
            )));
        }
    }
    let verifier = parse_key(&key)?;
    let bytes = api.get_bytes("/ai/receipts/log/checkpoint").await?;
    let note = String::from_utf8(bytes).map_err(|_| broken("the checkpoint is not text"))?;
    let now = open(&verifier, &note)?;
    let report = match &seen {
        None => format!("first checkpoint of {}: {} receipts", now.origin, now.size),
        Some(seen) => {
            let before = open(&verifier, &seen.checkpoint)?;
            check_extends(api, &before, &now, &seen.checkpoint, &note).await?;
            format!(
                "{}: {} receipts, {} new since the last check, consistent",
                now.origin,
                now.size,
                now.size - before.size
            )
        }
    };
    save_seen(
        state,
        &Seen {
            verifier_key: key,
            checkpoint: note,
        },
    )?;
    if out.json {
        out.json(&json!({"ok": true, "log": now.origin, "treeSize": now.size, "signedAt": signed_at(&now)}));
    } else {
        println!("{} {report}", out.paint(Tone::Good, "ok:"));
    }
    Ok(())
}

/// Whether the tree of `now` extends the tree of `before` (the same tree, or one it is a
/// prefix of, by the server's consistency proof).
async fn check_extends(
    api: &Api,
    before: &Checkpoint,
    now: &Checkpoint,
    seen_note: &str,
    now_note: &str,
) -> Outcome {
    if now.size < before.size {
        return Err(misbehaviour(
            &format!(
                "the log shrank from {} to {} receipts: its history was rolled back or forked",
                before.size, now.size
            ),
            seen_note,
            now_note,
        ));
    }
    if before.size == 0 {
        return Ok(());
    }
    if now.size == before.size {
        return match now.root == before.root {
            true => Ok(()),
            false => Err(misbehaviour(
                &format!(
                    "two different trees of {} receipts: the log forked",
                    now.size
                ),
                seen_note,
                now_note,
            )),
        };
    }
    let path = format!(
        "/ai/receipts/log/consistency?from={}&to={}",
        before.size, now.size
    );
    let proof = api.get(&path).await?;
    verify::consistency(
        before.size,
        now.size,
        &before.root,
        &now.root,
        &decode_hashes(&proof["proof"])?,
    )
    .map_err(|e| {
        misbehaviour(
            &format!(
                "the tree of {} receipts does not extend the one of {} seen before ({e}): the log's history was rewritten or forked",
                now.size, before.size
            ),
            seen_note,
            now_note,
        )
    })
}

#[cfg(test)]
mod tests {
    use ed25519_dalek::{Signer as _, SigningKey};

    use super::*;

    /// A receipt of `schema`, signed by `key` when given, as the server answers it.
    fn receipt(schema: &str, key: Option<&SigningKey>) -> Value {
        let mut receipt = json!({"receiptId": "rcpt_1", "schema": schema, "amount": "1000"});
        if let Some(key) = key {
            let value = key.sign(canonical_json(&receipt).as_bytes()).to_bytes();
            receipt["signature"] = json!({
                "alg": "ed25519",
                "publicKey": BASE64.encode(key.verifying_key().to_bytes()),
                "value": BASE64.encode(value),
            });
        }
        receipt
    }

    #[test]
    fn only_a_v3_receipt_may_go_without_its_own_signature() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let public = key.verifying_key().to_bytes();
        assert!(own_signature_holds(&receipt("toolhost.receipt.v3", None), &public).is_ok());
        for schema in ["toolhost.receipt.v3", "toolhost.receipt.v2"] {
            assert!(own_signature_holds(&receipt(schema, Some(&key)), &public).is_ok());
        }
        for unsigned in ["toolhost.receipt.v1", "toolhost.receipt.v2"] {
            assert!(own_signature_holds(&receipt(unsigned, None), &public).is_err());
        }
        let mut no_schema = receipt("x", None);
        no_schema.as_object_mut().unwrap().remove("schema");
        assert!(own_signature_holds(&no_schema, &public).is_err());
        // Signed, but changed after, or by another key.
        let mut changed = receipt("toolhost.receipt.v3", Some(&key));
        changed["amount"] = json!("1");
        assert!(own_signature_holds(&changed, &public).is_err());
        let other = SigningKey::from_bytes(&[8; 32]);
        let by_other = receipt("toolhost.receipt.v3", Some(&other));
        assert!(own_signature_holds(&by_other, &public).is_err());
    }
}
