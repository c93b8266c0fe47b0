//! The few EVM JSON-RPC calls settlement makes, over the service's reqwest client (rustls),
//! with alloy's JSON-RPC envelope (`alloy-json-rpc`) and Ethereum types
//! (`alloy-rpc-types-eth`).
//!
//! Why not `alloy-provider`: its HTTP transport brings a second reqwest (0.13) and, for https
//! RPC URLs, aws-lc-rs (a C build): 24 more crates and minutes of build on a 2-core machine for
//! the calls below, which this client makes with crates the build already has (the
//! README's payments section has the figures).
//!
//! Errors say whether the request may have reached the node, because after
//! `eth_sendRawTransaction` that decides between "nothing happened" and "outcome unknown". The
//! URL never appears in an error or a log line: RPC URLs often embed an API key.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use alloy_json_rpc::{ErrorPayload, Id, Request, Response, ResponsePayload};
use alloy_primitives::{Address, Bytes, B256, U128, U64};
use alloy_rpc_types_eth::{TransactionReceipt, TransactionRequest};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// A JSON-RPC endpoint.
pub(crate) struct Rpc {
    url: String,
    client: reqwest::Client,
    next_id: AtomicU64,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum RpcError {
    /// The endpoint could not be connected to: the request was not sent.
    #[error("{method}: the RPC endpoint could not be reached")]
    Unreachable { method: &'static str },
    /// Sent, but no usable answer came back (timeout, HTTP error status, not JSON-RPC): the call
    /// may or may not have taken effect.
    #[error("{method}: no usable answer from the RPC endpoint ({detail})")]
    NoAnswer {
        method: &'static str,
        detail: String,
    },
    /// The node answered with a JSON-RPC error.
    #[error("{method}: the node answered error {}: {}", .error.code, .error.message)]
    Rejected {
        method: &'static str,
        error: ErrorPayload,
    },
}

impl RpcError {
    /// Whether the node refused because executing the call reverted.
    pub(crate) fn is_revert(&self) -> bool {
        matches!(self, RpcError::Rejected { error, .. }
            if error.code == 3 || error.message.contains("revert"))
    }
}

impl Rpc {
    pub(crate) fn new(url: &str, request_timeout: Duration) -> Self {
        let client = reqwest::Client::builder()
            .timeout(request_timeout)
            .connect_timeout(Duration::from_secs(5))
            .build()
            .unwrap_or_default();
        Self {
            url: url.to_string(),
            client,
            next_id: AtomicU64::new(1),
        }
    }

    async fn request<P, R>(&self, method: &'static str, params: P) -> Result<R, RpcError>
    where
        P: Serialize + Clone + std::fmt::Debug + Send + Sync + Unpin,
        R: DeserializeOwned,
    {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let request = Request::new(method, Id::Number(id), params);
        let no_answer = |detail: String| RpcError::NoAnswer { method, detail };
        let response = self
            .client
            .post(&self.url)
            .json(&request)
            .send()
            .await
            .map_err(|e| {
                if e.is_connect() {
                    RpcError::Unreachable { method }
                } else {
                    no_answer(e.without_url().to_string())
                }
            })?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| no_answer(e.without_url().to_string()))?;
        let answer: Response<R> = serde_json::from_slice(&body).map_err(|_| {
            no_answer(format!(
                "HTTP {status} with a body that is not its JSON-RPC answer"
            ))
        })?;
        match answer.payload {
            ResponsePayload::Success(result) => Ok(result),
            ResponsePayload::Failure(error) => Err(RpcError::Rejected { method, error }),
        }
    }

    pub(crate) async fn chain_id(&self) -> Result<u64, RpcError> {
        Ok(self.request::<_, U64>("eth_chainId", ()).await?.to())
    }

    /// The account's next nonce, counting transactions still in the node's pool.
    pub(crate) async fn pending_nonce(&self, account: Address) -> Result<u64, RpcError> {
        let count: U64 = self
            .request("eth_getTransactionCount", (account, "pending"))
            .await?;
        Ok(count.to())
    }

    pub(crate) async fn gas_price(&self) -> Result<u128, RpcError> {
        Ok(self.request::<_, U128>("eth_gasPrice", ()).await?.to())
    }

    pub(crate) async fn max_priority_fee(&self) -> Result<u128, RpcError> {
        Ok(self
            .request::<_, U128>("eth_maxPriorityFeePerGas", ())
            .await?
            .to())
    }

    /// Runs `tx` against the latest state; a revert comes back as a `Rejected` revert error.
    pub(crate) async fn estimate_gas(&self, tx: &TransactionRequest) -> Result<u64, RpcError> {
        Ok(self
            .request::<_, U64>("eth_estimateGas", (tx.clone(),))
            .await?
            .to())
    }

    pub(crate) async fn call(&self, tx: &TransactionRequest) -> Result<Bytes, RpcError> {
        self.request("eth_call", (tx.clone(), "latest")).await
    }

    pub(crate) async fn send_raw(&self, raw: Bytes) -> Result<B256, RpcError> {
        self.request("eth_sendRawTransaction", (raw,)).await
    }

    /// Whether the node knows the transaction (in its pool or mined).
    pub(crate) async fn knows(&self, hash: B256) -> Result<bool, RpcError> {
        let found: Option<serde_json::Value> =
            self.request("eth_getTransactionByHash", (hash,)).await?;
        Ok(found.is_some_and(|t| !t.is_null()))
    }

    /// The runtime code at `address` (empty: no contract there).
    pub(crate) async fn code(&self, address: Address) -> Result<Bytes, RpcError> {
        self.request("eth_getCode", (address, "latest")).await
    }

    /// The receipt, once the transaction is mined.
    pub(crate) async fn receipt(&self, hash: B256) -> Result<Option<TransactionReceipt>, RpcError> {
        self.request("eth_getTransactionReceipt", (hash,)).await
    }
}
