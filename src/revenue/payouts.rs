//! Payout settings and payout packets.
//!
//! A packet gathers every charged receipt of a builder not yet in a packet, for the net amount
//! (gross − platform fee, per sale). It is created only when that amount reaches the builder's
//! minimum, claims each receipt's paid-out mark (`require_paid_out` none, `put_paid_out`) in the
//! same batch (so a receipt is paid out at most once, even under concurrent requests), and is
//! signed by the service key like receipts. An admin later marks it paid with the transaction hash.
//!
//! Only collected money is paid out (see `revenue`): a sale recorded only (a deployment that
//! cannot settle) or still pending on-chain is never in a packet. When the unpaid balance is
//! all uncollected, creating a packet answers 409 `nothing_collectable`.
//!
//! Refunds (see `refunds`): a sale is paid out for what is left of it after its refund, and
//! what a builder owes for refunds of sales already paid out is deducted from its next packet
//! (`recovered`), which deletes those debts in its batch.
//!
//! A sale whose on-chain transfer is still pending (a pending settlement under its id) is not
//! paid out until the reconciler sees it mined; the packet's batch also requires each sale to
//! be still stored as read and still not pending, so a sale the reconciler removes (transfer
//! reverted or dropped) meanwhile can never end up in a signed packet.

use std::str::FromStr;

use alloy_primitives::{Address, B256};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::refunds::{self, bump_balance};
use super::report::Group;
use super::Signature;
use super::{sale_entries_of, split, standings, Collection, Sale};
use crate::config::PaymentConfig;
use crate::error::ErrorCode;
use crate::money::Usd;
use crate::receipts::ReceiptSigner;
use crate::store::{
    Batch, PacketRow, PaidOutRow, PayoutSettingsRow, Store, StoreError, GET_MANY_KEYS,
};

/// Packets read per page.
const PAGE: usize = 256;

#[derive(Debug, thiserror::Error)]
pub enum PayoutError {
    /// `payTo` is not an address, or its letters' case breaks its EIP-55 checksum (`fix` is
    /// the checksummed form of the same address, when it is one).
    #[error("{}", bad_address_message(.fix.as_deref()))]
    BadAddress { fix: Option<String> },
    #[error("network {given:?} is not a payout network here; accepted: {}", .accepted.join(", "))]
    BadNetwork {
        given: String,
        accepted: Vec<String>,
    },
    #[error("asset {given:?} is not the settlement asset of that network: send {expected} or leave asset out")]
    BadAsset { given: String, expected: String },
    #[error("set payout settings first (POST /ai/builders/payout-settings)")]
    NoSettings,
    #[error(
        "the collected, unpaid net balance is {balance} USD, below the minimum of {minimum} USD"
    )]
    BelowMinimum { balance: Usd, minimum: Usd },
    #[error("nothing unpaid is collected yet: {uncollected_units} atomic units of net revenue ({uncollected} USD) were recorded without being settled, or are still pending on-chain, and are never paid out until collected")]
    NothingCollectable {
        uncollected: Usd,
        uncollected_units: u64,
    },
    #[error("no payout packet {0:?}")]
    NotFound(String),
    #[error("payout packet {0:?} is already paid")]
    AlreadyPaid(String),
    #[error("transaction must be a 32-byte hex hash")]
    BadTransaction,
    #[error("another payout claimed some of these receipts first; try again")]
    Conflict,
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<PayoutError> for crate::error::ApiError {
    fn from(e: PayoutError) -> Self {
        use crate::error::ApiError;
        use axum::http::StatusCode;
        match e {
            PayoutError::BadAddress { ref fix } => {
                let details = serde_json::json!({ "field": "payTo", "checksummed": fix });
                ApiError::unprocessable(ErrorCode::InvalidPayTo, e.to_string())
                    .with_details(details)
            }
            PayoutError::BadNetwork { ref accepted, .. } => {
                let details = serde_json::json!({ "field": "network", "accepted": accepted });
                ApiError::unprocessable(ErrorCode::InvalidNetwork, e.to_string())
                    .with_details(details)
            }
            PayoutError::BadAsset { ref expected, .. } => {
                let details = serde_json::json!({ "field": "asset", "expected": expected });
                ApiError::unprocessable(ErrorCode::InvalidAsset, e.to_string())
                    .with_details(details)
            }
            PayoutError::BadTransaction => {
                ApiError::unprocessable(ErrorCode::InvalidTransaction, e.to_string())
            }
            PayoutError::NoSettings => ApiError::new(
                StatusCode::CONFLICT,
                ErrorCode::PayoutSettingsMissing,
                e.to_string(),
            ),
            PayoutError::BelowMinimum { .. } => {
                ApiError::new(StatusCode::CONFLICT, ErrorCode::BelowMinimum, e.to_string())
            }
            PayoutError::NothingCollectable {
                uncollected_units, ..
            } => ApiError::new(
                StatusCode::CONFLICT,
                ErrorCode::NothingCollectable,
                e.to_string(),
            )
            .with_details(
                serde_json::json!({ "uncollectedNetUnits": uncollected_units.to_string() }),
            ),
            PayoutError::AlreadyPaid(_) => {
                ApiError::new(StatusCode::CONFLICT, ErrorCode::AlreadyPaid, e.to_string())
            }
            PayoutError::Conflict => ApiError::new(
                StatusCode::CONFLICT,
                ErrorCode::PayoutConflict,
                e.to_string(),
            ),
            PayoutError::NotFound(_) => {
                ApiError::not_found(ErrorCode::PayoutNotFound, e.to_string())
            }
            PayoutError::Store(e) => e.into(),
        }
    }
}

