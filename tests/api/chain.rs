//! On-chain settlement against a real local EVM node: anvil (the binary in npm
//! `@foundry-rs/anvil-linux-amd64`) on an ephemeral loopback port, `fixtures/chain/TestUSDC.sol` compiled
//! by solcjs (`tests/chain/compile.mjs`) and deployed, toolhost configured for that chain and
//! paid with real EIP-3009 authorizations. `scripts/setup.sh` installs `tests/chain/node_modules`;
//! without it (or without node) the tests are skipped locally and fail under CI.
//!
//! The tests drive the chain through anvil's unlocked dev account (`eth_sendTransaction`) and
//! read it back with `eth_call`, independently of toolhost's own RPC client.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::str::FromStr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use alloy_primitives::{Address, B256, U256};
use alloy_signer_local::PrivateKeySigner;
use alloy_sol_types::{sol, SolCall};
use base64::Engine;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use toolhost::config::Config;
use toolhost::server::Server;
use toolhost::x402::config::{FacilitatorConfig, NetworkConfig, OnChainConfig, Secret};
use toolhost::x402::schemes::exact_evm::signing::sign;
use toolhost::x402::PaymentRequirements;

use crate::util::{self, assert_error, assert_payment_required, TestServer};

const PAID: &str = "/tools/receipt-echo-paid";
/// The paid echo's price in atomic units.
const PRICE: u64 = 1000;

sol! {
    function mint(address to, uint256 value) external;
    function balanceOf(address account) external view returns (uint256);
    function transfer(address to, uint256 value) external returns (bool);
    function approve(address spender, uint256 value) external returns (bool);
    function DOMAIN_SEPARATOR() external view returns (bytes32);
}

fn chain_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/chain")
}

/// The anvil binary of the installed platform package, if any.
fn anvil_binary() -> Option<PathBuf> {
    let scope = chain_dir().join("node_modules/@foundry-rs");
    std::fs::read_dir(scope)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("anvil-"))
        .map(|e| e.path().join("bin/anvil"))
        .find(|p| p.exists())
}

/// Whether the chain tests can run here; under CI they must.
fn available() -> bool {
    let node = std::process::Command::new("node").arg("--version").output();
    let ready =
        node.is_ok() && anvil_binary().is_some() && chain_dir().join("node_modules/solc").exists();
    if !ready {
        assert!(
            std::env::var_os("CI").is_none(),
            "node or tests/chain/node_modules is missing: run scripts/setup.sh"
        );
        eprintln!(
            "skipped: node or tests/chain/node_modules is missing (scripts/setup.sh installs them)"
        );
    }
    ready
}

/// What `tests/chain/compile.mjs` makes, once per test binary: TestUSDC's creation code, the
/// runtime code of the stand-ins for x402's Permit2 proxies, and Permit2's published runtime
/// code (from its npm package).
fn artifact() -> &'static Value {
    static ARTIFACT: OnceLock<Value> = OnceLock::new();
    ARTIFACT.get_or_init(|| {
        let output = std::process::Command::new("node")
            .arg("compile.mjs")
            .current_dir(chain_dir())
            .output()
            .expect("node runs");
        assert!(
            output.status.success(),
            "compile.mjs failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).expect("artifact JSON")
    })
}

/// TestUSDC's creation bytecode.
fn bytecode() -> &'static str {
    artifact()["bytecode"].as_str().expect("bytecode")
}

/// A local chain with TestUSDC deployed.
struct Chain {
    url: String,
    client: reqwest::Client,
    /// Anvil's first dev account: unlocked, funded, deployer of the token.
    dev: String,
    token: Address,
    _node: Child,
}

