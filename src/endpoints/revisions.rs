//! Deploys as revisions: where a new revision goes (serving at once, or waiting for a grant
//! while the serving one serves on), rollback, deploy conflicts, and the views of the kept
//! revisions with their diff against the serving source.
//!
//! The rule a deploy follows: a revision that asks for no capability the endpoint does not
//! hold serves at once, whatever else changed (source, price, schemas); one that asks for more
//! waits for the admin, and the serving revision keeps serving meanwhile. An endpoint with
//! nothing serving yet (its first revision awaits a grant) takes each new revision at once, as
//! its new request.

use std::sync::Arc;

use serde::Serialize;
use serde_json::json;
use time::OffsetDateTime;

use super::error::{EndpointError, RolloutRefusal};
use super::kept::{kept, load};
use super::parts::{emit, emit_requested, owned, Parts};
use super::rollout;
use crate::builders::Caller;
use crate::catalog::grant::{self, GrantState};
use crate::catalog::revision::{self, Author, Content, Pending, Revision};
use crate::catalog::GrantDecision;
use crate::catalog::{Capabilities, CompiledEndpoint, Endpoint, Rollout};
use crate::events::EventKind;
use crate::safety::SafetyStatus;
use crate::store::Batch;

/// The revision a change builds on: the newest one its owner put forward, which is the one
/// waiting for a grant when there is one, else the one rolling out, else the serving one.
pub struct Base {
    pub number: u64,
    pub content: Content,
}

pub async fn base(parts: &Parts<'_>, endpoint: &Endpoint) -> Result<Base, EndpointError> {
    match (&endpoint.pending, &endpoint.rollout) {
        (Some(pending), _) => Ok(Base {
            number: pending.revision,
            content: load(parts, endpoint, pending.revision).await?.content,
        }),
        (None, Some(rollout)) => Ok(Base {
            number: rollout.revision,
            content: rollout.content.clone(),
        }),
        (None, None) => Ok(Base {
            number: endpoint.serving_revision,
            content: Content::of(endpoint),
        }),
    }
}

/// A deploy that names the revision it was made on is refused when that is no longer the
/// newest one put forward (another deploy, a rollback, the dashboard), unless forced.
pub fn check_base(
    base: &Base,
    endpoint: &Endpoint,
    named: Option<u64>,
    force: bool,
) -> Result<(), EndpointError> {
    match named {
        Some(named) if named != base.number && !force => Err(EndpointError::RevisionConflict {
            base: named,
            serving: endpoint.serving_revision,
            pending: endpoint.pending.as_ref().map(|p| p.revision),
        }),
        _ => Ok(()),
    }
}

/// The fields of a change that a revision covers, as the API names them ([`Content`]).
const REVISION_FIELDS: &[&str] = &[
    "title",
    "description",
    "tags",
    "priceUsd",
    "source",
    "sourceLanguage",
    "response",
    "inputSchema",
    "outputSchema",
    "exampleInput",
    "env",
    "capabilities",
    "allowedHosts",
];

/// What placing a change did.
pub struct Placed {
    /// The revision and its removals out of the kept window, to write with the record.
    pub writes: Batch,
    /// The new revision's number, when the change made one.
    pub deployed: Option<u64>,
    /// Whether a revision waiting for a grant now serves (its capabilities were granted).
    pub promoted: bool,
    /// The rollout the change ended, by making another revision serve.
    pub ended_rollout: Option<Rollout>,
}

