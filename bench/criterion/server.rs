//! Criterion micro-benchmarks of the server's per-request work outside the sandbox:
//!
//! - `eip712_verify/verify_exact`: checking a real EIP-3009 authorization (`x402::verify`, the
//!   exact-EVM scheme; the name is the figure's since the first run), signed with
//!   alloy-signer-local in the setup (EIP-712 hash, secp256k1 signer recovery, field checks).
//!   `eip712_verify/decode_and_verify` adds decoding the `PAYMENT-SIGNATURE` header (base64 and
//!   JSON), as a paid request does.
//! - `ecrecover/*`: the signer recovery alone, libsecp256k1 (what the server uses) against
//!   alloy's k256 (what it used before).
//! - `receipt/sign` and `receipt/verify`: Ed25519 over the canonical JSON of a paid receipt.
//! - `catalog_listing/*`: the body of `GET /ai/endpoints` ([`listing`]) over the seeded catalog
//!   and over 1,000 endpoints, unfiltered and with a text search, serialized to JSON as the
//!   response is (the records are rendered while they are serialized).
//! - `rollout_routing/*`: which revision a call runs ([`toolhost::pipeline::route`]) for an
//!   endpoint with no rollout, and in a rollout for an x402 payer, a developer credit and a
//!   free caller told apart by address; and counting the call for its revision
//!   (`tallies::Tally::count`, what the activity recorder does per call in a rollout).
//! - `kv_page/*`: what a `ctx.kv.list` page of four 60 KiB values costs between the store and
//!   the worker: the stored entries read, the page encoded into the reply frame, and the frame
//!   decoded in the worker; `values_parsed` as before 2026-11-26 (each value parsed into a
//!   tree and encoded again), `values_as_text` as now (the stored text passed through).
//!
//! Run with `bench/micro.sh` (or `cargo bench -p toolhost --bench server`).

use std::hint::black_box;
use std::sync::Arc;

use alloy_signer_local::PrivateKeySigner;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use serde_json::json;
use toolhost::catalog::listing;
use toolhost::catalog::{seed_catalog, CatalogFilter, CatalogForm, Registry};
use toolhost::config::Config;
use toolhost::config::Quotas;
use toolhost::money::Usd;
use toolhost::receipts::{
    sha256_hex, verify_receipt, PaymentMethod, Receipt, ReceiptSettlement, ReceiptSigner,
    RECEIPT_SCHEMA,
};
use toolhost::store::SledStore;
use toolhost::urls::Urls;
use toolhost::x402::evm::recover_signer;
use toolhost::x402::schemes::exact_evm::signing::sign;
use toolhost::x402::verify::{unix_now, verify};
use toolhost::x402::{header, Offer, ResourceInfo};

const BASE_URL: &str = "http://127.0.0.1:8080";

fn eip712_verify(c: &mut Criterion) {
    let config = Config::new("/unused");
    let payer = PrivateKeySigner::random();
    let pay_to = PrivateKeySigner::random().address().to_string();
    let resource = ResourceInfo {
        url: format!("{BASE_URL}/tools/receipt-echo-paid"),
        description: "Receipt echo (paid)".into(),
        mime_type: "application/json".into(),
    };
    let offer = Offer::new(
        config.payment.terms(&pay_to),
        resource,
        Usd::from_units(1000),
    );
    let (network, requirement) = &offer.accepts[0];
    let signed = sign(&payer, network, requirement, |_| {}).expect("sign");
    let wire = header::encode(&json!({
        "x402Version": 2,
        "accepted": requirement,
        "payload": signed,
    }));
    let payment = header::decode(&wire).expect("decode");
    let now = unix_now();
    let verified = verify(&payment, &offer, now).expect("a valid payment");
    assert_eq!(verified.payer(), payer.address().to_checksum(None));

    let mut group = c.benchmark_group("eip712_verify");
    group.bench_function("verify_exact", |b| {
        b.iter(|| verify(black_box(&payment), &offer, now).expect("valid"));
    });
    group.bench_function("decode_and_verify", |b| {
        b.iter(|| {
            let payment = header::decode(black_box(&wire)).expect("decode");
            verify(&payment, &offer, now).expect("valid")
        });
    });
    group.finish();

    // The signer recovery inside the exact scheme's check, by the two implementations at hand: the one the
    // server uses (libsecp256k1) and alloy's (k256), which it used before.
    let hash = alloy_primitives::B256::from([7u8; 32]);
    let signature = alloy_signer::SignerSync::sign_hash_sync(&payer, &hash).expect("sign");
    let mut group = c.benchmark_group("ecrecover");
    group.bench_function("libsecp256k1", |b| {
        b.iter(|| recover_signer(black_box(&hash), &signature).expect("recovers"));
    });
    group.bench_function("k256", |b| {
        b.iter(|| {
            signature
                .recover_address_from_prehash(black_box(&hash))
                .expect("recovers")
        });
    });
    group.finish();
}

