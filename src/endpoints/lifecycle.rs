//! Create, update, delete and review, as plain functions of the parts, the caller and the request.
//!
//! Order of checks: the caller is known (the extractor's 401), the endpoint exists (404), the
//! caller may change it (403), the body is valid (422), the content passes the scanner (422 or
//! review), a new JS source loads in the sandbox (422 `compile_error`, see
//! `js_handlers::EndpointRuntime::check`), then the slug is claimed (409). Builders' content is
//! scanned; the admin's is not.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{json, Value};
use time::OffsetDateTime;

use super::error::EndpointError;
use super::files;
use super::input::{self, CreateRequest, PatchRequest};
use super::parts::{emit, emit_requested, owned, Parts};
use super::reservation;
use super::revisions::{self, decision_view, GrantDecisionView};
use super::rollout;
use super::wipe;
use crate::builders::Caller;
use crate::catalog::grant;
use crate::catalog::revision::Author;
use crate::catalog::{
    Capabilities, CatalogError, CompiledEndpoint, Endpoint, GrantDecision, GrantState, HandlerType,
    JsonText, Owner, PricingMode, RuntimeLimits, SourceLanguage, Status,
};
use crate::events::EventKind;
use crate::safety::{self, field_group, ContentSafety, SafetyStatus};
use crate::secrets;
use crate::store::Batch;

/// The texts of the given field groups of an endpoint (plus changed files), for the scanner.
fn scan_targets<'a>(
    endpoint: &'a Endpoint,
    groups: &[String],
    files: &'a BTreeMap<String, Option<String>>,
    response_text: &'a str,
    schema_texts: &'a [(&'static str, String)],
) -> Vec<(String, &'a str)> {
    let wants = |g: &str| groups.iter().any(|x| x == g);
    let mut out: Vec<(String, &str)> = Vec::new();
    out.extend(
        schema_texts
            .iter()
            .filter(|(field, _)| wants(field))
            .map(|(field, text)| (field.to_string(), text.as_str())),
    );
    if wants("title") {
        out.push(("title".into(), &endpoint.title));
    }
    if wants("description") {
        out.push(("description".into(), &endpoint.description));
    }
    if wants("tags") {
        out.extend(
            endpoint
                .tags
                .iter()
                .enumerate()
                .map(|(i, t)| (format!("tags[{i}]"), t.as_str())),
        );
    }
    if wants("source") {
        out.extend(
            endpoint
                .source
                .as_deref()
                .map(|s| ("source".to_string(), s)),
        );
    }
    if wants("response") {
        out.push(("response".into(), response_text));
    }
    if wants("env") {
        out.extend(
            endpoint
                .env
                .iter()
                .map(|(k, v)| (format!("env.{k}"), v.as_str())),
        );
    }
    out.extend(
        files
            .iter()
            .filter_map(|(p, c)| c.as_deref().map(|c| (format!("files/{p}"), c))),
    );
    out
}

/// Scans the changed groups of a builder's endpoint and sets its verdict; a review holds it paused.
fn apply_scan(
    endpoint: &mut Endpoint,
    groups: &[String],
    files: &BTreeMap<String, Option<String>>,
    now: OffsetDateTime,
) -> Result<(), EndpointError> {
    let response_text = endpoint
        .response
        .as_ref()
        .map(|r| r.as_str().to_owned())
        .unwrap_or_default();
    let schema_texts = [
        ("inputSchema", schema_text(&endpoint.input_schema.value())),
        ("outputSchema", schema_text(&endpoint.output_schema.value())),
    ];
    let found = safety::scan(scan_targets(
        endpoint,
        groups,
        files,
        &response_text,
        &schema_texts,
    ));
    let verdict = ContentSafety::after_scan(endpoint.content_safety.as_ref(), groups, found, now)
        .map_err(EndpointError::Blocked)?;
    if verdict.status == SafetyStatus::Review {
        endpoint.status = Status::Paused;
    }
    endpoint.content_safety = Some(verdict);
    Ok(())
}

