//! The content-safety policy: what builder content is blocked outright and what is held for an
//! admin's review. Rule ids are stable: findings, events and the review queue refer to them.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Secrets,
    PrivateData,
    IllegalMaterial,
    UnauthorizedContent,
}

/// `block`: the create or update is refused (422 `content_blocked`). `review`: it is stored
/// paused, with `contentSafety.status = "review"`, until an admin approves or rejects it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Block,
    Review,
}

#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub id: &'static str,
    pub category: Category,
    pub outcome: Outcome,
    pub description: &'static str,
}

const fn rule(
    id: &'static str,
    category: Category,
    outcome: Outcome,
    description: &'static str,
) -> Rule {
    Rule {
        id,
        category,
        outcome,
        description,
    }
}

use Category::*;
use Outcome::*;

pub const RULES: &[Rule] = &[
    rule(
        "secret.pem_private_key",
        Secrets,
        Block,
        "PEM-encoded private keys (-----BEGIN … PRIVATE KEY-----).",
    ),
    rule(
        "secret.hex_private_key",
        Secrets,
        Block,
        "0x-prefixed 64-hex-digit values named or described as keys (key, private, secret, signer, wallet, mnemonic, seed, pk… in the field name or next to the value); the same shape without such words is a transaction or block hash and passes.",
    ),
    rule(
        "secret.aws_access_key",
        Secrets,
        Block,
        "AWS access key ids (AKIA…/ASIA…) and secret access keys.",
    ),
    rule(
        "secret.github_token",
        Secrets,
        Block,
        "GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_).",
    ),
    rule(
        "secret.stripe_key",
        Secrets,
        Block,
        "Stripe secret and restricted keys (sk_live_, rk_live_, sk_test_).",
    ),
    rule(
        "secret.slack_token",
        Secrets,
        Block,
        "Slack tokens (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-) and webhook URLs.",
    ),
    rule(
        "secret.openai_key",
        Secrets,
        Block,
        "OpenAI-style API keys (sk-…, sk-proj-…).",
    ),
    rule(
        "secret.jwt",
        Secrets,
        Block,
        "JSON Web Tokens (three base64url segments with a JSON header).",
    ),
    rule(
        "private.email",
        PrivateData,
        Review,
        "Email addresses of individuals.",
    ),
    rule("private.phone", PrivateData, Review, "Phone numbers."),
    rule(
        "private.national_id",
        PrivateData,
        Block,
        "National identifiers such as US social security numbers.",
    ),
    rule(
        "private.card_number",
        PrivateData,
        Block,
        "Payment card numbers that pass the Luhn check.",
    ),
    rule(
        "illegal.csam",
        IllegalMaterial,
        Block,
        "Any sexual content involving minors.",
    ),
    rule(
        "illegal.weapons",
        IllegalMaterial,
        Block,
        "Instructions for building weapons, explosives or chemical or biological agents.",
    ),
    rule(
        "illegal.malware",
        IllegalMaterial,
        Block,
        "Malware, ransomware, credential stealers and tools for unauthorized access.",
    ),
    rule(
        "illegal.trafficking",
        IllegalMaterial,
        Block,
        "Sale of illegal drugs, stolen data or people.",
    ),
    rule(
        "unauthorized.piracy",
        UnauthorizedContent,
        Review,
        "Pirated or leaked material: cracked software, keygens, warez, leaked databases.",
    ),
    rule(
        "unauthorized.impersonation",
        UnauthorizedContent,
        Review,
        "Claims to be an official service of a brand or agency the builder does not represent.",
    ),
];

/// Sentences of the policy that are not rules.
pub const SUMMARY: &str = "Builder-created endpoints must carry safetyAttestation.accepted = true. \
Every create and update is scanned (title, description, tags, source, static response, files, env values). \
A finding of a `block` rule refuses the change with 422 content_blocked and the findings (rule id, field, \
masked excerpt); a finding of a `review` rule stores the endpoint paused with contentSafety.status = \"review\" \
until an admin approves or rejects it. Catalogued endpoints have contentSafety: null.";
