//! Gradual rollouts: a kept revision serves a share of calls (1-100 %) beside the serving one,
//! each payer always reaching the same one, with both revisions' calls counted side by side
//! ([`crate::tallies`]) until the owner promotes it (it serves every call) or ends the rollout.
//!
//! Who reaches the new revision is decided by a hash of the rollout and the payer (the payer's
//! address of an x402 payment, the developer credit, else the client's address), so a payer
//! sees one behaviour throughout and every node decides alike without asking anyone; raising
//! the share keeps everyone who had the new revision on it. The new revision must charge what
//! the serving one charges (an agent is quoted one price, whichever revision answers) and ask
//! for no capability the endpoint does not hold (it runs with the endpoint's grant, as a test
//! call of a kept revision does). Any deploy or rollback that makes another revision serve ends
//! the rollout.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

use super::error::{EndpointError, RolloutRefusal};
use super::input::FieldError;
use super::kept::load;
use super::parts::{emit, owned, Parts};
use crate::builders::Caller;
use crate::catalog::revision::{self, Content};
use crate::catalog::{grant, Capabilities, CompiledEndpoint, Endpoint, Rollout};
use crate::events::EventKind;
use crate::safety::SafetyStatus;
use crate::store::Batch;
use crate::tallies::{self, Tally};

/// Which revision runs a call of `compiled` from `payer`: the rollout's new one for its share
/// of payers, else the serving one.
pub fn route(compiled: &Arc<CompiledEndpoint>, payer: &[u8]) -> Arc<CompiledEndpoint> {
    match (&compiled.endpoint.rollout, &compiled.candidate) {
        (Some(rollout), Some(candidate)) if reaches(rollout, payer) => candidate.clone(),
        _ => compiled.clone(),
    }
}

/// Whether `payer` falls in the rollout's share: a hash of the rollout and the payer, read as
/// a number below 100.
fn reaches(rollout: &Rollout, payer: &[u8]) -> bool {
    let digest = Sha256::new()
        .chain_update(rollout.id.as_bytes())
        .chain_update([0])
        .chain_update(payer)
        .finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first) % 100 < u64::from(rollout.share)
}

/// A share as the API takes it in `field`: a whole percentage, 1-100.
pub fn share(given: i64, field: &str) -> Result<u8, FieldError> {
    u8::try_from(given)
        .ok()
        .filter(|s| (1..=100).contains(s))
        .ok_or_else(|| {
            (
                field.to_owned(),
                format!(
                    "{field} must be a whole percentage of payers from 1 to 100 (got {given}); to stop a rollout, end it (DELETE .../rollout)"
                ),
            )
        })
}

/// Why `content` cannot take a share of `endpoint`'s calls beside its serving revision, if so.
pub(super) fn refusal(endpoint: &Endpoint, content: &Content) -> Option<RolloutRefusal> {
    if endpoint.awaits_grant() {
        return Some(RolloutRefusal::NothingServing);
    }
    let asks = grant::missing(
        &content.requested_capabilities,
        &endpoint.granted_capabilities,
    );
    if asks != Capabilities::default() {
        return Some(RolloutRefusal::NeedsGrant {
            missing: grant::names(&asks),
        });
    }
    if content.price_usd != endpoint.price_usd {
        return Some(RolloutRefusal::PriceDiffers {
            serving: endpoint.price_usd,
            revision: content.price_usd,
        });
    }
    None
}

/// A rollout of revision `number` with `content`, at `share`, starting now.
pub(super) fn new(number: u64, share: u8, content: Content) -> Rollout {
    Rollout {
        id: format!("ro_{}", uuid::Uuid::new_v4().simple()),
        revision: number,
        share,
        started_at: OffsetDateTime::now_utc(),
        content,
    }
}

/// `POST /ai/endpoints/{slug}/rollout`: what to roll out, or the new share of the running one.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RolloutRequest {
    /// The kept revision to roll out; absent: the one rolling out now, at a new share.
    pub revision: Option<u64>,
    /// The percentage of payers it serves, 1-100.
    pub share: i64,
}