/// The text a schema shows to whoever reads the catalog: every key, string and number (titles,
/// descriptions, examples, defaults, enum and const values), one per line, unescaped, so the
/// detectors see a key or a card number as they would in a description.
fn schema_text(schema: &Value) -> String {
    fn collect(value: &Value, out: &mut String) {
        match value {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Number(n) => {
                out.push_str(&n.to_string());
                out.push('\n');
            }
            Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
            Value::Object(map) => {
                for (key, v) in map {
                    out.push_str(key);
                    out.push('\n');
                    collect(v, out);
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }
    let mut out = String::new();
    collect(schema, &mut out);
    out
}

fn is_flagged(endpoint: &Endpoint) -> bool {
    endpoint
        .content_safety
        .as_ref()
        .is_some_and(|c| c.status == SafetyStatus::Review)
}

fn flagged_data(endpoint: &Endpoint) -> Value {
    json!({ "findings": endpoint.content_safety.as_ref().map(|c| &c.findings) })
}

/// Creates an endpoint owned by the caller.
pub async fn create(
    parts: &Parts<'_>,
    caller: &Caller,
    request: CreateRequest,
) -> Result<Arc<CompiledEndpoint>, EndpointError> {
    let builder = match caller {
        Caller::Builder(b) => Some(b),
        Caller::Admin => None,
    };
    if builder.is_some() {
        if !request
            .safety_attestation
            .as_ref()
            .is_some_and(|a| a.accepted)
        {
            return Err(EndpointError::AttestationRequired);
        }
        if request.limits.is_some() {
            return Err(EndpointError::AdminOnly("limits"));
        }
        if !matches!(
            request.handler_type()?,
            HandlerType::JsRequestResponse | HandlerType::StaticJson
        ) {
            return Err(EndpointError::HandlerNotAllowed);
        }
    }
    input::create_fields(&request, largest_heap(parts, false))?;
    let handler_type = request.handler_type()?;
    let files: BTreeMap<String, Option<String>> = request
        .files
        .into_iter()
        .map(|(p, c)| (p, Some(c)))
        .collect();
    let quotas = &parts.config.runtime.quotas;
    let owner = builder.map(|b| b.id.as_str());
    // A new id, never used before: the files are kept under it, not under the slug.
    let id = format!("ep_{}", uuid::Uuid::now_v7().simple());
    files::check(parts.store.as_ref(), quotas, &id, owner, &files).await?;
    let now = OffsetDateTime::now_utc();
    let mut endpoint = Endpoint {
        id,
        slug: request.slug,
        title: request.title,
        description: request.description,
        status: Status::Active,
        price_usd: request.price_usd,
        metering: request.metering,
        handler_type,
        tags: request.tags,
        input_schema: request
            .input_schema
            .unwrap_or_else(|| json!({"type": "object"}))
            .into(),
        output_schema: request.output_schema.unwrap_or_else(|| json!({})).into(),
        requested_capabilities: request.capabilities,
        granted_capabilities: if builder.is_some() {
            Default::default()
        } else {
            request.capabilities
        },
        grant_decision: None,
        content_safety: None,
        limits: request.limits,
        allowed_hosts: request.allowed_hosts,
        generation: 1,
        serving_revision: 1,
        latest_revision: 1,
        pending: None,
        rollout: None,
        owner: builder.map_or(Owner::Admin, |b| Owner::Builder(b.id.clone())),
        owner_name: builder.map(|b| b.name.clone()),
        source: request.source,
        source_language: request.source_language.unwrap_or_default(),
        response: request.response.map(JsonText::from),
        env: request.env,
        example_input: request.example_input.map(JsonText::from),
        created_at: now,
        updated_at: now,
    };
    if builder.is_some() {
        let all = [
            "title",
            "description",
            "tags",
            "source",
            "response",
            "env",
            "inputSchema",
            "outputSchema",
        ]
        .map(String::from);
        apply_scan(&mut endpoint, &all, &files, now)?;
    }
    check_example(&endpoint)?;
    parts.runtime.check(&endpoint).await?;
    let claim =
        reservation::claim(parts.store.as_ref(), &endpoint.slug, &endpoint.owner, now).await?;
    let compiled = parts.catalog.insert_new(endpoint, claim).await?;
    let id = &compiled.endpoint.id;
    files::write(parts.store.as_ref(), quotas, id, owner, &files).await?;
    let endpoint = &compiled.endpoint;
    emit(
        parts,
        endpoint,
        EventKind::EndpointCreated,
        // As its record shows it: `awaiting_grant` while its requested capabilities wait.
        json!({ "status": endpoint.shown_status(), "priceUsd": endpoint.price_usd }),
    )
    .await;
    if is_flagged(endpoint) {
        emit(
            parts,
            endpoint,
            EventKind::SafetyFlagged,
            flagged_data(endpoint),
        )
        .await;
    }
    if endpoint.grant_state() == GrantState::Pending {
        emit_requested(parts, endpoint).await;
    }
    Ok(compiled)
}

/// The largest heap limit an endpoint of a builder (`builder`) or of the operator can be
/// given on this server's sandbox.
fn largest_heap(parts: &Parts<'_>, builder: bool) -> usize {
    let runtime = &parts.config.runtime;
    runtime.isolation.largest_heap(&runtime.pool, builder)
}

/// An endpoint's `exampleInput`, when it has one, passes its own `inputSchema` (the catalog
/// and the 402 offer it as a request that works).
fn check_example(endpoint: &Endpoint) -> Result<(), EndpointError> {
    if endpoint.example_input.is_none() {
        return Ok(());
    }
    let violations = CompiledEndpoint::compile(endpoint.clone())?.example_violations();
    input::example_input(&violations).map_err(|error| EndpointError::Fields(vec![error]))
}

/// Applies a PATCH. Builders may not touch `grantedCapabilities` or `limits` (403).
pub async fn update(
    parts: &Parts<'_>,
    caller: &Caller,
    slug: &str,
    patch: PatchRequest,
) -> Result<Arc<CompiledEndpoint>, EndpointError> {
    let current = owned(parts, caller, slug)?;
    let is_builder = !caller.is_admin();
    if is_builder && patch.granted_capabilities.is_some() {
        return Err(EndpointError::AdminOnly("grantedCapabilities"));
    }
    if is_builder && patch.limits.is_some() {
        return Err(EndpointError::AdminOnly("limits"));
    }
    let before = &current.endpoint;
    let safety_status = before.content_safety.as_ref().map(|c| c.status);
    if safety_status == Some(SafetyStatus::Rejected) {
        return Err(EndpointError::Rejected);
    }
    if patch.status == Some(Status::Active) && safety_status == Some(SafetyStatus::Review) {
        return Err(EndpointError::UnderReview);
    }
    // A change builds on the revision its owner put forward last.
    let base = revisions::base(parts, before).await?;
    revisions::check_base(&base, before, patch.base_revision, patch.force)?;
    let mut ep = before.clone();
    base.content.clone().apply(&mut ep);
    let mut new_code = false;
    // Every field is checked, and all their errors answered together.
    let mut errors = input::FieldErrors::default();
    let mut changed: Vec<String> = Vec::new();
    let mut mark = |name: &str| changed.push(name.to_string());
    if let Some(title) = patch.title {
        errors.check(input::title(&title));
        ep.title = title;
        mark("title");
    }
    if let Some(description) = patch.description {
        errors.check(input::description(&description));
        ep.description = description;
        mark("description");
    }
    if patch.price_usd.is_some() || patch.pricing_mode.is_some() || patch.metering.is_some() {
        let price = patch.price_usd.unwrap_or(ep.price_usd);
        // Named `metering` replaces it (`null` removes it); a mode other than metered drops
        // it; otherwise the endpoint's stays.
        let metering = match (patch.metering, patch.pricing_mode) {
            (Some(given), _) => given,
            (None, Some(mode)) if mode != PricingMode::MeteredSuccessReceipt => None,
            (None, _) => ep.metering.clone(),
        };
        errors.check(input::price(price, patch.pricing_mode, metering.as_ref()));
        ep.price_usd = price;
        ep.metering = metering;
        mark("priceUsd");
    }
    if let Some(language) = patch.source_language {
        new_code = ep.source_language != language;
        ep.source_language = language;
        mark("sourceLanguage");
    }
    if let Some(source) = patch.source {
        new_code |= ep.source.as_deref() != Some(source.as_str());
        ep.source = Some(source);
        mark("source");
    }
    if let Some(response) = patch.response {
        ep.response = Some(response.into());
        mark("response");
    }
    let response = ep.response.as_ref().map(JsonText::value);
    errors.check(input::handler_fields(
        ep.handler_type,
        ep.source.as_deref(),
        response.as_ref(),
    ));
    if patch.source_language.is_some() {
        errors.check(input::source_language(ep.source.as_deref()));
    }
    if let Some(schema) = patch.input_schema {
        ep.input_schema = schema.into();
        mark("inputSchema");
    }
    if let Some(schema) = patch.output_schema {
        ep.output_schema = schema.into();
        mark("outputSchema");
    }
    if let Some(example) = patch.example_input {
        ep.example_input = example.map(JsonText::from);
        mark("exampleInput");
    }
    if let Some(tags) = patch.tags {
        errors.check(input::tags(&tags));
        ep.tags = tags;
        mark("tags");
    }
    if let Some(changes) = patch.env {
        let mut env = ep.env.clone();
        for (name, value) in changes {
            match value {
                Some(value) => env.insert(name, value),
                None => env.remove(&name),
            };
        }
        errors.check(input::env(&env));
        ep.env = env;
        mark("env");
    }
    if let Some(requested) = patch.capabilities {
        // What the endpoint was granted stays granted (a rollback may use it again); the
        // sandbox gets only what the serving revision asks for.
        ep.requested_capabilities = requested;
        mark("capabilities");
    }
    if let Some(granted) = patch.granted_capabilities {
        let grantable = grant::either(&ep.requested_capabilities, &before.granted_capabilities);
        errors.check(input::granted_within(&granted, &grantable));
        ep.granted_capabilities = granted;
        mark("grantedCapabilities");
    }
    if let Some(limits) = patch.limits {
        let builder = matches!(ep.owner, Owner::Builder(_));
        let largest = largest_heap(parts, builder);
        errors.check(
            input::limits(&limits).and_then(|()| input::heap_fits(&limits, largest, builder)),
        );
        ep.limits = Some(limits);
        mark("limits");
    }
    if let Some(hosts) = patch.allowed_hosts {
        errors.check(input::allowed_hosts(&hosts));
        ep.allowed_hosts = Some(hosts).filter(|h| !h.is_empty());
        mark("allowedHosts");
    }
    let rollout_share = match patch
        .rollout_share
        .map(|s| rollout::share(s, "rolloutShare"))
    {
        Some(Ok(share)) => Some(share),
        Some(Err(error)) => {
            errors.check(Err(error));
            None
        }
        None => None,
    };
    errors.finish()?;
    if changed
        .iter()
        .any(|c| c == "exampleInput" || c == "inputSchema")
    {
        check_example(&ep)?;
    }
    let files = patch.files.unwrap_or_default();
    let quotas = &parts.config.runtime.quotas;
    let owner = before.owner_builder();
    files::check(parts.store.as_ref(), quotas, &before.id, owner, &files).await?;
    changed.extend(files.keys().map(|p| format!("files/{p}")));
    if let Some(status) = patch.status {
        ep.status = status;
    }
    let now = OffsetDateTime::now_utc();
    if is_builder && ep.content_safety.is_some() {
        let groups: Vec<String> = changed.iter().map(|c| field_group(c).to_string()).collect();
        apply_scan(&mut ep, &groups, &files, now)?;
    }
    if new_code {
        parts.runtime.check(&ep).await?;
    }
    let author = if is_builder {
        Author::Owner
    } else {
        Author::Admin
    };
    let change = revisions::Change {
        author,
        fields: &changed,
        rollout_share,
    };
    let placed = revisions::place(&mut ep, before, &base, change, now)?;
    let admin_granted =
        !is_builder && (placed.promoted || (before.awaits_grant() && !ep.awaits_grant()));
    if admin_granted {
        ep.grant_decision = Some(GrantDecision {
            granted: true,
            requested: ep.requested_capabilities,
            note: None,
            decided_at: now,
        });
    }
    if files.is_empty() && same_record(&ep, before) {
        // Nothing changed (a grant saved as it was, a field sent with its value): nothing is
        // written, no event, and the isolates and payment terms built from it stay.
        return Ok(current);
    }
    ep.generation = before.generation + 1;
    ep.updated_at = now;
    let compiled = parts
        .catalog
        .update(ep, before.generation, placed.writes)
        .await?;
    files::write(parts.store.as_ref(), quotas, &before.id, owner, &files).await?;
    let after = &compiled.endpoint;
    if !changed.is_empty() {
        let data = json!({
            "fields": changed,
            "revision": after.serving_revision,
            "deployed": placed.deployed,
            "pending": after.pending.as_ref().map(|p| p.revision),
        });
        emit(parts, after, EventKind::EndpointUpdated, data).await;
    }
    match (before.status, after.status) {
        (Status::Active, Status::Paused) => {
            emit(parts, after, EventKind::EndpointPaused, json!({})).await
        }
        (Status::Paused, Status::Active) => {
            emit(parts, after, EventKind::EndpointResumed, json!({})).await
        }
        _ => {}
    }
    if is_flagged(after) && !is_flagged(before) {
        emit(parts, after, EventKind::SafetyFlagged, flagged_data(after)).await;
    }
    let pending = |e: &Endpoint| e.grant_state() == GrantState::Pending;
    let waits = |e: &Endpoint| e.pending.as_ref().map(|p| p.revision);
    if (pending(after) && (!pending(before) || after.grant_decision != before.grant_decision))
        || (waits(after).is_some() && waits(after) != waits(before))
    {
        emit_requested(parts, after).await;
    }
    if admin_granted {
        emit_granted(parts, after, None).await;
    }
    if let Some(ended) = &placed.ended_rollout {
        rollout::ended_by_change(parts, after, ended).await;
    }
    if let Some(started) = after
        .rollout
        .as_ref()
        .filter(|r| placed.deployed == Some(r.revision))
    {
        let data = json!({"revision": started.revision, "share": started.share, "from": null});
        emit(parts, after, EventKind::RolloutStarted, data).await;
    }
    Ok(compiled)
}

/// Whether two records say the same (as stored, so every field counts).
fn same_record(a: &Endpoint, b: &Endpoint) -> bool {
    serde_json::to_value(a).ok() == serde_json::to_value(b).ok()
}

/// Records that the endpoint's secrets changed: bumps the revision (the sandbox rebuilds
/// isolates that captured the old `ctx.env`) and tells the owner which names changed.
pub async fn secrets_changed(
    parts: &Parts<'_>,
    slug: &str,
    names: Vec<String>,
) -> Result<Arc<CompiledEndpoint>, EndpointError> {
    let compiled = loop {
        let current = parts.catalog.require(slug)?;
        let mut ep = current.endpoint.clone();
        ep.generation += 1;
        ep.updated_at = OffsetDateTime::now_utc();
        match parts
            .catalog
            .update(ep, current.endpoint.generation, Batch::new())
            .await
        {
            Err(CatalogError::Conflict(_)) => continue,
            other => break other?,
        }
    };
    let data = json!({ "fields": ["secrets"], "secrets": names, "revision": compiled.endpoint.generation });
    emit(parts, &compiled.endpoint, EventKind::EndpointUpdated, data).await;
    Ok(compiled)
}

/// Removes the endpoint from the catalog with its secrets, files, kv data and logs; the slug
/// is free again. Receipts are not touched: they stay retrievable by id.
///
/// Its calls still running are stopped, and from its removal on their `ctx` operations are
/// refused (the host checks each op's endpoint id against the catalog). Its data is kept under
/// its id, which no endpoint has again, so whoever claims the slug next starts empty and
/// shares nothing with the old calls even before the wipe is done; the removal records the
/// wipe as owed in the same atomic step, so a wipe cut short is finished by maintenance.
pub async fn delete(
    parts: &Parts<'_>,
    caller: &Caller,
    slug: &str,
) -> Result<Endpoint, EndpointError> {
    let current = owned(parts, caller, slug)?;
    let id = current.endpoint.id.clone();
    let period = parts.config.retention.deleted_slugs;
    let until = (!period.is_zero()).then(|| OffsetDateTime::now_utc() + period);
    let held = reservation::reserve(slug, &current.endpoint.owner, until);
    let removed = parts
        .catalog
        .remove(slug, &id, wipe::owed(&id).extend(held))
        .await?;
    parts.runtime.forget(slug);
    if let Err(e) = wipe::wipe(parts.store.as_ref(), &id).await {
        tracing::warn!(endpoint = %id, error = %e, "a deleted endpoint's wipe failed; maintenance finishes it");
    }
    emit(parts, &removed, EventKind::EndpointDeleted, json!({})).await;
    Ok(removed)
}

/// The admin's decision on an endpoint under review: approval lists and activates it,
/// rejection keeps it paused and unlisted.
pub async fn decide(
    parts: &Parts<'_>,
    slug: &str,
    approve: bool,
    note: Option<String>,
) -> Result<Arc<CompiledEndpoint>, EndpointError> {
    let current = parts.catalog.require(slug)?;
    let Some(verdict) = current
        .endpoint
        .content_safety
        .as_ref()
        .filter(|c| c.status == SafetyStatus::Review)
    else {
        return Err(EndpointError::NotUnderReview);
    };
    check_note(note.as_deref())?;
    let now = OffsetDateTime::now_utc();
    let mut ep = current.endpoint.clone();
    ep.content_safety = Some(verdict.decided(approve, note.clone(), now));
    if approve {
        ep.status = Status::Active;
    }
    ep.generation += 1;
    ep.updated_at = now;
    let compiled = parts
        .catalog
        .update(ep, current.endpoint.generation, Batch::new())
        .await?;
    let kind = if approve {
        EventKind::SafetyApproved
    } else {
        EventKind::SafetyRejected
    };
    emit(parts, &compiled.endpoint, kind, json!({ "note": note })).await;
    Ok(compiled)
}

/// An admin's note on a decision: at most 1000 characters.
fn check_note(note: Option<&str>) -> Result<(), EndpointError> {
    if note.is_some_and(|n| n.chars().count() > 1000) {
        return Err(EndpointError::Invalid {
            field: "note".into(),
            message: "note must be at most 1000 characters".into(),
        });
    }
    Ok(())
}

/// Endpoints awaiting review, oldest first.
pub fn review_queue(parts: &Parts<'_>) -> Vec<Arc<CompiledEndpoint>> {
    parts
        .catalog
        .all()
        .into_iter()
        .filter(|c| is_flagged(&c.endpoint))
        .collect()
}

/// The admin's answer to an endpoint's capability request: the serving revision's when nothing
/// serves until it is granted, else the waiting revision's. A grant gives every capability it
/// asks for (an endpoint awaiting its first grant is listed and callable, unless paused or
/// held; a waiting revision serves); a refusal keeps it waiting and out of the admin's queue
/// until its owner asks anew. Either way the owner gets an event with the note.
pub async fn decide_grant(
    parts: &Parts<'_>,
    slug: &str,
    grant: bool,
    note: Option<String>,
) -> Result<Arc<CompiledEndpoint>, EndpointError> {
    let current = parts.catalog.require(slug)?;
    let before = &current.endpoint;
    let waiting = before
        .pending
        .clone()
        .filter(|_| !before.pending_is_granted());
    if !before.awaits_grant() && waiting.is_none() {
        return Err(EndpointError::NotAwaitingGrant);
    }
    check_note(note.as_deref())?;
    let now = OffsetDateTime::now_utc();
    let mut ep = before.clone();
    let requested = match &waiting {
        Some(p) => p.requested,
        None => ep.requested_capabilities,
    };
    let refused = grant::missing(&requested, &ep.granted_capabilities);
    let mut ended = None;
    let decision = GrantDecision {
        granted: grant,
        requested,
        note: note.clone(),
        decided_at: now,
    };
    match (&waiting, grant) {
        (Some(pending), true) => {
            ended = revisions::promote(parts, &mut ep, pending).await?;
            ep.grant_decision = Some(decision);
        }
        (Some(_), false) => {
            if let Some(p) = ep.pending.as_mut() {
                p.decision = Some(decision);
            }
        }
        (None, granted) => {
            if granted {
                ep.granted_capabilities = grant::either(&ep.granted_capabilities, &requested);
            }
            ep.grant_decision = Some(decision);
        }
    }
    ep.generation += 1;
    ep.updated_at = now;
    let compiled = parts
        .catalog
        .update(ep, current.endpoint.generation, Batch::new())
        .await?;
    let after = &compiled.endpoint;
    if let Some(ended) = &ended {
        rollout::ended_by_change(parts, after, ended).await;
    }
    if grant {
        emit_granted(parts, after, note).await;
    } else {
        let data = json!({
            "status": after.shown_status(),
            "revision": waiting.as_ref().map_or(after.serving_revision, |p| p.revision),
            "refused": grant::names(&refused),
            "note": note,
        });
        emit(parts, after, EventKind::CapabilitiesRefused, data).await;
    }
    Ok(compiled)
}

async fn emit_granted(parts: &Parts<'_>, endpoint: &Endpoint, note: Option<String>) {
    let data = json!({
        "status": endpoint.shown_status(),
        "revision": endpoint.serving_revision,
        "granted": endpoint.granted_capabilities,
        "note": note,
    });
    emit(parts, endpoint, EventKind::CapabilitiesGranted, data).await;
}

/// Endpoints whose capability request awaits the admin's answer, the longest waiting first.
pub fn grant_queue(parts: &Parts<'_>) -> Vec<Arc<CompiledEndpoint>> {
    let mut queue: Vec<_> = parts
        .catalog
        .all()
        .into_iter()
        .filter(|c| {
            c.endpoint.grant_state() == GrantState::Pending
                || revisions::pending_view(&c.endpoint)
                    .is_some_and(|p| p.state == GrantState::Pending)
        })
        .collect();
    queue.sort_by_key(|c| c.endpoint.updated_at);
    queue
}

/// The capability request as its owner and the admin see it.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrantView {
    pub state: GrantState,
    pub requested: Capabilities,
    pub granted: Capabilities,
    /// The requested capabilities not granted, by name (`kv`, `files`, `httpGetJson`, `fetch`,
    /// `logs`).
    #[schema(value_type = Vec<String>)]
    pub missing: Vec<&'static str>,
    /// The admin's last answer; `null` until there is one for the current request.
    #[schema(required = true)]
    pub decision: Option<GrantDecisionView>,
    /// The newest revision when it waits for a grant while the serving one serves: what it
    /// asks for beyond what the endpoint holds, and the admin's answer. `null` otherwise.
    #[schema(required = true)]
    pub pending_revision: Option<revisions::PendingView>,
}

pub fn grant_view(endpoint: &Endpoint) -> GrantView {
    GrantView {
        state: endpoint.grant_state(),
        requested: endpoint.requested_capabilities,
        granted: endpoint.granted_capabilities,
        missing: grant::names(&endpoint.missing_capabilities()),
        decision: endpoint.grant_decision.as_ref().map(decision_view),
        pending_revision: revisions::pending_view(endpoint),
    }
}

/// What the owner and the admin see beyond the public record.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManageView {
    pub owner: Owner,
    /// The serving revision's number.
    pub revision: u64,
    /// The newest revision's number (it may wait for a grant, or a rollback made an older
    /// one serve).
    pub latest_revision: u64,
    /// The newest revision when it waits for the admin's grant; `null` otherwise.
    #[schema(required = true)]
    pub pending_revision: Option<u64>,
    /// The revision rolling out to a share of payers beside the serving one; `null` when none
    /// is (its calls: `GET .../rollout`).
    #[schema(required = true)]
    pub rollout: Option<rollout::RolloutSummary>,
    pub requested_capabilities: Capabilities,
    pub granted_capabilities: Capabilities,
    pub capability_grant: GrantView,
    /// The admin's sandbox limits; `null` for the defaults.
    #[schema(required = true)]
    pub limits: Option<RuntimeLimits>,
    /// The JS handler's source; `null` for built-in handlers.
    #[schema(required = true)]
    pub source: Option<String>,
    /// The language of `source`; `null` for built-in handlers.
    #[schema(required = true)]
    pub source_language: Option<SourceLanguage>,
    /// A `static_json` endpoint's answer; `null` for other handlers.
    #[schema(value_type = Option<serde_json::Value>, required = true)]
    pub response: Option<JsonText>,
    pub env: BTreeMap<String, String>,
    /// The example request body as set; `null` when none is (the record's `example` then
    /// shows a generated one).
    #[schema(value_type = Option<serde_json::Value>, required = true)]
    pub example_input: Option<JsonText>,
    /// The outbound host allow-list of `fetch`; `null` when none is set.
    #[schema(required = true)]
    pub allowed_hosts: Option<Vec<String>>,
    pub files: Vec<files::FileInfo>,
    pub secrets: Vec<secrets::vault::SecretInfo>,
}

pub async fn manage_view(
    parts: &Parts<'_>,
    endpoint: &Endpoint,
) -> Result<ManageView, EndpointError> {
    Ok(ManageView {
        owner: endpoint.owner.clone(),
        revision: endpoint.serving_revision,
        latest_revision: endpoint.latest_revision,
        pending_revision: endpoint.pending.as_ref().map(|p| p.revision),
        rollout: rollout::summary(endpoint),
        requested_capabilities: endpoint.requested_capabilities,
        granted_capabilities: endpoint.granted_capabilities,
        capability_grant: grant_view(endpoint),
        limits: endpoint.limits,
        source: endpoint.source.clone(),
        source_language: endpoint.source.as_ref().map(|_| endpoint.source_language),
        response: endpoint.response.clone(),
        env: endpoint.env.clone(),
        example_input: endpoint.example_input.clone(),
        allowed_hosts: endpoint.allowed_hosts.clone(),
        files: files::list(parts.store.as_ref(), &endpoint.id).await?,
        secrets: secrets::list(parts.store.as_ref(), &endpoint.id).await?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builders::{self, PayerInfo, RegisterRequest};
    use crate::catalog::Registry;
    use crate::config::Config;
    use crate::endpoints::parts::can_manage;
    use crate::events;
    use crate::js_handlers::EndpointRuntime;
    use crate::net::OutboundClient;
    use crate::store::{SledStore, Store};

    /// The parts the lifecycle works on, over a throwaway store with the seed catalog: no app,
    /// no server.
    struct Service {
        store: Arc<dyn Store>,
        catalog: Arc<Registry>,
        config: Config,
        runtime: EndpointRuntime,
    }

    impl Service {
        fn endpoint_parts(&self) -> Parts<'_> {
            Parts {
                store: &self.store,
                catalog: &self.catalog,
                config: &self.config,
                runtime: &self.runtime,
            }
        }
    }

    async fn service() -> Service {
        let store: Arc<dyn Store> = Arc::new(SledStore::temporary().unwrap());
        let config = Config::new("/nonexistent");
        let catalog = Arc::new(Registry::load(store.clone()).await.unwrap());
        crate::catalog::seed_catalog(&catalog, store.as_ref(), &config.runtime.quotas, None)
            .await
            .unwrap();
        let runtime = EndpointRuntime::new(
            &config.runtime,
            store.clone(),
            OutboundClient::new(&config.outbound),
            catalog.clone(),
        );
        Service {
            store,
            catalog,
            config,
            runtime,
        }
    }

    async fn builder(app: &Service, name: &str) -> Caller {
        let request = RegisterRequest {
            name: name.into(),
            contact: None,
        };
        let (_, key) = builders::register(app.store.as_ref(), request, PayerInfo::Admin)
            .await
            .unwrap();
        Caller::Builder(
            builders::authenticate(app.store.as_ref(), &key)
                .await
                .unwrap(),
        )
    }

    fn request(slug: &str, description: &str) -> CreateRequest {
        serde_json::from_value(json!({
            "slug": slug, "title": "T", "description": description, "priceUsd": 0,
            "handlerType": "static_json", "response": {"ok": true},
            "safetyAttestation": {"accepted": true},
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn ownership() {
        let app = service().await;
        let (owner, other) = (builder(&app, "A").await, builder(&app, "B").await);
        let created = create(&app.endpoint_parts(), &owner, request("mine", ""))
            .await
            .unwrap();
        assert!(can_manage(&owner, &created.endpoint));
        assert!(can_manage(&Caller::Admin, &created.endpoint));
        assert!(!can_manage(&other, &created.endpoint));
        assert!(matches!(
            owned(&app.endpoint_parts(), &other, "mine"),
            Err(EndpointError::NotOwner)
        ));
        assert!(matches!(
            owned(&app.endpoint_parts(), &other, "none"),
            Err(EndpointError::Catalog(CatalogError::NotFound(_)))
        ));
        let seeded = app.catalog.require("receipt-echo").unwrap();
        assert!(!can_manage(&owner, &seeded.endpoint));
    }

    #[tokio::test]
    async fn review_flow_and_events() {
        let app = service().await;
        let owner = builder(&app, "A").await;
        let held = create(
            &app.endpoint_parts(),
            &owner,
            request("held", "mail jane.doe@gmail.com"),
        )
        .await
        .unwrap();
        assert_eq!(held.endpoint.status, Status::Paused);
        assert!(!held.endpoint.is_listed());
        assert_eq!(review_queue(&app.endpoint_parts()).len(), 1);
        let resume = PatchRequest {
            status: Some(Status::Active),
            ..Default::default()
        };
        assert!(matches!(
            update(&app.endpoint_parts(), &owner, "held", resume).await,
            Err(EndpointError::UnderReview)
        ));
        let approved = decide(&app.endpoint_parts(), "held", true, None)
            .await
            .unwrap();
        assert_eq!(approved.endpoint.status, Status::Active);
        assert_eq!(approved.endpoint.generation, 2);
        assert!(matches!(
            decide(&app.endpoint_parts(), "held", true, None).await,
            Err(EndpointError::NotUnderReview)
        ));

        let Caller::Builder(b) = &owner else {
            unreachable!()
        };
        let since = OffsetDateTime::now_utc() - time::Duration::hours(1);
        let all = crate::paging::PageRequest::parse(None, None).unwrap();
        let feed = events::page(app.store.as_ref(), &b.id, since, None, &all)
            .await
            .unwrap();
        let kinds: Vec<EventKind> = feed.items.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [
                EventKind::SafetyApproved,
                EventKind::SafetyFlagged,
                EventKind::EndpointCreated
            ]
        );
        delete(&app.endpoint_parts(), &owner, "held").await.unwrap();
        assert!(app.catalog.get("held").is_none());
    }
}
