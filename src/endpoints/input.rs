//! The bodies of create and PATCH, and the checks on each field. Each check returns the field's
//! name with the message so the 422 can point at it.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::catalog::{
    Capabilities, HandlerType, Metering, PricingMode, RuntimeLimits, SourceLanguage, Status,
};
use crate::money::Usd;
use crate::secrets::is_env_name;

pub(super) const MAX_SOURCE_BYTES: usize = 256 * 1024;
pub(super) const MAX_ENV: usize = 50;
pub(super) const MAX_ENV_VALUE_BYTES: usize = 4096;
pub(super) const MAX_TAGS: usize = 16;
/// The smallest non-zero price: a tenth of a cent (spec 2.1 rule 2).
pub(super) const MIN_PRICE: Usd = Usd::from_units(1_000);

/// A rejected field and why.
pub(super) type FieldError = (String, String);

fn invalid(field: &str, message: impl Into<String>) -> FieldError {
    (field.to_string(), message.into())
}

/// A field that may be given as `null`: present (`Some`), with `None` for `null`; absent
/// fields are `None` through `#[serde(default)]`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<Value>>, D::Error> {
    Option::<Value>::deserialize(d).map(Some)
}

/// `metering` as PATCH reads it: present (`Some`), with `None` for `null`.
fn present_metering<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<Metering>>, D::Error> {
    Option::<Metering>::deserialize(d).map(Some)
}

/// `exampleInput` passes the endpoint's `inputSchema` (`violations` are what its compiled
/// schema found).
pub(super) fn example_input(violations: &[crate::catalog::Violation]) -> Result<(), FieldError> {
    if violations.is_empty() {
        return Ok(());
    }
    let found: Vec<String> = violations
        .iter()
        .take(5)
        .map(|v| format!("at `{}`: {}", v.pointer, v.message))
        .collect();
    Err(invalid(
        "exampleInput",
        format!(
            "exampleInput must pass the endpoint's inputSchema; it does not ({})",
            found.join("; ")
        ),
    ))
}

/// `safetyAttestation`: only `accepted` is read; other fields are kept out of the record.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct SafetyAttestation {
    pub accepted: bool,
}

/// The body of `POST /ai/endpoints/create`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateRequest {
    /// Lowercase letters, digits and hyphens, 3 to 64 characters, not starting or ending with
    /// a hyphen; unique.
    #[schema(pattern = "^(?!create$)[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$")]
    pub slug: String,
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// 0, or at least 0.001.
    #[schema(schema_with = crate::money::usd_schema)]
    pub price_usd: Usd,
    /// Optional; must agree with the price (and `metering`) when given.
    #[serde(default)]
    pub pricing_mode: Option<PricingMode>,
    /// A metered price (`metered_success_receipt`): the unit counted, the minimum charge, an
    /// optional unit price; `priceUsd` is then the most one call can cost.
    #[serde(default)]
    pub metering: Option<Metering>,
    /// Optional when the body implies it: `source` alone means `js_request_response`,
    /// `response` alone `static_json` (see [`CreateRequest::handler_type`]).
    #[serde(default)]
    pub handler_type: Option<HandlerType>,
    /// Source of `js_request_response`: an ES module whose default export is the handler.
    #[serde(default)]
    pub source: Option<String>,
    /// The language of `source`: `javascript` (the default) or `typescript`, which is
    /// transpiled at publish and whose errors point at its own lines.
    #[serde(default)]
    pub source_language: Option<SourceLanguage>,
    /// Fixed response of `static_json`.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub response: Option<Value>,
    /// JSON Schema of the request body; default `{"type":"object"}`.
    #[serde(default)]
    #[schema(schema_with = crate::catalog::optional_json_schema_schema)]
    pub input_schema: Option<Value>,
    /// JSON Schema of the result; default `{}`.
    #[serde(default)]
    #[schema(schema_with = crate::catalog::optional_json_schema_schema)]
    pub output_schema: Option<Value>,
    /// A request body that passes `inputSchema`: the catalog's copyable example and the
    /// request the 402's discovery declaration shows.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub example_input: Option<Value>,
    #[serde(default)]
    pub tags: Vec<String>,
    /// Requested capabilities, `{kv, files, httpGetJson, fetch, logs}` booleans; an admin grants
    /// them.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub capabilities: Capabilities,
    /// Non-secret `ctx.env` values (use the secrets route for secrets).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// `ctx.files`: path to UTF-8 content.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Required with `accepted: true` for builders.
    #[serde(default)]
    pub safety_attestation: Option<SafetyAttestation>,
    /// Admin only.
    #[serde(default)]
    pub limits: Option<RuntimeLimits>,
    /// Hosts `ctx.httpGetJson` may reach (exact names or `*.example.com`), and the only hosts
    /// `fetch` reaches.
    #[serde(default)]
    pub allowed_hosts: Option<Vec<String>>,
}

