//! Exact money: amounts are integer micro-dollars, which are also USDC atomic units (6 decimals).
//!
//! JSON carries prices as numbers (`priceUsd: 0.001`, spec 2.1). Numbers are parsed through their
//! shortest decimal text and never through float arithmetic, so `0.001` is exactly 1000 units and
//! anything finer than one unit is refused rather than rounded.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Micro-units per dollar; USDC's 6 decimals make one unit one micro-dollar.
pub const UNITS_PER_USD: u64 = 1_000_000;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Usd(u64);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoneyError {
    #[error("amount must not be negative")]
    Negative,
    #[error("amount has more than 6 decimal places")]
    TooPrecise,
    #[error("amount is not a decimal number")]
    NotDecimal,
    #[error("amount is too large")]
    TooLarge,
}

impl Usd {
    pub const ZERO: Usd = Usd(0);

    pub const fn from_units(units: u64) -> Self {
        Usd(units)
    }

    pub const fn units(self) -> u64 {
        self.0
    }

    pub fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// Parses a plain decimal string such as `"0.001"` or `"12"`.
    pub fn parse_decimal(text: &str) -> Result<Self, MoneyError> {
        let text = text.trim();
        if text.starts_with('-') {
            return Err(MoneyError::Negative);
        }
        let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() && frac.is_empty() || !digits(whole) || !digits(frac) {
            return Err(MoneyError::NotDecimal);
        }
        let frac = frac.trim_end_matches('0');
        if frac.len() > 6 {
            return Err(MoneyError::TooPrecise);
        }
        let whole: u64 = if whole.is_empty() {
            0
        } else {
            whole.parse().map_err(|_| MoneyError::TooLarge)?
        };
        let frac_units: u64 = format!("{frac:0<6}")
            .parse()
            .map_err(|_| MoneyError::NotDecimal)?;
        whole
            .checked_mul(UNITS_PER_USD)
            .and_then(|w| w.checked_add(frac_units))
            .map(Usd)
            .ok_or(MoneyError::TooLarge)
    }

    /// Parses a JSON number through its shortest decimal representation.
    pub fn from_json_number(n: &serde_json::Number) -> Result<Self, MoneyError> {
        if let Some(u) = n.as_u64() {
            return u
                .checked_mul(UNITS_PER_USD)
                .map(Usd)
                .ok_or(MoneyError::TooLarge);
        }
        if n.as_i64().is_some() {
            return Err(MoneyError::Negative);
        }
        let f = n.as_f64().ok_or(MoneyError::NotDecimal)?;
        if !f.is_finite() {
            return Err(MoneyError::NotDecimal);
        }
        // `{}` on f64 prints the shortest text that round-trips, never exponent notation.
        Self::parse_decimal(&format!("{f}"))
    }

    /// The JSON number for this amount. Amounts below 2^53 units print exactly.
    pub fn to_json_number(self) -> serde_json::Number {
        if self.0.is_multiple_of(UNITS_PER_USD) {
            return serde_json::Number::from(self.0 / UNITS_PER_USD);
        }
        let text = self.to_string();
        // The decimal text has at most 6 fractional digits, so its nearest f64 prints back as the same text.
        serde_json::Number::from_f64(text.parse::<f64>().unwrap_or(0.0)).unwrap_or_else(|| 0.into())
    }

    pub fn checked_add(self, other: Usd) -> Option<Usd> {
        self.0.checked_add(other.0).map(Usd)
    }

    pub fn checked_sub(self, other: Usd) -> Option<Usd> {
        self.0.checked_sub(other.0).map(Usd)
    }
}

impl fmt::Display for Usd {
    /// Plain decimal dollars without trailing zeros: `0.001`, `12`, `1.5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let whole = self.0 / UNITS_PER_USD;
        let frac = self.0 % UNITS_PER_USD;
        if frac == 0 {
            write!(f, "{whole}")
        } else {
            let frac = format!("{frac:06}");
            write!(f, "{whole}.{}", frac.trim_end_matches('0'))
        }
    }
}

impl Serialize for Usd {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json_number().serialize(s)
    }
}

/// The OpenAPI schema of a [`Usd`] amount in a request: a JSON number from 0 with at most
/// 6 decimals that fits the atomic-unit counter.
pub fn usd_schema() -> utoipa::openapi::schema::Object {
    usd_schema_builder().minimum(Some(0)).build()
}

/// [`usd_schema`] or `null`, for an optional field that reads `null` as absent (the `nullable`
/// attribute does not reach a `schema_with` schema).
pub fn optional_usd_schema() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{SchemaType, Type};
    usd_schema_builder()
        .schema_type(SchemaType::from_iter([Type::Number, Type::Null]))
        .minimum(Some(0))
        .build()
}