/// Places a change of `before`: `ep` is `before` with `base`'s content and the change applied.
/// A change of what revisions cover makes a new revision, serving at once, waiting (then
/// `ep` is given back the serving content), or with `rollout_share` rolling out beside the
/// serving one; any other change leaves the revisions as they are, unless it granted what the
/// waiting one asks for, which then serves. A revision that comes to serve ends a rollout.
pub fn place(
    ep: &mut Endpoint,
    before: &Endpoint,
    base: &Base,
    change: Change,
    now: OffsetDateTime,
) -> Result<Placed, EndpointError> {
    let content = Content::of(ep);
    if content == base.content {
        if change.rollout_share.is_some() {
            return Err(EndpointError::RolloutRefused(RolloutRefusal::NoNewRevision));
        }
        let promoted = ep.pending_is_granted();
        if promoted {
            ep.serving_revision = base.number;
            ep.pending = None;
        } else {
            // `base` may be a waiting or rolling-out revision: the record serves what it did.
            Content::of(before).apply(ep);
        }
        return Ok(Placed {
            writes: Batch::new(),
            deployed: None,
            promoted,
            ended_rollout: promoted.then(|| ep.rollout.take()).flatten(),
        });
    }
    let number = before.latest_revision + 1;
    let deployed = Revision {
        number,
        based_on: Some(base.number),
        author: change.author,
        // What the revision covers; files, limits, grants and status are the endpoint's.
        fields: change
            .fields
            .iter()
            .filter(|f| REVISION_FIELDS.contains(&f.as_str()))
            .cloned()
            .collect(),
        created_at: now,
        content,
    };
    let live = !before.awaits_grant();
    let asks = grant::missing(&ep.requested_capabilities, &ep.granted_capabilities);
    let mut ended_rollout = None;
    if let Some(share) = change.rollout_share {
        if let Some(refusal) = rollout::refusal(before, &deployed.content) {
            return Err(EndpointError::RolloutRefused(refusal));
        }
        // It serves a share beside the serving revision, in place of any other rolling out.
        ep.rollout = Some(rollout::new(number, share, deployed.content.clone()));
        ended_rollout = before.rollout.clone();
        Content::of(before).apply(ep);
    } else if !live || asks == Capabilities::default() {
        // Nothing live to keep serving, or nothing new asked: it serves now.
        let new_request = deployed.content.requested_capabilities != before.requested_capabilities
            || deployed.content.source != before.source
            || deployed.content.source_language != before.source_language;
        if !live && new_request {
            // A new request: a refusal answered the old one.
            ep.grant_decision = None;
        }
        ep.serving_revision = number;
        ep.pending = None;
        ended_rollout = ep.rollout.take();
    } else {
        ep.pending = Some(Pending {
            revision: number,
            requested: ep.requested_capabilities,
            decision: None,
        });
        Content::of(before).apply(ep);
    }
    ep.latest_revision = number;
    let writes = revision::write(Batch::new(), &ep.id, &deployed);
    Ok(Placed {
        writes: revision::retire(
            writes,
            &ep.id,
            number,
            before.serving_revision,
            ep.serving_revision,
        ),
        deployed: Some(number),
        promoted: false,
        ended_rollout,
    })
}

/// Who made a change, what it changed, and whether its revision is to roll out.
pub struct Change<'a> {
    pub author: Author,
    pub fields: &'a [String],
    /// The share of calls the new revision takes beside the serving one (PATCH
    /// `rolloutShare`); `None`: it serves at once (or waits for a grant).
    pub rollout_share: Option<u8>,
}

/// The admin's grant of the waiting revision: it serves, with what it asked for granted.
/// Answers the rollout that ended, if one ran.
pub async fn promote(
    parts: &Parts<'_>,
    ep: &mut Endpoint,
    pending: &Pending,
) -> Result<Option<Rollout>, EndpointError> {
    let waiting = load(parts, ep, pending.revision).await?;
    waiting.content.apply(ep);
    ep.granted_capabilities = grant::either(&ep.granted_capabilities, &pending.requested);
    ep.serving_revision = pending.revision;
    ep.pending = None;
    Ok(ep.rollout.take())
}

/// Serves kept revision `number` again, at once when it asks for nothing the endpoint does
/// not hold (a revision that served before asks for nothing new: grants are kept when a
/// revision stops using them); otherwise it waits for the admin like a deploy that asks for
/// more, and the serving revision serves on. A revision waiting for a grant is withdrawn
/// either way: the owner chose what serves.
pub async fn rollback(
    parts: &Parts<'_>,
    caller: &Caller,
    slug: &str,
    number: u64,
) -> Result<Arc<CompiledEndpoint>, EndpointError> {
    let current = owned(parts, caller, slug)?;
    let before = &current.endpoint;
    if before
        .content_safety
        .as_ref()
        .is_some_and(|c| c.status == SafetyStatus::Rejected)
    {
        return Err(EndpointError::Rejected);
    }
    let target = load(parts, before, number).await?;
    let mut ep = before.clone();
    let asks = grant::missing(
        &target.content.requested_capabilities,
        &ep.granted_capabilities,
    );
    let serves = asks == Capabilities::default() || before.awaits_grant();
    if serves {
        target.content.clone().apply(&mut ep);
        ep.serving_revision = number;
        ep.pending = None;
        ep.rollout = None;
        parts.runtime.check(&ep).await?;
    } else {
        ep.pending = Some(Pending {
            revision: number,
            requested: target.content.requested_capabilities,
            decision: None,
        });
    }
    let now = OffsetDateTime::now_utc();
    ep.generation = before.generation + 1;
    ep.updated_at = now;
    let writes = revision::retire(
        Batch::new(),
        &ep.id,
        ep.latest_revision,
        before.serving_revision,
        ep.serving_revision,
    );
    let compiled = parts.catalog.update(ep, before.generation, writes).await?;
    let after = &compiled.endpoint;
    let data = json!({
        "revision": number,
        "from": before.serving_revision,
        "serving": serves,
        "missing": grant::names(&asks),
    });
    emit(parts, after, EventKind::EndpointRolledBack, data).await;
    if let Some(ended) = before.rollout.as_ref().filter(|_| serves) {
        rollout::ended_by_change(parts, after, ended).await;
    }
    if !serves {
        emit_requested(parts, after).await;
    }
    Ok(compiled)
}

