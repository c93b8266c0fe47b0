//! `GET /ai/builders/revenue`: gross, platform fee, net and count, by endpoint and by day, each
//! with its collected and uncollected parts, and the whole by payment method.
//!
//! Every figure is a sum of per-sale integers, so at every level `gross = fee + net`, and
//! `collected + uncollected` equals the whole in each of gross, fee, net and count, as do the
//! parts of `byPaymentMethod`.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use super::{split, Collection, Sale};
use crate::money::Usd;
use crate::receipts::PaymentMethod;

/// Atomic units as a decimal string (exact in JSON, whatever the client's number type).
fn units<S: Serializer>(value: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&value.to_string())
}

/// Sums of a set of sales in atomic units; `gross = fee + net` exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Part {
    #[serde(serialize_with = "units")]
    #[schema(schema_with = crate::money::units_schema)]
    pub gross_units: u64,
    #[serde(serialize_with = "units")]
    #[schema(schema_with = crate::money::units_schema)]
    pub fee_units: u64,
    #[serde(serialize_with = "units")]
    #[schema(schema_with = crate::money::units_schema)]
    pub net_units: u64,
    pub count: u64,
}

impl Part {
    fn add(&mut self, amount: Usd, fee: Usd, net: Usd) {
        // Sums of u64 micro-dollars of a builder's sales stay far below u64::MAX.
        self.gross_units = self.gross_units.saturating_add(amount.units());
        self.fee_units = self.fee_units.saturating_add(fee.units());
        self.net_units = self.net_units.saturating_add(net.units());
        self.count += 1;
    }
}

/// Sums of a set of sales; `gross = fee + net` exactly, and `collected + uncollected` is the
/// whole.
/// Not closed to other properties: [`Revenue`] adds its own beside them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    #[schema(value_type = f64, minimum = 0)]
    pub gross_usd: Usd,
    #[schema(value_type = f64, minimum = 0)]
    pub fee_usd: Usd,
    #[schema(value_type = f64, minimum = 0)]
    pub net_usd: Usd,
    pub count: u64,
    /// The part whose money was collected (see `revenue`): what payouts draw on.
    pub collected: Part,
    /// The part not collected: recorded only (never collectable) or still pending on-chain.
    pub uncollected: Part,
}

impl Totals {
    pub fn add(&mut self, sale: &Sale, standing: Collection, fee_bps: u64) {
        let (fee, net) = split(sale.amount, fee_bps);
        self.gross_usd = self
            .gross_usd
            .checked_add(sale.amount)
            .unwrap_or(self.gross_usd);
        self.fee_usd = self.fee_usd.checked_add(fee).unwrap_or(self.fee_usd);
        self.net_usd = self.net_usd.checked_add(net).unwrap_or(self.net_usd);
        self.count += 1;
        let part = if standing.is_collected() {
            &mut self.collected
        } else {
            &mut self.uncollected
        };
        part.add(sale.amount, fee, net);
    }
}

/// The uncollected part by why it is uncollected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Uncollected {
    /// Recorded in the ledger only (a deployment without on-chain settlement): never collected.
    pub recorded: Part,
    /// Broadcast on-chain, not yet seen mined: collected once mined, removed if it fails.
    pub pending: Part,
}

