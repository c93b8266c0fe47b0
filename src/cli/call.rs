//! `toolhost call`: calls an endpoint as an agent would. A paid one answers 402 with its price;
//! the command says what it costs and pays, when told how, as the official x402 clients do:
//! with a developer credit (`--credit`, sent as `X-Developer-Credit`) or a wallet's key
//! (`--wallet-key FILE`, an `exact` EIP-3009 authorization signed for the first network the
//! endpoint accepts, sent as `PAYMENT-SIGNATURE`). The price goes to stderr before paying and
//! the receipt after; the result goes to stdout. `--test` makes the owner's free test call.

use std::path::Path;

use base64::Engine;
use reqwest::Method;
use serde_json::{json, Value};

use super::api::{refusal, segment, Answer, Api, Credential};
use super::output::{usd, Out, Tone};
use super::{CallArgs, Failure, Outcome};
use crate::x402::config::{NetworkConfig, TransferMethod};
use crate::x402::requirements::AssetExtra;
use crate::x402::schemes::{exact_evm, permit2, upto_evm};
use crate::x402::PaymentRequirements;

/// How a paid call is paid for, if the command was told.
enum Payment {
    Credit(String),
    Wallet(alloy_signer_local::PrivateKeySigner),
}

pub(super) async fn call(args: &CallArgs, out: &Out) -> Outcome {
    let input: Value = serde_json::from_str(&args.input)
        .map_err(|e| Failure::Usage(format!("--input is not JSON: {e}")))?;
    let configured = Api::from_global(&args.global)?;
    let test = args.test || args.revision.is_some();
    let path = format!("/tools/{}", segment(&args.slug));
    if test {
        configured.require_key()?;
        let revision = args.revision.map(|n| n.to_string());
        let mut headers = vec![("x-toolhost-test", "1")];
        if let Some(revision) = &revision {
            headers.push(("x-toolhost-revision", revision));
        }
        let answer = configured
            .exchange(Method::POST, &path, Some(&input), &headers)
            .await?;
        return print_answer(answer, out);
    }
    let payment = match (&args.credit, &args.wallet_key) {
        (Some(_), Some(_)) => {
            return Err(Failure::Usage(
                "give --credit or --wallet-key, not both".into(),
            ))
        }
        (Some(token), None) => Some(Payment::Credit(token.clone())),
        (None, Some(file)) => Some(Payment::Wallet(read_wallet(file)?)),
        (None, None) => None,
    };
    // A live call is an agent's: no builder credential goes with it.
    let api = Api::new(configured.base(), Credential::None);
    let first = api.exchange(Method::POST, &path, Some(&input), &[]).await?;
    if first.status != 402 {
        return print_answer(first, out);
    }
    let Some(required) = payment_required(&first) else {
        return Err(refusal(first));
    };
    let price = Price::of(&required)?;
    let Some(payment) = payment else {
        return Err(Failure::Refused {
            status: 402,
            code: "payment_required".into(),
            message: format!(
                "{} costs {}; pay with --credit TOKEN (a developer credit the admin issued) or \
                 --wallet-key FILE (a file holding a wallet's private key, hex; it signs an x402 \
                 payment as the official clients do)",
                args.slug,
                price.said()
            ),
            body: first.body,
        });
    };
    let (name, value, how) = match &payment {
        Payment::Credit(token) => ("x-developer-credit", token.clone(), "a developer credit"),
        Payment::Wallet(signer) => (
            "payment-signature",
            signed(signer, &required, &price.requirement)?,
            "the wallet's signed authorization",
        ),
    };
    eprintln!(
        "{}",
        out.paint(
            Tone::Dim,
            &format!("paying {} for {} with {how} …", price.said(), args.slug)
        )
    );
    let paid = api
        .exchange(Method::POST, &path, Some(&input), &[(name, value.as_str())])
        .await?;
    if paid.status == 402 {
        let reason = payment_required(&paid)
            .and_then(|r| r["error"].as_str().map(str::to_owned))
            .or_else(|| paid.body["error"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "payment refused".into());
        return Err(Failure::Refused {
            status: 402,
            code: "payment_refused".into(),
            message: format!("the payment was refused: {reason}"),
            body: paid.body,
        });
    }
    if let Some(receipt) = paid.body.get("receipt").filter(|r| r.is_object()) {
        let id = receipt["receiptId"].as_str().unwrap_or_default();
        eprintln!(
            "{} {id}: {}/ai/receipts/{id}",
            out.paint(Tone::Good, "receipt"),
            api.base()
        );
    }
    print_answer(paid, out)
}

/// The result on stdout; a non-2xx answer is a refusal (exit 3).
fn print_answer(answer: Answer, out: &Out) -> Outcome {
    if !(200..300).contains(&answer.status) {
        return Err(refusal(answer));
    }
    if out.json {
        out.json(&answer.body);
    } else {
        println!(
            "{}",
            serde_json::to_string_pretty(&answer.body).unwrap_or_default()
        );
    }
    Ok(())
}

/// The v2 `PaymentRequired` of a 402 (its `PAYMENT-REQUIRED` header).
fn payment_required(answer: &Answer) -> Option<Value> {
    let header = answer.headers.get("payment-required")?.to_str().ok()?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(header)
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// What a call costs, from the first requirement the endpoint accepts.
struct Price {
    requirement: PaymentRequirements,
    owner: Option<String>,
}

impl Price {
    fn of(required: &Value) -> Result<Price, Failure> {
        let requirement: PaymentRequirements =
            serde_json::from_value(required["accepts"][0].clone()).map_err(|e| {
                Failure::Network(format!(
                    "the 402 names no payment requirement this client reads: {e}"
                ))
            })?;
        let info = &required["extensions"]["toolhost/owner"]["info"];
        let owner = match (info["name"].as_str(), info["id"].as_str()) {
            (Some(name), Some(id)) => Some(format!("{name} ({id})")),
            _ => info["kind"].as_str().map(|k| format!("the service ({k})")),
        };
        Ok(Price { requirement, owner })
    }

    /// "0.01 USD a call (USDC on eip155:84532, to Name (b_…))".
    fn said(&self) -> String {
        let r = &self.requirement;
        let price = usd(&json!(r.amount));
        let to = self
            .owner
            .as_deref()
            .map(|o| format!(", to {o}"))
            .unwrap_or_default();
        let most = if r.scheme == upto_evm::SCHEME {
            "at most "
        } else {
            ""
        };
        format!(
            "{most}{price} a call ({} on {}{to})",
            r.extra.name, r.network
        )
    }
}

/// A `PAYMENT-SIGNATURE` value: an `exact` authorization (or for a metered endpoint an
/// `upto` permit of the maximum) of `requirement` signed by `signer`, in the v2 payload the
/// official clients send.
fn signed(
    signer: &alloy_signer_local::PrivateKeySigner,
    required: &Value,
    requirement: &PaymentRequirements,
) -> Result<String, Failure> {
    let chain_id = requirement
        .network
        .strip_prefix("eip155:")
        .and_then(|id| id.parse::<u64>().ok())
        .ok_or_else(|| {
            Failure::Usage(format!(
                "the endpoint asks for payment on {}, which --wallet-key cannot sign for (EVM networks only)",
                requirement.network
            ))
        })?;
    let AssetExtra {
        name,
        version,
        asset_transfer_method,
        ..
    } = &requirement.extra;
    let network = NetworkConfig {
        caip2: requirement.network.clone(),
        v1_name: requirement.network.clone(),
        chain_id,
        asset: requirement.asset.clone(),
        eip712_name: name.clone(),
        eip712_version: version.clone(),
        transfer_method: match asset_transfer_method.as_deref() {
            Some(crate::x402::schemes::PERMIT2_METHOD) => TransferMethod::Permit2,
            _ => TransferMethod::Eip3009,
        },
    };
    let payload = if requirement.scheme == upto_evm::SCHEME {
        upto_evm::signing::sign(signer, &network, requirement, |_| {})
    } else if network.transfer_method == TransferMethod::Permit2 {
        permit2::signing::sign(signer, permit2::Kind::Exact, &network, requirement, |_| {})
    } else {
        exact_evm::signing::sign(signer, &network, requirement, |_| {})
    }
    .map_err(|e| Failure::Local(format!("cannot sign the payment: {e}")))?;
    let wire = json!({
        "x402Version": 2, "resource": required["resource"], "accepted": requirement,
        "payload": payload,
    });
    Ok(crate::x402::header::encode(&wire))
}

/// A wallet key from a file: the hex private key (with or without `0x`), surrounding space
/// ignored. Never printed.
fn read_wallet(file: &Path) -> Result<alloy_signer_local::PrivateKeySigner, Failure> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", file.display())))?;
    text.trim().parse().map_err(|_| {
        Failure::Usage(format!(
            "{} does not hold a private key (64 hex digits)",
            file.display()
        ))
    })
}
