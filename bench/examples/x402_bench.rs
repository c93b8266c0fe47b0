//! Benchmark helper for `bench/payments.sh` and `bench/store.sh` (built as the `x402_bench`
//! example of the toolhost crate).
//!
//! - `x402_bench verify N`: signs N EIP-3009 authorizations, then verifies them the way the
//!   local facilitator does (decode header, EIP-712 hash, signer recovery, checks); prints both
//!   rates.
//! - `x402_bench headers URL N FILE`: reads the 402 of URL and writes N distinct, valid
//!   `PAYMENT-SIGNATURE` values (one per line) for wrk to spend: EIP-3009 authorizations for
//!   an `exact` offer, Permit2 permits of the maximum for a metered (`upto`) one.

use std::io::Write;
use std::time::Instant;

use alloy_signer_local::PrivateKeySigner;
use anyhow::{bail, Context, Result};
use base64::Engine;
use serde_json::{json, Value};
use toolhost::config::Config;
use toolhost::money::Usd;
use toolhost::x402::config::NetworkConfig;
use toolhost::x402::header;
use toolhost::x402::schemes::{exact_evm, upto_evm};
use toolhost::x402::verify::{self, unix_now};
use toolhost::x402::{Offer, PaymentRequirements, ResourceInfo};

fn payments(signer: &PrivateKeySigner, required: &Value, n: usize) -> Result<Vec<String>> {
    let requirement: PaymentRequirements = serde_json::from_value(required["accepts"][0].clone())?;
    let network = NetworkConfig::base_sepolia();
    (0..n)
        .map(|_| {
            let payload = if requirement.scheme == upto_evm::SCHEME {
                upto_evm::signing::sign(signer, &network, &requirement, |_| {})?
            } else {
                exact_evm::signing::sign(signer, &network, &requirement, |_| {})?
            };
            let wire = json!({"x402Version": 2, "resource": required["resource"], "accepted": requirement, "payload": payload});
            Ok(header::encode(&wire))
        })
        .collect()
}

fn verify(n: usize) -> Result<()> {
    let config = Config::new("/unused").payment;
    let pay_to = PrivateKeySigner::random().address().to_checksum(None);
    let resource = ResourceInfo {
        url: "http://bench/tools/x".into(),
        description: "bench".into(),
        mime_type: "application/json".into(),
    };
    let offer = Offer::new(config.terms(&pay_to), resource, Usd::from_units(1000));
    let required = json!(offer.v2(""));
    let signer = PrivateKeySigner::random();
    let started = Instant::now();
    let headers = payments(&signer, &required, n)?;
    let signing = started.elapsed();
    let started = Instant::now();
    let now = unix_now();
    for value in &headers {
        let payment = header::decode(value).map_err(|e| anyhow::anyhow!("{e}"))?;
        verify::verify(&payment, &offer, now).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let verifying = started.elapsed();
    println!(
        "signed {n} authorizations: {:.0}/s",
        n as f64 / signing.as_secs_f64()
    );
    println!(
        "verified {n} payments (decode + EIP-712 + recover + checks): {:.0}/s on one core",
        n as f64 / verifying.as_secs_f64()
    );
    Ok(())
}

async fn write_headers(url: &str, n: usize, file: &str) -> Result<()> {
    let response = reqwest::Client::new()
        .post(url)
        .json(&json!({}))
        .send()
        .await?;
    if response.status() != 402 {
        bail!("{url} answered {} instead of 402", response.status());
    }
    let header = response
        .headers()
        .get("payment-required")
        .context("no PAYMENT-REQUIRED header")?
        .to_str()?
        .to_string();
    let required: Value =
        serde_json::from_slice(&base64::engine::general_purpose::STANDARD.decode(header)?)?;
    let signer = PrivateKeySigner::random();
    let mut out = std::io::BufWriter::new(std::fs::File::create(file)?);
    for value in payments(&signer, &required, n)? {
        writeln!(out, "{value}")?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["verify", n] => verify(n.parse()?),
        ["headers", url, n, file] => write_headers(url, n.parse()?, file).await,
        _ => bail!("usage: x402_bench verify N | x402_bench headers URL N FILE"),
    }
}
