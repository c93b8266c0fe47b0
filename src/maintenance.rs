//! Background upkeep: what anonymous callers and crashes leave in the store is deleted or given
//! back, so neither can grow it (or strand money) without end.
//!
//! Each pass, every [`Retention::sweep_every`] on every node:
//! - developer-credit holds older than any call can run go back to their balance (a process that
//!   died between reserve and settle left them);
//! - quotes past their expiry (plus a grace in which they still answer `quote_expired`) go;
//! - receipts of free calls (no money moved) older than their retention go, and so, after theirs,
//!   do builder events. Paid receipts, sales, credits and payout packets are never touched;
//! - a deleted endpoint's data whose wipe was cut short (see [`crate::endpoints::wipe`]) goes;
//! - a deleted slug's reservation that is over goes (see [`crate::endpoints::reservation`]).
//!
//! Each sweep works in pages and stops after [`MAX_PAGES`] of them, so one pass stays short
//! however much has piled up; the next pass goes on. Nodes sharing a store sweep the same data:
//! deletes are idempotent, and credit holds are released by a conditional batch only one wins.

use std::sync::Arc;
use std::time::Duration;

use time::OffsetDateTime;

use crate::app::App;
use crate::store::{Store, StoreResult};

/// Pages of [`PAGE`] entries one sweep looks at per pass.
const MAX_PAGES: usize = 40;
const PAGE: usize = 256;

/// How long a credit hold outlives the request deadline before it counts as stale: a streamed
/// call (MCP, `/ai/invoke` with SSE) may run its handler past the response head, which is all
/// the deadline covers.
const HOLD_MARGIN: Duration = Duration::from_secs(300);

/// What one pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Swept {
    pub credit_holds: usize,
    pub quotes: usize,
    pub free_receipts: usize,
    pub events: usize,
    pub wipes: usize,
    pub slug_reservations: usize,
}

/// One pass of every sweep, as of `now`.
pub async fn sweep(app: &App, now: OffsetDateTime) -> StoreResult<Swept> {
    let store = app.store.as_ref();
    let retention = &app.config.retention;
    let hold_age = app.config.limits.request_timeout + HOLD_MARGIN;
    Ok(Swept {
        credit_holds: crate::payments::credits::release_stale(store, hold_age).await?,
        quotes: crate::quotes::sweep_expired(store, before(now, retention.quote_grace)).await?,
        free_receipts: sweep_free_receipts(store, before(now, retention.free_receipts)).await?,
        events: crate::events::sweep(store, before(now, retention.events)).await?,
        wipes: crate::endpoints::wipe::finish_owed(store).await?,
        slug_reservations: crate::endpoints::reservation::sweep_expired(
            store,
            now,
            MAX_PAGES * PAGE,
        )
        .await?,
    })
}

/// Starts the background passes; they end when the app is dropped.
pub fn start(app: &Arc<App>) {
    let every = app.config.retention.sweep_every;
    let app = Arc::downgrade(app);
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let Some(app) = app.upgrade() else { return };
            match sweep(&app, OffsetDateTime::now_utc()).await {
                Ok(swept) if swept != Swept::default() => tracing::info!(?swept, "swept"),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "a sweep failed; the next pass retries"),
            }
        }
    });
}

/// `now - age`, or the beginning of time when that is out of range (nothing is that old).
fn before(now: OffsetDateTime, age: Duration) -> OffsetDateTime {
    time::Duration::try_from(age)
        .ok()
        .and_then(|age| now.checked_sub(age))
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// Deletes receipts of free calls issued before `cutoff` (and their proofs); returns how many.
/// The store looks at [`MAX_PAGES`] pages' worth at most per pass.
async fn sweep_free_receipts(store: &dyn Store, cutoff: OffsetDateTime) -> StoreResult<usize> {
    let cutoff_ms = i64::try_from(cutoff.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX);
    let swept = store
        .sweep_free_receipts(cutoff_ms, MAX_PAGES * PAGE)
        .await?;
    Ok(usize::try_from(swept).unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutoffs_never_overflow() {
        let now = OffsetDateTime::now_utc();
        assert_eq!(before(now, Duration::MAX), OffsetDateTime::UNIX_EPOCH);
        assert_eq!(before(now, Duration::ZERO), now);
    }
}