/// The endpoint as it would be with kept revision `number` serving, for a test call of it
/// (`X-Toolhost-Revision`): its content on the endpoint's data, grant and limits, so it reaches
/// only what the endpoint was granted. The sandbox tells it from the serving revision by its
/// number.
pub async fn as_revision(
    parts: &Parts<'_>,
    compiled: Arc<CompiledEndpoint>,
    number: u64,
) -> Result<Arc<CompiledEndpoint>, EndpointError> {
    if number == compiled.endpoint.serving_revision {
        return Ok(compiled);
    }
    let found = load(parts, &compiled.endpoint, number).await?;
    let ep = compiled.endpoint.as_kept(found.content, number);
    Ok(Arc::new(CompiledEndpoint::compile(ep)?.trial(number)))
}

/// One kept revision in the list. Not closed to other properties: [`RevisionDetail`] adds its
/// own beside them.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevisionSummary {
    pub revision: u64,
    /// `serving`, `pending` (waiting for the admin's grant), `refused` (the admin refused the
    /// grant it waits for) or `kept` (may be rolled back to).
    pub state: RevisionState,
    #[schema(required = true)]
    pub based_on: Option<u64>,
    pub author: Author,
    /// The fields the deploy changed.
    pub fields: Vec<String>,
    #[schema(format = DateTime)]
    pub created_at: String,
    #[schema(schema_with = crate::money::usd_schema)]
    pub price_usd: crate::money::Usd,
    pub requested_capabilities: Capabilities,
    /// The hosts it may reach; `null` when it names none.
    #[schema(required = true)]
    pub allowed_hosts: Option<Vec<String>>,
    /// SHA-256 of its source, hex; `null` for built-in handlers.
    #[schema(required = true)]
    pub source_sha256: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RevisionState {
    Serving,
    Pending,
    Refused,
    Kept,
}

fn state_of(endpoint: &Endpoint, number: u64) -> RevisionState {
    if number == endpoint.serving_revision {
        return RevisionState::Serving;
    }
    // The grant's own reading of the waiting revision's request (`grant::state`).
    match pending_view(endpoint).filter(|p| p.revision == number) {
        Some(p) if p.state == GrantState::Refused => RevisionState::Refused,
        Some(_) => RevisionState::Pending,
        None => RevisionState::Kept,
    }
}

fn summary(endpoint: &Endpoint, revision: &Revision) -> RevisionSummary {
    let content = &revision.content;
    RevisionSummary {
        revision: revision.number,
        state: state_of(endpoint, revision.number),
        based_on: revision.based_on,
        author: revision.author,
        fields: revision.fields.clone(),
        created_at: crate::timestamp::rfc3339(revision.created_at),
        price_usd: content.price_usd,
        requested_capabilities: content.requested_capabilities,
        allowed_hosts: content.allowed_hosts.clone(),
        source_sha256: content
            .source
            .as_deref()
            .map(|s| hex::encode(<sha2::Sha256 as sha2::Digest>::digest(s.as_bytes()))),
    }
}

/// The kept revisions, newest first, with the serving and waiting numbers.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RevisionList {
    /// Always true.
    pub ok: bool,
    pub serving: u64,
    #[schema(required = true)]
    pub pending: Option<u64>,
    pub latest: u64,
    /// How many of the newest revisions are kept (the serving one is kept besides).
    pub kept: u64,
    pub revisions: Vec<RevisionSummary>,
}