/// Starts a rollout, or changes the share of the one running (the same revision, or none
/// named): its payers stay on it and its counts go on.
pub async fn start(
    parts: &Parts<'_>,
    caller: &Caller,
    slug: &str,
    request: RolloutRequest,
) -> Result<Arc<CompiledEndpoint>, EndpointError> {
    let share = share(request.share, "share")?;
    let current = owned(parts, caller, slug)?;
    let before = &current.endpoint;
    if before
        .content_safety
        .as_ref()
        .is_some_and(|c| c.status == SafetyStatus::Rejected)
    {
        return Err(EndpointError::Rejected);
    }
    let running = before.rollout.as_ref();
    let number = match (request.revision, running) {
        (Some(number), _) => number,
        (None, Some(running)) => running.revision,
        (None, None) => {
            return Err(EndpointError::Invalid {
                field: "revision".into(),
                message: "no rollout is running; name the kept revision to roll out".into(),
            })
        }
    };
    if number == before.serving_revision {
        return Err(EndpointError::RolloutRefused(RolloutRefusal::Serving {
            revision: number,
        }));
    }
    let mut ep = before.clone();
    let (rollout, started) = match running.filter(|r| r.revision == number) {
        Some(running) => (
            Rollout {
                share,
                ..running.clone()
            },
            false,
        ),
        None => {
            let found = load(parts, before, number).await?;
            if let Some(refusal) = refusal(before, &found.content) {
                return Err(EndpointError::RolloutRefused(refusal));
            }
            (new(number, share, found.content), true)
        }
    };
    let data = json!({"revision": number, "share": share, "from": running.map(|r| r.share)});
    ep.rollout = Some(rollout);
    let compiled = store(parts, before, ep, Batch::new()).await?;
    let kind = if started {
        EventKind::RolloutStarted
    } else {
        EventKind::RolloutChanged
    };
    emit(parts, &compiled.endpoint, kind, data).await;
    Ok(compiled)
}

/// How a rollout ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The rolling-out revision serves every call: it becomes the serving revision.
    Promoted,
    /// The serving revision serves every call again.
    Ended,
}

/// Ends the running rollout as `ending` says (409 `no_rollout` when none runs).
pub async fn finish(
    parts: &Parts<'_>,
    caller: &Caller,
    slug: &str,
    ending: Ending,
) -> Result<Arc<CompiledEndpoint>, EndpointError> {
    let current = owned(parts, caller, slug)?;
    let before = &current.endpoint;
    let rollout = before.rollout.clone().ok_or(EndpointError::NoRollout)?;
    let mut ep = before.clone();
    ep.rollout = None;
    let (writes, kind, data) = match ending {
        Ending::Promoted => {
            rollout.content.apply(&mut ep);
            ep.serving_revision = rollout.revision;
            let writes = revision::retire(
                Batch::new(),
                &ep.id,
                ep.latest_revision,
                before.serving_revision,
                ep.serving_revision,
            );
            let data = json!({"revision": rollout.revision, "from": before.serving_revision, "share": rollout.share});
            (writes, EventKind::RolloutPromoted, data)
        }
        Ending::Ended => {
            let data = json!({"revision": rollout.revision, "serving": before.serving_revision, "share": rollout.share});
            (Batch::new(), EventKind::RolloutEnded, data)
        }
    };
    let compiled = store(parts, before, ep, writes).await?;
    end(parts, &compiled.endpoint, kind, data).await;
    Ok(compiled)
}

async fn store(
    parts: &Parts<'_>,
    before: &Endpoint,
    mut ep: Endpoint,
    writes: Batch,
) -> Result<Arc<CompiledEndpoint>, EndpointError> {
    ep.generation = before.generation + 1;
    ep.updated_at = OffsetDateTime::now_utc();
    Ok(parts.catalog.update(ep, before.generation, writes).await?)
}

/// A rollout ended: its counts go, and the owner is told.
pub(super) async fn end(
    parts: &Parts<'_>,
    endpoint: &Endpoint,
    kind: EventKind,
    data: serde_json::Value,
) {
    if let Err(e) = tallies::delete_all(parts.store.as_ref(), &endpoint.id).await {
        tracing::warn!(error = %e, slug = %endpoint.slug, "cannot delete an ended rollout's counts");
    }
    emit(parts, endpoint, kind, data).await;
}

/// A change made another revision serve (a deploy, a rollback, a grant), or rolled out another
/// in place of `ended`: its rollout is over.
pub async fn ended_by_change(parts: &Parts<'_>, endpoint: &Endpoint, ended: &Rollout) {
    let data = json!({
        "revision": ended.revision,
        "serving": endpoint.serving_revision,
        "share": ended.share,
        "rollingOut": endpoint.rollout.as_ref().map(|r| r.revision),
    });
    end(parts, endpoint, EventKind::RolloutEnded, data).await;
}

/// How one revision of a rollout answered, on every node since the rollout started.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RevisionCalls {
    pub revision: u64,
    pub calls: u64,
    /// Answered 2xx.
    pub ok: u64,
    /// Answered 4xx by the handler (its own refusal).
    pub client_errors: u64,
    /// Answered 5xx: the handler threw, timed out or ran out of memory.
    pub server_errors: u64,
    /// `serverErrors / calls`; `null` before any call.
    #[schema(required = true)]
    pub error_rate: Option<f64>,
    /// Handler latency percentiles in milliseconds (each within 19 % of the true value);
    /// `null` before any call.
    #[schema(required = true)]
    pub p50_ms: Option<f64>,
    #[schema(required = true)]
    pub p95_ms: Option<f64>,
    #[schema(required = true)]
    pub p99_ms: Option<f64>,
    #[schema(required = true)]
    pub mean_ms: Option<f64>,
}