/// A receipt of a paid x402 call, as the server issues it.
fn paid_receipt() -> Receipt {
    Receipt {
        receipt_id: "rcpt_0196f3a0c2d87b3e9a1f5c4d2e6b8a90".into(),
        schema: RECEIPT_SCHEMA.into(),
        purpose: "invocation".into(),
        endpoint_slug: Some("receipt-echo-paid".into()),
        price_usd: "0.001".into(),
        amount: "1000".into(),
        asset: Some("0x036CbD53842c5426634e7929541eC2318f3dCF7e".into()),
        network: Some("eip155:84532".into()),
        payer: Some(PrivateKeySigner::random().address().to_string()),
        payment_method: PaymentMethod::X402,
        x402_version: Some(2),
        charged: true,
        settlement: ReceiptSettlement {
            status: "recorded".into(),
            on_chain: false,
            transaction: None,
            facilitator: Some("local".into()),
            collected: Some(false),
        },
        request_sha256: sha256_hex(&json!({ "message": "hello" })),
        result_sha256: sha256_hex(&json!({ "echo": { "message": "hello" } })),
        issued_at: "2026-01-01T00:00:00Z".into(),
        url: format!("{BASE_URL}/ai/receipts/rcpt_0196f3a0c2d87b3e9a1f5c4d2e6b8a90"),
        metering: None,
        signature: None,
    }
}

fn receipt(c: &mut Criterion) {
    let signer = ReceiptSigner::from_hex(&ReceiptSigner::generate_hex()).expect("key");
    let public_key = signer.public_key();
    let unsigned = paid_receipt();
    let mut signed = unsigned.clone();
    signer.sign(&mut signed);
    assert!(verify_receipt(&signed, &public_key));

    let mut group = c.benchmark_group("receipt");
    group.bench_function("sign", |b| {
        b.iter_batched_ref(
            || unsigned.clone(),
            |receipt| signer.sign(receipt),
            criterion::BatchSize::SmallInput,
        );
    });
    group.bench_function("verify", |b| {
        b.iter(|| assert!(verify_receipt(black_box(&signed), &public_key)));
    });
    group.finish();
}

/// A registry over a temporary store, seeded from `fixtures/`, then grown with copies of the
/// seeded endpoints (new slug, title and tag) up to `total` endpoints.
async fn catalog(total: usize) -> Registry {
    let store = Arc::new(SledStore::temporary().expect("store"));
    let registry = Registry::load(store.clone()).await.expect("registry");
    seed_catalog(&registry, &*store, &Quotas::default(), None)
        .await
        .expect("seed");
    let seeded: Vec<_> = registry.all().iter().map(|c| c.endpoint.clone()).collect();
    for i in seeded.len()..total {
        let mut endpoint = seeded[i % seeded.len()].clone();
        endpoint.slug = format!("{}-{i}", endpoint.slug);
        endpoint.id = format!("ep_bench_{i}");
        endpoint.title = format!("{} #{i}", endpoint.title);
        endpoint.tags.push(format!("group-{}", i % 10));
        endpoint.created_at += time::Duration::seconds(i as i64);
        endpoint.updated_at = endpoint.created_at;
        registry
            .insert_new(endpoint, toolhost::store::Batch::new())
            .await
            .expect("insert");
    }
    registry
}

