//! Each endpoint's offer, built once per endpoint generation and shared by its calls.
//!
//! A paid endpoint's offer declares `bazaar`, which parses the endpoint's schemas from their
//! stored text and serializes the declaration to check its size: built per call, that and
//! dropping it again took ~8% of a paid call's CPU (bench/RESULTS.md). What an offer is made
//! of is fixed for the process's life (networks, receiving address, base URL) except the
//! endpoint itself, whose record names its `generation` (bumped by every change: price,
//! schemas, title, description, example) and its `id` (new when a deleted endpoint's slug is
//! taken again). So an offer is kept under the endpoint's slug and transport with the id and
//! generation it was built from, and rebuilt by the first call that finds either different.
//! One more thing can change what is offered: what a hosted facilitator says it settles (its
//! `/supported`, read again on a timer: `upto` appearing or going). Its epoch, bumped at each
//! such change, is kept with the offers too.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::bazaar::Transport;
use crate::catalog::Endpoint;
use crate::money::Usd;
use crate::x402::requirements::Offer;

/// How many endpoints keep their offers. Beyond it the cache starts again empty: memory stays
/// bounded however much of a large catalog is called or listed (the discovery list builds every
/// payable endpoint's offer), and an endpoint called often is built again once per refill.
const CAPACITY: usize = 4096;

/// The offers of the endpoints called (or listed) so far, by slug.
#[derive(Default)]
pub struct Offers {
    by_slug: RwLock<HashMap<String, Built>>,
}

/// One endpoint's offers, per transport, and the endpoint record they were built from.
struct Built {
    id: String,
    generation: u64,
    /// The facilitator's epoch ([`crate::x402::Facilitator::epoch`]) when it was built.
    epoch: u64,
    /// Covered by the generation; compared too, so a record changed in the store by hand (or
    /// a path that forgot to bump the generation) can never keep charging an old price.
    price: Usd,
    by_transport: [Option<Arc<Offer>>; 2],
}

impl Built {
    fn empty(endpoint: &Endpoint, epoch: u64) -> Self {
        Built {
            id: endpoint.id.clone(),
            generation: endpoint.generation,
            epoch,
            price: endpoint.price_usd,
            by_transport: [None, None],
        }
    }

    fn is_for(&self, endpoint: &Endpoint, epoch: u64) -> bool {
        self.generation == endpoint.generation
            && self.epoch == epoch
            && self.price == endpoint.price_usd
            && self.id == endpoint.id
    }
}

fn slot(transport: Transport) -> usize {
    match transport {
        Transport::Http => 0,
        Transport::Mcp => 1,
    }
}

impl Offers {
    /// `endpoint`'s offer over `transport`: the one built for its current generation and the
    /// facilitator's `epoch`, or what `build` makes of it now (kept for the calls after).
    pub fn get(
        &self,
        endpoint: &Endpoint,
        transport: Transport,
        epoch: u64,
        build: impl FnOnce() -> Offer,
    ) -> Arc<Offer> {
        if let Some(offer) = self
            .read()
            .get(&endpoint.slug)
            .filter(|built| built.is_for(endpoint, epoch))
            .and_then(|built| built.by_transport[slot(transport)].clone())
        {
            return offer;
        }
        // Built outside the lock; two calls that both missed build the same offer, and
        // either may stay.
        let offer = Arc::new(build());
        let mut by_slug = self.write();
        if by_slug.len() >= CAPACITY && !by_slug.contains_key(&endpoint.slug) {
            by_slug.clear();
        }
        let built = by_slug
            .entry(endpoint.slug.clone())
            .or_insert_with(|| Built::empty(endpoint, epoch));
        if !built.is_for(endpoint, epoch) {
            *built = Built::empty(endpoint, epoch);
        }
        built.by_transport[slot(transport)] = Some(offer.clone());
        offer
    }

