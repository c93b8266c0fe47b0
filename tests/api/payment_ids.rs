//! The x402 `payment-identifier` extension: a client-chosen id makes a paid call idempotent.
//! Real EIP-3009 authorizations signed with a local key, the payload's `extensions` echoed from
//! the 402 as the reference client (`@x402/core`) does, with `info.id` set.

use alloy_signer_local::PrivateKeySigner;
use serde_json::{json, Value};

use crate::payments::{ask, made_out_for, pay};
use crate::util::{assert_error, assert_payment_required, post_paid, TestServer};

const PAID: &str = "/tools/receipt-echo-paid";
const ID: &str = "pay_7d5d747be160e280504c099d984bcfe0";

/// A v2 payment header for `required` whose payload echoes the 402's extensions with the
/// `payment-identifier` id set to `id`.
pub(crate) fn pay_with_id(
    signer: &PrivateKeySigner,
    required: &Value,
    id: &str,
) -> (&'static str, String) {
    let (name, value) = pay(signer, required, 2, |_| {});
    let mut wire = toolhost::x402::header::decode(&value).unwrap().raw;
    let mut extensions = required["extensions"].clone();
    extensions["payment-identifier"]["info"]["id"] = json!(id);
    wire["extensions"] = extensions;
    (name, toolhost::x402::header::encode(&wire))
}

#[tokio::test]
async fn the_402_declares_the_extension_as_the_reference_does() {
    let server = TestServer::start().await;
    let required = ask(&server, PAID).await;
    let declared = &required["extensions"]["payment-identifier"];
    assert_eq!(declared["info"], json!({"required": false}));
    assert_eq!(declared["schema"]["properties"]["id"]["minLength"], 16);
    assert_eq!(declared["schema"]["required"], json!(["required"]));
    server.stop().await;
}

/// A replayed answer is the first one, but for the proof of its receipt's place in the log,
/// which is made in the log as it is when the replay is asked (the same leaf).
fn assert_same_answer(again: &Value, first: &Value) {
    let without_log = |answer: &Value| {
        let mut answer = answer.clone();
        answer.as_object_mut().unwrap().remove("receiptLog");
        answer
    };
    assert_eq!(without_log(again), without_log(first));
    assert_eq!(
        again["receiptLog"]["leafIndex"],
        first["receiptLog"]["leafIndex"]
    );
    assert!(first["receiptLog"]["leafIndex"].is_u64());
}

/// The same id with the same payment and input answers the first answer again, from the store,
/// before and after a restart (its receipt's place in the receipt log proved in the log as it
/// is now): the handler runs once and one sale is recorded. Another payment,
/// or other input, under the id is 409; the payment alone (without its id) is a used nonce.
#[tokio::test]
async fn the_same_id_and_payment_replay_the_first_answer_across_a_restart() {
    let data = tempfile::tempdir().unwrap();
    let server = TestServer::start_in(data.path()).await;
    let signer = PrivateKeySigner::random();
    let required = ask(&server, PAID).await;
    let header = pay_with_id(&signer, &required, ID);
    let input = json!({"order": 1});
    let (status, headers, first) = post_paid(&server, PAID, &header, input.clone()).await;
    assert_eq!(status, 200, "{first}");
    let receipt_id = first["receipt"]["receiptId"].as_str().unwrap().to_string();
    let settlement = headers["payment-response"].clone();
    for _ in 0..2 {
        let (status, headers, again) = post_paid(&server, PAID, &header, input.clone()).await;
        assert_eq!(status, 200, "{again}");
        assert_same_answer(&again, &first);
        assert_eq!(headers["x-receipt-id"].to_str().unwrap(), receipt_id);
        assert_eq!(headers["payment-response"], settlement);
    }
    assert_eq!(server.handler_runs("receipt-echo-paid").await, 1);

    let (status, _, body) = post_paid(&server, PAID, &header, json!({"order": 2})).await;
    assert_error(status, &body, 409, "payment_identifier_conflict");
    let other = pay_with_id(&signer, &required, ID);
    let (status, _, body) = post_paid(&server, PAID, &other, input.clone()).await;
    assert_error(status, &body, 409, "payment_identifier_conflict");
    // Another payer's identical id is another id.
    let stranger = pay_with_id(&PrivateKeySigner::random(), &required, ID);
    let (status, _, body) = post_paid(&server, PAID, &stranger, input.clone()).await;
    assert_eq!(status, 200, "{body}");
    assert_ne!(body["receipt"]["receiptId"], receipt_id.as_str());
    // The id is what replays: the same authorization without it is spent.
    let bare = pay(&signer, &required, 2, |_| {});
    let (status, _, _) = post_paid(&server, PAID, &bare, input.clone()).await;
    assert_eq!(status, 200, "a fresh authorization without an id pays");
    let (name, value) = &header;
    let mut spent = toolhost::x402::header::decode(value).unwrap().raw;
    spent.as_object_mut().unwrap().remove("extensions");
    let spent = (*name, toolhost::x402::header::encode(&spent));
    let (status, _, body) = post_paid(&server, PAID, &spent, input.clone()).await;
    assert_payment_required(status, &body, "invalid_exact_evm_nonce_already_used");
    assert_eq!(server.handler_runs("receipt-echo-paid").await, 3);
    server.stop().await;

    let server = TestServer::start_in(data.path()).await;
    let (status, headers, again) = post_paid(&server, PAID, &header, input.clone()).await;
    assert_eq!(status, 200, "{again}");
    assert_same_answer(&again, &first);
    assert_eq!(headers["payment-response"], settlement);
    let (status, _, body) = post_paid(&server, PAID, &other, input).await;
    assert_error(status, &body, 409, "payment_identifier_conflict");
    assert_eq!(server.handler_runs("receipt-echo-paid").await, 3);
    server.stop().await;
}

