//! Timestamps as the API writes them: ISO 8601 / RFC 3339 in UTC.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

pub fn rfc3339(at: OffsetDateTime) -> String {
    // Formatting a UTC OffsetDateTime as RFC 3339 only fails for years outside 0..=9999.
    at.format(&Rfc3339).unwrap_or_default()
}

pub fn now_rfc3339() -> String {
    rfc3339(OffsetDateTime::now_utc())
}
