//! On-chain settlement: the local facilitator submits the payer's EIP-3009
//! `transferWithAuthorization(from, to, value, validAfter, validBefore, nonce, v, r, s)` to the
//! asset contract, signed by the settler's key, and waits for it to be mined.
//!
//! # Failure semantics
//! Settlement runs after the paid handler succeeded; whatever happens here, the store never holds
//! half a payment (receipt, ledger entry and spent nonce are one batch, written only on success
//! or pending, see `gate`).
//!
//! Before the paid handler runs, [`Settler::precheck`] asks the asset contract whether the
//! authorization is still unused and the payer's balance covers it: a payer who could not pay
//! is refused with 402 before any work is done (its nonce claim released, so the same
//! authorization may be sent again once funded). The table is what can still happen after the
//! handler ran (the balance moved meanwhile, the chain went away); every failure there burns
//! the authorization's nonce (see `gate`): the work was done, so it cannot be bought again with
//! the same authorization.
//!
//! | what happens | answer | payer charged | store |
//! |---|---|---|---|
//! | simulation (`eth_estimateGas`) reverts | 402 with the x402 reason: `invalid_exact_evm_insufficient_balance`, `invalid_exact_evm_nonce_already_used`, or `invalid_exact_evm_transaction_simulation_failed` | no: nothing was broadcast | nothing; nonce burned |
//! | the RPC is unreachable or refuses the transaction (before or at broadcast) | 502 `facilitator_unavailable` | no | nothing; nonce burned |
//! | mined with status 0 (reverted) | 402 `invalid_exact_evm_transaction_failed`, tx hash in the message | no: a revert moves nothing (the settler paid the gas) | nothing; nonce burned |
//! | mined with status 1 and the expected `Transfer` log | 200, receipt `settled`, `onChain:true`, tx hash | yes | receipt, sale, nonce spent |
//! | broadcast, not mined within the timeout (or the node stopped answering) | 200, receipt `pending`, `onChain:false`, tx hash | once it is mined | receipt, sale, nonce spent |
//!
//! Just before a transaction is broadcast, its hash is written into the payment's nonce claim
//! (`settling`, through the [`SettleJournal`]); if that write fails nothing is sent. So a
//! process that dies after broadcasting leaves the hash for recovery, which asks the chain
//! ([`ChainStatus`]: `authorizationState`, the transaction's receipt) and records the sale if
//! the transfer happened. A `pending` receipt is re-checked the same way until it is mined or
//! dropped.
//!
//! Why serve a `pending` payment rather than refuse it: the handler already produced the result
//! and the transfer is out of our hands once broadcast; simulation just passed, and EIP-3009 pays
//! `to` whoever submits the authorization. Refusing would risk charging the payer for nothing
//! (the pricing mode promises the opposite); serving risks at most the price of one call for the
//! seller, and the receipt says honestly that the transaction was not yet seen mined.
//!
//! Before the handler, a 402 tells the payer the authorization itself will not settle (fix the
//! balance, or sign a new one) and a 502 that the chain is out of reach (the same authorization
//! may be retried). After the handler, both also say the authorization is spent here.
//!
//! # Refunds
//! [`Settler::repay`] sends `transfer(payer, amount)` from the settler's account (the settlement
//! wallet) down the same path: simulated first (a wallet holding less is refused before
//! anything is signed), journaled before broadcast, then waited for with the expected
//! `Transfer` log. The service claims and records refunds around it (`payments::refunds`).
//!
//! # Nonces
//! Submissions from the settler account are serialized: the account nonce is held under a lock
//! while a transaction is signed and sent, so concurrent settlements take consecutive nonces and
//! never replace each other. Waiting for receipts happens outside the lock.

mod rpc;

use std::str::FromStr;
use std::time::{Duration, Instant};

use alloy_network::eip2718::Encodable2718;
use alloy_network::{Ethereum, EthereumWallet, NetworkTransactionBuilder};
use alloy_primitives::{Address, Bytes, B256, U256};
use alloy_rpc_types_eth::{TransactionInput, TransactionReceipt, TransactionRequest};
use alloy_signer_local::PrivateKeySigner;
use alloy_sol_types::{sol, SolCall, SolEvent};
use futures::future::BoxFuture;
use futures::FutureExt;
use tokio::sync::Mutex;

