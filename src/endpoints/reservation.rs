//! A deleted slug stays its former owner's for a while (`--deleted-slug-reservation-days`, 30
//! by default): an agent holding the old URL or MCP tool name must not start paying whoever
//! claims it next. Only the former owner (or the admin) may create an endpoint under it until
//! then.
//!
//! The reservation is written in the same atomic step as the delete that frees the slug, and a
//! create checks it in the same atomic step as the insert that claims the slug (the record it
//! read must still be there as read), so no claim slips between the two.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::error::EndpointError;
use crate::catalog::Owner;
use crate::store::{Batch, Store, StoreError};

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Reservation {
    owner: Owner,
    #[serde(with = "time::serde::rfc3339")]
    until: OffsetDateTime,
}

/// Removes reservations that are over (as of `now`), at most `limit` looked at per call;
/// returns how many went. A reservation is checked again when removed, so one renewed by a
/// delete meanwhile stays.
pub async fn sweep_expired(
    store: &dyn Store,
    now: OffsetDateTime,
    limit: usize,
) -> Result<usize, StoreError> {
    let page = store.slug_reservations(None, limit).await?;
    let mut gone = 0;
    for (slug, bytes) in page {
        let over = serde_json::from_slice::<Reservation>(&bytes).map_or(true, |r| r.until <= now);
        if !over {
            continue;
        }
        let batch = Batch::new()
            .require_slug_reservation(&slug, Some(bytes))
            .delete_slug_reservation(&slug);
        match store.apply(batch).await {
            Ok(()) => gone += 1,
            Err(StoreError::ConditionFailed(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(gone)
}

/// The write reserving `slug` for `owner` until `until` (nothing when the period is zero).
pub(super) fn reserve(slug: &str, owner: &Owner, until: Option<OffsetDateTime>) -> Batch {
    let Some(until) = until else {
        return Batch::new();
    };
    let reservation = Reservation {
        owner: owner.clone(),
        until,
    };
    let bytes = serde_json::to_vec(&reservation).expect("a reservation serializes");
    Batch::new().put_slug_reservation(slug, bytes)
}

/// What claiming `slug` for `claimant` must hold, as conditions and writes to go with the
/// insert: the reservation read is still the one there, and one that is over or the
/// claimant's own is removed. 409 `slug_reserved` while another owner's holds.
pub(super) async fn claim(
    store: &dyn Store,
    slug: &str,
    claimant: &Owner,
    now: OffsetDateTime,
) -> Result<Batch, EndpointError> {
    let stored = store.slug_reservation(slug).await?;
    let Some(bytes) = &stored else {
        return Ok(Batch::new().require_slug_reservation(slug, None));
    };
    let reservation: Reservation = serde_json::from_slice(bytes)
        .map_err(|e| StoreError::Corrupt(format!("slug reservation {slug}: {e}")))?;
    let holds =
        reservation.until > now && &reservation.owner != claimant && *claimant != Owner::Admin;
    if holds {
        return Err(EndpointError::SlugReserved {
            slug: slug.to_string(),
            until: reservation.until,
        });
    }
    Ok(Batch::new()
        .require_slug_reservation(slug, stored)
        .delete_slug_reservation(slug))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{EndpointRecords, SledStore};

    #[tokio::test]
    async fn a_reservation_holds_for_others_until_it_is_over_then_goes() {
        let store = SledStore::temporary().unwrap();
        let now = OffsetDateTime::now_utc();
        let owner = Owner::Builder("b_old".into());
        let other = Owner::Builder("b_new".into());
        let hour = time::Duration::hours(1);
        store
            .apply(reserve("held", &owner, Some(now + hour)).extend(reserve(
                "over",
                &owner,
                Some(now - hour),
            )))
            .await
            .unwrap();
        assert!(matches!(
            claim(&store, "held", &other, now).await,
            Err(EndpointError::SlugReserved { .. })
        ));
        // Its former owner and the admin may claim it; so may anyone once it is over.
        assert!(claim(&store, "held", &owner, now).await.is_ok());
        assert!(claim(&store, "held", &Owner::Admin, now).await.is_ok());
        assert!(claim(&store, "over", &other, now).await.is_ok());
        assert_eq!(sweep_expired(&store, now, 100).await.unwrap(), 1);
        assert!(claim(&store, "held", &other, now).await.is_err());
        assert!(store.slug_reservation("over").await.unwrap().is_none());
        // No period, no reservation.
        assert!(reserve("free", &owner, None).writes.is_empty());
    }
}