fn calls_view(revision: u64, tally: &Tally) -> RevisionCalls {
    let per_call = |total: f64| (tally.calls > 0).then(|| total / tally.calls as f64);
    RevisionCalls {
        revision,
        calls: tally.calls,
        ok: tally.ok,
        client_errors: tally.client_errors,
        server_errors: tally.server_errors,
        error_rate: per_call(tally.server_errors as f64),
        p50_ms: tally.percentile_ms(0.50),
        p95_ms: tally.percentile_ms(0.95),
        p99_ms: tally.percentile_ms(0.99),
        mean_ms: per_call(tally.total_micros as f64 / 1000.0),
    }
}

/// A running rollout as its owner sees it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RolloutView {
    /// The revision rolling out.
    pub revision: u64,
    pub share: u8,
    #[schema(format = DateTime)]
    pub started_at: String,
    /// The serving revision's calls since the rollout started.
    pub serving: RevisionCalls,
    /// The rolling-out revision's calls.
    pub candidate: RevisionCalls,
}

/// `GET /ai/endpoints/{slug}/rollout`.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RolloutStatus {
    /// Always true.
    pub ok: bool,
    pub serving_revision: u64,
    /// `null` when no rollout is running.
    #[schema(required = true)]
    pub rollout: Option<RolloutView>,
}

/// The rollout of the endpoint, if one runs, with both revisions' counts from every node.
pub async fn status(
    parts: &Parts<'_>,
    caller: &Caller,
    slug: &str,
) -> Result<RolloutStatus, EndpointError> {
    let current = owned(parts, caller, slug)?;
    let endpoint = &current.endpoint;
    let rollout = match &endpoint.rollout {
        Some(rollout) => {
            let counted = tallies::read(parts.store.as_ref(), &endpoint.id, &rollout.id).await?;
            Some(view(endpoint, rollout, &counted))
        }
        None => None,
    };
    Ok(RolloutStatus {
        ok: true,
        serving_revision: endpoint.serving_revision,
        rollout,
    })
}

fn view(endpoint: &Endpoint, rollout: &Rollout, counted: &BTreeMap<u64, Tally>) -> RolloutView {
    let of = |revision: u64| {
        calls_view(
            revision,
            &counted.get(&revision).cloned().unwrap_or_default(),
        )
    };
    RolloutView {
        revision: rollout.revision,
        share: rollout.share,
        started_at: crate::timestamp::rfc3339(rollout.started_at),
        serving: of(endpoint.serving_revision),
        candidate: of(rollout.revision),
    }
}

/// The rollout in an endpoint's record, without its counts (its owner reads those with
/// [`status`]).
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RolloutSummary {
    pub revision: u64,
    pub share: u8,
    #[schema(format = DateTime)]
    pub started_at: String,
}

pub fn summary(endpoint: &Endpoint) -> Option<RolloutSummary> {
    endpoint.rollout.as_ref().map(|r| RolloutSummary {
        revision: r.revision,
        share: r.share,
        started_at: crate::timestamp::rfc3339(r.started_at),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rollout(share: u8) -> Rollout {
        let endpoint: Endpoint = serde_json::from_value(json!({
            "id": "ep_1", "slug": "tool", "title": "T", "description": "", "status": "active",
            "priceUsd": 0, "handlerType": "static_json", "inputSchema": {},
            "outputSchema": {}, "owner": {"kind": "admin"},
            "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
        }))
        .unwrap();
        Rollout {
            id: "ro_test".into(),
            ..new(2, share, Content::of(&endpoint))
        }
    }

    #[test]
    fn a_share_reaches_about_that_share_of_payers_and_keeps_them_when_raised() {
        let payers: Vec<String> = (0..10_000).map(|i| format!("0xpayer{i}")).collect();
        let reached = |share: u8| -> Vec<&String> {
            payers
                .iter()
                .filter(|p| reaches(&rollout(share), p.as_bytes()))
                .collect()
        };
        let ten = reached(10);
        let thirty = reached(30);
        assert!((800..1200).contains(&ten.len()), "{} of 10000", ten.len());
        assert!(
            (2700..3300).contains(&thirty.len()),
            "{} of 10000",
            thirty.len()
        );
        assert!(ten.iter().all(|p| thirty.contains(p)));
        assert_eq!(reached(100).len(), payers.len());
        // The same payer is always decided alike.
        assert!(ten.iter().all(|p| reaches(&rollout(10), p.as_bytes())));
    }

    #[test]
    fn shares_outside_one_to_a_hundred_are_refused() {
        for bad in [0, 101, -1, 1000] {
            assert!(matches!(share(bad, "share"), Err((field, _)) if field == "share"));
        }
        assert_eq!(share(1, "share").unwrap(), 1);
        assert_eq!(share(100, "share").unwrap(), 100);
    }
}
