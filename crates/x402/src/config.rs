//! What the operator configures of the x402 wing: the networks (chain, asset, EIP-712 domain)
//! payments are accepted on, and who verifies and settles them. The service's own payment
//! settings hold these beside what it sells (`toolhost::config::PaymentConfig`).

use std::path::PathBuf;
use std::time::Duration;

/// Where x402 payments are verified and settled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FacilitatorConfig {
    /// Verified here (EIP-712 signature recovery); settlement recorded in the ledger only, and
    /// every receipt says it was not settled on-chain.
    Local,
    /// Verified here, then settled on-chain: the settler submits the payer's
    /// `transferWithAuthorization` to the asset contract and waits for it to be mined.
    OnChain(OnChainConfig),
    /// A facilitator speaking the standard API (`POST /verify`, `POST /settle`,
    /// `GET /supported`), hosted by someone else.
    Remote(RemoteConfig),
}

/// A hosted facilitator: where it is, and how toolhost proves who it is there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteConfig {
    /// Base URL; `/verify`, `/settle` and `/supported` are under it.
    pub url: String,
    pub auth: FacilitatorAuth,
    /// How often its `GET /supported` is read again after the one at start-up.
    pub supported_refresh: Duration,
}

impl RemoteConfig {
    /// How often `/supported` is read again unless configured otherwise.
    pub const DEFAULT_SUPPORTED_REFRESH: Duration = Duration::from_secs(300);

    /// A facilitator that asks for no credentials (a self-hosted one, a free tier).
    pub fn open(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            auth: FacilitatorAuth::default(),
            supported_refresh: Self::DEFAULT_SUPPORTED_REFRESH,
        }
    }
}

/// The credentials sent with every request to a hosted facilitator. At most one of `bearer`
/// and `cdp` (both are the `Authorization` header).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FacilitatorAuth {
    /// `Authorization: Bearer <token>` (e.g. PayAI beyond its free tier).
    pub bearer: Option<Secret>,
    /// A JWT per request, signed with a Coinbase Developer Platform API key (the CDP
    /// facilitator).
    pub cdp: Option<CdpKey>,
    /// Further headers by name, e.g. an `X-Api-Key`.
    pub headers: Vec<(String, Secret)>,
}

/// A Coinbase Developer Platform secret API key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CdpKey {
    /// The key's id (a UUID, or `organizations/{org}/apiKeys/{key}` for older keys); `None`
    /// when the secret is the JSON key file CDP hands out, which names it.
    pub id: Option<String>,
    /// The private key: Ed25519 (base64, as CDP shows it), an EC P-256 PEM, or CDP's JSON key
    /// file (`{"id" or "name", "privateKey"}`) holding either.
    pub secret: Secret,
}

/// On-chain settlement by the local facilitator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OnChainConfig {
    /// EVM JSON-RPC endpoint of the accepted network's chain (operator configuration, reached
    /// directly). Start-up checks its `eth_chainId`.
    pub rpc_url: String,
    /// The account that submits (and pays gas for) the transfers: its 32-byte hex private key.
    pub settler_key: Secret,
    /// How long to wait for a broadcast transaction to be mined before recording it as
    /// `pending`.
    pub confirmation_timeout: Duration,
}

/// Where a secret the operator configures comes from (a settler key, a facilitator's
/// credentials). `Debug` never shows it, and neither flag nor argv ever holds it: argv is
/// visible to every local user.
#[derive(Clone, PartialEq, Eq)]
pub enum Secret {
    /// A file only its owner may read (start-up refuses a group- or world-readable one).
    File(PathBuf),
    /// The secret itself, from an environment variable (e.g. `TOOLHOST_SETTLER_KEY`).
    Value(String),
}

