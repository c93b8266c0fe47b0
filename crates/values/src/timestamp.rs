//! Timestamps as the API writes them (ISO 8601 / RFC 3339 in UTC) and the `since` windows it
//! reads.

use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

use crate::error::{ApiError, ApiResult, ErrorCode};

pub fn rfc3339(at: OffsetDateTime) -> String {
    // Formatting a UTC OffsetDateTime as RFC 3339 only fails for years outside 0..=9999.
    at.format(&Rfc3339).unwrap_or_default()
}

pub fn now_rfc3339() -> String {
    rfc3339(OffsetDateTime::now_utc())
}

/// The `since` query parameter of the builder feeds (events, revenue): one parser and one error
/// for both, so a window that works on one works on the other. `None` takes `default`.
pub fn since_param(text: Option<&str>, default: &str) -> ApiResult<Duration> {
    let text = text.unwrap_or(default);
    parse_since(text).ok_or_else(|| {
        ApiError::bad_request(
            ErrorCode::InvalidSince,
            "since must be a positive whole number followed by s, m, h, d or w (e.g. 7d), at most ten years",
        )
    })
}

/// The instant a `since` window reaches back to from now.
pub fn since_cutoff(text: Option<&str>, default: &str) -> ApiResult<OffsetDateTime> {
    Ok(OffsetDateTime::now_utc() - since_param(text, default)?)
}

/// What [`parse_since`] accepts, for the OpenAPI document: a positive count with each unit up to
/// its most that stays within ten years. Leading zeros, also accepted, are left out (a pattern
/// allowing them could not bound the value).
pub const SINCE_PATTERN: &str =
    "^([1-9][0-9]{0,7}s|[1-9][0-9]{0,5}m|[1-9][0-9]{0,3}h|[1-9][0-9]{0,2}d|[1-9][0-9]?w)$";

pub fn since_schema() -> utoipa::openapi::schema::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .pattern(Some(SINCE_PATTERN))
        .build()
}

/// Parses `<n><unit>` with unit `s`, `m`, `h`, `d` or `w` (`30s`, `15m`, `7d`, `2w`); `n` ≥ 1,
/// at most ten years in all.
fn parse_since(text: &str) -> Option<Duration> {
    let unit = text.chars().last()?;
    let number = &text[..text.len() - unit.len_utf8()];
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) || number.len() > 9 {
        return None;
    }
    let n: i64 = number.parse().ok().filter(|n| *n >= 1)?;
    let seconds = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3_600,
        'd' => 86_400,
        'w' => 604_800,
        _ => return None,
    };
    let total = n.checked_mul(seconds).filter(|t| *t <= 10 * 366 * 86_400)?;
    Some(Duration::seconds(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_syntax() {
        assert_eq!(parse_since("7d"), Some(Duration::days(7)));
        assert_eq!(parse_since("30s"), Some(Duration::seconds(30)));
        assert_eq!(parse_since("15m"), Some(Duration::minutes(15)));
        assert_eq!(parse_since("2h"), Some(Duration::hours(2)));
        assert_eq!(parse_since("2w"), Some(Duration::weeks(2)));
        for bad in [
            "",
            "d",
            "7",
            "7y",
            "-1d",
            "0d",
            "1.5h",
            "7 d",
            "99999999999d",
            "7dd",
            "é",
        ] {
            assert_eq!(parse_since(bad), None, "{bad}");
        }
    }

    /// What the document's pattern allows parses: the largest count of each unit.
    #[test]
    fn since_pattern_is_within_the_parser() {
        let pattern = regex::Regex::new(SINCE_PATTERN).unwrap();
        for most in ["99999999s", "999999m", "9999h", "999d", "99w", "1s"] {
            assert!(pattern.is_match(most), "{most}");
            assert!(parse_since(most).is_some(), "{most}");
        }
        for outside in ["0d", "07d", "1000d", "7y", "d", ""] {
            assert!(!pattern.is_match(outside), "{outside}");
        }
    }

    #[test]
    fn since_param_defaults_and_refuses_with_400() {
        assert_eq!(since_param(None, "30d").unwrap(), Duration::days(30));
        let err = since_param(Some("forever"), "30d").unwrap_err();
        assert_eq!(
            (err.status.as_u16(), err.code),
            (400, ErrorCode::InvalidSince)
        );
    }
}