/// Where and when a builder is paid.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PayoutSettings {
    /// EVM address with a valid EIP-55 checksum.
    pub pay_to: String,
    /// CAIP-2 id of a configured payment network.
    pub network: String,
    /// The settlement asset of that network (USDC contract); defaults to it.
    #[serde(default)]
    pub asset: Option<String>,
    /// Smallest packet to create, in USD.
    #[schema(schema_with = crate::money::usd_schema)]
    pub minimum_usd: Usd,
}

/// The packet that paid `receipt_id`'s sale (its id, as stored), if one did.
pub async fn paid_out_by(
    store: &dyn Store,
    receipt_id: &str,
) -> Result<Option<Vec<u8>>, StoreError> {
    Ok(store.paid_out(&[receipt_id]).await?.pop().flatten())
}

fn bad_address_message(fix: Option<&str>) -> String {
    match fix {
        Some(fix) => format!(
            "payTo's letters do not match its EIP-55 checksum; its checksummed form is {fix} \
             (check it against your wallet: a mistyped letter breaks the checksum too)"
        ),
        None => "payTo must be an EVM address: 0x and 40 hex digits, in its EIP-55 \
                 (checksummed) form"
            .to_string(),
    }
}

fn bytes<T: Serialize>(value: &T) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(value).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// Validates and stores a builder's settings; the asset defaults to the network's USDC.
pub async fn save_settings(
    store: &dyn Store,
    payment: &PaymentConfig,
    builder: &str,
    mut settings: PayoutSettings,
) -> Result<PayoutSettings, PayoutError> {
    let given = settings.pay_to.trim();
    let address = Address::parse_checksummed(given, None).map_err(|_| PayoutError::BadAddress {
        // An address whose case is off: say its checksummed form, which the owner can
        // check against their wallet (never taken for them: a typo in a letter is also off).
        fix: given.parse::<Address>().ok().map(|a| a.to_checksum(None)),
    })?;
    let network = payment
        .networks
        .iter()
        .find(|n| n.caip2 == settings.network)
        .ok_or_else(|| PayoutError::BadNetwork {
            given: settings.network.clone(),
            accepted: payment
                .networks
                .iter()
                .map(|n| format!("{} ({})", n.caip2, n.v1_name))
                .collect(),
        })?;
    match &settings.asset {
        Some(asset) if !asset.eq_ignore_ascii_case(&network.asset) => {
            return Err(PayoutError::BadAsset {
                given: asset.clone(),
                expected: network.asset.clone(),
            })
        }
        _ => settings.asset = Some(network.asset.clone()),
    }
    settings.pay_to = address.to_checksum(None);
    let row = PayoutSettingsRow {
        builder: builder.to_owned(),
        pay_to: settings.pay_to.clone(),
        network: settings.network.clone(),
        entry: bytes(&settings)?,
    };
    store.apply(Batch::new().put_payout_settings(row)).await?;
    Ok(settings)
}

pub async fn settings(
    store: &dyn Store,
    builder: &str,
) -> Result<Option<PayoutSettings>, StoreError> {
    (store.payout_settings(builder).await?)
        .map(|entry| serde_json::from_slice(&entry).map_err(|e| StoreError::Corrupt(e.to_string())))
        .transpose()
}

