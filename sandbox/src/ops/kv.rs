//! `ctx.kv`: the endpoint's key-value store (`10_kv.js`).

use std::cell::RefCell;
use std::rc::Rc;

use deno_core::{op2, OpState};

use super::{answer, done, Capability, HostCall, OpError};
use crate::MAX_SAFE_INTEGER;
use crate::{
    is_versionstamp, HostOp, KvAtomic, KvMutation, KvPage, KvValue, KvVersioned, StorageLimits,
};

deno_core::extension!(
    toolhost_kv,
    ops = [
        op_kv_get,
        op_kv_get_entry,
        op_kv_set,
        op_kv_delete,
        op_kv_list,
        op_kv_commit
    ]
);

pub(crate) fn check_key(key: &str, storage: &StorageLimits) -> Result<(), OpError> {
    if key.is_empty() {
        return Err(OpError::InvalidArgument(
            "kv key must not be empty".to_owned(),
        ));
    }
    if key.len() > storage.max_key_bytes {
        return Err(OpError::TooLarge(format!(
            "kv key is longer than {} bytes",
            storage.max_key_bytes
        )));
    }
    Ok(())
}

pub(crate) fn check_value_size(
    value: &serde_json::Value,
    storage: &StorageLimits,
) -> Result<(), OpError> {
    let size = serde_json::to_vec(value).map_or(usize::MAX, |v| v.len());
    if size > storage.max_value_bytes {
        return Err(OpError::TooLarge(format!(
            "kv value is larger than {} bytes",
            storage.max_value_bytes
        )));
    }
    Ok(())
}

/// The rules of one `ctx.kv.atomic()`, the same in the op and on the server: at most
/// `max_atomic_ops` checks and mutations, at most `max_atomic_bytes` as JSON, every key and
/// value within the `set` limits, versionstamps well formed, `sum` amounts safe integers.
pub(crate) fn check_atomic(atomic: &KvAtomic, storage: &StorageLimits) -> Result<(), OpError> {
    let ops = atomic.checks.len() + atomic.mutations.len();
    if ops > storage.max_atomic_ops {
        return Err(OpError::TooLarge(format!(
            "an atomic operation has {ops} checks and mutations; at most {} are allowed",
            storage.max_atomic_ops
        )));
    }
    let size = serde_json::to_vec(atomic).map_or(usize::MAX, |v| v.len());
    if size > storage.max_atomic_bytes {
        return Err(OpError::TooLarge(format!(
            "an atomic operation is larger than {} bytes",
            storage.max_atomic_bytes
        )));
    }
    for check in &atomic.checks {
        check_key(&check.key, storage)?;
        if check
            .versionstamp
            .as_deref()
            .is_some_and(|v| !is_versionstamp(v))
        {
            return Err(OpError::InvalidArgument(
                "a versionstamp is null or the 20 hex digits getEntry or commit gave".to_owned(),
            ));
        }
    }
    for mutation in &atomic.mutations {
        check_key(mutation.key(), storage)?;
        match mutation {
            KvMutation::Set {
                value, ttl_seconds, ..
            } => {
                check_value_size(value, storage)?;
                check_ttl(*ttl_seconds)?;
            }
            KvMutation::Delete { .. } => {}
            KvMutation::Sum { n, .. } => {
                if n.unsigned_abs() > MAX_SAFE_INTEGER.unsigned_abs() {
                    return Err(OpError::InvalidArgument(
                        "sum: n must be an integer within ±(2^53 - 1)".to_owned(),
                    ));
                }
            }
        }
    }
    Ok(())
}

pub(crate) fn check_ttl(ttl_seconds: Option<u64>) -> Result<(), OpError> {
    if ttl_seconds == Some(0) {
        return Err(OpError::InvalidArgument(
            "ttlSeconds must be a positive integer".to_owned(),
        ));
    }
    Ok(())
}

/// The value's JSON text (the glue parses it); `None` when absent or expired.
#[op2]
#[string]
async fn op_kv_get(
    state: Rc<RefCell<OpState>>,
    #[string] key: String,
) -> Result<Option<String>, OpError> {
    let call = HostCall::new(&state.borrow(), Capability::Kv)?;
    check_key(&key, &call.storage)?;
    let op = HostOp::KvGet { key };
    let value = call.run(op, answer!(Value)).await?;
    Ok(value.map(KvValue::into_text))
}