/// The body of `PATCH /ai/endpoints/{slug}`; absent fields stay as they are.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PatchRequest {
    pub title: Option<String>,
    pub description: Option<String>,
    #[schema(schema_with = crate::money::optional_usd_schema)]
    pub price_usd: Option<Usd>,
    pub pricing_mode: Option<PricingMode>,
    /// Makes the price metered, or changes how (`null`: a fixed price again, as does a
    /// `pricingMode` other than `metered_success_receipt`).
    #[serde(default, deserialize_with = "present_metering")]
    pub metering: Option<Option<Metering>>,
    pub source: Option<String>,
    /// `javascript` or `typescript`; a change is a code change, like a new `source`.
    pub source_language: Option<SourceLanguage>,
    #[schema(value_type = Option<Object>)]
    pub response: Option<Value>,
    #[schema(schema_with = crate::catalog::optional_json_schema_schema)]
    pub input_schema: Option<Value>,
    #[schema(schema_with = crate::catalog::optional_json_schema_schema)]
    pub output_schema: Option<Value>,
    /// Replaces the example request body; `null` removes it. It must pass the `inputSchema`
    /// the endpoint has after this change.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Object>)]
    pub example_input: Option<Option<Value>>,
    /// Replaces the tags.
    pub tags: Option<Vec<String>>,
    /// Merged into the env, as `files` are: a value sets its name, `null` removes it, names
    /// not mentioned stay.
    pub env: Option<BTreeMap<String, Option<String>>>,
    /// Path to new content, or `null` to delete the file.
    pub files: Option<BTreeMap<String, Option<String>>>,
    /// `active` or `paused`.
    pub status: Option<Status>,
    /// Requested capabilities.
    #[schema(value_type = Option<Object>)]
    pub capabilities: Option<Capabilities>,
    /// Admin only: the capabilities the endpoint is granted (within the requested ones and
    /// those granted before); the sandbox gets those the serving revision requests.
    #[schema(value_type = Option<Object>)]
    pub granted_capabilities: Option<Capabilities>,
    /// Admin only.
    pub limits: Option<RuntimeLimits>,
    /// Replaces the outbound host allow-list; an empty list removes it.
    pub allowed_hosts: Option<Vec<String>>,
    /// The revision this change was made on (`manage.revision`, or `manage.pendingRevision`
    /// when one waits): when the endpoint has moved on since (another deploy, a rollback, an
    /// edit elsewhere) the change is refused with 409 `revision_conflict`, unless `force`.
    pub base_revision: Option<u64>,
    /// Deploy even when `baseRevision` is no longer the newest revision.
    #[serde(default)]
    pub force: bool,
    /// Roll the new revision out to this percentage of payers (1-100) beside the serving
    /// one, instead of serving it at once; it must charge what the serving one charges and ask
    /// for nothing the endpoint does not hold (else 409 `rollout_refused`).
    pub rollout_share: Option<i64>,
}

impl CreateRequest {
    /// The handler type given, or the one the body implies: `source` alone is JS, `response`
    /// alone a static answer. Anything else must say which it is.
    pub(super) fn handler_type(&self) -> Result<HandlerType, FieldError> {
        match (self.handler_type, &self.source, &self.response) {
            (Some(given), _, _) => Ok(given),
            (None, Some(_), None) => Ok(HandlerType::JsRequestResponse),
            (None, None, Some(_)) => Ok(HandlerType::StaticJson),
            (None, _, _) => Err(invalid(
                "handlerType",
                "handlerType is required unless the body has exactly one of `source` \
                 (js_request_response) and `response` (static_json)",
            )),
        }
    }
}