/// A payout packet. Its signature covers the canonical JSON of everything but `signature`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Packet {
    pub packet_id: String,
    pub builder_id: String,
    pub receipt_ids: Vec<String>,
    /// Net atomic units owed (sum over receipts of amount − fee).
    #[schema(schema_with = crate::money::units_schema)]
    pub amount: String,
    #[schema(schema_with = crate::money::units_schema)]
    pub gross: String,
    #[schema(schema_with = crate::money::units_schema)]
    pub fee: String,
    pub fee_bps: u64,
    pub pay_to: String,
    pub network: String,
    pub asset: String,
    /// `pending` or `paid`.
    #[schema(pattern = "^(pending|paid)$")]
    pub status: String,
    #[schema(required = true)]
    pub transaction: Option<String>,
    #[schema(format = DateTime)]
    pub created_at: String,
    #[schema(required = true, format = DateTime)]
    pub paid_at: Option<String>,
    /// Net atomic units deducted for refunds of receipts paid out before (absent when none):
    /// `amount = gross − fee − recovered`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = crate::money::units_schema)]
    pub recovered: Option<String>,
    /// The refunded receipts whose debts this packet deducted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recovered_receipt_ids: Vec<String>,
    pub signature: Signature,
}

impl Packet {
    fn sign(&mut self, signer: &ReceiptSigner) {
        self.signature = Signature::over(&*self, signer);
    }
}

/// The builder's sales not yet in any packet, summed: the collected groups are what a packet
/// would pay, the others what it leaves out (recorded only, or pending on-chain). By the store
/// when it sums (PostgreSQL: one statement), otherwise by [`unpaid_sums_read`].
pub async fn unpaid_sums(
    store: &dyn Store,
    builder: &str,
    fee_bps: u64,
) -> Result<Vec<Group>, StoreError> {
    match store.sale_sums(Some(builder), 0, true, fee_bps).await? {
        Some(sums) => sums.into_iter().map(Group::summed).collect(),
        None => unpaid_sums_read(store, builder, fee_bps).await,
    }
}

/// [`unpaid_sums`] by reading each unpaid sale here, as a packet does, one group a sale.
pub(crate) async fn unpaid_sums_read(
    store: &dyn Store,
    builder: &str,
    fee_bps: u64,
) -> Result<Vec<Group>, StoreError> {
    Ok((unpaid_entries(store, builder).await?.iter())
        .map(|entry| Group::of(&entry.sale, entry.standing, fee_bps))
        .collect())
}

/// The receipt ids of `builder`'s sales a packet would pay now (tests follow sales with it).
#[cfg(test)]
pub(crate) async fn payable_ids(
    store: &dyn Store,
    builder: &str,
) -> Result<Vec<String>, StoreError> {
    let entries = unpaid_entries(store, builder).await?.into_iter();
    Ok((entries.filter(|entry| entry.standing.is_collected()))
        .map(|entry| entry.sale.receipt_id)
        .collect())
}

/// What `builder` owes for refunds of sales already paid out, not yet deducted from a packet.
pub async fn owed(store: &dyn Store, builder: &str) -> Result<Usd, StoreError> {
    let debts = refunds::debts_of(store, builder).await?;
    Ok(Usd::from_units(owed_in(&debts)))
}

/// The sum of `debts` (as [`refunds::debts_of`] reads them), in atomic units.
fn owed_in(debts: &[(String, Usd, Vec<u8>)]) -> u64 {
    debts.iter().map(|(_, owed, _)| owed.units()).sum()
}

/// A sale not in any packet, as a packet reads it.
struct UnpaidEntry {
    /// Its amount less its refund.
    sale: Sale,
    /// As stored, and its refund entry as stored (a packet requires both unchanged).
    bytes: Vec<u8>,
    refund: Option<Vec<u8>>,
    standing: Collection,
}

