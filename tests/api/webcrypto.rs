//! WebCrypto through the HTTP path: a builder's endpoint that verifies a webhook's HMAC
//! signature with `crypto.subtle`, its signing secret set through the secrets route, called
//! over HTTP and run in a worker process (the suite's default).

use serde_json::json;

use crate::util::{As, TestServer};

const SECRET: &str = "webhook-signing-key-for-tests";
const PAYLOAD: &str = r#"{"event":"paid","amount":42}"#;
/// HMAC-SHA-256 of `PAYLOAD` under `SECRET`, and SHA-256 of `PAYLOAD` (Python's `hmac` and
/// `hashlib`).
const SIGNATURE: &str = "9c4d100d696d74edd0fdb8e4da668de413d5956cfb2cf77450c113526aea77f3";
const PAYLOAD_SHA256: &str = "9be1481917566befea909250d044985f1ac632ddf7b400a8755a33a6c84a2809";

const SOURCE: &str = r#"
const utf8 = (s) => Uint8Array.from(unescape(encodeURIComponent(s)), (c) => c.charCodeAt(0));
const hex = (b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, "0")).join("");
const unhex = (s) => new Uint8Array((s.match(/../g) || []).map((h) => parseInt(h, 16)));

export default async function (req, ctx) {
  const key = await crypto.subtle.importKey(
    "raw", utf8(ctx.env.WEBHOOK_SECRET), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const valid = await crypto.subtle.verify("HMAC", key, unhex(req.input.signature), utf8(req.input.payload));
  return {
    valid,
    payloadSha256: hex(await crypto.subtle.digest("SHA-256", utf8(req.input.payload))),
    receivedId: crypto.randomUUID(),
  };
}
"#;

#[tokio::test]
async fn a_js_endpoint_verifies_a_webhook_hmac_with_crypto_subtle() {
    let server = TestServer::start().await;
    let endpoint = json!({
        "slug": "webhook-verify", "title": "Webhook verifier",
        "description": "Checks a webhook's HMAC-SHA-256 signature.",
        "priceUsd": 0, "handlerType": "js_request_response", "source": SOURCE,
        "inputSchema": {
            "type": "object", "required": ["payload", "signature"],
            "properties": {"payload": {"type": "string"}, "signature": {"type": "string"}},
        },
        "outputSchema": {"type": "object", "required": ["valid"]},
        "safetyAttestation": {"accepted": true},
    });
    let (key, _) = server.builder_with("Hooks", &endpoint).await;
    let (status, body) = server
        .call(
            "POST",
            "/ai/endpoints/webhook-verify/secrets",
            As::Builder(&key),
            Some(&json!({"set": {"WEBHOOK_SECRET": SECRET}})),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    let (status, body) = server
        .post(
            "/tools/webhook-verify",
            &json!({"payload": PAYLOAD, "signature": SIGNATURE}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["valid"], true, "{body}");
    assert_eq!(body["payloadSha256"], PAYLOAD_SHA256);
    let id = body["receivedId"].as_str().unwrap();
    assert_eq!((id.len(), &id[14..15]), (36, "4"), "a v4 UUID: {id}");

    // A forged signature, and the right signature over another payload, are refused.
    let mut forged = SIGNATURE.to_owned();
    forged.replace_range(0..2, "00");
    for (payload, signature) in [
        (PAYLOAD, forged.as_str()),
        (r#"{"event":"paid","amount":4200}"#, SIGNATURE),
    ] {
        let (status, body) = server
            .post(
                "/tools/webhook-verify",
                &json!({"payload": payload, "signature": signature}),
            )
            .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["valid"], false, "{body}");
    }
}