/// The key of a sale's part in `byPaymentMethod`: x402 transferred on-chain (mined, pending,
/// or settled by a remote facilitator), x402 recorded only (a test deployment: nothing
/// transferred), or the admin's developer credit (so calls paid with credit, such as an
/// admin's own tests, are told apart from buyers' money).
fn method_key(sale: &Sale, standing: Collection) -> &'static str {
    match (sale.method, standing) {
        (PaymentMethod::X402, Collection::Recorded) => "x402Recorded",
        (PaymentMethod::X402, Collection::Collected | Collection::Pending) => "x402OnChain",
        (PaymentMethod::DeveloperCredit, _) => "developerCredit",
        // No sale is written for a free call; counted apart should one ever be.
        (PaymentMethod::Free, _) => "free",
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Revenue {
    /// Everything sold, collected or not; `collected` and `uncollected` split it.
    #[serde(flatten)]
    pub totals: Totals,
    /// Units as integers, for exact reconciliation (all sales, collected or not).
    #[schema(schema_with = crate::money::units_schema)]
    pub gross_units: String,
    #[schema(schema_with = crate::money::units_schema)]
    pub fee_units: String,
    #[schema(schema_with = crate::money::units_schema)]
    pub net_units: String,
    pub fee_bps: u64,
    pub uncollected_by_state: Uncollected,
    /// The whole by payment method (`x402OnChain`, `x402Recorded`, `developerCredit`, each
    /// present, zero or not); the parts sum to the totals.
    #[schema(value_type = BTreeMap<String, Part>)]
    pub by_payment_method: BTreeMap<&'static str, Part>,
    pub by_endpoint: BTreeMap<String, Totals>,
    /// By UTC day, `YYYY-MM-DD`.
    pub by_day: BTreeMap<String, Totals>,
}

pub fn report(sales: &[(Sale, Collection)], fee_bps: u64) -> Revenue {
    let mut totals = Totals::default();
    let mut by_state = Uncollected::default();
    let mut by_method: BTreeMap<&'static str, Part> =
        ["x402OnChain", "x402Recorded", "developerCredit"]
            .into_iter()
            .map(|key| (key, Part::default()))
            .collect();
    let mut by_endpoint: BTreeMap<String, Totals> = BTreeMap::new();
    let mut by_day: BTreeMap<String, Totals> = BTreeMap::new();
    for (sale, standing) in sales {
        let standing = *standing;
        totals.add(sale, standing, fee_bps);
        let (fee, net) = split(sale.amount, fee_bps);
        match standing {
            Collection::Collected => {}
            Collection::Recorded => by_state.recorded.add(sale.amount, fee, net),
            Collection::Pending => by_state.pending.add(sale.amount, fee, net),
        }
        by_method
            .entry(method_key(sale, standing))
            .or_default()
            .add(sale.amount, fee, net);
        let slug = sale.endpoint_slug.clone().unwrap_or_else(|| "-".into());
        by_endpoint
            .entry(slug)
            .or_default()
            .add(sale, standing, fee_bps);
        let day = sale.at.date().to_string();
        by_day.entry(day).or_default().add(sale, standing, fee_bps);
    }
    Revenue {
        gross_units: totals.gross_usd.units().to_string(),
        fee_units: totals.fee_usd.units().to_string(),
        net_units: totals.net_usd.units().to_string(),
        totals,
        fee_bps,
        uncollected_by_state: by_state,
        by_payment_method: by_method,
        by_endpoint,
        by_day,
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;
    use crate::receipts::PaymentMethod;

    #[test]
    fn reconciles_by_endpoint_and_day_and_collection() {
        let sale = |slug: &str, units, at| Sale {
            receipt_id: format!("rcpt_{units}"),
            endpoint_slug: Some(slug.into()),
            seller: Some("b".into()),
            amount: Usd::from_units(units),
            method: PaymentMethod::X402,
            at,
            collection: None,
            credit_id: None,
            refunded: Usd::ZERO,
        };
        let sales = [
            (
                sale("a", 1000, datetime!(2026-11-01 10:00 UTC)),
                Collection::Collected,
            ),
            (
                sale("a", 1001, datetime!(2026-11-02 10:00 UTC)),
                Collection::Recorded,
            ),
            (
                sale("b", 333, datetime!(2026-11-02 11:00 UTC)),
                Collection::Pending,
            ),
        ];
        let mut credit = sale("b", 500, datetime!(2026-11-03 09:00 UTC));
        credit.method = PaymentMethod::DeveloperCredit;
        let by_method = report(
            &[sales.to_vec(), vec![(credit, Collection::Collected)]].concat(),
            1000,
        );
        let m = &by_method.by_payment_method;
        assert_eq!(
            (
                m["x402OnChain"].gross_units,
                m["x402Recorded"].gross_units,
                m["developerCredit"].gross_units
            ),
            (1333, 1001, 500)
        );
        let fields: [fn(&Part) -> u64; 4] = [
            |p| p.gross_units,
            |p| p.fee_units,
            |p| p.net_units,
            |p| p.count,
        ];
        for field in fields {
            let sum: u64 = m.values().map(field).sum();
            let whole = by_method.totals.collected;
            let whole = field(&whole) + field(&by_method.totals.uncollected);
            assert_eq!(sum, whole);
        }
        assert_eq!(m.len(), 3, "no other method appears");
        let r = report(&sales, 1000);
        assert_eq!(r.totals.gross_usd.units(), 2334);
        assert_eq!(r.totals.fee_usd.units(), 100 + 100 + 33);
        assert_eq!(r.totals.fee_usd.units() + r.totals.net_usd.units(), 2334);
        assert_eq!(r.by_endpoint["a"].count, 2);
        assert_eq!(r.by_day["2026-11-02"].gross_usd.units(), 1334);
        let day_net: u64 = r.by_day.values().map(|t| t.net_usd.units()).sum();
        assert_eq!(day_net, r.totals.net_usd.units());
        // Collected and uncollected split every figure exactly.
        let (c, u) = (r.totals.collected, r.totals.uncollected);
        assert_eq!(
            (c.gross_units, c.fee_units, c.net_units, c.count),
            (1000, 100, 900, 1)
        );
        assert_eq!(
            (u.gross_units, u.fee_units, u.net_units, u.count),
            (1334, 133, 1201, 2)
        );
        assert_eq!(c.net_units + u.net_units, r.totals.net_usd.units());
        let by_state = r.uncollected_by_state;
        assert_eq!(
            (by_state.recorded.gross_units, by_state.pending.gross_units),
            (1001, 333)
        );
        assert_eq!(r.by_day["2026-11-02"].collected.count, 0);
        assert_eq!(r.by_endpoint["a"].uncollected.net_units, 901);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["collected"]["netUnits"], "900");
        assert_eq!(json["uncollected"]["grossUnits"], "1334");
        assert_eq!(json["uncollectedByState"]["pending"]["count"], 1);
        assert_eq!(json["grossUnits"], "2334");
    }
}
