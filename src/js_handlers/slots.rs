//! The sandbox slots calls run in, each with isolates of its own: an endpoint's (its slug), a
//! tried revision's (`slug#rN`), a draft run's (`#draft-<id>`). The host maps a slot back to the
//! endpoint whose data it may reach.

use crate::catalog::CompiledEndpoint;

/// Every draft scratch id starts with this: not an endpoint id (`ep_…`) nor a slug, so the
/// host tells a draft's ops from an endpoint's.
pub const DRAFT_SCRATCH_PREFIX: &str = "#draft-";

/// The slot of an endpoint: its slug, or for a trial revision `slug#rN`, a slug no endpoint
/// can have.
pub(super) fn slot(compiled: &CompiledEndpoint) -> String {
    match compiled.trial {
        Some(revision) => format!("{}#r{revision}", compiled.endpoint.slug),
        None => compiled.endpoint.slug.clone(),
    }
}

/// The endpoint slug a slot is of (the slot itself for the endpoint's own; empty for a draft).
pub(super) fn slot_base(slot: &str) -> &str {
    slot.split_once('#').map_or(slot, |(base, _)| base)
}

/// Whether a slot and id are a draft run's scratch.
pub(super) fn is_draft(slot: &str, id: &str) -> bool {
    id.starts_with(DRAFT_SCRATCH_PREFIX) && slot == id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_map_back_to_their_endpoint() {
        assert_eq!(slot_base("words"), "words");
        assert_eq!(slot_base("words#r3"), "words");
        assert_eq!(slot_base("#draft-1f"), "");
        assert!(is_draft("#draft-1f", "#draft-1f"));
        assert!(!is_draft("words", "ep_1"));
    }
}