/// Concurrent requests with one id and payment: the handler runs once; every other request gets
/// that answer or 409 `payment_identifier_in_progress`, never a second charge.
#[tokio::test]
async fn concurrent_requests_with_one_id_run_once() {
    let server = TestServer::start().await;
    let signer = PrivateKeySigner::random();
    let required = ask(&server, PAID).await;
    let header = pay_with_id(&signer, &required, ID);
    let requests = (0..8).map(|_| post_paid(&server, PAID, &header, json!({"n": 1})));
    let results = futures::future::join_all(requests).await;
    let receipts: std::collections::BTreeSet<_> = results
        .iter()
        .filter(|(s, _, _)| *s == 200)
        .map(|(_, _, body)| body["receipt"]["receiptId"].to_string())
        .collect();
    assert_eq!(receipts.len(), 1, "{results:?}");
    for (status, _, body) in results.iter().filter(|(s, _, _)| *s != 200) {
        assert_error(*status, body, 409, "payment_identifier_in_progress");
    }
    assert_eq!(server.handler_runs("receipt-echo-paid").await, 1);
    server.stop().await;
}

/// An id whose call failed (nothing charged) binds nothing: the same payment, or another,
/// may use it again.
#[tokio::test]
async fn a_failed_call_leaves_its_id_free() {
    let fixtures = crate::payments::failing_catalog();
    let seed = fixtures.path().to_path_buf();
    let server = TestServer::start_with(move |c| c.seed_dir = Some(seed)).await;
    let signer = PrivateKeySigner::random();
    let required = ask(&server, "/tools/paid-fails").await;
    let header = pay_with_id(&signer, &required, ID);
    for _ in 0..2 {
        let (status, _, body) = post_paid(&server, "/tools/paid-fails", &header, json!({})).await;
        assert!(status.is_server_error(), "{status} {body}");
    }
    let other = pay_with_id(&signer, &required, ID);
    let (status, _, body) = post_paid(&server, "/tools/paid-fails", &other, json!({})).await;
    assert!(status.is_server_error(), "{status} {body}");
    // Same price, so the unspent authorization, made out for the echo this time (the resource
    // is not signed), pays for it under the same id.
    let header = made_out_for(&header, &server.url(PAID));
    let (status, _, body) = post_paid(&server, PAID, &header, json!({})).await;
    assert_eq!(status, 200, "{body}");
    let (status, _, again) = post_paid(&server, PAID, &header, json!({})).await;
    assert_eq!((status.as_u16(), &again), (200, &body));
    server.stop().await;
}

#[tokio::test]
async fn a_malformed_id_is_a_malformed_payment() {
    let server = TestServer::start().await;
    let required = ask(&server, PAID).await;
    for id in ["too-short", "pay_with spaces_0123456789", &"x".repeat(129)] {
        let header = pay_with_id(&PrivateKeySigner::random(), &required, id);
        let (status, _, body) = post_paid(&server, PAID, &header, json!({})).await;
        assert_error(status, &body, 400, "invalid_payload");
    }
    assert_eq!(server.handler_runs("receipt-echo-paid").await, 0);
    server.stop().await;
}

/// An id in use cannot be probed: a payment that claims to come from the id's payer but is not
/// signed by it gets the refusal any bad signature gets (402), whether or not the payer used
/// the id, never the 409 that says it did.
#[tokio::test]
async fn an_id_in_use_is_not_told_to_a_forged_payment() {
    let server = TestServer::start().await;
    let payer = PrivateKeySigner::random();
    let required = ask(&server, PAID).await;
    let used = pay_with_id(&payer, &required, ID);
    let (status, _, body) = post_paid(&server, PAID, &used, json!({"order": 1})).await;
    assert_eq!(status, 200, "{body}");
    let forger = PrivateKeySigner::random();
    let forged = |id: &str| {
        let (name, value) = pay(&forger, &required, 2, |authorization| {
            authorization.from = payer.address().to_checksum(None);
        });
        let mut wire = toolhost::x402::header::decode(&value).unwrap().raw;
        let mut extensions = required["extensions"].clone();
        extensions["payment-identifier"]["info"]["id"] = json!(id);
        wire["extensions"] = extensions;
        (name, toolhost::x402::header::encode(&wire))
    };
    for id in [ID, "pay_never_used_by_anyone_0001"] {
        let (status, _, body) = post_paid(&server, PAID, &forged(id), json!({"order": 2})).await;
        assert_payment_required(status, &body, "invalid_exact_evm_payload_signature");
    }
    // The payer itself still learns that its id is taken.
    let other = pay_with_id(&payer, &required, ID);
    let (status, _, body) = post_paid(&server, PAID, &other, json!({"order": 2})).await;
    assert_error(status, &body, 409, "payment_identifier_conflict");
    server.stop().await;
}