use self::rpc::{Rpc, RpcError};
use super::{ChainStatus, ExpectedTransfer, PaymentNonce, SettleJournal, TransferStatus};
use crate::config::OnChainConfig;
use crate::schemes::exact_evm::Transfer;
use crate::schemes::permit2::{self, Permit, PERMIT2};
use crate::{PaymentError, Reason};

sol! {
    /// What settlement calls on the asset contract (USDC's EIP-3009 surface).
    interface IEip3009 {
        function transferWithAuthorization(
            address from,
            address to,
            uint256 value,
            uint256 validAfter,
            uint256 validBefore,
            bytes32 nonce,
            uint8 v,
            bytes32 r,
            bytes32 s
        ) external;
        function authorizationState(address authorizer, bytes32 nonce) external view returns (bool);
        function balanceOf(address account) external view returns (uint256);
        function transfer(address to, uint256 value) external returns (bool);
        event Transfer(address indexed from, address indexed to, uint256 value);
    }
}

sol! {
    /// What Permit2 payments need of Permit2 and the asset: the owner's used nonces, and
    /// whether it let Permit2 move its tokens.
    interface IPermit2 {
        function nonceBitmap(address owner, uint256 wordPos) external view returns (uint256);
    }
    interface IErc20Allowance {
        function allowance(address owner, address spender) external view returns (uint256);
    }

    struct TokenPermissions {
        address token;
        uint256 amount;
    }
    struct PermitTransferFrom {
        TokenPermissions permitted;
        uint256 nonce;
        uint256 deadline;
    }
    struct ExactWitness {
        address to;
        uint256 validAfter;
    }
    struct UptoWitness {
        address to;
        address facilitator;
        uint256 validAfter;
    }

    /// x402's exact proxy: moves exactly the permitted amount to the witness's `to`.
    interface IExactPermit2Proxy {
        function settle(PermitTransferFrom permit, address owner, ExactWitness witness, bytes signature) external;
    }
    /// x402's upto proxy: its witness's facilitator moves up to the permitted amount.
    interface IUptoPermit2Proxy {
        function settle(PermitTransferFrom permit, uint256 amount, address owner, UptoWitness witness, bytes signature) external;
    }
}

/// The first pause between receipt polls, doubled after each miss up to [`POLL_MAX`]: a dev chain
/// mines within milliseconds, a public one within seconds.
const POLL_FIRST: Duration = Duration::from_millis(20);
const POLL_MAX: Duration = Duration::from_secs(1);

/// Why a settlement, or setting up to settle, failed.
#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    #[error("settler key: {0}")]
    Key(String),
    #[error("the EVM RPC reports chain id {rpc}, but the accepted network is chain {configured}")]
    WrongChain { rpc: u64, configured: u64 },
    #[error("{0}")]
    Networks(String),
    /// The chain would not, or did not, move the payment: the payer's side (402).
    #[error("{message}")]
    Refused { reason: Reason, message: String },
    /// Nothing was settled and the chain could not be asked, or refused our transaction: our
    /// side (502).
    #[error("on-chain settlement unavailable: {0}")]
    Unavailable(String),
    /// The journal could not record the transaction before broadcast; nothing was sent.
    #[error("{0}")]
    Journal(PaymentError),
}

impl From<ChainError> for PaymentError {
    fn from(e: ChainError) -> Self {
        match e {
            ChainError::Refused { reason, message } => PaymentError::refused(reason, message),
            ChainError::Journal(e) => e,
            other => PaymentError::Facilitator(other.to_string()),
        }
    }
}

/// A transfer that left our hands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Submitted {
    pub transaction: B256,
    /// Mined with status 1 and the expected `Transfer` log; `false`: not seen mined in time.
    pub confirmed: bool,
}

/// Submits `transferWithAuthorization` for verified payments on one chain.
pub struct Settler {
    rpc: Rpc,
    wallet: EthereumWallet,
    address: Address,
    chain_id: u64,
    confirmation_timeout: Duration,
    /// The settler account's next nonce, held while a transaction is signed and sent. `None`:
    /// ask the node (at first use, and after a send whose fate is unclear).
    next_nonce: Mutex<Option<u64>>,
}