/// Sales not in any packet, read a page of sales at a time.
async fn unpaid_entries(store: &dyn Store, builder: &str) -> Result<Vec<UnpaidEntry>, StoreError> {
    let mut out = Vec::new();
    let mut entries = sale_entries_of(store, builder, OffsetDateTime::UNIX_EPOCH)
        .await?
        .into_iter();
    loop {
        let page: Vec<(Sale, Vec<u8>)> = entries.by_ref().take(GET_MANY_KEYS).collect();
        if page.is_empty() {
            return Ok(out);
        }
        let ids: Vec<&str> = page.iter().map(|(s, _)| s.receipt_id.as_str()).collect();
        let paid = store.paid_out(&ids).await?;
        let (sales, bytes): (Vec<Sale>, Vec<Vec<u8>>) = (page.into_iter().zip(paid))
            .filter_map(|(entry, paid)| paid.is_none().then_some(entry))
            .unzip();
        let standings = standings(store, &sales).await?;
        let refunds = refunds::refunds_of(store, &sales).await?;
        for (((mut sale, bytes), standing), refund) in
            sales.into_iter().zip(bytes).zip(standings).zip(refunds)
        {
            refunds::take_refund(&mut sale, refund.as_ref().map(|(r, _)| r))?;
            out.push(UnpaidEntry {
                sale,
                bytes,
                refund: refund.map(|(_, bytes)| bytes),
                standing,
            });
        }
    }
}

/// What a builder could be paid now, as one moment of its ledger.
pub struct Balance {
    /// The net of its collected, unpaid sales (after their refunds).
    pub payable: Usd,
    /// What it owes for refunds of sales already paid out.
    pub owed: Usd,
    /// The version of its balance this was read at (see `refunds`).
    pub version: Option<Vec<u8>>,
}

impl Balance {
    /// What a packet would pay: `payable − owed`, or nothing.
    pub fn net(&self) -> Usd {
        self.payable.checked_sub(self.owed).unwrap_or(Usd::ZERO)
    }
}

/// `builder`'s [`Balance`] (see [`UnpaidLedger`]).
pub async fn balance(
    store: &dyn Store,
    builder: &str,
    fee_bps: u64,
) -> Result<Balance, StoreError> {
    let unpaid = UnpaidLedger::read(store, builder).await?;
    let payable = (unpaid.entries.iter())
        .filter(|entry| entry.standing.is_collected())
        .map(|entry| split(entry.sale.amount, fee_bps).1.units())
        .sum();
    Ok(Balance {
        payable: Usd::from_units(payable),
        owed: Usd::from_units(unpaid.owed()),
        version: unpaid.version,
    })
}

/// What a builder's next packet is made of, as one moment of its ledger.
struct UnpaidLedger {
    /// The balance version, read first: whatever changes the balance after it also moves the
    /// version, so a batch conditioned on it fails rather than act on a stale sum.
    version: Option<Vec<u8>>,
    entries: Vec<UnpaidEntry>,
    /// Its debts for refunds of sales paid out: `(receipt id, owed, stored bytes)`.
    debts: Vec<(String, Usd, Vec<u8>)>,
}

impl UnpaidLedger {
    async fn read(store: &dyn Store, builder: &str) -> Result<UnpaidLedger, StoreError> {
        let version = store.payout_version(builder).await?;
        Ok(UnpaidLedger {
            version,
            entries: unpaid_entries(store, builder).await?,
            debts: refunds::debts_of(store, builder).await?,
        })
    }

    /// The sum of its debts, in atomic units.
    fn owed(&self) -> u64 {
        owed_in(&self.debts)
    }
}

