//! The scanner behind the published policy: one detector per rule id of [`super::policy::RULES`],
//! so what the policy promises is exactly what gets checked (a unit test holds the two together).
//!
//! Detectors are tuned against false positives on ordinary prose and code: secrets match their
//! issuers' fixed prefixes and lengths, card numbers must pass Luhn and carry a card-network
//! prefix, emails on reserved example domains are ignored, a bare 0x+64-hex value counts as a
//! private key only with key-like words in its field name or next to it (otherwise it is a
//! transaction hash, block hash or event topic), and the illegal/unauthorized lists match
//! phrases of intent rather than single topical words.

use std::sync::LazyLock;

use regex::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};

use super::policy::{Category, Outcome, RULES};

/// One hit: which rule, in which field, and a masked excerpt that never repeats the secret.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub rule_id: String,
    #[schema(value_type = String)]
    pub category: Category,
    #[schema(value_type = String)]
    pub outcome: Outcome,
    /// Where it was found: `title`, `description`, `tags[2]`, `source`, `response`,
    /// `env.NAME` or `files/<path>`.
    pub field: String,
    pub excerpt: String,
}

/// A rule id and how to find it: a regex, optionally with a check on each match.
struct Detector {
    rule_id: &'static str,
    pattern: Regex,
    accept: Accept,
}

/// The check a match must pass.
enum Accept {
    /// On the matched text alone.
    Value(fn(&str) -> bool),
    /// On the field name and the text around the match (`text[start..end]` matched).
    Context(fn(field: &str, text: &str, start: usize, end: usize) -> bool),
}

impl Detector {
    fn accepts(&self, field: &str, text: &str, m: &regex::Match<'_>) -> bool {
        match self.accept {
            Accept::Value(check) => check(m.as_str()),
            Accept::Context(check) => check(field, text, m.start(), m.end()),
        }
    }
}

fn always(_: &str) -> bool {
    true
}

/// Words that make a bare 32-byte hex value a key rather than a hash: key, private, secret,
/// signer, wallet, mnemonic, seed, password, credential, deployer, and `pk`/`sk` as whole words
/// (`env.PK`, `const pk =`, `PK_HEX`).
static KEY_CONTEXT: LazyLock<Regex> = LazyLock::new(|| {
    compile(
        "secret.hex_private_key",
        r"key|priv|secret|sign(?:er|ing)|wallet|mnemonic|seed|passw|credential|deployer|(?:^|[^a-z0-9])[ps]k(?:[^a-z0-9]|$)",
        true,
    )
});

/// How far around a 0x+64-hex value its context is read, in bytes: names come before a value
/// (`PRIVATE_KEY=0x…`, `new Wallet("0x…")`, a schema property), and prose may follow it
/// ("0x… is the signer's key").
const KEY_CONTEXT_BEFORE: usize = 48;
const KEY_CONTEXT_AFTER: usize = 24;

/// A 0x+64-hex value is a private key only with key-like words in its field name or near it: the
/// same shape is every transaction hash, block hash, event topic and keccak digest.
fn is_key_in_context(field: &str, text: &str, start: usize, end: usize) -> bool {
    let mut from = start.saturating_sub(KEY_CONTEXT_BEFORE);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = (end + KEY_CONTEXT_AFTER).min(text.len());
    while !text.is_char_boundary(to) {
        to += 1;
    }
    KEY_CONTEXT.is_match(field)
        || KEY_CONTEXT.is_match(&text[from..start])
        || KEY_CONTEXT.is_match(&text[end..to])
}

fn compile(rule_id: &str, pattern: &str, case_insensitive: bool) -> Regex {
    // The patterns are constants covered by unit tests; a broken one fails every test run
    // (and the first scan), never depending on input.
    RegexBuilder::new(pattern)
        .case_insensitive(case_insensitive)
        .build()
        .unwrap_or_else(|e| panic!("pattern of {rule_id}: {e}"))
}

