//! The receiving address of a server started without one.
//!
//! A fresh local server should take x402 payments end to end without setup, so on test
//! networks only a secp256k1 key is generated (by the [`Keyring`]: `DATA/dev_pay_to_key`, hex,
//! mode 0600, or the shared store of a cluster) and its address becomes `payTo`; whoever holds
//! the data dir or the store holds the key to the (testnet) funds.
//! A configuration that accepts a mainnet network must name its address explicitly, and have a
//! way to settle (a chain RPC or a remote facilitator).

use std::str::FromStr;

use alloy_primitives::Address;
use alloy_signer_local::PrivateKeySigner;

use crate::config::PaymentConfig;
use crate::keyring::Keyring;
use crate::x402::config::FacilitatorConfig;

#[derive(Debug, thiserror::Error)]
pub enum PayToError {
    #[error("payTo {0:?} is not an EVM address")]
    NotAnAddress(String),
    #[error("a mainnet network is accepted, so payTo must be configured (TOOLHOST_PAY_TO)")]
    MainnetNeedsPayTo,
    #[error("network {0} moves real money, but nothing would collect it: without --evm-rpc-url (and a settler key) or --facilitator-url, payments are only recorded, so only test networks are accepted")]
    MainnetNeedsSettlement(String),
    #[error("cannot read or create the dev payTo key: {0}")]
    Key(String),
}

/// The configured `payTo` (checksummed), or the dev key's address on test networks.
///
/// Also refuses a mainnet network without a settlement path: such a server would accept
/// authorizations it can never redeem, and count them as sales.
pub async fn resolve_pay_to(config: &PaymentConfig, keys: &Keyring) -> Result<String, PayToError> {
    if config.facilitator == FacilitatorConfig::Local {
        if let Some(network) = config.networks.iter().find(|n| n.is_mainnet()) {
            return Err(PayToError::MainnetNeedsSettlement(format!(
                "{} ({})",
                network.v1_name, network.caip2
            )));
        }
    }
    if let Some(configured) = &config.pay_to {
        let address = Address::from_str(configured.trim())
            .map_err(|_| PayToError::NotAnAddress(configured.clone()))?;
        return Ok(address.to_checksum(None));
    }
    if config.networks.iter().any(|n| n.is_mainnet()) {
        return Err(PayToError::MainnetNeedsPayTo);
    }
    let (text, _) = keys
        .key("dev_pay_to_key", None, || {
            hex::encode(PrivateKeySigner::random().to_bytes())
        })
        .await
        .map_err(|e| PayToError::Key(e.to_string()))?;
    let signer =
        PrivateKeySigner::from_str(text.trim()).map_err(|e| PayToError::Key(e.to_string()))?;
    Ok(signer.address().to_checksum(None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::x402::config::{NetworkConfig, RemoteConfig};

    #[tokio::test]
    async fn dev_default_is_stable_and_mainnet_needs_config() {
        let dir = tempfile::tempdir().unwrap();
        let keys = Keyring::Files(dir.path().to_path_buf());
        let config = Config::new(dir.path()).payment;
        let first = resolve_pay_to(&config, &keys).await.unwrap();
        assert_eq!(resolve_pay_to(&config, &keys).await.unwrap(), first);
        let mut mainnet = config.clone();
        mainnet.networks.push(NetworkConfig::base());
        // Recording only, a mainnet is refused even with an address.
        mainnet.pay_to = Some("0x000000000000000000000000000000000000dead".into());
        let refused = resolve_pay_to(&mainnet, &keys).await.unwrap_err();
        assert!(
            matches!(refused, PayToError::MainnetNeedsSettlement(ref n) if n == "base (eip155:8453)"),
            "{refused}"
        );
        mainnet.facilitator =
            FacilitatorConfig::Remote(RemoteConfig::open("https://facilitator.example"));
        mainnet.pay_to = None;
        assert!(matches!(
            resolve_pay_to(&mainnet, &keys).await,
            Err(PayToError::MainnetNeedsPayTo)
        ));
        mainnet.pay_to = Some("0x000000000000000000000000000000000000dead".into());
        assert_eq!(
            resolve_pay_to(&mainnet, &keys).await.unwrap(),
            "0x000000000000000000000000000000000000dEaD"
        );
        mainnet.pay_to = Some("nope".into());
        assert!(matches!(
            resolve_pay_to(&mainnet, &keys).await,
            Err(PayToError::NotAnAddress(_))
        ));
    }
}