fn catalog_listing(c: &mut Criterion) {
    let config = Config::new("/unused");
    let namespace = config.catalog_namespace.as_str();
    let urls = Urls::new(BASE_URL);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let (seeded, large) = runtime.block_on(async { (catalog(0).await, catalog(1000).await) });
    let list = |registry: &Registry, q: Option<&str>| {
        listing(
            registry,
            &urls,
            namespace,
            CatalogForm::Current,
            &CatalogFilter::new(None, q, None),
        )
    };
    let count = |registry: &Registry, q: Option<&str>| {
        serde_json::to_value(list(registry, q)).expect("json")["endpoints"]
            .as_array()
            .map_or(0, Vec::len)
    };
    let seeded_len = count(&seeded, None);
    assert!(seeded_len >= 8, "the seeded catalog lists {seeded_len}");
    assert_eq!(count(&large, None), 1000);
    // "receipt" matches 2 of the 8 fixtures: a quarter of the large catalog.
    assert!(count(&large, Some("receipt")) >= 200);

    let mut group = c.benchmark_group("catalog_listing");
    for (registry, size) in [(&seeded, seeded_len), (&large, 1000)] {
        group.bench_with_input(BenchmarkId::new("all", size), registry, |b, r| {
            b.iter(|| serde_json::to_vec(&list(r, None)).expect("json"));
        });
        group.bench_with_input(BenchmarkId::new("search", size), registry, |b, r| {
            b.iter(|| serde_json::to_vec(&list(r, Some(black_box("receipt")))).expect("json"));
        });
    }
    group.finish();
}

/// A JS endpoint as the registry serves it, with or without a rollout of revision 2 at 50 %.
fn rolled_out(rollout: bool) -> Arc<toolhost::catalog::CompiledEndpoint> {
    let content = json!({
        "title": "Words", "description": "Counts words.", "tags": [], "priceUsd": 0.01,
        "source": "export default (req) => ({ n: 1 });", "response": null,
        "inputSchema": {"type": "object"}, "outputSchema": {}, "exampleInput": null,
        "requestedCapabilities": {}, "allowedHosts": null, "env": {},
    });
    let mut endpoint = json!({
        "id": "ep_bench", "slug": "words", "title": "Words", "description": "Counts words.",
        "status": "active", "priceUsd": 0.01, "handlerType": "js_request_response",
        "source": "export default (req) => ({ n: 2 });", "inputSchema": {"type": "object"},
        "outputSchema": {}, "owner": {"kind": "admin"}, "servingRevision": 1,
        "latestRevision": 2, "createdAt": "2026-01-01T00:00:00Z",
        "updatedAt": "2026-01-01T00:00:00Z",
    });
    if rollout {
        endpoint["rollout"] = json!({"id": "ro_bench", "revision": 2, "share": 50,
            "startedAt": "2026-01-01T00:00:00Z", "content": content});
    }
    let endpoint = serde_json::from_value(endpoint).expect("endpoint");
    Arc::new(toolhost::catalog::CompiledEndpoint::compile(endpoint).expect("compiles"))
}

fn rollout_routing(c: &mut Criterion) {
    use toolhost::payments::Tender;
    use toolhost::pipeline::{route, Call};
    let plain = rolled_out(false);
    let rolled = rolled_out(true);
    let call = |tender: Tender| {
        let mut call = Call::new(
            axum::http::Method::POST,
            json!({}),
            axum::http::HeaderMap::new(),
        );
        call.tender = tender;
        call.client = Some(std::net::IpAddr::from([203, 0, 113, 9]));
        call
    };
    let config = Config::new("/unused");
    let payer = PrivateKeySigner::random();
    let pay_to = PrivateKeySigner::random().address().to_string();
    let resource = ResourceInfo {
        url: format!("{BASE_URL}/tools/words"),
        description: "Words".into(),
        mime_type: "application/json".into(),
    };
    let offer = Offer::new(
        config.payment.terms(&pay_to),
        resource,
        Usd::from_units(10_000),
    );
    let (network, requirement) = &offer.accepts[0];
    let signed = sign(&payer, network, requirement, |_| {}).expect("sign");
    let wire =
        header::encode(&json!({"x402Version": 2, "accepted": requirement, "payload": signed}));
    let x402 = call(Tender::X402(std::sync::Arc::new(
        header::decode(&wire).expect("decode"),
    )));
    let credit = call(Tender::Credit("dc_0123456789abcdef0123456789abcdef".into()));
    let free = call(Tender::Nothing);
    // Both revisions are reached.
    let reached: std::collections::BTreeSet<u64> = (0..64)
        .map(|i| {
            let mut c = call(Tender::Credit(format!("dc_{i}")));
            c.test = false;
            route(&rolled, &c).endpoint.serving_revision
        })
        .collect();
    assert_eq!(reached.len(), 2, "{reached:?}");

    let mut group = c.benchmark_group("rollout_routing");
    group.bench_function("no_rollout", |b| b.iter(|| route(black_box(&plain), &x402)));
    group.bench_function("x402_payer", |b| {
        b.iter(|| route(black_box(&rolled), &x402))
    });
    group.bench_function("credit", |b| b.iter(|| route(black_box(&rolled), &credit)));
    group.bench_function("free_by_address", |b| {
        b.iter(|| route(black_box(&rolled), &free))
    });
    let mut tally = toolhost::tallies::Tally::default();
    group.bench_function("count", |b| {
        b.iter(|| tally.count(black_box(200), black_box(1234)))
    });
    group.finish();
}