    fn read(&self) -> RwLockReadGuard<'_, HashMap<String, Built>> {
        self.by_slug.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, HashMap<String, Built>> {
        self.by_slug.write().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::catalog::JsonText;
    use crate::config::Config;
    use crate::urls::Urls;

    fn endpoint(slug: &str) -> Endpoint {
        serde_json::from_value(json!({
            "id": "ep_1", "slug": slug, "title": "T", "description": "Words.", "status": "active",
            "priceUsd": 0.001, "handlerType": "static_json",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "outputSchema": {}, "owner": {"kind": "admin"}, "revision": 1,
            "createdAt": "2026-01-01T00:00:00Z", "updatedAt": "2026-01-01T00:00:00Z",
        }))
        .unwrap()
    }

    /// The offer the gate is given for `endpoint`, through `offers`.
    fn offer(offers: &Offers, endpoint: &Endpoint, transport: Transport) -> Arc<Offer> {
        let config = Config::new("/tmp/unused").payment;
        let pay_to = "0x0000000000000000000000000000000000000001";
        let urls = Urls::new("http://x");
        let facilitator = crate::x402::facilitator::local::LocalFacilitator::new(Vec::new(), None);
        let seller = crate::payments::Seller {
            config: &config,
            pay_to,
            urls: &urls,
            facilitator: &facilitator,
        };
        crate::payments::charge_for(offers, &seller, endpoint, transport).offer
    }

    /// What a 402 would carry of the offer: requirements and declarations, in both versions.
    fn shown(offer: &Offer) -> serde_json::Value {
        json!({"v2": offer.v2(""), "v1": offer.v1_accepts()})
    }

    #[test]
    fn an_offer_is_shared_while_its_endpoint_stays_the_same() {
        let offers = Offers::default();
        let endpoint = endpoint("words");
        let first = offer(&offers, &endpoint, Transport::Http);
        assert!(Arc::ptr_eq(
            &first,
            &offer(&offers, &endpoint, Transport::Http)
        ));
        // Each transport declares its own way to call; neither replaces the other.
        let mcp = offer(&offers, &endpoint, Transport::Mcp);
        assert_eq!(mcp.extensions["bazaar"]["info"]["input"]["type"], "mcp");
        assert_eq!(first.extensions["bazaar"]["info"]["input"]["type"], "http");
        assert!(Arc::ptr_eq(
            &first,
            &offer(&offers, &endpoint, Transport::Http)
        ));
        assert!(Arc::ptr_eq(
            &mcp,
            &offer(&offers, &endpoint, Transport::Mcp)
        ));
        // Another endpoint's offer is its own.
        let other = offer(&offers, &self::endpoint("other"), Transport::Http);
        assert_eq!(other.resource.url, "http://x/tools/other");
        assert_eq!(first.resource.url, "http://x/tools/words");
    }

    #[test]
    fn a_changed_endpoint_gets_the_offer_of_what_it_is_now() {
        let offers = Offers::default();
        let before = endpoint("words");
        let old = offer(&offers, &before, Transport::Http);
        // Every change bumps the generation: price, schemas, description each show at once.
        let mut after = before.clone();
        after.generation += 1;
        after.price_usd = Usd::from_units(2500);
        after.description = "Counts words.".into();
        after.input_schema = JsonText::from(json!({"type": "object", "required": ["text"]}));
        let new = offer(&offers, &after, Transport::Http);
        assert_eq!(
            shown(&new),
            shown(&offer(&Offers::default(), &after, Transport::Http))
        );
        assert_eq!(new.accepts[0].1.amount, "2500");
        assert_eq!(new.resource.description, "Counts words.");
        assert_eq!(
            new.extensions["bazaar"]["schema"]["properties"]["input"]["properties"]["body"],
            json!({"type": "object", "required": ["text"]})
        );
        assert_ne!(shown(&new), shown(&old));
        // A call still holding the old record gets the old offer, not the new one's.
        assert_eq!(
            shown(&offer(&offers, &before, Transport::Http)),
            shown(&old)
        );
        // A deleted endpoint's slug taken again starts at its own generation 1: its id differs.
        let mut recreated = after.clone();
        recreated.id = "ep_2".into();
        recreated.generation = before.generation;
        recreated.price_usd = Usd::from_units(7);
        let fresh = offer(&offers, &recreated, Transport::Http);
        assert_eq!(fresh.accepts[0].1.amount, "7");
        // A price changed without a new generation (by hand in the store) is not missed either.
        let mut repriced = before.clone();
        repriced.price_usd = Usd::from_units(9);
        assert_eq!(
            offer(&offers, &repriced, Transport::Http).accepts[0]
                .1
                .amount,
            "9"
        );
    }

    #[test]
    fn the_cache_stays_bounded_and_right_beyond_its_capacity() {
        let offers = Offers::default();
        for n in 0..CAPACITY + 10 {
            let endpoint = endpoint(&format!("e{n}"));
            let offer = offer(&offers, &endpoint, Transport::Http);
            assert_eq!(offer.resource.url, format!("http://x/tools/e{n}"));
        }
        assert!(offers.read().len() <= CAPACITY);
        let first = endpoint("e0");
        assert_eq!(
            offer(&offers, &first, Transport::Http).resource.url,
            "http://x/tools/e0"
        );
    }
}