impl Chain {
    async fn start() -> Self {
        let mut node = Command::new(anvil_binary().expect("anvil"))
            .args(["--host", "127.0.0.1", "--port", "0", "--chain-id", "31337"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("anvil starts");
        let mut lines = BufReader::new(node.stdout.take().expect("stdout")).lines();
        let address = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await.expect("anvil output") {
                if let Some(address) = line.strip_prefix("Listening on ") {
                    return address.trim().to_string();
                }
            }
            panic!("anvil exited before listening");
        })
        .await
        .expect("anvil listens within 30 s");
        // Keep draining its output so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let mut chain = Self {
            url: format!("http://{address}"),
            client: reqwest::Client::new(),
            dev: String::new(),
            token: Address::ZERO,
            _node: node,
        };
        chain.dev = chain.rpc("eth_accounts", json!([])).await[0]
            .as_str()
            .unwrap()
            .to_string();
        let deployed = chain.transact(None, bytecode()).await;
        chain.token = Address::from_str(deployed["contractAddress"].as_str().unwrap()).unwrap();
        chain
    }

    /// Puts Permit2 and x402's two proxies at their canonical addresses, as on a chain where
    /// they are deployed.
    async fn with_permit2(&self) {
        use toolhost::x402::schemes::permit2::{EXACT_PROXY, PERMIT2, UPTO_PROXY};
        for (address, code) in [
            (PERMIT2, "permit2"),
            (EXACT_PROXY, "exactProxy"),
            (UPTO_PROXY, "uptoProxy"),
        ] {
            let code = artifact()[code].as_str().expect("runtime code");
            self.rpc("anvil_setCode", json!([address.to_string(), code]))
                .await;
        }
    }

    /// `owner` lets Permit2 move its tokens (an approval sent from its own account).
    async fn approve_permit2(&self, owner: Address) {
        use toolhost::x402::schemes::permit2::PERMIT2;
        self.rpc(
            "anvil_setBalance",
            json!([owner.to_string(), "0x8ac7230489e80000"]),
        )
        .await;
        self.rpc("anvil_impersonateAccount", json!([owner.to_string()]))
            .await;
        let call = approveCall {
            spender: PERMIT2,
            value: U256::MAX,
        };
        let tx = json!({"from": owner.to_string(), "to": self.token.to_string(),
            "data": format!("0x{}", hex::encode(call.abi_encode()))});
        let hash = self.rpc("eth_sendTransaction", json!([tx])).await;
        assert_eq!(self.mined(&hash).await["status"], "0x1");
        self.rpc("anvil_stopImpersonatingAccount", json!([owner.to_string()]))
            .await;
    }

    async fn try_rpc(&self, method: &str, params: Value) -> Result<Value, Value> {
        let answer: Value = self
            .client
            .post(&self.url)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
            .send()
            .await
            .expect("anvil answers")
            .json()
            .await
            .expect("JSON-RPC");
        match answer.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(answer["result"].clone()),
        }
    }

    async fn rpc(&self, method: &str, params: Value) -> Value {
        self.try_rpc(method, params)
            .await
            .unwrap_or_else(|e| panic!("{method}: {e}"))
    }

    /// Sends a transaction from the dev account and returns its (mined) receipt.
    async fn transact(&self, to: Option<Address>, data: &str) -> Value {
        let mut tx = json!({"from": self.dev, "data": data});
        if let Some(to) = to {
            tx["to"] = json!(to.to_string());
        }
        let hash = self.rpc("eth_sendTransaction", json!([tx])).await;
        let receipt = self.mined(&hash).await;
        assert_eq!(receipt["status"], "0x1", "{receipt}");
        receipt
    }

    /// The receipt of `hash`, once mined (anvil mines a moment after it accepts).
    async fn mined(&self, hash: &Value) -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let receipt = self.rpc("eth_getTransactionReceipt", json!([hash])).await;
            if !receipt.is_null() || Instant::now() > deadline {
                return receipt;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn mint(&self, to: Address, value: u64) {
        let call = mintCall {
            to,
            value: U256::from(value),
        };
        let data = format!("0x{}", hex::encode(call.abi_encode()));
        self.transact(Some(self.token), &data).await;
    }

    async fn balance(&self, who: Address) -> u64 {
        let data = format!(
            "0x{}",
            hex::encode(balanceOfCall { account: who }.abi_encode())
        );
        let result = self
            .rpc(
                "eth_call",
                json!([{"to": self.token.to_string(), "data": data}, "latest"]),
            )
            .await;
        let bytes = hex::decode(result.as_str().unwrap().trim_start_matches("0x")).unwrap();
        balanceOfCall::abi_decode_returns(&bytes)
            .unwrap()
            .try_into()
            .unwrap()
    }

    async fn nonce(&self, who: Address) -> u64 {
        let count = self
            .rpc(
                "eth_getTransactionCount",
                json!([who.to_string(), "latest"]),
            )
            .await;
        u64::from_str_radix(count.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
    }

    /// The account's next nonce counting transactions not yet mined.
    async fn pending_nonce(&self, who: Address) -> u64 {
        let count = self
            .rpc(
                "eth_getTransactionCount",
                json!([who.to_string(), "pending"]),
            )
            .await;
        u64::from_str_radix(count.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
    }

    /// A fresh settler account with gas money.
    async fn settler(&self) -> PrivateKeySigner {
        let settler = PrivateKeySigner::random();
        self.rpc(
            "anvil_setBalance",
            json!([settler.address().to_string(), "0x8ac7230489e80000"]),
        )
        .await;
        settler
    }

    fn network(&self) -> NetworkConfig {
        NetworkConfig::from_str(&format!("local,eip155:31337,{},USDC,2", self.token)).unwrap()
    }
}

/// Configures on-chain settlement through `chain` by `settler`, whose key is written to an
/// owner-only file in `dir`.
fn settle_on(
    config: &mut Config,
    chain: &Chain,
    settler: &PrivateKeySigner,
    pay_to: Address,
    dir: &Path,
    timeout: Duration,
) {
    let key_file = dir.join("settler_key");
    write_key(&key_file, settler, 0o600);
    config.payment.pay_to = Some(pay_to.to_string());
    config.payment.networks = vec![chain.network()];
    config.payment.facilitator = FacilitatorConfig::OnChain(OnChainConfig {
        rpc_url: chain.url.clone(),
        settler_key: Secret::File(key_file),
        confirmation_timeout: timeout,
    });
}

/// What every settlement test starts from: a chain with the token deployed, a funded settler,
/// a payee nobody holds the key of, and a dir for the settler's key file.
struct Settling {
    chain: Chain,
    settler: PrivateKeySigner,
    pay_to: Address,
    dir: tempfile::TempDir,
}

impl Settling {
    async fn start() -> Self {
        let chain = Chain::start().await;
        let settler = chain.settler().await;
        Self {
            chain,
            settler,
            pay_to: PrivateKeySigner::random().address(),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn configure(&self, config: &mut Config, timeout: Duration) {
        settle_on(
            config,
            &self.chain,
            &self.settler,
            self.pay_to,
            self.dir.path(),
            timeout,
        );
    }

    /// `toolhost serve` arguments settling through this chain (a minute to see each transfer
    /// mined), with the settler's key in an owner-only file.
    fn node_args(&self) -> Vec<String> {
        let key_file = self.dir.path().join("settler_key");
        write_key(&key_file, &self.settler, 0o600);
        [
            "--pay-to".to_string(),
            self.pay_to.to_string(),
            "--network".into(),
            format!("local,eip155:31337,{},USDC,2", self.chain.token),
            "--evm-rpc-url".into(),
            self.chain.url.clone(),
            "--settler-key-file".into(),
            key_file.display().to_string(),
            "--settlement-timeout-secs".into(),
            "60".into(),
        ]
        .into()
    }

    /// A server settling through this chain, waiting up to `timeout` for each receipt.
    async fn server(&self, timeout: Duration) -> TestServer {
        TestServer::start_with(|c| self.configure(c, timeout)).await
    }
}

fn write_key(path: &Path, key: &PrivateKeySigner, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, hex::encode(key.to_bytes())).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn b64json(text: &str) -> Value {
    serde_json::from_slice(
        &base64::engine::general_purpose::STANDARD
            .decode(text)
            .expect("base64"),
    )
    .expect("json")
}

/// A signed payment header (name, value) for what `server` asks on `PAID`, in `version`.
async fn pay(
    server: &TestServer,
    network: &NetworkConfig,
    payer: &PrivateKeySigner,
    version: u8,
) -> (&'static str, String) {
    let required =
        crate::util::payment_required(&server.client, &server.url(PAID), &json!({})).await;
    let requirement: PaymentRequirements =
        serde_json::from_value(required["accepts"][0].clone()).unwrap();
    assert_eq!(requirement.network, "eip155:31337");
    let payload = sign(payer, network, &requirement, |_| {}).unwrap();
    let (name, wire) = if version == 2 {
        (
            "PAYMENT-SIGNATURE",
            json!({"x402Version": 2, "resource": required["resource"], "accepted": requirement, "payload": payload}),
        )
    } else {
        (
            "X-PAYMENT",
            json!({"x402Version": 1, "scheme": "exact", "network": network.v1_name, "payload": payload}),
        )
    };
    (name, toolhost::x402::header::encode(&wire))
}

/// The paid endpoint, paid with `header`.
async fn post_paid(
    server: &TestServer,
    header: &(&str, String),
) -> (reqwest::StatusCode, reqwest::header::HeaderMap, Value) {
    util::post_paid(server, PAID, header, json!({"hello": "chain"})).await
}

/// With a chain RPC, the asset contract is asked before the handler runs: a payer whose balance
/// does not cover the price (an empty key) and an authorization already used on-chain (here by
/// another server on the same chain, so this one's store has never seen it) are refused with
/// 402 and the x402 reason, and the handler never runs.
#[tokio::test]
async fn a_payment_that_cannot_settle_is_refused_before_the_handler_runs() {
    if !available() {
        return;
    }
    let setup = Settling::start().await;
    let (chain, settler, pay_to) = (&setup.chain, &setup.settler, setup.pay_to);
    let server = setup.server(Duration::from_secs(10)).await;
    let network = chain.network();

    let empty = PrivateKeySigner::random();
    let header = pay(&server, &network, &empty, 2).await;
    let (status, headers, body) = post_paid(&server, &header).await;
    assert_payment_required(status, &body, "invalid_exact_evm_insufficient_balance");
    assert!(headers.contains_key("payment-required"));
    assert!(
        body["message"].as_str().unwrap().contains("holds 0"),
        "{body}"
    );
    assert_eq!(
        server.handler_runs("receipt-echo-paid").await,
        0,
        "the handler must not run"
    );
    assert_eq!(chain.nonce(settler.address()).await, 0, "nothing broadcast");
    // Funded, the same authorization pays (its claim was released) and the handler runs once.
    chain.mint(empty.address(), PRICE).await;
    let (status, _, body) = post_paid(&server, &header).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["receipt"]["settlement"]["collected"], true);
    assert_eq!(server.handler_runs("receipt-echo-paid").await, 1);

    // Used on-chain by another server: this one refuses it before its handler runs.
    let payer = PrivateKeySigner::random();
    chain.mint(payer.address(), 2 * PRICE).await;
    let other = TestServer::start_with(|c| setup.configure(c, Duration::from_secs(10))).await;
    let header = pay(&other, &network, &payer, 1).await;
    let (status, _, body) = post_paid(&other, &header).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(chain.balance(pay_to).await, 2 * PRICE);
    let (status, _, body) = post_paid(&server, &header).await;
    assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");
    assert!(
        body["message"].as_str().unwrap().contains("asset contract"),
        "{body}"
    );
    assert_eq!(
        server.handler_runs("receipt-echo-paid").await,
        1,
        "the handler must not run"
    );
    assert_eq!(chain.balance(payer.address()).await, PRICE);
    other.stop().await;
    server.stop().await;
}

#[tokio::test]
async fn settles_on_chain_and_charges_nothing_when_the_chain_refuses() {
    if !available() {
        return;
    }
    let setup = Settling::start().await;
    let (chain, settler, pay_to) = (&setup.chain, &setup.settler, setup.pay_to);
    let payer = PrivateKeySigner::random();
    chain.mint(payer.address(), 1_000_000).await;
    let server = setup.server(Duration::from_secs(10)).await;
    let network = chain.network();
    let (_, manifest) = server.get("/ai/manifest").await;
    assert_eq!(manifest["payment"]["facilitator"]["settlesOnChain"], true);
    let (_, supported) = server.get("/x402/supported").await;
    assert_eq!(
        supported["signers"]["eip155:*"][0],
        settler.address().to_checksum(None)
    );

    // Paid over v2 and v1: each a mined transfer of exactly the price, payer → payTo.
    let mut first_header = None;
    for (round, version) in [(1u64, 2u8), (2, 1)] {
        let header = pay(&server, &network, &payer, version).await;
        let started = Instant::now();
        let (status, headers, body) = post_paid(&server, &header).await;
        eprintln!(
            "on-chain paid call (x402 v{version}) answered in {} ms",
            started.elapsed().as_millis()
        );
        assert_eq!(status, 200, "{body}");
        let receipt = &body["receipt"];
        assert_eq!(receipt["settlement"]["status"], "settled", "{receipt}");
        assert_eq!(receipt["settlement"]["onChain"], true);
        assert_eq!(receipt["settlement"]["facilitator"], "local");
        assert_eq!(receipt["network"], "eip155:31337");
        assert_eq!(receipt["asset"], chain.token.to_checksum(None));
        let transaction = receipt["settlement"]["transaction"].as_str().unwrap();
        assert_eq!(transaction.len(), 66, "{transaction}");
        let response_header = if version == 2 {
            "payment-response"
        } else {
            "x-payment-response"
        };
        let settlement = b64json(headers[response_header].to_str().unwrap());
        assert_eq!(settlement["success"], true);
        assert_eq!(settlement["transaction"], transaction);
        assert_eq!(settlement["payer"], payer.address().to_checksum(None));
        let mined = chain.mined(&json!(transaction)).await;
        assert_eq!(mined["status"], "0x1");
        assert_eq!(
            mined["from"].as_str().unwrap(),
            settler.address().to_string().to_lowercase()
        );
        assert_eq!(
            chain.balance(payer.address()).await,
            1_000_000 - round * PRICE
        );
        assert_eq!(chain.balance(pay_to).await, round * PRICE);
        let (status, stored) = server
            .get(&format!(
                "/ai/receipts/{}",
                receipt["receiptId"].as_str().unwrap()
            ))
            .await;
        assert_eq!(status, 200);
        assert_eq!(&stored, receipt);
        let parsed: toolhost::receipts::Receipt = serde_json::from_value(stored).unwrap();
        let public_key = manifest["receipts"]["publicKey"].as_str().unwrap();
        assert!(toolhost::receipts::verify_receipt(&parsed, public_key));
        first_header.get_or_insert(header);
    }

    // The same authorization again: refused before anything reaches the chain.
    let settler_nonce = chain.nonce(settler.address()).await;
    assert_eq!(settler_nonce, 2);
    let (status, _, body) = post_paid(&server, first_header.as_ref().unwrap()).await;
    assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");

    // A payer without funds: refused before the handler runs (the balance check), nothing is
    // broadcast, charged or recorded, and the nonce claim is released, so the same
    // authorization settles once funded.
    let broke = PrivateKeySigner::random();
    let header = pay(&server, &network, &broke, 2).await;
    let (status, headers, body) = post_paid(&server, &header).await;
    assert_payment_required(status, &body, "invalid_exact_evm_insufficient_balance");
    assert!(headers.contains_key("payment-required"));
    assert!(
        body["message"].as_str().unwrap().contains("holds 0"),
        "{body}"
    );
    assert_eq!(chain.nonce(settler.address()).await, settler_nonce);
    assert_eq!(chain.balance(pay_to).await, 2 * PRICE);
    chain.mint(broke.address(), PRICE).await;
    let (status, _, body) = post_paid(&server, &header).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["receipt"]["settlement"]["onChain"], true);
    assert_eq!(chain.balance(broke.address()).await, 0);
    assert_eq!(chain.balance(pay_to).await, 3 * PRICE);

    // Latency of sequential paid calls against the local node (instant mining).
    let mut millis = Vec::new();
    for _ in 0..10 {
        let header = pay(&server, &network, &payer, 2).await;
        let started = Instant::now();
        let (status, _, body) = post_paid(&server, &header).await;
        millis.push(started.elapsed());
        assert_eq!(status, 200, "{body}");
    }
    millis.sort_unstable();
    let mut free = Vec::new();
    for _ in 0..10 {
        let started = Instant::now();
        let (status, _) = server
            .post("/tools/receipt-echo", &json!({"hello": "chain"}))
            .await;
        free.push(started.elapsed());
        assert_eq!(status, 200);
    }
    free.sort_unstable();
    eprintln!(
        "10 sequential calls: on-chain paid median {:?} (max {:?}), free median {:?}",
        millis[5], millis[9], free[5]
    );
    assert_eq!(chain.balance(pay_to).await, 13 * PRICE);
    server.stop().await;
}

#[tokio::test]
async fn concurrent_settlements_take_consecutive_settler_nonces() {
    if !available() {
        return;
    }
    let setup = Settling::start().await;
    let (chain, settler, pay_to) = (&setup.chain, &setup.settler, setup.pay_to);
    let server = setup.server(Duration::from_secs(10)).await;
    let network = chain.network();
    const PAYERS: usize = 8;
    let mut headers = Vec::new();
    for _ in 0..PAYERS {
        let payer = PrivateKeySigner::random();
        chain.mint(payer.address(), PRICE).await;
        headers.push(pay(&server, &network, &payer, 2).await);
    }
    let started = Instant::now();
    let answers =
        futures::future::join_all(headers.iter().map(|header| post_paid(&server, header))).await;
    eprintln!(
        "{PAYERS} concurrent on-chain paid calls answered in {} ms",
        started.elapsed().as_millis()
    );
    let mut transactions = std::collections::HashSet::new();
    for (status, _, body) in &answers {
        assert_eq!(*status, 200, "{body}");
        assert_eq!(body["receipt"]["settlement"]["status"], "settled");
        transactions.insert(body["receipt"]["settlement"]["transaction"].clone());
    }
    assert_eq!(transactions.len(), PAYERS);
    assert_eq!(chain.nonce(settler.address()).await, PAYERS as u64);
    assert_eq!(chain.balance(pay_to).await, PAYERS as u64 * PRICE);
    server.stop().await;
}

#[tokio::test]
async fn unmined_transfers_are_served_as_pending_with_their_transaction() {
    if !available() {
        return;
    }
    let setup = Settling::start().await;
    let (chain, pay_to) = (&setup.chain, setup.pay_to);
    let payer = PrivateKeySigner::random();
    chain.mint(payer.address(), PRICE).await;
    let server = setup.server(Duration::from_secs(1)).await;
    chain.rpc("evm_setAutomine", json!([false])).await;
    let header = pay(&server, &chain.network(), &payer, 2).await;
    let (status, _, body) = post_paid(&server, &header).await;
    assert_eq!(status, 200, "{body}");
    let settlement = &body["receipt"]["settlement"];
    assert_eq!(settlement["status"], "pending", "{settlement}");
    assert_eq!(settlement["onChain"], false);
    let transaction = settlement["transaction"].as_str().unwrap().to_string();
    assert_eq!(chain.balance(pay_to).await, 0);
    // The replay guard holds while the transfer is pending.
    let (status, _, body) = post_paid(&server, &header).await;
    assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");
    // Mined later, the transfer is the one the receipt names.
    chain.rpc("evm_mine", json!([])).await;
    let mined = chain.mined(&json!(transaction)).await;
    assert_eq!(mined["status"], "0x1");
    assert_eq!(chain.balance(pay_to).await, PRICE);
    server.stop().await;
}

#[tokio::test]
async fn a_transfer_that_reverts_when_mined_charges_nothing() {
    if !available() {
        return;
    }
    let setup = Settling::start().await;
    let (chain, settler, pay_to) = (&setup.chain, &setup.settler, setup.pay_to);
    // The payer has the funds when the settlement is simulated, and spends them elsewhere in
    // the same block, ahead of the settlement (a higher tip): the transfer is broadcast, then
    // reverts when mined.
    let payer = PrivateKeySigner::random();
    chain.mint(payer.address(), PRICE).await;
    let server = setup.server(Duration::from_secs(20)).await;
    let network = chain.network();
    let header = pay(&server, &network, &payer, 2).await;
    chain.rpc("evm_setAutomine", json!([false])).await;
    let call = post_paid(&server, &header);
    let front_run = async {
        let deadline = Instant::now() + Duration::from_secs(10);
        while chain.pending_nonce(settler.address()).await < 1 {
            assert!(
                Instant::now() < deadline,
                "the transfer was never broadcast"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let from = payer.address().to_string();
        chain.rpc("anvil_impersonateAccount", json!([from])).await;
        chain
            .rpc("anvil_setBalance", json!([from, "0x8ac7230489e80000"]))
            .await;
        let drain = transferCall {
            to: Address::repeat_byte(0xdd),
            value: U256::from(PRICE),
        };
        let tx = json!({
            "from": from, "to": chain.token.to_string(),
            "data": format!("0x{}", hex::encode(drain.abi_encode())),
            "gas": "0x30d40", "maxPriorityFeePerGas": "0x174876e800", "maxFeePerGas": "0x2540be4000",
        });
        chain.rpc("eth_sendTransaction", json!([tx])).await;
        chain.rpc("evm_mine", json!([])).await;
    };
    let (refused, ()) = futures::future::join(call, front_run).await;

    assert_payment_required(
        refused.0,
        &refused.2,
        "invalid_exact_evm_transaction_failed",
    );
    let message = refused.2["message"].as_str().unwrap();
    assert!(message.contains("reverted"), "{message}");
    assert!(message.contains("spent"), "{message}");
    assert!(refused.2.get("receipt").is_none());
    // Mined and reverted: the settler paid gas, no money moved to payTo.
    assert_eq!(chain.nonce(settler.address()).await, 1);
    assert_eq!(chain.balance(pay_to).await, 0);
    assert_eq!(chain.balance(Address::repeat_byte(0xdd)).await, PRICE);
    assert_eq!(server.handler_runs("receipt-echo-paid").await, 1);
    // The handler ran, so the authorization is burned: funded again (it would settle now), it
    // is still refused, before the handler runs a second time.
    chain.rpc("evm_setAutomine", json!([true])).await;
    chain.mint(payer.address(), PRICE).await;
    let (status, _, body) = post_paid(&server, &header).await;
    assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");
    assert_eq!(
        server.handler_runs("receipt-echo-paid").await,
        1,
        "the handler ran again"
    );
    assert_eq!(chain.nonce(settler.address()).await, 1);
    assert_eq!(chain.balance(pay_to).await, 0);
    server.stop().await;
}

#[tokio::test]
async fn start_up_checks_the_chain_and_the_key_file_and_an_unreachable_chain_is_502() {
    if !available() {
        return;
    }
    let setup = Settling::start().await;
    let (chain, settler) = (&setup.chain, &setup.settler);
    let dir = &setup.dir;
    let attempts = std::sync::atomic::AtomicUsize::new(0);
    let config = |adjust: &dyn Fn(&mut Config)| {
        let attempt = attempts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut config = Config::new(dir.path().join(format!("data{attempt}")));
        config.addr = "127.0.0.1:0".parse().unwrap();
        setup.configure(&mut config, Duration::from_secs(5));
        adjust(&mut config);
        config
    };
    let refusal = |result: Result<Server, toolhost::server::ServeError>| match result {
        Ok(_) => panic!("start-up should refuse"),
        Err(e) => e.to_string(),
    };

    // The RPC serves chain 31337, the accepted network is Base Sepolia.
    let error = refusal(
        Server::bind(config(&|c| {
            c.payment.networks = vec![NetworkConfig::base_sepolia()]
        }))
        .await,
    );
    assert!(
        error.contains("chain id 31337") && error.contains("84532"),
        "{error}"
    );

    // A key file that others can read is refused, and the key is not in the message.
    let open_key = dir.path().join("open_key");
    write_key(&open_key, settler, 0o644);
    let error = refusal(
        Server::bind(config(&|c| {
            if let FacilitatorConfig::OnChain(onchain) = &mut c.payment.facilitator {
                onchain.settler_key = Secret::File(open_key.clone());
            }
        }))
        .await,
    );
    assert!(error.contains("readable by group or others"), "{error}");
    assert!(!error.contains(&hex::encode(settler.to_bytes())));

    // No RPC at that address.
    let error = refusal(
        Server::bind(config(&|c| {
            if let FacilitatorConfig::OnChain(onchain) = &mut c.payment.facilitator {
                onchain.rpc_url = "http://127.0.0.1:9".into();
            }
        }))
        .await,
    );
    assert!(error.contains("could not be reached"), "{error}");
    assert!(
        !error.contains("127.0.0.1:9"),
        "the URL stays out of errors: {error}"
    );

    // Started fine, then the chain goes away: 502, nothing charged, the authorization reusable.
    let payer = PrivateKeySigner::random();
    chain.mint(payer.address(), PRICE).await;
    let server = setup.server(Duration::from_secs(5)).await;
    let header = pay(&server, &chain.network(), &payer, 2).await;
    drop(setup.chain);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (status, _, body) = post_paid(&server, &header).await;
    assert_error(status, &body, 502, "facilitator_unavailable");
    assert!(!body.to_string().contains("http://"), "{body}");
    server.stop().await;
}

/// A node killed (SIGKILL) after broadcasting a settlement but before recording it leaves the
/// claim `settling` with the transaction hash; once the transfer is mined, the restarted node's
/// start-up recovery asks the chain and records the receipt (the id the call would have
/// returned), the sale and the spent nonce.
#[tokio::test]
async fn a_settlement_cut_off_by_a_crash_is_recorded_by_recovery_once_mined() {
    use toolhost::payments::nonces::{self, ClaimState, Stored};
    use toolhost::store::{NonceClaims, SledStore, Store};

    if !available() {
        return;
    }
    let setup = Settling::start().await;
    let (chain, settler, pay_to) = (&setup.chain, &setup.settler, setup.pay_to);
    let payer = PrivateKeySigner::random();
    chain.mint(payer.address(), PRICE).await;
    let data = setup.dir.path().join("data");
    let args = setup.node_args();
    let node = crate::util::node::Node::start_in(&data, &args);
    let client = reqwest::Client::new();
    let required = crate::util::payment_required(&client, &node.url(PAID), &json!({})).await;
    let requirement: PaymentRequirements =
        serde_json::from_value(required["accepts"][0].clone()).unwrap();
    let payload = sign(&payer, &chain.network(), &requirement, |_| {}).unwrap();
    let nonce = payload["authorization"]["nonce"]
        .as_str()
        .unwrap()
        .to_string();
    let header = toolhost::x402::header::encode(&json!({
        "x402Version": 2, "resource": required["resource"], "accepted": requirement, "payload": payload
    }));

    // The call settles; the node broadcasts and waits for a block that does not come.
    let request = client
        .post(node.url(PAID))
        .header("PAYMENT-SIGNATURE", header)
        .json(&json!({"hello": "crash"}));
    kill_after_broadcast(chain, settler.address(), node, request).await;

    // On disk: the claim, settling, with the transaction it broadcast.
    let key = nonces::key(
        31337,
        &chain.token.to_string(),
        payer.address(),
        nonce.parse::<B256>().unwrap(),
    );
    let note = {
        let store = SledStore::open(&data.join("store")).unwrap();
        let stored = store.nonce(&key).await.unwrap().unwrap();
        store.close().await.unwrap();
        match Stored::parse(&stored).unwrap() {
            Stored::Claim(record) if record.state == ClaimState::Settling => {
                record.settling.expect("settling note")
            }
            other => panic!("expected a settling claim, got {other:?}"),
        }
    };
    let transaction = note.transaction.clone().expect("the transaction hash");
    chain.rpc("evm_mine", json!([])).await;
    assert_eq!(chain.mined(&json!(transaction)).await["status"], "0x1");
    assert_eq!(chain.balance(pay_to).await, PRICE);

    // Restarted: start-up recovery finds the transfer and records it.
    let node = crate::util::node::Node::start_in(&data, &args);
    let receipt: Value = client
        .get(node.url(&format!("/ai/receipts/{}", note.receipt_id)))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(receipt["receiptId"], note.receipt_id.as_str(), "{receipt}");
    assert_eq!(receipt["settlement"]["status"], "settled");
    assert_eq!(receipt["settlement"]["onChain"], true);
    assert_eq!(receipt["settlement"]["transaction"], transaction.as_str());
    assert_eq!(receipt["requestSha256"], note.request_sha256.as_str());
    assert_eq!(receipt["payer"], payer.address().to_checksum(None));
    // The authorization is spent: the same payment is refused, and nothing moves again.
    let replay = pay_with_payload(&required, &requirement, &payload);
    let response = client
        .post(node.url(PAID))
        .header("PAYMENT-SIGNATURE", replay)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let (status, body) = util::read(response).await;
    assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");
    assert_eq!(chain.balance(pay_to).await, PRICE);
    node.kill();
}

fn pay_with_payload(
    required: &Value,
    requirement: &PaymentRequirements,
    payload: &Value,
) -> String {
    toolhost::x402::header::encode(&json!({
        "x402Version": 2, "resource": required["resource"], "accepted": requirement, "payload": payload
    }))
}

/// Stops mining, sends `request` to `node` and kills the node (SIGKILL) as soon as `settler` has
/// broadcast a transaction: the request dies unanswered with its transfer in the pool.
async fn kill_after_broadcast(
    chain: &Chain,
    settler: Address,
    node: crate::util::node::Node,
    request: reqwest::RequestBuilder,
) {
    chain.rpc("evm_setAutomine", json!([false])).await;
    let sent = chain.pending_nonce(settler).await;
    let call = tokio::spawn(request.send());
    let deadline = Instant::now() + Duration::from_secs(10);
    while chain.pending_nonce(settler).await <= sent {
        assert!(Instant::now() < deadline, "the transfer is broadcast");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    node.kill();
    assert!(call.await.unwrap().is_err(), "the call died unanswered");
}

/// A settlement not mined within the confirmation timeout is served `pending`; once mined, the
/// background check (every 200 ms here) turns the receipt `settled`, re-signed, and the sale
/// becomes payable (its pending entry gone).
#[tokio::test]
async fn a_pending_receipt_turns_settled_in_the_background_once_mined() {
    if !available() {
        return;
    }
    let setup = Settling::start().await;
    let (chain, pay_to) = (&setup.chain, setup.pay_to);
    let payer = PrivateKeySigner::random();
    chain.mint(payer.address(), PRICE).await;
    let server = TestServer::start_with(|c| {
        setup.configure(c, Duration::from_secs(1));
        c.payment.recovery_interval = Duration::from_millis(200);
    })
    .await;
    chain.rpc("evm_setAutomine", json!([false])).await;
    let header = pay(&server, &chain.network(), &payer, 2).await;
    let (status, _, body) = post_paid(&server, &header).await;
    assert_eq!(status, 200, "{body}");
    let receipt_id = body["receipt"]["receiptId"].as_str().unwrap().to_string();
    let transaction = body["receipt"]["settlement"]["transaction"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(body["receipt"]["settlement"]["status"], "pending");
    let pending = || {
        let store = server.app.store.clone();
        let receipt_id = receipt_id.clone();
        async move {
            let entries = store.pending_settlements_of(&[&receipt_id]).await;
            entries.unwrap().remove(0)
        }
    };
    assert!(pending().await.is_some());
    // Still in the pool: the background check leaves it pending.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let (_, stored) = server.get(&format!("/ai/receipts/{receipt_id}")).await;
    assert_eq!(stored["settlement"]["status"], "pending");

    chain.rpc("evm_mine", json!([])).await;
    assert_eq!(chain.mined(&json!(transaction)).await["status"], "0x1");
    let deadline = Instant::now() + Duration::from_secs(10);
    let stored = loop {
        let (_, stored) = server.get(&format!("/ai/receipts/{receipt_id}")).await;
        if stored["settlement"]["status"] != "pending" {
            break stored;
        }
        assert!(Instant::now() < deadline, "settled within 10 s: {stored}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(stored["settlement"]["status"], "settled", "{stored}");
    assert_eq!(stored["settlement"]["onChain"], true);
    assert_eq!(stored["settlement"]["transaction"], transaction.as_str());
    assert_eq!(stored["charged"], true);
    let (_, manifest) = server.get("/ai/manifest").await;
    let parsed: toolhost::receipts::Receipt = serde_json::from_value(stored).unwrap();
    assert!(toolhost::receipts::verify_receipt(
        &parsed,
        manifest["receipts"]["publicKey"].as_str().unwrap()
    ));
    assert!(pending().await.is_none());
    let sale = server.app.store.sale(&receipt_id).await.unwrap();
    assert!(sale.is_some());
    assert_eq!(chain.balance(pay_to).await, PRICE);
    server.stop().await;
}

/// An admin refund of `receipt` for `amount_usd` through `server`: status and body.
async fn refund(server: &TestServer, receipt: &str, amount_usd: f64) -> (u16, Value) {
    let (status, body) = server
        .call(
            "POST",
            &format!("/ai/receipts/{receipt}/refund"),
            crate::util::As::Admin,
            Some(&json!({"reason": "the call went wrong", "amountUsd": amount_usd})),
        )
        .await;
    (status.as_u16(), body)
}

/// A payment settled on-chain is refunded by a transfer from the settlement wallet to the
/// payer: refused (nothing recorded) while the wallet holds too little, then made once, with
/// its transaction in the signed record; the same request again moves nothing more.
#[tokio::test]
async fn a_settled_payment_is_refunded_by_a_transfer_from_the_settlement_wallet() {
    if !available() {
        return;
    }
    let setup = Settling::start().await;
    let (chain, settler) = (&setup.chain, &setup.settler);
    let payer = PrivateKeySigner::random();
    chain.mint(payer.address(), PRICE).await;
    let server = setup.server(Duration::from_secs(10)).await;
    let header = pay(&server, &chain.network(), &payer, 2).await;
    let (status, _, body) = post_paid(&server, &header).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["receipt"]["settlement"]["status"], "settled");
    let receipt = body["receipt"]["receiptId"].as_str().unwrap().to_string();
    assert_eq!(chain.balance(payer.address()).await, 0);

    // The settlement wallet holds nothing of the asset: refused, nothing recorded.
    let (status, body) = refund(&server, &receipt, 0.0006).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("refund_unavailable")),
        "{body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("holds 0"),
        "{body}"
    );
    let (status, _) = server.get(&format!("/ai/receipts/{receipt}/refund")).await;
    assert_eq!(status, 404);

    chain.mint(settler.address(), PRICE).await;
    let (status, body) = refund(&server, &receipt, 0.0006).await;
    assert_eq!(status, 200, "{body}");
    let made = &body["refund"];
    assert_eq!(made["returnedTo"], "on_chain");
    assert_eq!(made["amount"], "600");
    let transaction = made["transaction"]
        .as_str()
        .expect("the transfer's hash")
        .to_string();
    let mined = chain.mined(&json!(transaction)).await;
    assert_eq!(mined["status"], "0x1", "{mined}");
    assert_eq!(chain.balance(payer.address()).await, 600);
    assert_eq!(chain.balance(settler.address()).await, PRICE - 600);
    let (_, shown) = server.get(&format!("/ai/receipts/{receipt}/refund")).await;
    assert_eq!(shown["refund"], *made);

    // The same refund again answers the one made and transfers nothing; another is refused.
    let (status, again) = refund(&server, &receipt, 0.0006).await;
    assert_eq!(
        (status, &again["refund"]["refundId"]),
        (200, &made["refundId"])
    );
    let (status, other) = refund(&server, &receipt, 0.0001).await;
    assert_eq!(
        (status, other["error"]["code"].as_str()),
        (409, Some("already_refunded"))
    );
    assert_eq!(chain.balance(payer.address()).await, 600);
    server.stop().await;
}

/// A node killed (SIGKILL) after broadcasting a refund's transfer but before recording it
/// leaves the claim with the transaction's hash; once the transfer is mined, the restarted
/// node's recovery records the refund, once.
#[tokio::test]
async fn a_refund_cut_off_by_a_crash_is_recorded_by_recovery_once_mined() {
    if !available() {
        return;
    }
    let setup = Settling::start().await;
    let (chain, settler) = (&setup.chain, &setup.settler);
    let payer = PrivateKeySigner::random();
    chain.mint(payer.address(), PRICE).await;
    chain.mint(settler.address(), PRICE).await;
    let data = setup.dir.path().join("data");
    let args = setup.node_args();
    let node = crate::util::node::Node::start_in(&data, &args);
    let client = reqwest::Client::new();
    let required = crate::util::payment_required(&client, &node.url(PAID), &json!({})).await;
    let requirement: PaymentRequirements =
        serde_json::from_value(required["accepts"][0].clone()).unwrap();
    let payload = sign(&payer, &chain.network(), &requirement, |_| {}).unwrap();
    let response = client
        .post(node.url(PAID))
        .header(
            "PAYMENT-SIGNATURE",
            pay_with_payload(&required, &requirement, &payload),
        )
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let (status, body) = util::read(response).await;
    assert_eq!(status, 200, "{body}");
    let receipt = body["receipt"]["receiptId"].as_str().unwrap().to_string();

    // The refund's transfer is broadcast; no block comes; the node dies.
    let request = client
        .post(node.url(&format!("/ai/receipts/{receipt}/refund")))
        .header("x-admin-token", crate::util::ADMIN_TOKEN)
        .json(&json!({"reason": "crash test"}));
    kill_after_broadcast(chain, settler.address(), node, request).await;
    chain.rpc("evm_mine", json!([])).await;
    assert_eq!(chain.balance(payer.address()).await, PRICE);

    // Restarted: start-up recovery finds the mined transfer and records the refund.
    let node = crate::util::node::Node::start_in(&data, &args);
    let (status, shown) = node.get(&format!("/ai/receipts/{receipt}/refund")).await;
    assert_eq!(status, 200, "{shown}");
    assert_eq!(shown["refund"]["returnedTo"], "on_chain");
    assert_eq!(shown["refund"]["amount"], PRICE.to_string());
    assert!(shown["refund"]["transaction"].is_string(), "{shown}");
    // Asked again, the refund made is the answer and nothing more moves.
    chain.rpc("evm_setAutomine", json!([true])).await;
    let (status, again) = node
        .admin(
            "POST",
            &format!("/ai/receipts/{receipt}/refund"),
            Some(&json!({"reason": "crash test"})),
        )
        .await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["refund"]["refundId"], shown["refund"]["refundId"]);
    assert_eq!(chain.balance(payer.address()).await, PRICE);
    assert_eq!(chain.balance(settler.address()).await, 0);
    node.kill();
}

/// Permit2 from its npm package answers the EIP-712 domain toolhost (and viem) sign under on
/// this chain: its name, the chain id and its canonical address.
#[tokio::test]
async fn permit2_is_on_the_chain_with_the_domain_payers_sign_under() {
    if !available() {
        return;
    }
    let chain = Chain::start().await;
    chain.with_permit2().await;
    let data = format!("0x{}", hex::encode(DOMAIN_SEPARATORCall {}.abi_encode()));
    let answer = chain
        .rpc(
            "eth_call",
            json!([{"to": toolhost::x402::schemes::permit2::PERMIT2.to_string(), "data": data}, "latest"]),
        )
        .await;
    let expected = toolhost::x402::schemes::permit2::domain(&chain.network()).separator();
    assert_eq!(answer, json!(expected.to_string()));
}

/// A metered call paid with `upto` settles on-chain through x402's upto proxy for what it was
/// charged, called by the settler the permit names: the payer loses exactly the charge, the
/// payee gains it. A payer that has not approved Permit2 is refused before the handler runs.
#[tokio::test]
async fn a_metered_call_settles_its_charge_on_chain_through_the_upto_proxy() {
    if !available() {
        return;
    }
    let setup = Settling::start().await;
    let (chain, settler, pay_to) = (&setup.chain, &setup.settler, setup.pay_to);
    chain.with_permit2().await;
    let server = setup.server(Duration::from_secs(10)).await;
    server
        .create(
            crate::util::As::Admin,
            &json!({
                "slug": "metered-chain", "title": "Metered", "priceUsd": 0.005,
                "metering": {"unit": "unit"},
                "source": "export default (req, ctx) => { ctx.charge(0.0021, { units: 2 }); return { ok: true }; }",
            }),
        )
        .await;
    let path = "/tools/metered-chain";
    let required =
        crate::util::payment_required(&server.client, &server.url(path), &json!({})).await;
    assert_eq!(required["accepts"][0]["scheme"], "upto");
    assert_eq!(
        required["accepts"][0]["extra"]["facilitatorAddress"],
        settler.address().to_checksum(None)
    );
    let requirement: PaymentRequirements =
        serde_json::from_value(required["accepts"][0].clone()).unwrap();
    let payer = PrivateKeySigner::random();
    chain.mint(payer.address(), 5000).await;
    let header = |payer: &PrivateKeySigner| {
        let payload = toolhost::x402::schemes::upto_evm::signing::sign(
            payer,
            &chain.network(),
            &requirement,
            |_| {},
        )
        .unwrap();
        (
            "PAYMENT-SIGNATURE",
            pay_with_payload(&required, &requirement, &payload),
        )
    };
    // No approval of Permit2 yet: refused before the handler runs, nothing moved.
    let (status, _, body) = util::post_paid(&server, path, &header(&payer), json!({})).await;
    assert_payment_required(status, &body, "permit2_allowance_required");
    assert_eq!(server.handler_runs("metered-chain").await, 0);
    chain.approve_permit2(payer.address()).await;
    let (status, _, body) = util::post_paid(&server, path, &header(&payer), json!({})).await;
    assert_eq!(status, 200, "{body}");
    let receipt = &body["receipt"];
    assert_eq!(receipt["amount"], "2100");
    assert_eq!(receipt["settlement"]["status"], "settled");
    assert_eq!(receipt["settlement"]["onChain"], true);
    assert!(
        receipt["settlement"]["transaction"].is_string(),
        "{receipt}"
    );
    assert_eq!(chain.balance(payer.address()).await, 5000 - 2100);
    assert_eq!(chain.balance(pay_to).await, 2100);
    server.stop().await;
}

/// On a network whose asset is paid by Permit2, an `exact` permit settles on-chain through
/// x402's exact proxy; the same permit again is a used nonce (Permit2 and our claim agree).
#[tokio::test]
async fn exact_by_permit2_settles_on_chain_through_the_exact_proxy() {
    use toolhost::x402::schemes::permit2::{signing, Kind};
    if !available() {
        return;
    }
    let setup = Settling::start().await;
    let (chain, pay_to) = (&setup.chain, setup.pay_to);
    chain.with_permit2().await;
    let network = NetworkConfig::from_str(&format!(
        "local,eip155:31337,{},USDC,2,permit2",
        chain.token
    ))
    .unwrap();
    let server = TestServer::start_with(|c| {
        setup.configure(c, Duration::from_secs(10));
        c.payment.networks = vec![network.clone()];
    })
    .await;
    let required =
        crate::util::payment_required(&server.client, &server.url(PAID), &json!({})).await;
    assert_eq!(
        required["accepts"][0]["extra"]["assetTransferMethod"],
        "permit2"
    );
    let requirement: PaymentRequirements =
        serde_json::from_value(required["accepts"][0].clone()).unwrap();
    let payer = PrivateKeySigner::random();
    chain.mint(payer.address(), PRICE).await;
    chain.approve_permit2(payer.address()).await;
    let payload = signing::sign(&payer, Kind::Exact, &network, &requirement, |_| {}).unwrap();
    let header = (
        "PAYMENT-SIGNATURE",
        pay_with_payload(&required, &requirement, &payload),
    );
    let (status, _, body) = post_paid(&server, &header).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["receipt"]["settlement"]["status"], "settled");
    assert_eq!(chain.balance(payer.address()).await, 0);
    assert_eq!(chain.balance(pay_to).await, PRICE);
    let (status, _, body) = post_paid(&server, &header).await;
    assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");
    server.stop().await;
}

/// A node killed (SIGKILL) after broadcasting a metered call's `upto` settlement but before
/// recording it: once mined, the restarted node's recovery asks Permit2 whether the permit's
/// nonce was used and records the receipt for the charge the claim noted, not the maximum.
#[tokio::test]
async fn an_upto_settlement_cut_off_by_a_crash_is_recorded_for_its_charge() {
    if !available() {
        return;
    }
    let setup = Settling::start().await;
    let (chain, settler, pay_to) = (&setup.chain, &setup.settler, setup.pay_to);
    chain.with_permit2().await;
    let payer = PrivateKeySigner::random();
    chain.mint(payer.address(), 5000).await;
    chain.approve_permit2(payer.address()).await;
    let data = setup.dir.path().join("data");
    let args = setup.node_args();
    let node = crate::util::node::Node::start_in(&data, &args);
    let (status, created) = node
        .admin(
            "POST",
            "/ai/endpoints/create",
            Some(&json!({
                "slug": "metered-crash", "title": "Metered", "priceUsd": 0.005,
                "metering": {"unit": "unit"},
                "source": "export default (req, ctx) => { ctx.charge(0.0013); return { ok: true }; }",
            })),
        )
        .await;
    assert_eq!(status, 200, "{created}");
    let client = reqwest::Client::new();
    let url = node.url("/tools/metered-crash");
    let required = crate::util::payment_required(&client, &url, &json!({})).await;
    let requirement: PaymentRequirements =
        serde_json::from_value(required["accepts"][0].clone()).unwrap();
    let payload = toolhost::x402::schemes::upto_evm::signing::sign(
        &payer,
        &chain.network(),
        &requirement,
        |_| {},
    )
    .unwrap();
    let header = pay_with_payload(&required, &requirement, &payload);

    let request = client
        .post(&url)
        .header("PAYMENT-SIGNATURE", header.clone())
        .json(&json!({}));
    kill_after_broadcast(chain, settler.address(), node, request).await;
    chain.rpc("evm_mine", json!([])).await;
    assert_eq!(chain.balance(pay_to).await, 1300);

    let node = crate::util::node::Node::start_in(&data, &args);
    // The permit is spent: sent again, refused as a used nonce; and the receipt recovery
    // recorded charged what the call cost.
    let response = client
        .post(node.url("/tools/metered-crash"))
        .header("PAYMENT-SIGNATURE", header)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let (status, body) = util::read(response).await;
    assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");
    let (status, revenue) = node.admin("GET", "/ai/admin/revenue", None).await;
    assert_eq!(status, 200, "{revenue}");
    assert_eq!(
        revenue["platformEndpoints"]["grossUnits"], "1300",
        "{revenue}"
    );
    assert_eq!(chain.balance(payer.address()).await, 5000 - 1300);
    node.kill();
}