fn kv_page(c: &mut Criterion) {
    use sandbox::{HostAnswer, KvEntry, KvPage, KvValue};
    use serde_json::value::RawValue;
    // As the store holds them: a flood's plain 60 KiB strings, and 60 KiB objects of small
    // fields with escapes.
    let plain = json!("x".repeat(60 * 1024));
    let record: serde_json::Map<String, serde_json::Value> = (0..2000)
        .map(|i| {
            (
                format!("field{i}"),
                json!({"n": i, "s": "a \"quoted\" word"}),
            )
        })
        .collect();
    let stored: Vec<(String, Vec<u8>)> = (0..4)
        .map(|i| {
            let v = if i % 2 == 0 {
                plain.clone()
            } else {
                json!(record)
            };
            let bytes = serde_json::to_vec(&json!({"v": v, "seq": i})).expect("json");
            (format!("k{i}"), bytes)
        })
        .collect();
    #[derive(serde::Deserialize)]
    struct Parsed {
        v: serde_json::Value,
    }
    #[derive(serde::Deserialize)]
    struct Text<'a> {
        #[serde(borrow)]
        v: &'a RawValue,
    }
    #[derive(serde::Serialize, serde::Deserialize)]
    struct ParsedEntry {
        key: String,
        value: serde_json::Value,
    }
    #[derive(serde::Serialize, serde::Deserialize)]
    struct ParsedPage {
        entries: Vec<ParsedEntry>,
        cursor: Option<String>,
    }
    #[derive(serde::Serialize, serde::Deserialize)]
    enum ParsedAnswer {
        Page(ParsedPage),
    }
    let mut group = c.benchmark_group("kv_page");
    group.bench_function("values_parsed", |b| {
        b.iter(|| {
            let entries = stored
                .iter()
                .map(|(key, bytes)| ParsedEntry {
                    key: key.clone(),
                    value: serde_json::from_slice::<Parsed>(bytes).expect("stored").v,
                })
                .collect();
            let page = ParsedPage {
                entries,
                cursor: None,
            };
            let frame = serde_json::to_vec(&ParsedAnswer::Page(page)).expect("frame");
            serde_json::from_slice::<ParsedAnswer>(black_box(&frame)).expect("decoded")
        });
    });
    group.bench_function("values_as_text", |b| {
        b.iter(|| {
            let entries = stored
                .iter()
                .map(|(key, bytes)| {
                    let text = serde_json::from_slice::<Text>(bytes).expect("stored").v;
                    KvEntry {
                        key: key.clone(),
                        value: KvValue::from_raw(text.to_owned()),
                    }
                })
                .collect();
            let page = KvPage {
                entries,
                cursor: None,
            };
            let frame = serde_json::to_vec(&HostAnswer::Page(page)).expect("frame");
            serde_json::from_slice::<HostAnswer>(black_box(&frame)).expect("decoded")
        });
    });
    group.finish();
}

criterion_group!(
    benches,
    eip712_verify,
    receipt,
    catalog_listing,
    rollout_routing,
    kv_page
);
criterion_main!(benches);