/// A body's field errors, collected so one 422 reports them all.
#[derive(Debug, Default)]
pub(super) struct FieldErrors(Vec<FieldError>);

impl FieldErrors {
    pub(super) fn check(&mut self, checked: Result<(), FieldError>) {
        if let Err(error) = checked {
            self.0.push(error);
        }
    }

    /// `Ok` when every check passed, else all their errors in one [`EndpointError::Fields`].
    pub(super) fn finish(self) -> Result<(), super::EndpointError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(super::EndpointError::Fields(self.0))
        }
    }
}

/// The field checks of a create body, all of them, in the order its 422 lists them (the
/// caller's rights and the files are checked apart). `largest_heap` bounds `limits.memoryMb`
/// ([`heap_fits`]; only the admin sets limits, and the admin's endpoints are the operator's).
pub(super) fn create_fields(
    request: &CreateRequest,
    largest_heap: usize,
) -> Result<(), super::EndpointError> {
    let mut errors = FieldErrors::default();
    errors.check(slug(&request.slug));
    errors.check(title(&request.title));
    errors.check(description(&request.description));
    errors.check(price(
        request.price_usd,
        request.pricing_mode,
        request.metering.as_ref(),
    ));
    errors.check(tags(&request.tags));
    errors.check(env(&request.env));
    errors.check(request.handler_type().and_then(|handler| {
        handler_fields(
            handler,
            request.source.as_deref(),
            request.response.as_ref(),
        )
    }));
    if request.source_language.is_some() {
        errors.check(source_language(request.source.as_deref()));
    }
    if let Some(runtime) = &request.limits {
        errors.check(limits(runtime).and_then(|()| heap_fits(runtime, largest_heap, false)));
    }
    if let Some(hosts) = &request.allowed_hosts {
        errors.check(allowed_hosts(hosts));
    }
    errors.finish()
}

/// Host patterns: at most 50, each a lowercase host name, optionally behind `*.`.
pub(super) fn allowed_hosts(hosts: &[String]) -> Result<(), FieldError> {
    let valid = |h: &str| {
        let name = h.strip_prefix("*.").unwrap_or(h);
        !name.is_empty()
            && name.len() <= 253
            && name.contains('.')
            && name.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            })
    };
    if hosts.len() > 50 || !hosts.iter().all(|h| valid(h)) {
        return Err(invalid(
            "allowedHosts",
            "at most 50 lowercase host names, each optionally prefixed by `*.`",
        ));
    }
    Ok(())
}

pub(super) fn slug(slug: &str) -> Result<(), FieldError> {
    let ok_chars = slug
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    let ok_ends = !slug.starts_with('-') && !slug.ends_with('-');
    if !(3..=64).contains(&slug.len()) || !ok_chars || !ok_ends {
        return Err(invalid(
            "slug",
            "slug must be 3 to 64 lowercase letters, digits or hyphens, not starting or ending with a hyphen",
        ));
    }
    // `/ai/endpoints/create` is the create route: an endpoint of that slug could not be read,
    // changed or deleted at `/ai/endpoints/{slug}` (the literal route answers 405 there).
    if slug == "create" {
        return Err(invalid("slug", "slug `create` is reserved"));
    }
    Ok(())
}

fn printable(field: &str, text: &str, min: usize, max: usize) -> Result<(), FieldError> {
    let n = text.chars().count();
    if n < min
        || n > max
        || text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(invalid(
            field,
            format!("{field} must be {min} to {max} printable characters"),
        ));
    }
    Ok(())
}

pub(super) fn title(text: &str) -> Result<(), FieldError> {
    printable("title", text, 1, 120)
}

pub(super) fn description(text: &str) -> Result<(), FieldError> {
    printable("description", text, 0, 2000)
}

pub(super) fn tags(tags: &[String]) -> Result<(), FieldError> {
    if tags.len() > MAX_TAGS {
        return Err(invalid("tags", format!("at most {MAX_TAGS} tags")));
    }
    for (i, tag) in tags.iter().enumerate() {
        printable(&format!("tags[{i}]"), tag, 1, 32)?;
    }
    Ok(())
}