impl Secret {
    /// The secret's text, without surrounding whitespace. The error names the file, never
    /// the content.
    pub fn read(&self) -> Result<String, String> {
        match self {
            Secret::File(path) => {
                toolhost_values::keyfile::read_owner_only(path).map_err(|e| e.to_string())
            }
            Secret::Value(text) => Ok(text.trim().to_string()),
        }
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Secret::File(path) => f.debug_tuple("File").field(path).finish(),
            Secret::Value(_) => f.write_str("Value(<redacted>)"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkConfig {
    /// CAIP-2 id, e.g. `eip155:84532`.
    pub caip2: String,
    /// x402 v1 network name, e.g. `base-sepolia`.
    pub v1_name: String,
    pub chain_id: u64,
    /// USDC contract address on this chain.
    pub asset: String,
    /// EIP-712 domain name and version of the asset contract.
    pub eip712_name: String,
    pub eip712_version: String,
    /// How an `exact` payment moves the asset.
    pub transfer_method: TransferMethod,
}

/// How an `exact` payment moves a network's asset (x402's `extra.assetTransferMethod`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TransferMethod {
    /// EIP-3009 `transferWithAuthorization` (USDC).
    #[default]
    Eip3009,
    /// A Permit2 signature transfer through x402's exact proxy, for tokens without EIP-3009
    /// (the payer approves Permit2 once).
    Permit2,
}

impl NetworkConfig {
    pub fn base_sepolia() -> Self {
        Self {
            caip2: "eip155:84532".into(),
            v1_name: "base-sepolia".into(),
            chain_id: 84532,
            asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e".into(),
            eip712_name: "USDC".into(),
            eip712_version: "2".into(),
            transfer_method: TransferMethod::Eip3009,
        }
    }

    /// Whether payments here may move real money; such networks need a configured `pay_to`.
    /// Any chain not known as a test or dev chain counts, so a custom network is treated as
    /// real until proven otherwise.
    pub fn is_mainnet(&self) -> bool {
        const TEST_CHAINS: [u64; 4] = [
            84532,    // Base Sepolia
            11155111, // Sepolia
            31337,    // anvil, hardhat
            1337,     // geth --dev, ganache
        ];
        !TEST_CHAINS.contains(&self.chain_id)
    }

    pub fn base() -> Self {
        Self {
            caip2: "eip155:8453".into(),
            v1_name: "base".into(),
            chain_id: 8453,
            asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913".into(),
            eip712_name: "USD Coin".into(),
            eip712_version: "2".into(),
            transfer_method: TransferMethod::Eip3009,
        }
    }
}

/// `--network`: a built-in network by its v1 name (`base-sepolia`, `base`), or a custom one as
/// `v1Name,eip155:<chainId>,<asset>,<eip712Name>,<eip712Version>[,permit2]`, e.g.
/// `local,eip155:31337,0x5FbDB2315678afecb367f032d93F642f64180aa3,USDC,2`; a trailing
/// `permit2` says the asset is paid by Permit2 (`exact` with `assetTransferMethod`).
impl std::str::FromStr for NetworkConfig {
    type Err = String;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let fields: Vec<&str> = spec.split(',').map(str::trim).collect();
        match fields.as_slice() {
            ["base-sepolia"] => Ok(Self::base_sepolia()),
            ["base"] => Ok(Self::base()),
            [v1_name, caip2, asset, name, version] | [v1_name, caip2, asset, name, version, _] => {
                let transfer_method = match fields.get(5) {
                    None => TransferMethod::Eip3009,
                    Some(&"permit2") => TransferMethod::Permit2,
                    Some(other) => {
                        return Err(format!(
                            "network {spec:?}: the sixth field, if any, is `permit2` (not {other:?})"
                        ))
                    }
                };
                let chain_id = caip2
                    .strip_prefix("eip155:")
                    .and_then(|id| id.parse::<u64>().ok())
                    .filter(|id| *id > 0)
                    .ok_or_else(|| format!("{caip2:?} is not an EVM CAIP-2 id (eip155:<chainId>)"))?;
                let asset = alloy_primitives::Address::from_str(asset)
                    .map_err(|_| format!("asset {asset:?} is not an EVM address"))?;
                if v1_name.is_empty() || name.is_empty() || version.is_empty() {
                    return Err("the v1 name, EIP-712 name and version must not be empty".into());
                }
                Ok(Self {
                    caip2: format!("eip155:{chain_id}"),
                    v1_name: v1_name.to_string(),
                    chain_id,
                    asset: asset.to_checksum(None),
                    eip712_name: name.to_string(),
                    eip712_version: version.to_string(),
                    transfer_method,
                })
            }
            _ => Err(format!(
                "network {spec:?}: expected base-sepolia, base, or v1Name,eip155:<chainId>,<asset>,<eip712Name>,<eip712Version>[,permit2]"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn networks_parse_by_name_or_in_full() {
        assert_eq!(
            NetworkConfig::from_str("base-sepolia"),
            Ok(NetworkConfig::base_sepolia())
        );
        assert_eq!(NetworkConfig::from_str("base"), Ok(NetworkConfig::base()));
        let local = NetworkConfig::from_str(
            "local, eip155:31337, 0x5fbdb2315678afecb367f032d93f642f64180aa3, USD Coin, 2",
        )
        .unwrap();
        assert_eq!(local.caip2, "eip155:31337");
        assert_eq!(local.chain_id, 31337);
        assert_eq!(local.v1_name, "local");
        assert_eq!(local.asset, "0x5FbDB2315678afecb367f032d93F642f64180aa3");
        assert_eq!(local.eip712_name, "USD Coin");
        assert_eq!(local.transfer_method, TransferMethod::Eip3009);
        let permit2 = NetworkConfig::from_str(
            "usdt, eip155:31337, 0x5fbdb2315678afecb367f032d93f642f64180aa3, Tether USD, 1, permit2",
        )
        .unwrap();
        assert_eq!(permit2.transfer_method, TransferMethod::Permit2);
        assert!(!local.is_mainnet());
        for bad in [
            "sepolia",
            "local,31337,0x5fbdb2315678afecb367f032d93f642f64180aa3,USDC,2",
            "local,eip155:0,0x5fbdb2315678afecb367f032d93f642f64180aa3,USDC,2",
            "local,eip155:31337,0x5fbd,USDC,2",
            "local,eip155:31337,0x5fbdb2315678afecb367f032d93f642f64180aa3,,2",
            "local,eip155:31337,0x5fbdb2315678afecb367f032d93f642f64180aa3,USDC,2,permit3",
        ] {
            assert!(NetworkConfig::from_str(bad).is_err(), "{bad}");
        }
        // A chain not known as a test chain is treated as real money.
        let custom =
            NetworkConfig::from_str("x,eip155:1,0x5fbdb2315678afecb367f032d93f642f64180aa3,USDC,2")
                .unwrap();
        assert!(custom.is_mainnet());
    }

    #[test]
    fn secrets_never_show_in_debug() {
        let key = Secret::Value(
            "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80".into(),
        );
        assert!(!format!("{key:?}").contains("ac0974"));
    }
}