/// A case-sensitive pattern with a check on each match (issuer prefixes, Luhn, reserved domains).
fn detector(rule_id: &'static str, pattern: &str, accept: fn(&str) -> bool) -> Detector {
    Detector {
        rule_id,
        pattern: compile(rule_id, pattern, false),
        accept: Accept::Value(accept),
    }
}

/// A case-sensitive pattern whose matches count only in a context the check accepts.
fn in_context(
    rule_id: &'static str,
    pattern: &str,
    accept: fn(&str, &str, usize, usize) -> bool,
) -> Detector {
    Detector {
        rule_id,
        pattern: compile(rule_id, pattern, false),
        accept: Accept::Context(accept),
    }
}

/// A case-insensitive phrase list, for the illegal and unauthorized categories.
fn phrases(rule_id: &'static str, pattern: &str) -> Detector {
    Detector {
        rule_id,
        pattern: compile(rule_id, pattern, true),
        accept: Accept::Value(always),
    }
}

static DETECTORS: LazyLock<Vec<Detector>> = LazyLock::new(|| {
    vec![
        detector(
            "secret.pem_private_key",
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
            always,
        ),
        in_context(
            "secret.hex_private_key",
            r"\b0x[0-9a-fA-F]{64}\b",
            is_key_in_context,
        ),
        detector(
            "secret.aws_access_key",
            r#"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b|(?i:aws_?secret_?access_?key)\s*[=:]\s*["']?[A-Za-z0-9/+=]{40}\b"#,
            always,
        ),
        detector(
            "secret.github_token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b",
            always,
        ),
        detector(
            "secret.stripe_key",
            r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b",
            always,
        ),
        detector(
            "secret.slack_token",
            r"\bxox[abposr]-[A-Za-z0-9-]{10,}|https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}",
            always,
        ),
        detector(
            "secret.openai_key",
            r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}",
            always,
        ),
        detector(
            "secret.jwt",
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}",
            always,
        ),
        detector(
            "private.email",
            r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b",
            is_personal_email,
        ),
        detector(
            "private.phone",
            r"(?:\+\d{1,3}[ .-]?)?(?:\(\d{3}\)[ .-]?|\b\d{3}[.-])\d{3}[.-]\d{4}\b|\+\d{1,3}(?:[ .-]?\d{2,4}){3,5}\b",
            is_phone_number,
        ),
        detector(
            "private.national_id",
            r"\b\d{3}-\d{2}-\d{4}\b|\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b",
            is_national_id,
        ),
        detector(
            "private.card_number",
            r"\b(?:\d[ -]?){12,18}\d\b",
            is_card_number,
        ),
        phrases(
            "illegal.csam",
            r"\bcsam\b|\b(?:child|children|minor|minors|underage|preteen|kids?)\b[^.\n]{0,40}\b(?:porn\w*|sexual|sexually|nudes?|erotic)\b|\b(?:porn\w*|sexual|sexually|nudes?|erotic)\b[^.\n]{0,40}\b(?:child|children|minors?|underage|preteens?)\b",
        ),
        phrases(
            "illegal.weapons",
            r"\bhow to (?:make|build|assemble|synthesi[sz]e) (?:a |an )?(?:pipe bomb|bomb|explosives?|ied|napalm|nerve agent|sarin|ricin|bioweapon|chemical weapon)s?\b|\b(?:synthesi[sz]e|produce|weaponi[sz]e) (?:sarin|vx|ricin|anthrax|tabun|mustard gas|nerve agents?)\b|\b(?:untraceable|3d[- ]printed) (?:gun|firearm|rifle|pistol)s?\b|\bghost guns? (?:kit|build|blueprint)s?\b",
        ),
        phrases(
            "illegal.malware",
            r"\b(?:build|create|deploy|sell|spread|generate|write|buy|rent|order|hire)\w* (?:a |an |our |custom |undetectable )?(?:ransomware|keylogger|botnet|rootkit|trojan|worm|spyware|info-?stealer|password stealer|credential stealer)s?\b|\b(?:ransomware|malware|botnet|ddos|phishing)[- ]as[- ]an?[- ]service\b|\b(?:keyloggers?|trojans?|malware|spyware|stealers?|botnets?|rootkits?)\b[^.\n]{0,30}\bsteal(?:s|ing)?\b|\b(?:credential|password|cookie|info|crypto) ?stealers?\b|\bddos[- ](?:for[- ]hire|service|booter)\b|\bbooter (?:service|panel)\b|\bbypass (?:2fa|mfa|two[- ]factor) (?:on|for) (?:any|someone|other)\b",
        ),
        phrases(
            "illegal.trafficking",
            r"\b(?:buy|sell|selling|order|ship)\w* (?:cocaine|heroin|meth|methamphetamine|fentanyl|mdma|lsd)\b|\b(?:sell|selling|buy|buying)\w* (?:stolen|hacked|leaked) (?:credit ?cards?|cards?|accounts?|identit(?:y|ies)|data|passports?|logins?|bank logins?)\b|\bfullz\b|\bcvv (?:dumps|shop)\b|\bhuman trafficking services?\b|\b(?:sell|buy)\w* (?:organs|people|humans|children)\b",
        ),
        phrases(
            "unauthorized.piracy",
            r"\b(?:keygens?|warez|nulled (?:plugins?|themes?|scripts?)|cracked (?:software|apps?|apks?|versions?|games?)|serial (?:keys? )?cracks?|leaked (?:databases?|db|dumps?|credentials|source code)|torrent (?:of|for) (?:pirated|cracked))\b",
        ),
        phrases(
            "unauthorized.impersonation",
            r"\b(?:this is|we are|we're|i am|i'm|acting as) (?:the |an? )?official (?:google|openai|anthropic|apple|microsoft|amazon|aws|paypal|stripe|coinbase|binance|meta|facebook|irs|fbi|cia|nasa|government) (?:\w+ )?(?:api|service|app|support|tool|endpoint|agent|bot)\b|\bofficial (?:google|openai|anthropic|apple|microsoft|amazon|aws|paypal|stripe|coinbase|binance|meta|facebook|irs|fbi|cia|nasa|government) (?:support|customer service|help ?desk|refunds?) (?:agent|bot|line|team|service|desk|cent(?:er|re)|chat|portal)\b|\b(?:endorsed|authori[sz]ed) by (?:the )?(?:irs|fbi|cia|us government|google|openai|apple|microsoft|paypal|coinbase)\b",
        ),
    ]
});

