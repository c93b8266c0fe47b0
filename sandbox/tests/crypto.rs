//! WebCrypto in a real isolate: known-answer vectors (NIST, RFC 4231, RFC 8032, NIST ECDSA),
//! the `CryptoKey` rules, and randomness in a confined worker process.

mod util;

use serde_json::json;
use util::*;

#[tokio::test]
async fn smoke() {
    let (pool, _) = pool();
    let code = endpoint(
        "smoke",
        r#"export default async function () {
  const out = [];
  const hex = (b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, "0")).join("");
  out.push("uuid " + crypto.randomUUID());
  const rv = crypto.getRandomValues(new Uint8Array(8)); out.push("rand " + rv.join(","));
  out.push("sha256 " + hex(await crypto.subtle.digest("SHA-256", new Uint8Array([97, 98, 99]))));
  const key = await crypto.subtle.importKey("raw", new Uint8Array(32), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
  const sig = await crypto.subtle.sign("HMAC", key, new Uint8Array([1, 2, 3]));
  out.push("hmac " + hex(sig) + " " + await crypto.subtle.verify("HMAC", key, sig, new Uint8Array([1, 2, 3])));
  const ed = await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const es = await crypto.subtle.sign("Ed25519", ed.privateKey, new Uint8Array([1]));
  out.push("ed25519 " + await crypto.subtle.verify("Ed25519", ed.publicKey, es, new Uint8Array([1])));
  out.push(JSON.stringify(await crypto.subtle.exportKey("jwk", ed.privateKey)));
  const ec = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  const s2 = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, ec.privateKey, new Uint8Array([1]));
  out.push("ecdsa " + await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, ec.publicKey, s2, new Uint8Array([1])));
  out.push(JSON.stringify(await crypto.subtle.exportKey("jwk", ec.privateKey)));
  out.push(hex(await crypto.subtle.exportKey("spki", ec.publicKey)));
  try { await crypto.subtle.exportKey("raw", key); } catch (e) { out.push("export refused " + e.name + " " + e.message + " " + (e instanceof Error)); }
  try { await crypto.subtle.importKey("raw", new Uint8Array(3), "Ed25519", false, ["verify"]); } catch (e) { out.push("import refused " + e.name + " " + e.message); }
  try { crypto.getRandomValues(new Uint8Array(65537)); } catch (e) { out.push(e.name); }
  return out;
}"#,
    );
    let answer = body(&pool, &code, json!(null)).await;
    println!("{}", serde_json::to_string_pretty(&answer).unwrap());
}