/// `value` arrives as the JSON text made by the glue, so its size is measured exactly.
#[op2]
async fn op_kv_set(
    state: Rc<RefCell<OpState>>,
    #[string] key: String,
    #[string] value: String,
    #[serde] ttl_seconds: Option<u64>,
) -> Result<(), OpError> {
    let call = HostCall::new(&state.borrow(), Capability::Kv)?;
    check_key(&key, &call.storage)?;
    if value.len() > call.storage.max_value_bytes {
        return Err(OpError::TooLarge(format!(
            "kv value is larger than {} bytes",
            call.storage.max_value_bytes
        )));
    }
    check_ttl(ttl_seconds)?;
    let value = serde_json::from_str(&value)
        .map_err(|_| OpError::InvalidArgument("kv value must be JSON".to_owned()))?;
    let op = HostOp::KvSet {
        key,
        value,
        ttl_seconds,
    };
    call.run(op, done).await
}

/// An entry as the glue gets it: the value as JSON text, which the glue parses.
#[derive(serde::Serialize)]
struct TextEntry {
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    value: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    versionstamp: Option<String>,
}

/// The entry with its versionstamp; `None` when absent or expired.
#[op2]
#[serde]
async fn op_kv_get_entry(
    state: Rc<RefCell<OpState>>,
    #[string] key: String,
) -> Result<Option<TextEntry>, OpError> {
    let call = HostCall::new(&state.borrow(), Capability::Kv)?;
    check_key(&key, &call.storage)?;
    let op = HostOp::KvGetEntry { key };
    let entry = call.run(op, answer!(Entry)).await?;
    Ok(entry.map(
        |KvVersioned {
             value,
             versionstamp,
         }| TextEntry {
            key: None,
            value: value.into_text(),
            versionstamp: Some(versionstamp),
        },
    ))
}

/// `atomic` is the JSON text of a [`KvAtomic`] built by the glue's `atomic()`; its length is
/// bounded before it is parsed. Answers the commit's versionstamp, or `None` when a check failed.
#[op2]
#[string]
async fn op_kv_commit(
    state: Rc<RefCell<OpState>>,
    #[string] atomic: String,
) -> Result<Option<String>, OpError> {
    let call = HostCall::new(&state.borrow(), Capability::Kv)?;
    if atomic.len() > call.storage.max_atomic_bytes {
        return Err(OpError::TooLarge(format!(
            "an atomic operation is larger than {} bytes",
            call.storage.max_atomic_bytes
        )));
    }
    let atomic: KvAtomic = serde_json::from_str(&atomic)
        .map_err(|e| OpError::InvalidArgument(format!("malformed atomic operation: {e}")))?;
    check_atomic(&atomic, &call.storage)?;
    let op = HostOp::KvCommit { atomic };
    call.run(op, answer!(Committed)).await
}

#[op2]
async fn op_kv_delete(state: Rc<RefCell<OpState>>, #[string] key: String) -> Result<bool, OpError> {
    let call = HostCall::new(&state.borrow(), Capability::Kv)?;
    check_key(&key, &call.storage)?;
    call.run(HostOp::KvDelete { key }, answer!(Existed)).await
}

/// A page as the glue gets it: each value as JSON text, which the glue parses.
#[derive(serde::Serialize)]
struct TextPage {
    entries: Vec<TextEntry>,
    cursor: Option<String>,
}

/// `limit` is clamped to `1..=max_list_limit`.
#[op2]
#[serde]
async fn op_kv_list(
    state: Rc<RefCell<OpState>>,
    #[string] prefix: String,
    #[serde] limit: Option<usize>,
    #[string] cursor: Option<String>,
) -> Result<TextPage, OpError> {
    let call = HostCall::new(&state.borrow(), Capability::Kv)?;
    if prefix.len() > call.storage.max_key_bytes {
        return Err(OpError::TooLarge(format!(
            "kv prefix is longer than {} bytes",
            call.storage.max_key_bytes
        )));
    }
    let max = call.storage.max_list_limit;
    let limit = limit.unwrap_or(max).clamp(1, max);
    let op = HostOp::KvList {
        prefix,
        limit,
        cursor,
    };
    let KvPage { entries, cursor } = call.run(op, answer!(Page)).await?;
    let entries = entries
        .into_iter()
        .map(|entry| TextEntry {
            key: Some(entry.key),
            value: entry.value.into_text(),
            versionstamp: None,
        })
        .collect();
    Ok(TextPage { entries, cursor })
}
