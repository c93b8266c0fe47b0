//! `GET /ai/builders/revenue`: gross, platform fee, net and count, by endpoint and by day, each
//! with its collected and uncollected parts, and the whole by payment method.
//!
//! A report adds up [`Group`]s: sales alike in everything it tells apart, summed (by
//! PostgreSQL, or here one sale at a time, [`Group::of`]). Every figure is a sum of per-sale
//! integers, so at every level `gross = fee + net`, and `collected + uncollected` equals the
//! whole in each of gross, fee, net and count, as do the parts of `byPaymentMethod`.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};
use time::{Date, UtcOffset};

use super::{split, Collection, Sale};
use crate::money::Usd;
use crate::receipts::PaymentMethod;
use crate::store::{SaleSum, StoreError};

/// The Julian day of 1970-01-01, from which the store counts a sale's day.
const UNIX_EPOCH_JULIAN_DAY: i64 = 2_440_588;

/// Sales alike in everything a report tells apart (who sold them, where, on which UTC day, how
/// they were paid and where their money stands), summed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Sold by the platform itself (no seller): no fee is taken from these.
    pub platform: bool,
    pub endpoint_slug: Option<String>,
    pub day: Date,
    pub method: PaymentMethod,
    pub standing: Collection,
    /// What was charged, less what was refunded.
    pub gross: Usd,
    /// The platform's fee, computed per sale and rounded down.
    pub fee: Usd,
    pub count: u64,
}

impl Group {
    /// One sale, a group of its own: its fee at `fee_bps` unless the platform sold it.
    pub fn of(sale: &Sale, standing: Collection, fee_bps: u64) -> Group {
        let platform = sale.seller.is_none();
        let (fee, _) = split(sale.amount, if platform { 0 } else { fee_bps });
        Group {
            platform,
            endpoint_slug: sale.endpoint_slug.clone(),
            day: sale.at.to_offset(UtcOffset::UTC).date(),
            method: sale.method,
            standing,
            gross: sale.amount,
            fee,
            count: 1,
        }
    }

    /// A group as the store summed it.
    pub fn summed(sum: SaleSum) -> Result<Group, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("a sum of sales' {what}"));
        let named = |name: String| serde_json::Value::String(name);
        let day = i32::try_from(sum.day.saturating_add(UNIX_EPOCH_JULIAN_DAY))
            .ok()
            .and_then(|julian| Date::from_julian_day(julian).ok())
            .ok_or_else(|| corrupt("day"))?;
        Ok(Group {
            platform: sum.platform,
            endpoint_slug: sum.endpoint,
            day,
            method: serde_json::from_value(named(sum.method)).map_err(|_| corrupt("method"))?,
            standing: serde_json::from_value(named(sum.standing))
                .map_err(|_| corrupt("standing"))?,
            gross: Usd::from_units(sum.gross),
            fee: Usd::from_units(sum.fee.min(sum.gross)),
            count: sum.count,
        })
    }

    fn net(&self) -> Usd {
        self.gross.checked_sub(self.fee).unwrap_or(Usd::ZERO)
    }
}

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
    fn add(&mut self, group: &Group) {
        // Sums of u64 micro-dollars of a builder's sales stay far below u64::MAX.
        self.gross_units = self.gross_units.saturating_add(group.gross.units());
        self.fee_units = self.fee_units.saturating_add(group.fee.units());
        self.net_units = self.net_units.saturating_add(group.net().units());
        self.count = self.count.saturating_add(group.count);
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
    pub fn add(&mut self, group: &Group) {
        self.gross_usd = (self.gross_usd.checked_add(group.gross)).unwrap_or(self.gross_usd);
        self.fee_usd = self.fee_usd.checked_add(group.fee).unwrap_or(self.fee_usd);
        let net = group.net();
        self.net_usd = self.net_usd.checked_add(net).unwrap_or(self.net_usd);
        self.count = self.count.saturating_add(group.count);
        let part = if group.standing.is_collected() {
            &mut self.collected
        } else {
            &mut self.uncollected
        };
        part.add(group);
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
fn method_key(group: &Group) -> &'static str {
    match (group.method, group.standing) {
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

/// The report of `groups`, whose fees were taken at `fee_bps` (which it states).
pub fn report(groups: &[Group], fee_bps: u64) -> Revenue {
    let mut totals = Totals::default();
    let mut by_state = Uncollected::default();
    let mut by_method: BTreeMap<&'static str, Part> =
        ["x402OnChain", "x402Recorded", "developerCredit"]
            .into_iter()
            .map(|key| (key, Part::default()))
            .collect();
    let mut by_endpoint: BTreeMap<String, Totals> = BTreeMap::new();
    let mut by_day: BTreeMap<String, Totals> = BTreeMap::new();
    for group in groups {
        totals.add(group);
        match group.standing {
            Collection::Collected => {}
            Collection::Recorded => by_state.recorded.add(group),
            Collection::Pending => by_state.pending.add(group),
        }
        by_method.entry(method_key(group)).or_default().add(group);
        let slug = group.endpoint_slug.clone().unwrap_or_else(|| "-".into());
        by_endpoint.entry(slug).or_default().add(group);
        by_day.entry(group.day.to_string()).or_default().add(group);
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
        let groups = |sales: &[(Sale, Collection)]| -> Vec<Group> {
            (sales.iter())
                .map(|(sale, standing)| Group::of(sale, *standing, 1000))
                .collect()
        };
        let all = [sales.to_vec(), vec![(credit, Collection::Collected)]].concat();
        let by_method = report(&groups(&all), 1000);
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
        let r = report(&groups(&sales), 1000);
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