/// Emails other than the reserved example and test domains (RFC 2606/6761).
fn is_personal_email(text: &str) -> bool {
    let domain = text
        .rsplit('@')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let reserved = ["example.com", "example.org", "example.net", "localhost"];
    let reserved_tlds = [".example", ".test", ".invalid", ".localhost", ".local"];
    !(reserved
        .iter()
        .any(|r| domain == *r || domain.ends_with(&format!(".{r}")))
        || reserved_tlds.iter().any(|t| domain.ends_with(t)))
}

fn digits(text: &str) -> String {
    text.chars().filter(char::is_ascii_digit).collect()
}

/// 10 to 15 digits (E.164) and not all the same digit.
fn is_phone_number(text: &str) -> bool {
    let d = digits(text);
    (10..=15).contains(&d.len()) && d.chars().any(|c| !d.starts_with(c))
}

/// US SSNs exclude the 000, 666 and 9xx areas, group 00 and serial 0000; UK NINOs pass the pattern.
fn is_national_id(text: &str) -> bool {
    let d = digits(text);
    if !text.contains('-') {
        return true;
    }
    let (area, group, serial) = (&d[0..3], &d[3..5], &d[5..9]);
    area != "000" && area != "666" && !area.starts_with('9') && group != "00" && serial != "0000"
}

/// 13 to 19 digits with a card-network prefix that pass the Luhn check.
fn is_card_number(text: &str) -> bool {
    let d = digits(text);
    let network = [
        "4", "51", "52", "53", "54", "55", "22", "23", "24", "25", "26", "27", "34", "37", "6011",
        "65", "35",
    ];
    (13..=19).contains(&d.len()) && network.iter().any(|p| d.starts_with(p)) && luhn(&d)
}