/// Creates a pending packet for the whole unpaid net balance, if it reaches the minimum.
pub async fn create_packet(
    store: &dyn Store,
    signer: &ReceiptSigner,
    builder: &str,
    fee_bps: u64,
) -> Result<Packet, PayoutError> {
    let settings = settings(store, builder)
        .await?
        .ok_or(PayoutError::NoSettings)?;
    let unpaid = UnpaidLedger::read(store, builder).await?;
    let recovered = unpaid.owed();
    let (version, debts) = (unpaid.version, unpaid.debts);
    let (entries, uncollected): (Vec<_>, Vec<_>) =
        (unpaid.entries.into_iter()).partition(|entry| entry.standing.is_collected());
    let sales: Vec<&Sale> = entries.iter().map(|entry| &entry.sale).collect();
    let (mut gross, mut fee, mut net) = (0u64, 0u64, 0u64);
    for sale in &sales {
        let (f, n) = split(sale.amount, fee_bps);
        gross += sale.amount.units();
        fee += f.units();
        net += n.units();
    }
    let net = net.saturating_sub(recovered);
    if sales.is_empty() && !uncollected.is_empty() {
        let units: u64 = uncollected
            .iter()
            .map(|entry| split(entry.sale.amount, fee_bps).1.units())
            .sum();
        return Err(PayoutError::NothingCollectable {
            uncollected: Usd::from_units(units),
            uncollected_units: units,
        });
    }
    if sales.is_empty() || net < settings.minimum_usd.units() {
        return Err(PayoutError::BelowMinimum {
            balance: Usd::from_units(net),
            minimum: settings.minimum_usd,
        });
    }
    let mut packet = Packet {
        packet_id: format!("pay_{}", uuid::Uuid::now_v7().simple()),
        builder_id: builder.to_string(),
        receipt_ids: sales.iter().map(|s| s.receipt_id.clone()).collect(),
        amount: net.to_string(),
        gross: gross.to_string(),
        fee: fee.to_string(),
        fee_bps,
        pay_to: settings.pay_to,
        network: settings.network,
        asset: settings.asset.unwrap_or_default(),
        status: "pending".into(),
        transaction: None,
        created_at: crate::timestamp::now_rfc3339(),
        paid_at: None,
        recovered: (recovered > 0).then(|| recovered.to_string()),
        recovered_receipt_ids: debts.iter().map(|(id, _, _)| id.clone()).collect(),
        signature: Signature::unsigned(),
    };
    packet.sign(signer);
    let mut batch = bump_balance(Batch::new(), builder, version);
    for (receipt_id, _, bytes) in &debts {
        batch = batch
            .require_debt(builder, receipt_id, Some(bytes.clone()))
            .delete_debt(builder, receipt_id);
    }
    for UnpaidEntry {
        sale,
        bytes,
        refund,
        ..
    } in &entries
    {
        let id = &sale.receipt_id;
        batch = batch
            .require_sale(id, Some(bytes.clone()))
            .require_refund(id, refund.clone())
            .require_pending_settlement(id, None)
            .require_paid_out(id, None)
            .put_paid_out(PaidOutRow {
                receipt_id: id.clone(),
                packet_id: packet.packet_id.clone(),
            });
    }
    batch = batch.put_packet(row(&packet)?);
    match store.apply(batch).await {
        Ok(()) => Ok(packet),
        Err(StoreError::ConditionFailed(_)) => Err(PayoutError::Conflict),
        Err(e) => Err(e.into()),
    }
}

/// The packet as the store keeps it.
fn row(packet: &Packet) -> Result<PacketRow, StoreError> {
    Ok(PacketRow {
        packet_id: packet.packet_id.clone(),
        builder: packet.builder_id.clone(),
        status: packet.status.clone(),
        entry: bytes(packet)?,
    })
}

/// A builder's packets, oldest first, read a page at a time.
pub async fn packets(store: &dyn Store, builder: &str) -> Result<Vec<Packet>, StoreError> {
    let mut packets = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = store.packets_of(builder, after.as_deref(), PAGE).await?;
        let full = page.len() == PAGE;
        for (id, entry) in page {
            let packet =
                serde_json::from_slice(&entry).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            packets.push(packet);
            after = Some(id);
        }
        if !full {
            return Ok(packets);
        }
    }
}