pub async fn list(
    parts: &Parts<'_>,
    caller: &Caller,
    slug: &str,
) -> Result<RevisionList, EndpointError> {
    let current = owned(parts, caller, slug)?;
    let endpoint = &current.endpoint;
    let revisions = kept(parts, endpoint).await?;
    Ok(RevisionList {
        ok: true,
        serving: endpoint.serving_revision,
        pending: endpoint.pending.as_ref().map(|p| p.revision),
        latest: endpoint.latest_revision,
        kept: revision::KEPT,
        revisions: revisions.iter().map(|r| summary(endpoint, r)).collect(),
    })
}

/// One kept revision whole, with its source's diff against the serving one's.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RevisionDetail {
    /// Always true.
    pub ok: bool,
    #[serde(flatten)]
    pub summary: RevisionSummary,
    /// The capabilities it asks for that the endpoint does not hold: what a grant would give.
    #[schema(value_type = Vec<String>)]
    pub asks: Vec<&'static str>,
    /// Everything it serves: title, description, tags, source, schemas, example, env.
    #[schema(value_type = Object)]
    pub content: serde_json::Value,
    /// A unified diff of its source against the serving revision's (`""` when they are the
    /// same or there is no source).
    pub source_diff: String,
}

pub async fn detail(
    parts: &Parts<'_>,
    caller: &Caller,
    slug: &str,
    number: u64,
) -> Result<RevisionDetail, EndpointError> {
    let current = owned(parts, caller, slug)?;
    let endpoint = &current.endpoint;
    let found = load(parts, endpoint, number).await?;
    Ok(detail_of(endpoint, &found))
}

/// The revision waiting for a grant, whole, when one waits: what the admin decides on.
pub async fn pending_detail(
    parts: &Parts<'_>,
    endpoint: &Endpoint,
) -> Result<Option<RevisionDetail>, EndpointError> {
    match &endpoint.pending {
        Some(p) => Ok(Some(detail_of(
            endpoint,
            &load(parts, endpoint, p.revision).await?,
        ))),
        None => Ok(None),
    }
}

fn detail_of(endpoint: &Endpoint, found: &Revision) -> RevisionDetail {
    let asks = grant::missing(
        &found.content.requested_capabilities,
        &endpoint.granted_capabilities,
    );
    RevisionDetail {
        ok: true,
        summary: summary(endpoint, found),
        asks: grant::names(&asks),
        content: serde_json::to_value(&found.content).expect("content serializes"),
        source_diff: source_diff(
            endpoint.source.as_deref().unwrap_or(""),
            found.content.source.as_deref().unwrap_or(""),
            endpoint.serving_revision,
            found.number,
        ),
    }
}

/// A unified diff, given up (the texts whole instead) when it takes longer than a moment: a
/// source is at most 256 KiB, but a diff of two unrelated ones costs their product.
fn source_diff(serving: &str, other: &str, serving_number: u64, number: u64) -> String {
    let diff = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_millis(200))
        .diff_lines(serving, other);
    diff.unified_diff()
        .context_radius(3)
        .header(
            &format!("revision {serving_number} (serving)"),
            &format!("revision {number}"),
        )
        .to_string()
}

/// The capability request of the waiting revision, as its owner and the admin see it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PendingView {
    pub revision: u64,
    pub state: GrantState,
    pub requested: Capabilities,
    #[schema(value_type = Vec<String>)]
    pub missing: Vec<&'static str>,
    #[schema(required = true)]
    pub decision: Option<GrantDecisionView>,
}

pub fn pending_view(endpoint: &Endpoint) -> Option<PendingView> {
    endpoint.pending.as_ref().map(|p| {
        let missing = grant::missing(&p.requested, &endpoint.granted_capabilities);
        PendingView {
            revision: p.revision,
            state: grant::state(&missing, p.decision.as_ref()),
            requested: p.requested,
            missing: grant::names(&missing),
            decision: p.decision.as_ref().map(decision_view),
        }
    })
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrantDecisionView {
    pub granted: bool,
    #[schema(required = true)]
    pub note: Option<String>,
    #[schema(format = DateTime)]
    pub decided_at: String,
}

pub(super) fn decision_view(d: &GrantDecision) -> GrantDecisionView {
    GrantDecisionView {
        granted: d.granted,
        note: d.note.clone(),
        decided_at: crate::timestamp::rfc3339(d.decided_at),
    }
}