/// 0 or at least [`MIN_PRICE`]; a given `pricingMode` must be the one the price and the
/// metering imply; a metered price has a unit, a minimum no larger than its maximum
/// (`priceUsd`) and a unit price within it.
pub(super) fn price(
    price: Usd,
    mode: Option<PricingMode>,
    metering: Option<&Metering>,
) -> Result<(), FieldError> {
    if !price.is_zero() && price < MIN_PRICE {
        return Err(invalid("priceUsd", "priceUsd must be 0 or at least 0.001"));
    }
    if mode == Some(PricingMode::MeteredSuccessReceipt) && metering.is_none() {
        return Err(invalid(
            "metering",
            "metered_success_receipt needs metering: {\"unit\": \"what a call counts\"}",
        ));
    }
    if let Some(metering) = metering {
        if price.is_zero() {
            return Err(invalid(
                "priceUsd",
                "a metered endpoint's priceUsd is the most one call can cost: at least 0.001",
            ));
        }
        printable("metering.unit", &metering.unit, 1, 64)?;
        if metering.minimum_usd > price {
            return Err(invalid(
                "metering.minimumUsd",
                format!(
                    "the minimum charge {} is above the most a call can cost (priceUsd {price})",
                    metering.minimum_usd
                ),
            ));
        }
        if metering
            .unit_price_usd
            .is_some_and(|unit| unit.is_zero() || unit > price)
        {
            return Err(invalid(
                "metering.unitPriceUsd",
                format!("metering.unitPriceUsd must be above 0 and at most priceUsd {price}"),
            ));
        }
    }
    let implied = if price.is_zero() {
        PricingMode::FreePublicUtility
    } else if metering.is_some() {
        PricingMode::MeteredSuccessReceipt
    } else {
        PricingMode::FixedPriceSuccessReceipt
    };
    if mode.is_some_and(|m| m != implied) {
        return Err(invalid(
            "pricingMode",
            format!(
                "pricingMode must be {} for priceUsd {price}",
                implied.as_str()
            ),
        ));
    }
    Ok(())
}

pub(super) fn env(env: &BTreeMap<String, String>) -> Result<(), FieldError> {
    if env.len() > MAX_ENV {
        return Err(invalid("env", format!("at most {MAX_ENV} env values")));
    }
    for (name, value) in env {
        if !is_env_name(name) {
            return Err(invalid(
                &format!("env.{name}"),
                "env names are letters, digits and underscores, not starting with a digit",
            ));
        }
        if value.len() > MAX_ENV_VALUE_BYTES {
            return Err(invalid(
                &format!("env.{name}"),
                format!("env values hold at most {MAX_ENV_VALUE_BYTES} bytes"),
            ));
        }
    }
    Ok(())
}

/// The handler's own field is present (and only that one): `source` for JS, `response` for
/// `static_json`, neither for the other built-ins.
pub(super) fn handler_fields(
    handler: HandlerType,
    source: Option<&str>,
    response: Option<&Value>,
) -> Result<(), FieldError> {
    match handler {
        HandlerType::JsRequestResponse => match source {
            None => return Err(invalid("source", "js_request_response needs source")),
            Some(s) if s.trim().is_empty() || s.len() > MAX_SOURCE_BYTES => {
                return Err(invalid(
                    "source",
                    format!("source must be 1 to {MAX_SOURCE_BYTES} bytes"),
                ))
            }
            Some(_) => {}
        },
        HandlerType::StaticJson if response.is_none() => {
            return Err(invalid("response", "static_json needs response"))
        }
        _ => {}
    }
    if source.is_some() && handler != HandlerType::JsRequestResponse {
        return Err(invalid("source", "source is only for js_request_response"));
    }
    if response.is_some() && handler != HandlerType::StaticJson {
        return Err(invalid("response", "response is only for static_json"));
    }
    Ok(())
}

/// A `sourceLanguage` is given only with a `source` (in the body or, for PATCH, stored).
pub(super) fn source_language(source: Option<&str>) -> Result<(), FieldError> {
    match source {
        Some(_) => Ok(()),
        None => Err(invalid(
            "sourceLanguage",
            "sourceLanguage is the language of `source`, which this endpoint does not have",
        )),
    }
}

