//! Capability grants: an endpoint whose owner asked for capabilities the admin has not all
//! granted is `awaiting_grant`, neither listed nor callable, until the admin decides.
//!
//! What the admin decided last is kept on the endpoint ([`GrantDecision`]) so the owner sees
//! the answer and its note, and a refused request leaves the admin's queue; a new request (the
//! owner changes `capabilities` or the code) clears it.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

// The sandbox's own type, as `model` re-exports it (named here without `model`, which uses this module).
use sandbox::Capabilities;

/// The admin's last answer to an endpoint's capability request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantDecision {
    pub granted: bool,
    /// The capabilities requested when the admin decided.
    pub requested: Capabilities,
    pub note: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub decided_at: OffsetDateTime,
}

/// Where an endpoint's capability request stands, as its owner and the admin see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum GrantState {
    /// Every requested capability is granted (or none was requested).
    Granted,
    /// Some are not granted and the admin has not answered this request yet.
    Pending,
    /// The admin refused this request; the owner may change it (a new request) or delete.
    Refused,
}

/// The requested capabilities that are not granted.
pub fn missing(requested: &Capabilities, granted: &Capabilities) -> Capabilities {
    Capabilities {
        kv: requested.kv && !granted.kv,
        files: requested.files && !granted.files,
        http_get_json: requested.http_get_json && !granted.http_get_json,
        fetch: requested.fetch && !granted.fetch,
        logs: requested.logs && !granted.logs,
    }
}

/// The capabilities on in both.
pub fn both(a: &Capabilities, b: &Capabilities) -> Capabilities {
    Capabilities {
        kv: a.kv && b.kv,
        files: a.files && b.files,
        http_get_json: a.http_get_json && b.http_get_json,
        fetch: a.fetch && b.fetch,
        logs: a.logs && b.logs,
    }
}

/// The capabilities on in either.
pub fn either(a: &Capabilities, b: &Capabilities) -> Capabilities {
    Capabilities {
        kv: a.kv || b.kv,
        files: a.files || b.files,
        http_get_json: a.http_get_json || b.http_get_json,
        fetch: a.fetch || b.fetch,
        logs: a.logs || b.logs,
    }
}

/// The names of the capabilities that are on, as the API spells them.
pub fn names(capabilities: &Capabilities) -> Vec<&'static str> {
    [
        ("kv", capabilities.kv),
        ("files", capabilities.files),
        ("httpGetJson", capabilities.http_get_json),
        ("fetch", capabilities.fetch),
        ("logs", capabilities.logs),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect()
}

/// The state of a request, from what is missing and the admin's last decision.
pub fn state(missing: &Capabilities, decision: Option<&GrantDecision>) -> GrantState {
    if *missing == Capabilities::default() {
        GrantState::Granted
    } else if decision.is_some_and(|d| !d.granted) {
        GrantState::Refused
    } else {
        GrantState::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_names_and_state() {
        let requested = Capabilities {
            kv: true,
            fetch: true,
            logs: true,
            ..Default::default()
        };
        let granted = Capabilities {
            kv: true,
            files: true,
            ..Default::default()
        };
        let gap = missing(&requested, &granted);
        assert_eq!(names(&gap), ["fetch", "logs"]);
        assert_eq!(state(&gap, None), GrantState::Pending);
        let refused = GrantDecision {
            granted: false,
            requested,
            note: None,
            decided_at: OffsetDateTime::UNIX_EPOCH,
        };
        assert_eq!(state(&gap, Some(&refused)), GrantState::Refused);
        let none = missing(&requested, &requested);
        assert!(names(&none).is_empty());
        assert_eq!(state(&none, Some(&refused)), GrantState::Granted);
    }
}