impl Settler {
    /// A settler for `chain_id`, with its key loaded (from an owner-only file, or the value).
    pub fn new(config: &OnChainConfig, chain_id: u64) -> Result<Self, ChainError> {
        let text = config.settler_key.read().map_err(ChainError::Key)?;
        // The parse error is not shown: it could quote part of the key.
        let signer = PrivateKeySigner::from_str(&text)
            .map_err(|_| ChainError::Key("not a 32-byte hex private key".into()))?;
        let address = signer.address();
        Ok(Self {
            rpc: Rpc::new(&config.rpc_url, Duration::from_secs(10)),
            wallet: EthereumWallet::from(signer),
            address,
            chain_id,
            confirmation_timeout: config.confirmation_timeout,
            next_nonce: Mutex::new(None),
        })
    }

    pub fn address(&self) -> Address {
        self.address
    }

    /// Start-up check: the RPC serves the configured chain.
    pub async fn check_chain(&self) -> Result<(), ChainError> {
        let rpc = self
            .rpc
            .chain_id()
            .await
            .map_err(|e| ChainError::Unavailable(e.to_string()))?;
        if rpc != self.chain_id {
            return Err(ChainError::WrongChain {
                rpc,
                configured: self.chain_id,
            });
        }
        tracing::info!(settler = %self.address, chain_id = rpc, "on-chain settlement ready");
        Ok(())
    }

    /// Asks the asset contract, before the paid handler runs, what settlement would find:
    /// EIP-3009 `authorizationState(from, nonce)` must be unused and `balanceOf(from)` must
    /// cover the authorized value. Refused with `invalid_exact_evm_nonce_already_used` or
    /// `invalid_exact_evm_insufficient_balance` (402); an RPC that cannot answer is
    /// `Unavailable` (502). Both calls run concurrently. Settlement still simulates the
    /// transfer: the balance may move between this check and the transfer.
    pub async fn precheck(&self, asset: &str, transfer: &Transfer) -> Result<(), ChainError> {
        let asset = configured_asset(asset)?;
        let authorization = &transfer.message;
        let value = authorization.value;
        let used = IEip3009::authorizationStateCall {
            authorizer: authorization.from,
            nonce: authorization.nonce,
        };
        let balance = IEip3009::balanceOfCall {
            account: authorization.from,
        };
        let (used, balance) =
            futures::future::join(self.view(asset, used), self.view(asset, balance)).await;
        if used? {
            return Err(ChainError::Refused {
                reason: Reason::NonceAlreadyUsed,
                message: "the asset contract says this authorization was already used".into(),
            });
        }
        let balance = balance?;
        if balance < value {
            return Err(ChainError::Refused {
                reason: Reason::InsufficientBalance,
                message: format!(
                    "the payer holds {balance} atomic units of the asset, less than the {value} authorized"
                ),
            });
        }
        Ok(())
    }

    /// Settles a verified transfer of `asset` on-chain (see the module docs for every outcome).
    pub async fn settle(
        &self,
        asset: &str,
        transfer: &Transfer,
        journal: &dyn SettleJournal,
    ) -> Result<Submitted, ChainError> {
        let asset = configured_asset(asset)?;
        let (authorization, signature) = (&transfer.message, &transfer.signature);
        let call = IEip3009::transferWithAuthorizationCall {
            from: authorization.from,
            to: authorization.to,
            value: authorization.value,
            validAfter: authorization.validAfter,
            validBefore: authorization.validBefore,
            nonce: authorization.nonce,
            v: 27 + u8::from(signature.v()),
            r: B256::from(signature.r()),
            s: B256::from(signature.s()),
        };
        let started = Instant::now();
        let request = self.request(asset, call.abi_encode());
        let gas = match self.rpc.estimate_gas(&request).await {
            Ok(gas) => gas,
            Err(e) if e.is_revert() => return Err(self.diagnose(asset, &call, e).await),
            Err(e) => return Err(unavailable(e)),
        };
        let transaction = self.send(request, gas, journal).await?;
        let submitted = self.wait(transaction, expected(asset, &call)).await?;
        tracing::info!(
            transaction = %transaction,
            confirmed = submitted.confirmed,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "on-chain settlement submitted"
        );
        Ok(submitted)
    }