/// [`usd_schema`] above zero (a credit grant, a conversion amount).
pub fn positive_usd_schema() -> utoipa::openapi::schema::Object {
    usd_schema_builder().exclusive_minimum(Some(0)).build()
}

/// The OpenAPI schema of integer atomic units written as a decimal string (exact whatever the
/// client's number type), as answers carry amounts: `"1000"` is 0.001 USDC.
pub fn units_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .pattern(Some("^(0|[1-9][0-9]*)$"))
        .build()
}

fn usd_schema_builder() -> utoipa::openapi::schema::ObjectBuilder {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Number)
        .multiple_of(Some(1.0 / UNITS_PER_USD as f64))
        .maximum(Some(u64::MAX as f64 / UNITS_PER_USD as f64))
}

impl<'de> Deserialize<'de> for Usd {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = serde_json::Number::deserialize(d)?;
        Usd::from_json_number(&n).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exactly() {
        assert_eq!(Usd::parse_decimal("0.001").unwrap().units(), 1000);
        assert_eq!(Usd::parse_decimal("12").unwrap().units(), 12_000_000);
        assert_eq!(Usd::parse_decimal("1.500000").unwrap().units(), 1_500_000);
        assert_eq!(Usd::parse_decimal(".5").unwrap().units(), 500_000);
        assert_eq!(Usd::parse_decimal("0.0000001"), Err(MoneyError::TooPrecise));
        assert_eq!(Usd::parse_decimal("-1"), Err(MoneyError::Negative));
        assert_eq!(Usd::parse_decimal("1e3"), Err(MoneyError::NotDecimal));
        assert_eq!(Usd::parse_decimal("."), Err(MoneyError::NotDecimal));
    }

    #[test]
    fn json_round_trip_is_exact() {
        for text in [
            "0.001",
            "0.1",
            "0.3",
            "19.99",
            "0.000001",
            "5",
            "1234567.123456",
        ] {
            let n: serde_json::Number = serde_json::from_str(text).unwrap();
            let usd = Usd::from_json_number(&n).unwrap();
            assert_eq!(usd.to_string(), text);
            // serde_json may write small numbers in exponent form (1e-6); the value is the same.
            let written = serde_json::to_string(&usd).unwrap();
            assert_eq!(
                serde_json::from_str::<Usd>(&written).unwrap(),
                usd,
                "{written}"
            );
        }
        let n: serde_json::Number = serde_json::from_str("0.0000001").unwrap();
        assert!(Usd::from_json_number(&n).is_err());
    }

    #[test]
    fn sums_reconcile() {
        let tenth = Usd::parse_decimal("0.1").unwrap();
        let mut total = Usd::ZERO;
        for _ in 0..10 {
            total = total.checked_add(tenth).unwrap();
        }
        assert_eq!(total, Usd::parse_decimal("1").unwrap());
    }

    mod properties {
        //! Prices from untrusted bodies (docs/fuzzing.md): any JSON number or text is refused
        //! or read exactly, and what is read writes back as the same amount.

        use proptest::prelude::*;

        use super::super::*;

        fn number() -> impl Strategy<Value = serde_json::Number> {
            prop_oneof![
                any::<u64>().prop_map(serde_json::Number::from),
                any::<i64>().prop_map(serde_json::Number::from),
                any::<f64>().prop_filter_map("finite", serde_json::Number::from_f64),
                (0u64..1 << 60, 0u32..8).prop_filter_map("finite", |(n, shift)| {
                    serde_json::Number::from_f64(n as f64 / 10f64.powi(shift as i32))
                }),
            ]
        }

        proptest! {
            #[test]
            fn json_numbers_round_trip(n in number()) {
                let Ok(usd) = Usd::from_json_number(&n) else { return Ok(()) };
                prop_assert_eq!(Usd::from_json_number(&usd.to_json_number()), Ok(usd), "{}", n);
                let written = serde_json::to_string(&usd).unwrap();
                prop_assert_eq!(serde_json::from_str::<Usd>(&written).unwrap(), usd, "{}", written);
                prop_assert_eq!(Usd::parse_decimal(&usd.to_string()), Ok(usd));
            }

            #[test]
            fn decimal_text_round_trips(text in "[ 0-9.+-]{0,30}|\\PC{0,20}") {
                if let Ok(usd) = Usd::parse_decimal(&text) {
                    prop_assert_eq!(Usd::parse_decimal(&usd.to_string()), Ok(usd), "{:?}", text);
                }
            }
        }
    }
}