pub(super) fn limits(limits: &RuntimeLimits) -> Result<(), FieldError> {
    if !limits.is_valid() {
        let (m, t) = (RuntimeLimits::MEMORY_MB, RuntimeLimits::TIMEOUT_MS);
        return Err(invalid(
            "limits",
            format!(
                "memoryMb must be {} to {} and timeoutMs {} to {}",
                m.start(),
                m.end(),
                t.start(),
                t.end()
            ),
        ));
    }
    Ok(())
}

/// `limits.memoryMb` within `largest` bytes, the largest heap the sandbox can give one
/// isolate of the endpoint on this server ([`sandbox::Isolation::largest_heap`]): an endpoint
/// limited to more would find no room anywhere, and every call of it would be refused as
/// overloaded.
pub(super) fn heap_fits(
    limits: &RuntimeLimits,
    largest: usize,
    builder: bool,
) -> Result<(), FieldError> {
    let largest_mb = largest / (1024 * 1024);
    if u64::from(limits.memory_mb) <= largest_mb as u64 {
        return Ok(());
    }
    let whose = if builder {
        "a builder's endpoint (its builder's heap cap, and the quarantine worker's budget \
         where a builder set apart runs)"
    } else {
        "an endpoint (a sandbox worker's share of the memory budget)"
    };
    Err(invalid(
        "limits",
        format!("memoryMb is at most {largest_mb} on this server for {whose}"),
    ))
}

/// Granted capabilities must have been requested.
pub(super) fn granted_within(
    granted: &Capabilities,
    requested: &Capabilities,
) -> Result<(), FieldError> {
    let pairs = [
        ("kv", granted.kv, requested.kv),
        ("files", granted.files, requested.files),
        (
            "httpGetJson",
            granted.http_get_json,
            requested.http_get_json,
        ),
        ("fetch", granted.fetch, requested.fetch),
        ("logs", granted.logs, requested.logs),
    ];
    match pairs.iter().find(|(_, g, r)| *g && !*r) {
        Some((name, _, _)) => Err(invalid(
            "grantedCapabilities",
            format!("{name} was not requested by the owner"),
        )),
        None => Ok(()),
    }
}