    /// Transfers `value` of `asset` from the settlement wallet (the settler's account) to `to`:
    /// a refund. The same path as a settlement: simulated first (a wallet holding less is
    /// refused with `invalid_exact_evm_insufficient_balance`, nothing sent), the hash journaled
    /// before broadcast, then mined with the expected `Transfer` log, or not seen mined in time
    /// (`confirmed: false`).
    pub async fn repay(
        &self,
        asset: Address,
        to: Address,
        value: U256,
        journal: &dyn SettleJournal,
    ) -> Result<Submitted, ChainError> {
        let call = IEip3009::transferCall { to, value };
        let request = self.request(asset, call.abi_encode());
        let gas = match self.rpc.estimate_gas(&request).await {
            Ok(gas) => gas,
            Err(e) if e.is_revert() => {
                let held = self.balance_of(asset, self.address).await;
                return Err(match held {
                    Some(held) if held < value => ChainError::Refused {
                        reason: Reason::InsufficientBalance,
                        message: format!(
                            "the settlement wallet {} holds {held} atomic units of the asset, less than the {value} to give back",
                            self.address
                        ),
                    },
                    _ => ChainError::Refused {
                        reason: Reason::SimulationFailed,
                        message: format!("the transfer would revert: {e}"),
                    },
                });
            }
            Err(e) => return Err(unavailable(e)),
        };
        let transaction = self.send(request, gas, journal).await?;
        let expected = ExpectedTransfer {
            asset,
            from: self.address,
            to,
            value,
        };
        let submitted = self.wait(transaction, expected).await?;
        tracing::info!(transaction = %transaction, confirmed = submitted.confirmed, "refund transfer submitted");
        Ok(submitted)
    }

    /// `balanceOf(account)` of `asset`, if the node answers.
    async fn balance_of(&self, asset: Address, account: Address) -> Option<U256> {
        self.view(asset, IEip3009::balanceOfCall { account })
            .await
            .ok()
    }

    /// What the view function `call` of `contract` answers (`eth_call` at the latest block).
    async fn view<C: SolCall>(&self, contract: Address, call: C) -> Result<C::Return, ChainError> {
        let bytes = self
            .rpc
            .call(&self.request(contract, call.abi_encode()))
            .await
            .map_err(unavailable)?;
        C::abi_decode_returns(&bytes).map_err(|_| {
            ChainError::Unavailable(format!("{} answered something unreadable", C::SIGNATURE))
        })
    }

