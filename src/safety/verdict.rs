//! The `contentSafety` object of a builder-created endpoint and its transitions.
//!
//! `passed` and `approved` endpoints are listed and invocable; `review` ones are held paused and
//! unlisted until an admin decides; `rejected` ones stay unlisted and can only be deleted.
//! Scans after the create cover only the fields a change touched, so findings an admin already
//! approved are not re-queued by an unrelated edit.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use super::policy::Outcome;
use super::scanner::Finding;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SafetyStatus {
    Passed,
    Review,
    Approved,
    Rejected,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContentSafety {
    pub status: SafetyStatus,
    pub findings: Vec<Finding>,
    /// When the builder accepted the safety attestation.
    #[serde(with = "time::serde::rfc3339::option", default)]
    #[schema(value_type = Option<String>)]
    pub attested_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String)]
    pub scanned_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option", default)]
    #[schema(value_type = Option<String>)]
    pub reviewed_at: Option<OffsetDateTime>,
    /// The admin's note on approval or rejection.
    #[serde(default)]
    pub note: Option<String>,
}

/// The field group a finding belongs to: `tags[2]` and `env.KEY` belong to `tags` and `env`
/// (replaced as a whole by a change); each `files/<path>` is its own group.
pub fn field_group(field: &str) -> &str {
    if field.starts_with("files/") {
        return field;
    }
    field.split(['[', '.']).next().unwrap_or(field)
}

impl ContentSafety {
    /// Whether the endpoint may appear in the public catalog and be invoked.
    pub fn is_listed(&self) -> bool {
        matches!(self.status, SafetyStatus::Passed | SafetyStatus::Approved)
    }

    /// The verdict after a builder's create (`previous = None`) or update, given the findings of
    /// the field groups in `changed`. `Err` carries every finding when any rule blocks.
    pub fn after_scan(
        previous: Option<&ContentSafety>,
        changed: &[String],
        found: Vec<Finding>,
        now: OffsetDateTime,
    ) -> Result<ContentSafety, Vec<Finding>> {
        if found.iter().any(|f| f.outcome == Outcome::Block) {
            return Err(found);
        }
        let kept: Vec<Finding> = previous
            .map(|p| {
                p.findings
                    .iter()
                    .filter(|f| !changed.iter().any(|c| c == field_group(&f.field)))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let previous_status = previous.map(|p| p.status);
        let status = match (previous_status, found.is_empty()) {
            (_, false) => SafetyStatus::Review,
            (Some(SafetyStatus::Approved), true) => SafetyStatus::Approved,
            (Some(SafetyStatus::Review), true) if !kept.is_empty() => SafetyStatus::Review,
            _ => SafetyStatus::Passed,
        };
        let mut findings = kept;
        findings.extend(found);
        Ok(ContentSafety {
            status,
            findings,
            attested_at: previous.and_then(|p| p.attested_at).or(Some(now)),
            scanned_at: now,
            reviewed_at: previous.and_then(|p| p.reviewed_at),
            note: previous.and_then(|p| p.note.clone()),
        })
    }

    /// An admin's decision on an endpoint under review.
    pub fn decided(
        &self,
        approve: bool,
        note: Option<String>,
        now: OffsetDateTime,
    ) -> ContentSafety {
        ContentSafety {
            status: if approve {
                SafetyStatus::Approved
            } else {
                SafetyStatus::Rejected
            },
            reviewed_at: Some(now),
            note,
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::safety::scanner::scan_text;

    fn now() -> OffsetDateTime {
        OffsetDateTime::now_utc()
    }

    #[test]
    fn groups() {
        assert_eq!(field_group("tags[3]"), "tags");
        assert_eq!(field_group("env.API_URL"), "env");
        assert_eq!(field_group("files/a.b/c.txt"), "files/a.b/c.txt");
        assert_eq!(field_group("title"), "title");
    }

    #[test]
    fn block_review_pass_and_approval_stick() {
        let blocked = ContentSafety::after_scan(
            None,
            &[],
            scan_text("source", "AKIAIOSFODNN7EXAMPLE"),
            now(),
        );
        assert!(blocked.is_err());

        let clean = ContentSafety::after_scan(None, &[], vec![], now()).unwrap();
        assert_eq!(clean.status, SafetyStatus::Passed);
        assert!(clean.is_listed() && clean.attested_at.is_some());

        let review = ContentSafety::after_scan(
            None,
            &[],
            scan_text("description", "mail jane@gmail.com"),
            now(),
        )
        .unwrap();
        assert_eq!(review.status, SafetyStatus::Review);
        assert!(!review.is_listed());

        // Fixing the flagged field clears the review; an unrelated edit keeps it.
        let unrelated =
            ContentSafety::after_scan(Some(&review), &["title".into()], vec![], now()).unwrap();
        assert_eq!(unrelated.status, SafetyStatus::Review);
        let fixed =
            ContentSafety::after_scan(Some(&review), &["description".into()], vec![], now())
                .unwrap();
        assert_eq!(fixed.status, SafetyStatus::Passed);

        let approved = review.decided(true, Some("ok".into()), now());
        let edited =
            ContentSafety::after_scan(Some(&approved), &["title".into()], vec![], now()).unwrap();
        assert_eq!(edited.status, SafetyStatus::Approved);
        let reflagged = ContentSafety::after_scan(
            Some(&approved),
            &["title".into()],
            scan_text("title", "call (415) 555-2671"),
            now(),
        )
        .unwrap();
        assert_eq!(reflagged.status, SafetyStatus::Review);
        assert_eq!(reflagged.findings.len(), 2);
    }
}
