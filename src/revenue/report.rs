//! `GET /ai/builders/revenue`: gross, platform fee, net and count, by endpoint and by day.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{split, Sale};
use crate::money::Usd;

/// Sums of a set of sales; `gross = fee + net` exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub gross_usd: Usd,
    pub fee_usd: Usd,
    pub net_usd: Usd,
    pub count: u64,
}

impl Totals {
    fn add(&mut self, sale: &Sale, fee_bps: u64) {
        let (fee, net) = split(sale.amount, fee_bps);
        // Sums of u64 micro-dollars of a builder's sales stay far below u64::MAX.
        self.gross_usd = self
            .gross_usd
            .checked_add(sale.amount)
            .unwrap_or(self.gross_usd);
        self.fee_usd = self.fee_usd.checked_add(fee).unwrap_or(self.fee_usd);
        self.net_usd = self.net_usd.checked_add(net).unwrap_or(self.net_usd);
        self.count += 1;
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Revenue {
    #[serde(flatten)]
    pub totals: Totals,
    /// Units as integers, for exact reconciliation.
    pub gross_units: String,
    pub fee_units: String,
    pub net_units: String,
    pub fee_bps: u64,
    pub by_endpoint: BTreeMap<String, Totals>,
    /// By UTC day, `YYYY-MM-DD`.
    pub by_day: BTreeMap<String, Totals>,
}

pub fn report(sales: &[Sale], fee_bps: u64) -> Revenue {
    let mut totals = Totals::default();
    let mut by_endpoint: BTreeMap<String, Totals> = BTreeMap::new();
    let mut by_day: BTreeMap<String, Totals> = BTreeMap::new();
    for sale in sales {
        totals.add(sale, fee_bps);
        let slug = sale.endpoint_slug.clone().unwrap_or_else(|| "-".into());
        by_endpoint.entry(slug).or_default().add(sale, fee_bps);
        let day = sale.at.date().to_string();
        by_day.entry(day).or_default().add(sale, fee_bps);
    }
    Revenue {
        gross_units: totals.gross_usd.units().to_string(),
        fee_units: totals.fee_usd.units().to_string(),
        net_units: totals.net_usd.units().to_string(),
        totals,
        fee_bps,
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
    fn reconciles_by_endpoint_and_day() {
        let sale = |slug: &str, units, at| Sale {
            receipt_id: format!("rcpt_{units}"),
            endpoint_slug: Some(slug.into()),
            seller: Some("b".into()),
            amount: Usd::from_units(units),
            method: PaymentMethod::X402,
            at,
        };
        let sales = [
            sale("a", 1000, datetime!(2026-11-01 10:00 UTC)),
            sale("a", 1001, datetime!(2026-11-02 10:00 UTC)),
            sale("b", 333, datetime!(2026-11-02 11:00 UTC)),
        ];
        let r = report(&sales, 1000);
        assert_eq!(r.totals.gross_usd.units(), 2334);
        assert_eq!(r.totals.fee_usd.units(), 100 + 100 + 33);
        assert_eq!(r.totals.fee_usd.units() + r.totals.net_usd.units(), 2334);
        assert_eq!(r.by_endpoint["a"].count, 2);
        assert_eq!(r.by_day["2026-11-02"].gross_usd.units(), 1334);
        let day_net: u64 = r.by_day.values().map(|t| t.net_usd.units()).sum();
        assert_eq!(day_net, r.totals.net_usd.units());
    }
}