/// Marks a pending packet paid with its transaction hash (admin).
pub async fn mark_paid(
    store: &dyn Store,
    signer: &ReceiptSigner,
    packet_id: &str,
    transaction: &str,
) -> Result<Packet, PayoutError> {
    let transaction =
        B256::from_str(transaction.trim()).map_err(|_| PayoutError::BadTransaction)?;
    let (builder, old) = (store.packet(packet_id).await?)
        .ok_or_else(|| PayoutError::NotFound(packet_id.to_string()))?;
    let mut packet: Packet =
        serde_json::from_slice(&old).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    if packet.status == "paid" {
        return Err(PayoutError::AlreadyPaid(packet_id.to_string()));
    }
    packet.status = "paid".into();
    packet.transaction = Some(transaction.to_string());
    packet.paid_at = Some(crate::timestamp::now_rfc3339());
    packet.sign(signer);
    let batch = Batch::new()
        .require_packet(&builder, packet_id, Some(old))
        .put_packet(row(&packet)?);
    match store.apply(batch).await {
        Ok(()) => Ok(packet),
        Err(StoreError::ConditionFailed(_)) => Err(PayoutError::AlreadyPaid(packet_id.to_string())),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::receipts::PaymentMethod;
    use crate::revenue::record;
    use crate::store::SledStore;

    #[tokio::test]
    async fn packets_pay_each_receipt_once_and_reconcile() {
        let dir = tempfile::tempdir().unwrap();
        let signer = ReceiptSigner::from_hex(&ReceiptSigner::generate_hex()).unwrap();
        let store = SledStore::temporary().unwrap();
        let payment = Config::new(dir.path()).payment;
        let bad = PayoutSettings {
            pay_to: "0x000000000000000000000000000000000000dead".into(),
            network: "eip155:84532".into(),
            asset: None,
            minimum_usd: Usd::from_units(2000),
        };
        match save_settings(&store, &payment, "b", bad.clone()).await {
            Err(e @ PayoutError::BadAddress { .. }) => assert!(
                e.to_string()
                    .contains("0x000000000000000000000000000000000000dEaD"),
                "{e}"
            ),
            other => panic!("{other:?}"),
        }
        let nowhere = PayoutSettings {
            network: "eip155:1".into(),
            pay_to: "0x000000000000000000000000000000000000dEaD".into(),
            ..bad.clone()
        };
        match save_settings(&store, &payment, "b", nowhere).await {
            Err(e @ PayoutError::BadNetwork { .. }) => {
                assert!(e.to_string().contains("eip155:84532 (base-sepolia)"), "{e}")
            }
            other => panic!("{other:?}"),
        }
        let good = PayoutSettings {
            pay_to: "0x000000000000000000000000000000000000dEaD".into(),
            ..bad
        };
        let saved = save_settings(&store, &payment, "b", good).await.unwrap();
        assert_eq!(
            saved.asset.as_deref(),
            Some(payment.networks[0].asset.as_str())
        );
        let store = &store;
        let sell_as = |n: u64, collection: Collection| async move {
            let sale = Sale {
                receipt_id: format!("rcpt_{}", uuid::Uuid::now_v7().simple()),
                endpoint_slug: Some("e".into()),
                seller: Some("b".into()),
                amount: Usd::from_units(n),
                method: PaymentMethod::X402,
                at: OffsetDateTime::now_utc(),
                collection: Some(collection),
                credit_id: None,
                refunded: Usd::ZERO,
            };
            store
                .apply(record(Batch::new(), &sale).unwrap())
                .await
                .unwrap();
            sale.receipt_id
        };
        let sell = |n: u64| sell_as(n, Collection::Collected);
        // Recorded-only money is never paid out: with nothing else unpaid, nothing to collect.
        let recorded = sell_as(5000, Collection::Recorded).await;
        match create_packet(store, &signer, "b", 1000).await {
            Err(PayoutError::NothingCollectable {
                uncollected_units, ..
            }) => assert_eq!(uncollected_units, 4500),
            other => panic!("expected nothing_collectable, got {other:?}"),
        }
        sell(1000).await;
        assert!(matches!(
            create_packet(store, &signer, "b", 1000).await,
            Err(PayoutError::BelowMinimum { .. })
        ));
        sell(1500).await;
        let packet = create_packet(store, &signer, "b", 1000).await.unwrap();
        assert_eq!(
            (
                packet.gross.as_str(),
                packet.fee.as_str(),
                packet.amount.as_str()
            ),
            ("2500", "250", "2250")
        );
        assert_eq!(packet.receipt_ids.len(), 2);
        assert!(!packet.receipt_ids.contains(&recorded));
        let left = unpaid_sums(store, "b", 1000).await.unwrap();
        let standings: Vec<(Collection, u64)> = (left.iter())
            .map(|group| (group.standing, group.count))
            .collect();
        assert_eq!(standings, [(Collection::Recorded, 1)]);
        assert!(matches!(
            create_packet(store, &signer, "b", 1000).await,
            Err(PayoutError::NothingCollectable { .. })
        ));
        let tx = format!("0x{}", "ab".repeat(32));
        let paid = mark_paid(store, &signer, &packet.packet_id, &tx)
            .await
            .unwrap();
        assert_eq!(
            (paid.status.as_str(), paid.transaction.as_deref()),
            ("paid", Some(tx.as_str()))
        );
        assert!(matches!(
            mark_paid(store, &signer, &packet.packet_id, &tx).await,
            Err(PayoutError::AlreadyPaid(_))
        ));
        assert_eq!(packets(store, "b").await.unwrap(), vec![paid]);
    }
}