    /// Whether Permit2 payments can settle on this chain: Permit2 and both of x402's proxies
    /// have code at their canonical addresses.
    pub async fn permit2_deployed(&self) -> Result<bool, ChainError> {
        for address in [PERMIT2, permit2::EXACT_PROXY, permit2::UPTO_PROXY] {
            if self
                .rpc
                .code(address)
                .await
                .map_err(unavailable)?
                .is_empty()
            {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// What [`Settler::precheck`] asks for a Permit2 payment: its nonce unused in Permit2,
    /// Permit2 allowed to move the permitted amount of the owner's tokens, and the owner's
    /// balance covering it.
    pub async fn precheck_permit2(&self, permit: &Permit) -> Result<(), ChainError> {
        if self.permit2_nonce_used(permit.owner, permit.nonce).await? {
            return Err(ChainError::Refused {
                reason: Reason::NonceAlreadyUsed,
                message: "Permit2 says this permit's nonce was already used".into(),
            });
        }
        self.permit2_funds(permit, permit.amount).await
    }

    /// The owner's allowance to Permit2 and balance cover `amount`.
    async fn permit2_funds(&self, permit: &Permit, amount: U256) -> Result<(), ChainError> {
        let allowance = IErc20Allowance::allowanceCall {
            owner: permit.owner,
            spender: PERMIT2,
        };
        let allowance = self.view(permit.token, allowance).await?;
        if allowance < amount {
            return Err(ChainError::Refused {
                reason: Reason::Permit2AllowanceRequired,
                message: format!(
                    "the payer has let Permit2 move {allowance} atomic units of the asset, less than the {amount} permitted: approve Permit2 ({PERMIT2}) first"
                ),
            });
        }
        match self.balance_of(permit.token, permit.owner).await {
            Some(balance) if balance < amount => Err(ChainError::Refused {
                reason: Reason::InsufficientBalance,
                message: format!(
                    "the payer holds {balance} atomic units of the asset, less than the {amount} permitted"
                ),
            }),
            Some(_) => Ok(()),
            None => Err(ChainError::Unavailable(
                "balanceOf could not be read".into(),
            )),
        }
    }

    /// Whether Permit2 marks `owner`'s `nonce` used (its unordered nonce bitmap).
    async fn permit2_nonce_used(&self, owner: Address, nonce: U256) -> Result<bool, ChainError> {
        let call = IPermit2::nonceBitmapCall {
            owner,
            wordPos: nonce >> 8,
        };
        let word = self.view(PERMIT2, call).await?;
        let bit = (nonce & U256::from(0xff)).to::<usize>();
        Ok(word.bit(bit))
    }

    /// Settles a verified Permit2 payment for `amount` through x402's proxy of its kind: the
    /// exact proxy moves the permitted amount, the upto proxy `amount` (at most that), called
    /// by the settler, which an upto permit names as its facilitator. The same path as an
    /// EIP-3009 settlement (simulated, journaled before broadcast, waited for with the
    /// expected `Transfer` from the owner to the witness's `to`).
    pub async fn settle_permit2(
        &self,
        permit: &Permit,
        amount: U256,
        journal: &dyn SettleJournal,
    ) -> Result<Submitted, ChainError> {
        let transfer = PermitTransferFrom {
            permitted: TokenPermissions {
                token: permit.token,
                amount: permit.amount,
            },
            nonce: permit.nonce,
            deadline: permit.deadline,
        };
        let signature = Bytes::from(permit.signature.as_bytes().to_vec());
        let (proxy, input) = match permit.kind {
            permit2::Kind::Exact => (
                permit2::EXACT_PROXY,
                IExactPermit2Proxy::settleCall {
                    permit: transfer,
                    owner: permit.owner,
                    witness: ExactWitness {
                        to: permit.to,
                        validAfter: permit.valid_after,
                    },
                    signature,
                }
                .abi_encode(),
            ),
            permit2::Kind::Upto => (
                permit2::UPTO_PROXY,
                IUptoPermit2Proxy::settleCall {
                    permit: transfer,
                    amount,
                    owner: permit.owner,
                    witness: UptoWitness {
                        to: permit.to,
                        facilitator: permit.facilitator.unwrap_or_default(),
                        validAfter: permit.valid_after,
                    },
                    signature,
                }
                .abi_encode(),
            ),
        };
        let request = self.request(proxy, input);
        let gas = match self.rpc.estimate_gas(&request).await {
            Ok(gas) => gas,
            Err(e) if e.is_revert() => {
                return Err(match self.precheck_permit2(permit).await {
                    Err(refused @ ChainError::Refused { .. }) => refused,
                    _ => ChainError::Refused {
                        reason: Reason::SimulationFailed,
                        message: format!("the transfer would revert: {e}"),
                    },
                })
            }
            Err(e) => return Err(unavailable(e)),
        };
        let transaction = self.send(request, gas, journal).await?;
        let expected = ExpectedTransfer {
            asset: permit.token,
            from: permit.owner,
            to: permit.to,
            value: amount,
        };
        let submitted = self.wait(transaction, expected).await?;
        tracing::info!(transaction = %transaction, confirmed = submitted.confirmed, "on-chain Permit2 settlement submitted");
        Ok(submitted)
    }

    /// A call from the settler to the asset contract.
    fn request(&self, asset: Address, input: Vec<u8>) -> TransactionRequest {
        TransactionRequest::default()
            .from(self.address)
            .to(asset)
            .input(TransactionInput::both(Bytes::from(input)))
    }

    /// Names why the transfer would revert, asking the contract what x402's reference
    /// facilitator asks: is the nonce used, is the balance short.
    async fn diagnose(
        &self,
        asset: Address,
        call: &IEip3009::transferWithAuthorizationCall,
        revert: RpcError,
    ) -> ChainError {
        let used = IEip3009::authorizationStateCall {
            authorizer: call.from,
            nonce: call.nonce,
        };
        if matches!(self.view(asset, used).await, Ok(true)) {
            return ChainError::Refused {
                reason: Reason::NonceAlreadyUsed,
                message: "the asset contract says this authorization was already used".into(),
            };
        }
        if let Some(balance) = self.balance_of(asset, call.from).await {
            if balance < call.value {
                return ChainError::Refused {
                    reason: Reason::InsufficientBalance,
                    message: format!(
                        "the payer holds {balance} atomic units of the asset, less than the {} authorized",
                        call.value
                    ),
                };
            }
        }
        ChainError::Refused {
            reason: Reason::SimulationFailed,
            message: format!("the transfer would revert: {revert}"),
        }
    }

    /// Signs and broadcasts under the nonce lock; returns the transaction hash once the node has
    /// it, or could have it. The journal records the hash first; if it cannot, nothing is sent.
    async fn send(
        &self,
        request: TransactionRequest,
        gas: u64,
        journal: &dyn SettleJournal,
    ) -> Result<B256, ChainError> {
        let gas_price = self.rpc.gas_price().await.map_err(unavailable)?;
        let tip = self.rpc.max_priority_fee().await.map_err(unavailable)?;
        let mut next_nonce = self.next_nonce.lock().await;
        let nonce = match *next_nonce {
            Some(nonce) => nonce,
            None => self
                .rpc
                .pending_nonce(self.address)
                .await
                .map_err(unavailable)?,
        };
        let mut request = request
            .nonce(nonce)
            // A fifth over the estimate: state may move between estimate and inclusion.
            .gas_limit(gas.saturating_add(gas / 5))
            .max_priority_fee_per_gas(tip)
            // Room for the base fee to double before inclusion; only base fee + tip is paid.
            .max_fee_per_gas(gas_price.saturating_mul(2).saturating_add(tip));
        request.chain_id = Some(self.chain_id);
        let envelope = <TransactionRequest as NetworkTransactionBuilder<Ethereum>>::build(
            request,
            &self.wallet,
        )
        .await
        .map_err(|e| ChainError::Unavailable(format!("cannot sign the transaction: {e}")))?;
        let hash = *envelope.tx_hash();
        // The settler nonce stays free when the journal refuses: nothing was sent.
        journal
            .before_submit(Some(hash))
            .await
            .map_err(ChainError::Journal)?;
        match self.rpc.send_raw(envelope.encoded_2718().into()).await {
            Ok(_) => {
                *next_nonce = Some(nonce + 1);
                Ok(hash)
            }
            // Not sent: the nonce is still free.
            Err(e @ RpcError::Unreachable { .. }) => Err(unavailable(e)),
            Err(e @ RpcError::Rejected { .. }) => {
                // Refused (e.g. nonce too low after another sender used the account): ask the
                // node for the nonce next time.
                *next_nonce = None;
                Err(unavailable(e))
            }
            Err(RpcError::NoAnswer { detail, .. }) => {
                tracing::warn!(transaction = %hash, %detail, "broadcast unanswered; waiting for the transaction anyway");
                *next_nonce = None;
                Ok(hash)
            }
        }
    }

    /// Waits for the receipt until the confirmation timeout; it must show `expected`.
    async fn wait(
        &self,
        transaction: B256,
        expected: ExpectedTransfer,
    ) -> Result<Submitted, ChainError> {
        let deadline = Instant::now() + self.confirmation_timeout;
        let mut pause = POLL_FIRST;
        loop {
            match self.rpc.receipt(transaction).await {
                Ok(Some(receipt)) => {
                    return match transfer_outcome(&receipt, expected) {
                        TransferStatus::Transferred => Ok(Submitted {
                            transaction,
                            confirmed: true,
                        }),
                        TransferStatus::Reverted => Err(ChainError::Refused {
                            reason: Reason::TransactionFailed,
                            message: format!(
                                "transaction {transaction} reverted; nothing was transferred"
                            ),
                        }),
                        _ => Err(ChainError::Refused {
                            reason: Reason::TransferEventMismatch,
                            message: format!(
                                "transaction {transaction} succeeded but the asset logged no transfer of {} to {}",
                                expected.value, expected.to
                            ),
                        }),
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(transaction = %transaction, error = %e, "receipt poll failed")
                }
            }
            let now = Instant::now();
            if now >= deadline {
                tracing::warn!(transaction = %transaction, "not mined within the confirmation timeout; recorded as pending");
                return Ok(Submitted {
                    transaction,
                    confirmed: false,
                });
            }
            tokio::time::sleep(pause.min(deadline - now)).await;
            pause = (pause * 2).min(POLL_MAX);
        }
    }
}

fn expected(asset: Address, call: &IEip3009::transferWithAuthorizationCall) -> ExpectedTransfer {
    ExpectedTransfer {
        asset,
        from: call.from,
        to: call.to,
        value: call.value,
    }
}

/// A mined transaction settled the payment only if it succeeded and the asset logged the
/// authorized transfer.
fn transfer_outcome(receipt: &TransactionReceipt, expected: ExpectedTransfer) -> TransferStatus {
    if !receipt.status() {
        return TransferStatus::Reverted;
    }
    let transferred = receipt.logs().iter().any(|log| {
        log.address() == expected.asset
            && IEip3009::Transfer::decode_log(&log.inner).is_ok_and(|event| {
                event.from == expected.from
                    && event.to == expected.to
                    && event.value == expected.value
            })
    });
    if transferred {
        TransferStatus::Transferred
    } else {
        TransferStatus::MinedWithoutTransfer
    }
}

impl super::Repayer for Settler {
    fn wallet(&self) -> Address {
        self.address
    }

    fn repay<'a>(
        &'a self,
        asset: Address,
        to: Address,
        value: U256,
        journal: &'a dyn SettleJournal,
    ) -> BoxFuture<'a, Result<Submitted, PaymentError>> {
        async move { Ok(Settler::repay(self, asset, to, value, journal).await?) }.boxed()
    }
}

impl ChainStatus for Settler {
    fn payment_used(
        &self,
        asset: Address,
        authorizer: Address,
        nonce: PaymentNonce,
    ) -> BoxFuture<'_, Result<bool, ChainError>> {
        async move {
            let nonce = match nonce {
                PaymentNonce::Eip3009(nonce) => nonce,
                PaymentNonce::Permit2(nonce) => {
                    return self.permit2_nonce_used(authorizer, nonce).await
                }
            };
            self.view(
                asset,
                IEip3009::authorizationStateCall { authorizer, nonce },
            )
            .await
        }
        .boxed()
    }

    fn transfer_status(
        &self,
        transaction: B256,
        expected: ExpectedTransfer,
    ) -> BoxFuture<'_, Result<TransferStatus, ChainError>> {
        async move {
            if let Some(receipt) = self.rpc.receipt(transaction).await.map_err(unavailable)? {
                return Ok(transfer_outcome(&receipt, expected));
            }
            Ok(if self.rpc.knows(transaction).await.map_err(unavailable)? {
                TransferStatus::InPool
            } else {
                TransferStatus::Unknown
            })
        }
        .boxed()
    }
}

fn unavailable(e: RpcError) -> ChainError {
    ChainError::Unavailable(e.to_string())
}

/// The asset contract an offer names (configuration, so an error is ours, not the payer's).
fn configured_asset(asset: &str) -> Result<Address, ChainError> {
    Address::from_str(asset)
        .map_err(|_| ChainError::Unavailable("the configured asset is not an address".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Secret;

    fn config(key: Secret) -> OnChainConfig {
        OnChainConfig {
            rpc_url: "http://127.0.0.1:9".into(),
            settler_key: key,
            confirmation_timeout: Duration::from_secs(1),
        }
    }

    #[test]
    fn loads_the_key_and_refuses_a_bad_one_without_quoting_it() {
        let signer = PrivateKeySigner::random();
        let hex_key = hex::encode(signer.to_bytes());
        let settler =
            Settler::new(&config(Secret::Value(format!("0x{hex_key}\n"))), 31337).unwrap();
        assert_eq!(settler.address(), signer.address());
        let bad = format!("{}zz", &hex_key[..62]);
        let error = Settler::new(&config(Secret::Value(bad.clone())), 31337)
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("not a 32-byte hex private key"), "{error}");
        assert!(!error.contains(&bad[..20]), "{error}");
    }
}