/// What stays granted when the requested set shrinks.
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn slugs() {
        for ok in ["abc", "my-tool-2", &"a".repeat(64)] {
            assert!(slug(ok).is_ok(), "{ok}");
        }
        for bad in [
            "ab",
            "ABC",
            "a_b",
            "-ab",
            "ab-",
            "a b",
            &"a".repeat(65),
            "émoji",
            "create",
        ] {
            assert!(slug(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn prices() {
        assert!(price(Usd::ZERO, None, None).is_ok());
        assert!(price(MIN_PRICE, Some(PricingMode::FixedPriceSuccessReceipt), None).is_ok());
        assert!(price(Usd::from_units(999), None, None).is_err());
        assert_eq!(
            price(MIN_PRICE, Some(PricingMode::FreePublicUtility), None)
                .unwrap_err()
                .0,
            "pricingMode"
        );
        let metering = |minimum: u64, unit_price: Option<u64>| Metering {
            unit: "page".into(),
            minimum_usd: Usd::from_units(minimum),
            unit_price_usd: unit_price.map(Usd::from_units),
        };
        let most = Usd::from_units(5000);
        let metered = Some(PricingMode::MeteredSuccessReceipt);
        assert!(price(most, metered, Some(&metering(1000, Some(500)))).is_ok());
        assert!(price(most, None, Some(&metering(0, None))).is_ok());
        let field = |m: Option<PricingMode>, given: Option<&Metering>, at: Usd| {
            price(at, m, given).unwrap_err().0
        };
        assert_eq!(field(metered, None, most), "metering");
        // A maximum below the minimum.
        assert_eq!(
            field(metered, Some(&metering(5001, None)), most),
            "metering.minimumUsd"
        );
        assert_eq!(
            field(metered, Some(&metering(0, Some(0))), most),
            "metering.unitPriceUsd"
        );
        assert_eq!(field(None, Some(&metering(0, None)), Usd::ZERO), "priceUsd");
        assert_eq!(
            field(
                Some(PricingMode::FixedPriceSuccessReceipt),
                Some(&metering(0, None)),
                most
            ),
            "pricingMode"
        );
        let blank = Metering {
            unit: String::new(),
            ..metering(0, None)
        };
        assert_eq!(field(metered, Some(&blank), most), "metering.unit");
    }

    #[test]
    fn handler_field_rules() {
        assert!(handler_fields(
            HandlerType::JsRequestResponse,
            Some("export default () => 1"),
            None
        )
        .is_ok());
        assert!(handler_fields(HandlerType::JsRequestResponse, None, None).is_err());
        assert!(handler_fields(HandlerType::StaticJson, None, Some(&json!({}))).is_ok());
        assert!(handler_fields(HandlerType::StaticJson, Some("x"), Some(&json!({}))).is_err());
        assert!(handler_fields(HandlerType::ReceiptEcho, None, None).is_ok());
    }

    #[test]
    fn capabilities_and_limits() {
        let requested = Capabilities {
            kv: true,
            ..Default::default()
        };
        assert!(granted_within(&requested, &requested).is_ok());
        assert!(granted_within(
            &Capabilities {
                logs: true,
                ..Default::default()
            },
            &requested
        )
        .is_err());
        assert!(limits(&RuntimeLimits {
            memory_mb: 64,
            timeout_ms: 1000
        })
        .is_ok());
        assert!(limits(&RuntimeLimits {
            memory_mb: 0,
            timeout_ms: 1000
        })
        .is_err());
        assert!(env(&[("1X".to_string(), "v".to_string())].into()).is_err());
        assert!(tags(&["".to_string()]).is_err());
    }

    mod properties {
        //! Create and PATCH bodies as the routes read them (docs/fuzzing.md): any bytes are
        //! refused with the route's error classes or parse; a parsed create body that passes
        //! the field checks keeps the documented rules, and its price survives the JSON the
        //! catalog writes.

        use axum::http::StatusCode;
        use proptest::prelude::*;
        use serde_json::{json, Map, Value};

        use super::super::*;
        use crate::arbitrary;
        use crate::http::extract::{parse_fields, parse_json};

        const WORDS: &[&str] = &[
            "slug",
            "title",
            "description",
            "priceUsd",
            "pricingMode",
            "handlerType",
            "source",
            "response",
            "inputSchema",
            "outputSchema",
            "tags",
            "capabilities",
            "env",
            "files",
            "safetyAttestation",
            "limits",
            "allowedHosts",
            "status",
            "grantedCapabilities",
            "static_json",
            "js_request_response",
            "receipt_echo",
            "free_public_utility",
            "fixed_price_success_receipt",
            "active",
            "paused",
            "memoryMb",
            "timeoutMs",
            "kv",
            "httpGetJson",
            "fetch",
            "logs",
            "accepted",
            "my-tool",
            "*.example.com",
            "API_KEY",
        ];

        /// A body: each field present or not, usually of a plausible type, sometimes anything.
        fn body() -> BoxedStrategy<Value> {
            let any_json = arbitrary::json(WORDS);
            let price = prop_oneof![
                Just(json!(0)),
                Just(json!(0.001)),
                (0u64..10_000_000).prop_map(|n| json!(n as f64 / 1e6)),
                any::<f64>().prop_map(|f| json!(f)),
                any::<u64>().prop_map(|n| json!(n)),
            ];
            let plausible = prop_oneof![
                ("slug", "[a-z0-9-]{0,70}".prop_map(Value::from).boxed()),
                ("title", any::<String>().prop_map(Value::from).boxed()),
                ("priceUsd", price.boxed()),
                (
                    "handlerType",
                    proptest::sample::select(
                        &["static_json", "js_request_response", "receipt_echo"][..]
                    )
                    .prop_map(Value::from)
                    .boxed()
                ),
                ("response", any_json.clone()),
                ("source", any::<String>().prop_map(Value::from).boxed()),
                (
                    "tags",
                    proptest::collection::vec(any::<String>(), 0..20)
                        .prop_map(|t| json!(t))
                        .boxed()
                ),
                (
                    "env",
                    arbitrary::object(WORDS, any::<String>().prop_map(Value::from))
                        .prop_map(Value::Object)
                        .boxed()
                ),
                (
                    "files",
                    arbitrary::object(
                        &["a.txt", "../x", "./a//b", "dir/"],
                        any::<String>().prop_map(Value::from)
                    )
                    .prop_map(Value::Object)
                    .boxed()
                ),
                (
                    "limits",
                    (0u32..2000, 0u32..70_000)
                        .prop_map(|(m, t)| json!({"memoryMb": m, "timeoutMs": t}))
                        .boxed()
                ),
                (
                    "allowedHosts",
                    proptest::collection::vec("[a-z.*-]{0,12}", 0..4)
                        .prop_map(|h| json!(h))
                        .boxed()
                ),
                (
                    "safetyAttestation",
                    any::<bool>().prop_map(|a| json!({"accepted": a})).boxed()
                ),
            ];
            let field = prop_oneof![
                4 => plausible,
                1 => (proptest::sample::select(WORDS).prop_map(String::from), any_json.clone()),
            ];
            prop_oneof![
                6 => proptest::collection::vec(field, 0..12).prop_map(|fields| {
                    let object: Map<String, Value> =
                        fields.into_iter().collect();
                    Value::Object(object)
                }),
                1 => any_json,
            ]
            .boxed()
        }

        fn check_accepted(request: &CreateRequest) -> Result<(), TestCaseError> {
            let slug_rule = regex::Regex::new("^[a-z0-9][a-z0-9-]{1,62}[a-z0-9]$").unwrap();
            prop_assert!(slug_rule.is_match(&request.slug), "{}", request.slug);
            prop_assert!((1..=120).contains(&request.title.chars().count()));
            prop_assert!(request.tags.len() <= MAX_TAGS);
            let price = request.price_usd;
            prop_assert!(price.is_zero() || price >= MIN_PRICE);
            // The price as the catalog stores and shows it reads back as the same amount.
            let written = serde_json::to_string(&price).unwrap();
            prop_assert_eq!(
                serde_json::from_str::<Usd>(&written).unwrap(),
                price,
                "{}",
                written
            );
            match request.handler_type().expect("checked by create_fields") {
                HandlerType::JsRequestResponse => prop_assert!(request.source.is_some()),
                HandlerType::StaticJson => prop_assert!(request.response.is_some()),
                _ => prop_assert!(request.source.is_none() && request.response.is_none()),
            }
            Ok(())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            #[test]
            fn create_bodies_parse_and_check_without_surprises(body in body()) {
                let bytes = serde_json::to_vec(&body).unwrap();
                // Field by field, the body parses or is refused exactly as in one pass.
                let fields = parse_fields::<CreateRequest>(body.clone());
                prop_assert_eq!(fields.is_ok(), parse_json::<CreateRequest>(&bytes).is_ok());
                if let Err(e) = fields {
                    prop_assert_eq!(e.status, StatusCode::UNPROCESSABLE_ENTITY);
                    prop_assert!(!e.details.unwrap()["errors"].as_array().unwrap().is_empty());
                }
                match parse_json::<CreateRequest>(&bytes) {
                    Ok(request) => {
                        if create_fields(&request, usize::MAX).is_ok() {
                            check_accepted(&request)?;
                        }
                    }
                    Err(e) => prop_assert_eq!(e.status, StatusCode::UNPROCESSABLE_ENTITY),
                }
                match parse_json::<PatchRequest>(&bytes) {
                    Ok(patch) => {
                        if let Some(hosts) = &patch.allowed_hosts {
                            let _ = allowed_hosts(hosts);
                        }
                        if let Some(tags) = &patch.tags {
                            let _ = super::super::tags(tags);
                        }
                    }
                    Err(e) => prop_assert_eq!(e.status, StatusCode::UNPROCESSABLE_ENTITY),
                }
            }

            #[test]
            fn any_bytes_are_a_body_or_a_client_error(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
                for status in [
                    parse_json::<CreateRequest>(&bytes).err().map(|e| e.status),
                    parse_json::<PatchRequest>(&bytes).err().map(|e| e.status),
                ] {
                    prop_assert!(matches!(
                        status,
                        None | Some(StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY)
                    ));
                }
            }
        }
    }
}
