//! Payout packets as the store keeps them: each under its id, found by id (an admin marks one
//! paid knowing only that) and by builder.
//!
//! A packet is written only inside batches (with the claims of the sales it pays:
//! [`Batch::put_packet`](crate::Batch::put_packet), changed only as read with
//! [`Batch::require_packet`](crate::Batch::require_packet)); this trait reads them. [`kv`] is
//! the shape any key-value engine keeps (sled's: the packet's JSON in the `ledger` tree under
//! `packet/{builderId}/{packetId}`, as every release has stored it); PostgreSQL keeps a table
//! with the builder and the status as columns, indexed by builder (`toolhost_packets`,
//! migration 7), so a packet is found by its id in one read, not by reading everyone's.

use async_trait::async_trait;

use crate::StoreResult;

/// One stored packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacketRow {
    /// `pay_` and a UUIDv7: ids sort in creation order.
    pub packet_id: String,
    pub builder: String,
    /// `pending` or `paid`.
    pub status: String,
    /// The packet's JSON, as it is served.
    pub entry: Vec<u8>,
}

/// Where payout packets are read. Every engine implements it (the conformance suite's
/// `packets_*` case).
#[async_trait]
pub trait PayoutPackets {
    /// A packet by its id: its builder and JSON.
    async fn packet(&self, packet_id: &str) -> StoreResult<Option<(String, Vec<u8>)>>;
    /// A builder's packets whose id sorts after `after` (from the first when `None`), oldest
    /// first, at most `limit`: ids and JSON.
    async fn packets_of(
        &self,
        builder: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>>;
}

/// Packets over any [`Store`](crate::Store)'s trees, for engines without a shape of their own.
pub mod kv {
    use crate::{Store, StoreResult, Tree};

    const PREFIX: &str = "packet/";
    /// Packets read per page while looking for one by id.
    const PAGE: usize = 256;

    pub(crate) fn packet_key(builder: &str, packet_id: &str) -> Vec<u8> {
        format!("{PREFIX}{builder}/{packet_id}").into_bytes()
    }

    /// Every builder's packets, a page at a time, until the one whose key ends with the id.
    pub(crate) async fn get<S: Store + ?Sized>(
        store: &S,
        packet_id: &str,
    ) -> StoreResult<Option<(String, Vec<u8>)>> {
        let suffix = format!("/{packet_id}");
        let mut after: Option<Vec<u8>> = None;
        loop {
            let page = (store.scan_prefix(Tree::Ledger, PREFIX.as_bytes(), after.as_deref(), PAGE))
                .await?;
            let full = page.len() == PAGE;
            for (key, entry) in page {
                let key = String::from_utf8_lossy(&key).into_owned();
                if let Some(builder) = (key.strip_suffix(&suffix))
                    .and_then(|rest| rest.strip_prefix(PREFIX))
                    .filter(|builder| !builder.contains('/'))
                {
                    return Ok(Some((builder.to_owned(), entry)));
                }
                after = Some(key.into_bytes());
            }
            if !full {
                return Ok(None);
            }
        }
    }

    pub(crate) async fn of<S: Store + ?Sized>(
        store: &S,
        builder: &str,
        after: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let prefix = packet_key(builder, "");
        let from = after.map(|id| packet_key(builder, id));
        let page = (store.scan_prefix(Tree::Ledger, &prefix, from.as_deref(), limit)).await?;
        Ok(page
            .into_iter()
            .map(|(key, entry)| {
                (
                    String::from_utf8_lossy(&key[prefix.len()..]).into_owned(),
                    entry,
                )
            })
            .collect())
    }
}
