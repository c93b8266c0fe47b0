//! `ctx.kv`: the endpoint's key-value store (`runtime-js/10_kv.js`).

use std::cell::RefCell;
use std::rc::Rc;

use deno_core::{op2, OpState};

use super::{host_result, Capability, HostCall, OpError};
use crate::{KvPage, StorageLimits};

deno_core::extension!(
    toolhost_kv,
    ops = [op_kv_get, op_kv_set, op_kv_delete, op_kv_list]
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

#[op2]
#[serde]
async fn op_kv_get(
    state: Rc<RefCell<OpState>>,
    #[string] key: String,
) -> Result<Option<serde_json::Value>, OpError> {
    let call = HostCall::new(&state.borrow(), Capability::Kv)?;
    check_key(&key, &call.storage)?;
    host_result(|| call.host.kv_get(&call.slug, &key)).await
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
    if ttl_seconds == Some(0) {
        return Err(OpError::InvalidArgument(
            "ttlSeconds must be a positive integer".to_owned(),
        ));
    }
    let value = serde_json::from_str(&value)
        .map_err(|_| OpError::InvalidArgument("kv value must be JSON".to_owned()))?;
    host_result(|| call.host.kv_set(&call.slug, &key, value, ttl_seconds)).await
}

#[op2]
async fn op_kv_delete(state: Rc<RefCell<OpState>>, #[string] key: String) -> Result<bool, OpError> {
    let call = HostCall::new(&state.borrow(), Capability::Kv)?;
    check_key(&key, &call.storage)?;
    host_result(|| call.host.kv_delete(&call.slug, &key)).await
}

/// `limit` is clamped to `1..=max_list_limit`.
#[op2]
#[serde]
async fn op_kv_list(
    state: Rc<RefCell<OpState>>,
    #[string] prefix: String,
    #[serde] limit: Option<usize>,
    #[string] cursor: Option<String>,
) -> Result<KvPage, OpError> {
    let call = HostCall::new(&state.borrow(), Capability::Kv)?;
    if prefix.len() > call.storage.max_key_bytes {
        return Err(OpError::TooLarge(format!(
            "kv prefix is longer than {} bytes",
            call.storage.max_key_bytes
        )));
    }
    let max = call.storage.max_list_limit;
    let limit = limit.unwrap_or(max).clamp(1, max);
    host_result(|| call.host.kv_list(&call.slug, &prefix, limit, cursor)).await
}