fn luhn(digits: &str) -> bool {
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let n = u32::from(b - b'0');
            if i % 2 == 1 {
                let doubled = n * 2;
                if doubled > 9 {
                    doubled - 9
                } else {
                    doubled
                }
            } else {
                n
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Keeps the first four characters and hides the rest, so a finding can be located but the
/// value is never echoed (the excerpt itself must not leak the secret it reports).
pub fn mask(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let shown = if chars.len() > 8 {
        4
    } else {
        chars.len().min(2)
    };
    let hidden = (chars.len() - shown).min(16);
    let mut out: String = chars[..shown].iter().collect();
    out.extend(std::iter::repeat_n('*', hidden));
    if chars.len() - shown > hidden {
        out.push('…');
    }
    out
}

/// Every finding in one piece of text, labelled with `field`.
pub fn scan_text(field: &str, text: &str) -> Vec<Finding> {
    let mut found = Vec::new();
    for d in DETECTORS.iter() {
        let Some(rule) = RULES.iter().find(|r| r.id == d.rule_id) else {
            continue;
        };
        if let Some(m) = d
            .pattern
            .find_iter(text)
            .find(|m| d.accepts(field, text, m))
        {
            found.push(Finding {
                rule_id: rule.id.to_string(),
                category: rule.category,
                outcome: rule.outcome,
                field: field.to_string(),
                excerpt: mask(m.as_str()),
            });
        }
    }
    found
}

/// Every finding over `(field, text)` pairs.
pub fn scan<'a>(fields: impl IntoIterator<Item = (String, &'a str)>) -> Vec<Finding> {
    fields
        .into_iter()
        .flat_map(|(field, text)| scan_text(&field, text))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules_hit(text: &str) -> Vec<String> {
        scan_text("description", text)
            .into_iter()
            .map(|f| f.rule_id)
            .collect()
    }

    /// One sample per rule id; together they prove every published rule has a working detector.
    const SAMPLES: &[(&str, &str)] = &[
        ("secret.pem_private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow..."),
        ("secret.pem_private_key", "-----BEGIN PRIVATE KEY-----"),
        ("secret.hex_private_key", "key = 0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"),
        ("secret.aws_access_key", "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE"),
        ("secret.aws_access_key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        ("secret.github_token", "token ghp_16C7e42F292c6912E7710c838347Ae178B4a0000"),
        ("secret.stripe_key", "Stripe.apiKey = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc';"),
        ("secret.slack_token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
        ("secret.slack_token", "post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"),
        ("secret.openai_key", "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"),
        ("secret.jwt", "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
        ("private.email", "write to jane.doe@gmail.com for access"),
        ("private.phone", "call me at (415) 555-2671 today"),
        ("private.phone", "whatsapp +44 20 7946 0958"),
        ("private.national_id", "ssn 123-45-6789"),
        ("private.national_id", "NI number AB 12 34 56 C"),
        ("private.card_number", "card 4111 1111 1111 1111 exp 12/30"),
        ("private.card_number", "5500-0000-0000-0004"),
        ("illegal.csam", "sexual images of underage girls"),
        ("illegal.weapons", "step by step: how to build a pipe bomb"),
        ("illegal.malware", "we build undetectable ransomware for you"),
        ("illegal.malware", "a browser credential stealer"),
        ("illegal.trafficking", "buy cocaine shipped overnight"),
        ("illegal.trafficking", "fresh fullz and cvv dumps"),
        ("unauthorized.piracy", "download the keygen and cracked software here"),
        ("unauthorized.impersonation", "The official PayPal support agent for refunds"),
    ];

    #[test]
    fn every_rule_is_detected() {
        for (rule, text) in SAMPLES {
            assert!(
                rules_hit(text).contains(&rule.to_string()),
                "{rule} missed in {text:?}: {:?}",
                rules_hit(text)
            );
        }
        for rule in RULES {
            assert!(
                SAMPLES.iter().any(|(id, _)| id == &rule.id),
                "no sample for {}",
                rule.id
            );
            assert!(
                DETECTORS.iter().any(|d| d.rule_id == rule.id),
                "no detector for {}",
                rule.id
            );
        }
        for d in DETECTORS.iter() {
            assert!(
                RULES.iter().any(|r| r.id == d.rule_id),
                "detector {} is not in the policy",
                d.rule_id
            );
        }
    }

    #[test]
    fn clean_prose_and_code_pass() {
        let clean = [
            "Summarizes a web page into three bullet points. Great for research agents.",
            "Contact us at support@example.com or team@acme.test for help.",
            "export default async function (req, ctx) { const r = await ctx.httpGetJson(req.url); ctx.log('ok'); return { ok: true, n: r.items.length }; }",
            "Version 1.2.3 released on 2024-01-15; build 20240115123456 took 1700000000000 ms.",
            "The transaction hash is 0x1234 and the address is 0x209693Bc6afc0C5328bA36FaF03C514EF312287C.",
            "Protects your business against ransomware and phishing with monitoring tips.",
            "Returns the task-runner status; uses sk-style naming nowhere. const desk = 'sk'; risk-free.",
            "Order ID 1234567890123 and ISBN 978-3-16-148410-0; price 0.001 USD; port 8402.",
            "A creator plan for kids' birthday party ideas with explicit timelines for parents.",
            "import { z } from '@scope/pkg'; const email = input.email; if (!email.includes('@')) throw new Error('bad');",
            "Uses the official OpenAI API pricing page as a reference for cost estimates.",
            "uuid 123e4567-e89b-12d3-a456-426614174000, sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "Settled in tx 0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060 on Base.",
            "const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';",
        ];
        for text in clean {
            assert!(
                rules_hit(text).is_empty(),
                "false positive on {text:?}: {:?}",
                scan_text("d", text)
            );
        }
    }

    /// The shipped catalog and handlers are ordinary prose and code: nothing may fire on them.
    #[test]
    fn fixtures_are_clean() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut scanned = 0;
        for dir in ["fixtures/catalog", "fixtures/handlers"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
                let text = std::fs::read_to_string(entry.path()).unwrap();
                let field = entry.path().display().to_string();
                assert!(
                    scan_text(&field, &text).is_empty(),
                    "{field}: {:?}",
                    scan_text(&field, &text)
                );
                scanned += 1;
            }
        }
        assert!(scanned >= 10);
    }

    #[test]
    fn excerpts_never_repeat_the_secret() {
        let key = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
        let found = scan_text("env.STRIPE", key);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].field, "env.STRIPE");
        assert!(
            !found[0].excerpt.contains("4eC39Hq"),
            "{}",
            found[0].excerpt
        );
        assert!(found[0].excerpt.starts_with("sk_l"));
        assert_eq!(mask("abc"), "ab*");
    }

    #[test]
    fn bare_hex_is_a_key_only_in_key_context() {
        let hex = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";
        let hit = |field: &str, text: &str| {
            scan_text(field, text)
                .iter()
                .any(|f| f.rule_id == "secret.hex_private_key")
        };
        for (field, text) in [
            ("env.PK", hex.to_string()),
            ("env.DEPLOYER", hex.to_string()),
            ("files/keys/signer.txt", hex.to_string()),
            (
                "source",
                format!("const account = privateKeyToAccount('{hex}');"),
            ),
            ("source", format!("const w = new ethers.Wallet(\"{hex}\");")),
            ("source", format!("const pk = \"{hex}\";")),
            (
                "inputSchema",
                format!("properties\nsecret\ndefault\n{hex}\n"),
            ),
            ("description", format!("{hex} is the signer's key")),
            ("description", format!("MNEMONIC_SEED {hex}")),
        ] {
            assert!(hit(field, &text), "{field}: {text}");
        }
        for (field, text) in [
            ("env.TX", hex.to_string()),
            (
                "description",
                format!("Look up transaction {hex} on Basescan"),
            ),
            ("response", format!("{{\"txHash\":\"{hex}\",\"block\":1}}")),
            (
                "source",
                format!("const desk = 'risk'; const topic = '{hex}';"),
            ),
            // Key words further away than the context window do not count.
            (
                "description",
                format!("Bring your own API key. {} Block {hex}", "-".repeat(60)),
            ),
        ] {
            assert!(!hit(field, &text), "{field}: {text}");
        }
        // Multi-byte text around the value keeps the window on character boundaries.
        assert!(hit("d", &format!("ключ key ключ {hex} ключ")));
        assert!(!hit(
            "d",
            &format!("{} {hex} {}", "é".repeat(40), "ü".repeat(20))
        ));
    }

    #[test]
    fn luhn_and_ssn_rules() {
        assert!(luhn("4111111111111111"));
        assert!(!luhn("4111111111111112"));
        assert!(rules_hit("card 4111 1111 1111 1112").is_empty());
        assert!(rules_hit("ssn 000-12-3456 or 666-12-3456").is_empty());
    }

    #[test]
    fn outcomes_come_from_the_policy() {
        let found = scan([
            ("title".to_string(), "mail jane.doe@gmail.com"),
            ("source".to_string(), "AKIAIOSFODNN7EXAMPLE"),
        ]);
        assert_eq!(found.len(), 2);
        assert_eq!(
            (found[0].field.as_str(), found[0].outcome),
            ("title", Outcome::Review)
        );
        assert_eq!(
            (found[1].field.as_str(), found[1].outcome),
            ("source", Outcome::Block)
        );
    }

    /// The labelled evaluation set (`tests/data/safety-eval.json`): per rule, harmful phrasings
    /// that must be flagged with it and harmless near misses (security tutorials, brand mentions,
    /// placeholders) that must be flagged by nothing. Per-rule precision and recall are printed
    /// (`--nocapture`; the README's table) and held to a floor, so a detector change that trades
    /// one for the other fails here.
    #[test]
    fn evaluation_set_precision_and_recall_per_rule() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/safety-eval.json");
        let set: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let cases = set["cases"].as_array().unwrap();
        let mut report = Vec::new();
        for rule in RULES {
            let (mut tp, mut fp, mut fn_, mut harmful, mut harmless) = (0u32, 0u32, 0u32, 0, 0);
            for case in cases {
                let labelled = case["harmful"] == true && case["rule"] == rule.id;
                if case["rule"] == rule.id {
                    if labelled {
                        harmful += 1;
                    } else {
                        harmless += 1;
                    }
                }
                let flagged =
                    rules_hit(case["text"].as_str().unwrap()).contains(&rule.id.to_string());
                match (labelled, flagged) {
                    (true, true) => tp += 1,
                    (true, false) => fn_ += 1,
                    (false, true) => fp += 1,
                    (false, false) => {}
                }
            }
            assert!(
                harmful >= 1 && harmless >= 2,
                "{}: the set needs harmful and harmless cases",
                rule.id
            );
            let precision = f64::from(tp) / f64::from((tp + fp).max(1));
            let recall = f64::from(tp) / f64::from((tp + fn_).max(1));
            println!(
                "| `{}` | {harmful} | {harmless} | {precision:.2} | {recall:.2} |",
                rule.id
            );
            report.push((rule.id, precision, recall));
        }
        let below: Vec<_> = report
            .iter()
            .filter(|(_, p, r)| *p < 1.0 || *r < 1.0)
            .collect();
        assert!(
            below.is_empty(),
            "rules below the floor (precision and recall 1.0 on this set): {below:?}"
        );
    }

    #[test]
    fn the_phrasings_issue_20_named_are_caught() {
        for (rule, text) in [
            ("illegal.malware", "Buy ransomware as a service here"),
            ("illegal.malware", "keylogger to steal passwords"),
            ("illegal.trafficking", "sell stolen credit card data"),
            (
                "unauthorized.impersonation",
                "Official Coinbase support service",
            ),
        ] {
            assert_eq!(rules_hit(text), vec![rule.to_string()], "{text}");
        }
    }
}
