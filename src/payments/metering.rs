//! What a metered call is charged: the handler's report (`ctx.charge`, or a native handler's
//! units at the endpoint's unit price) kept between the endpoint's minimum and the most the
//! payer signed for (`priceUsd`, which a payment's maximum must equal).
//!
//! A call that reports nothing is charged the endpoint's minimum (0 unless its owner set
//! one); a report above the maximum is charged the maximum and its owner is told
//! ([`Bill::capped`]). The bill is what is settled, recorded as the sale and written on the
//! receipt, which also says the maximum and the units.

use crate::catalog::Metering;
use crate::money::Usd;
use crate::receipts::ReceiptMetering;
use sandbox::Usage;

/// What a metered call is charged, and what its receipt says of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Bill {
    pub charged: Usd,
    /// The most the call could cost (the signed maximum).
    pub most: Usd,
    pub units: f64,
    pub note: Option<String>,
    /// What the handler reported, priced; `None` when it reported nothing.
    pub reported: Option<Usd>,
    /// The handler reported more than the maximum: charged the maximum.
    pub capped: bool,
    /// The handler reported nothing: charged the minimum.
    pub unreported: bool,
}

impl Bill {
    /// The bill of a call of an endpoint metered by `metering`, at most `most`, whose handler
    /// reported `usage`.
    pub fn of(metering: &Metering, most: Usd, usage: Option<&Usage>) -> Bill {
        let reported = usage.and_then(|usage| match usage.amount_units {
            Some(units) => Some(Usd::from_units(units)),
            // Units only: priced by the endpoint's unit price, rounded up to an atomic unit.
            None => metering.unit_price_usd.map(|price| {
                let exact = usage.units * price.units() as f64;
                Usd::from_units(if exact >= u64::MAX as f64 {
                    u64::MAX
                } else {
                    exact.ceil() as u64
                })
            }),
        });
        let floor = metering.minimum_usd.min(most);
        let asked = reported.unwrap_or(floor);
        Bill {
            charged: asked.clamp(floor, most),
            most,
            units: usage.map_or(0.0, |usage| usage.units),
            note: usage
                .map(|usage| usage.note.clone())
                .filter(|note| !note.is_empty()),
            capped: asked > most,
            unreported: reported.is_none(),
            reported,
        }
    }

    /// The receipt's account of it.
    pub fn receipt(&self, metering: &Metering) -> ReceiptMetering {
        ReceiptMetering {
            max_usd: self.most.to_string(),
            max_amount: self.most.units().to_string(),
            unit: metering.unit.clone(),
            units: units_text(self.units),
            note: self.note.clone(),
            capped: self.capped,
        }
    }
}

/// Units as a decimal string, the same text in every release (a receipt is signed over it):
/// Rust's shortest round-trip form, which is JavaScript's `String(n)` for numbers below 1e21.
fn units_text(units: f64) -> String {
    format!("{units}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metering(minimum: u64, unit_price: Option<u64>) -> Metering {
        Metering {
            unit: "page".into(),
            minimum_usd: Usd::from_units(minimum),
            unit_price_usd: unit_price.map(Usd::from_units),
        }
    }

    fn usage(amount: Option<u64>, units: f64) -> Usage {
        Usage {
            amount_units: amount,
            units,
            note: "n".into(),
        }
    }

    #[test]
    fn a_report_is_kept_between_the_minimum_and_the_maximum() {
        let most = Usd::from_units(5000);
        let bill = Bill::of(&metering(100, None), most, Some(&usage(Some(1234), 3.0)));
        assert_eq!(bill.charged, Usd::from_units(1234));
        assert!(!bill.capped && !bill.unreported);
        assert_eq!(bill.receipt(&metering(100, None)).units, "3");
        // Above the maximum: the maximum, and said.
        let bill = Bill::of(&metering(100, None), most, Some(&usage(Some(9000), 1.0)));
        assert_eq!(bill.charged, most);
        assert!(bill.capped);
        // Below the minimum: the minimum.
        let bill = Bill::of(&metering(100, None), most, Some(&usage(Some(5), 1.0)));
        assert_eq!(bill.charged, Usd::from_units(100));
        // Nothing reported: the minimum (0 by default).
        let bill = Bill::of(&metering(0, None), most, None);
        assert_eq!(bill.charged, Usd::ZERO);
        assert!(bill.unreported && !bill.capped);
        // Units at the unit price, rounded up; units without a unit price report nothing.
        let bill = Bill::of(&metering(0, Some(333)), most, Some(&usage(None, 2.5)));
        assert_eq!(bill.charged, Usd::from_units(833));
        let bill = Bill::of(&metering(0, None), most, Some(&usage(None, 2.5)));
        assert!(bill.unreported);
        assert_eq!(bill.charged, Usd::ZERO);
        let bill = Bill::of(&metering(0, Some(1)), most, Some(&usage(None, 1e300)));
        assert_eq!(bill.charged, most);
        assert!(bill.capped);
    }

    #[test]
    fn units_read_as_javascript_writes_them() {
        for (units, text) in [
            (0.0, "0"),
            (3.0, "3"),
            (2.5, "2.5"),
            (0.1 + 0.2, "0.30000000000000004"),
        ] {
            assert_eq!(units_text(units), text);
        }
    }
}
