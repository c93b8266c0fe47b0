//! Hostile WebCrypto: bad keys, wrong usages, non-extractable keys, inputs over the limits,
//! forged keys and a tampered realm. Each failure must be the DOMException WebCrypto names
//! (or a TypeError where WebIDL throws one), never a crash or a wrong answer; after each, a
//! neighbouring endpoint in the same pool still answers correctly.

mod util;

use sandbox::SandboxError;
use serde_json::{json, Value};
use util::*;

/// `attempt(promise or function)` settles to the error's `name` ("ok" when it did not fail),
/// so one handler can try many refusals.
const PRELUDE: &str = r#"
const subtle = crypto.subtle;
const attempt = async (f) => {
    try { await f(); return "ok"; } catch (e) { return e.name; }
};
const utf8 = (s) => Uint8Array.from(s, (c) => c.charCodeAt(0));
"#;

async fn run(pool: &sandbox::Pool, slug: &str, body: &str) -> Value {
    let source = format!("{PRELUDE}\nexport default async function (req) {{\n{body}\n}}");
    let report = invoke(pool, &endpoint(slug, &source), json!(null)).await;
    match report.result {
        Ok(response) => response.body,
        Err(err) => panic!("{slug}: {err:?}"),
    }
}

#[tokio::test]
async fn bad_keys_are_data_errors_and_unknown_algorithms_not_supported() {
    let (pool, _) = pool();
    let answer = run(
        &pool,
        "bad-keys",
        r#"
        const ed = "Ed25519";
        const p256 = { name: "ECDSA", namedCurve: "P-256" };
        const hmac = { name: "HMAC", hash: "SHA-256" };
        const p256Spki = new Uint8Array(await subtle.exportKey("spki", (await subtle.generateKey(p256, true, ["sign"])).publicKey));
        const offCurve = new Uint8Array(65).fill(7); offCurve[0] = 4;
        const okp = (await subtle.exportKey("jwk", (await subtle.generateKey(ed, true, ["sign"])).privateKey));
        const other = (await subtle.exportKey("jwk", (await subtle.generateKey(ed, true, ["sign"])).privateKey));
        return {
            edShortRaw: await attempt(() => subtle.importKey("raw", new Uint8Array(31), ed, true, ["verify"])),
            edSpkiOfP256: await attempt(() => subtle.importKey("spki", p256Spki, ed, true, ["verify"])),
            edGarbagePkcs8: await attempt(() => subtle.importKey("pkcs8", utf8("not der at all"), ed, true, ["sign"])),
            edMismatchedJwk: await attempt(() => subtle.importKey("jwk", { ...okp, x: other.x }, ed, true, ["sign"])),
            edWrongCrv: await attempt(() => subtle.importKey("jwk", { ...okp, crv: "X25519" }, ed, true, ["sign"])),
            edBadBase64: await attempt(() => subtle.importKey("jwk", { ...okp, d: "!!!" }, ed, true, ["sign"])),
            edWrongAlg: await attempt(() => subtle.importKey("jwk", { ...okp, alg: "ES256" }, ed, true, ["sign"])),
            ecOffCurve: await attempt(() => subtle.importKey("raw", offCurve, p256, true, ["verify"])),
            ecWrongKty: await attempt(() => subtle.importKey("jwk", { kty: "RSA", crv: "P-256" }, p256, true, ["verify"])),
            ecP384: await attempt(() => subtle.importKey("raw", offCurve, { name: "ECDSA", namedCurve: "P-384" }, true, ["verify"])),
            ecNoCurve: await attempt(() => subtle.importKey("raw", offCurve, { name: "ECDSA" }, true, ["verify"])),
            hmacEmpty: await attempt(() => subtle.importKey("raw", new Uint8Array(0), hmac, true, ["sign"])),
            hmacLength: await attempt(() => subtle.importKey("raw", new Uint8Array(4), { ...hmac, length: 40 }, true, ["sign"])),
            hmacJwkAlg: await attempt(() => subtle.importKey("jwk", { kty: "oct", k: "AAAA", alg: "HS512" }, hmac, true, ["sign"])),
            hmacSpki: await attempt(() => subtle.importKey("spki", p256Spki, hmac, true, ["sign"])),
            hmacNoHash: await attempt(() => subtle.importKey("raw", new Uint8Array(4), "HMAC", true, ["sign"])),
            rsa: await attempt(() => subtle.importKey("spki", p256Spki, { name: "RSA-PSS", hash: "SHA-256" }, true, ["verify"])),
            md5: await attempt(() => subtle.digest("MD5", new Uint8Array(1))),
            badFormat: await attempt(() => subtle.importKey("pem", new Uint8Array(1), ed, true, ["verify"])),
            notBytes: await attempt(() => subtle.digest("SHA-256", "a string")),
            tooFewArguments: await attempt(() => subtle.digest("SHA-256")),
            wrongLengthSignature: await subtle.verify("Ed25519", await subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: okp.x }, ed, true, ["verify"]), new Uint8Array(63), new Uint8Array(1)),
        };
        "#,
    )
    .await;
    assert_eq!(
        answer,
        json!({
            "edShortRaw": "DataError",
            "edSpkiOfP256": "DataError",
            "edGarbagePkcs8": "DataError",
            "edMismatchedJwk": "DataError",
            "edWrongCrv": "DataError",
            "edBadBase64": "DataError",
            "edWrongAlg": "DataError",
            "ecOffCurve": "DataError",
            "ecWrongKty": "DataError",
            "ecP384": "NotSupportedError",
            "ecNoCurve": "TypeError",
            "hmacEmpty": "DataError",
            "hmacLength": "DataError",
            "hmacJwkAlg": "DataError",
            "hmacSpki": "NotSupportedError",
            "hmacNoHash": "TypeError",
            "rsa": "NotSupportedError",
            "md5": "NotSupportedError",
            "badFormat": "TypeError",
            "notBytes": "TypeError",
            "tooFewArguments": "TypeError",
            "wrongLengthSignature": false,
        })
    );
    assert_neighbour_ok(&pool).await;
}

#[tokio::test]
async fn keys_do_only_what_their_usages_and_type_allow() {
    let (pool, _) = pool();
    let answer = run(
        &pool,
        "usages",
        r#"
        const ed = "Ed25519";
        const pair = await subtle.generateKey(ed, true, ["sign", "verify"]);
        const raw = await subtle.exportKey("raw", pair.publicKey);
        const hmacKey = await subtle.importKey("raw", new Uint8Array(16), { name: "HMAC", hash: "SHA-256" }, true, ["verify"]);
        const data = new Uint8Array(4);
        // A handler rewriting what the getters return changes nothing the key may do.
        pair.publicKey.usages.push("sign");
        pair.publicKey.algorithm.name = "HMAC";
        return {
            publicToSign: await attempt(() => subtle.importKey("raw", raw, ed, true, ["sign"])),
            privateToVerify: await attempt(() => subtle.importKey("pkcs8", new Uint8Array(48), ed, true, ["verify"])),
            unknownUsage: await attempt(() => subtle.importKey("raw", raw, ed, true, ["fly"])),
            usagesNotArray: await attempt(() => subtle.importKey("raw", raw, ed, true, "verify")),
            hmacEncrypt: await attempt(() => subtle.importKey("raw", new Uint8Array(16), { name: "HMAC", hash: "SHA-256" }, true, ["encrypt"])),
            secretWithoutUsages: await attempt(() => subtle.importKey("raw", new Uint8Array(16), { name: "HMAC", hash: "SHA-256" }, true, [])),
            generateWithoutSign: await attempt(() => subtle.generateKey(ed, true, ["verify"])),
            signWithPublic: await attempt(() => subtle.sign(ed, pair.publicKey, data)),
            signWithVerifyOnlyHmac: await attempt(() => subtle.sign("HMAC", hmacKey, data)),
            wrongAlgorithm: await attempt(() => subtle.sign("HMAC", pair.privateKey, data)),
            verifyWithPrivate: await attempt(() => subtle.verify(ed, pair.privateKey, new Uint8Array(64), data)),
            jwkOpsWithout: await attempt(() => subtle.importKey("jwk", { kty: "oct", k: "AAAA", key_ops: ["verify"] }, { name: "HMAC", hash: "SHA-256" }, true, ["sign"])),
            jwkUseEnc: await attempt(() => subtle.importKey("jwk", { kty: "oct", k: "AAAA", use: "enc" }, { name: "HMAC", hash: "SHA-256" }, true, ["sign"])),
            jwkExtFalse: await attempt(() => subtle.importKey("jwk", { kty: "oct", k: "AAAA", ext: false }, { name: "HMAC", hash: "SHA-256" }, true, ["sign"])),
            forged: await attempt(() => subtle.sign(ed, Object.create(CryptoKey.prototype), data)),
            lookAlike: await attempt(() => subtle.sign(ed, { type: "private", usages: ["sign"], algorithm: { name: ed } }, data)),
            construct: await attempt(() => new CryptoKey()),
            constructSubtle: await attempt(() => new SubtleCrypto()),
            stillVerifyOnly: pair.publicKey.type,
        };
        "#,
    )
    .await;
    assert_eq!(
        answer,
        json!({
            "publicToSign": "SyntaxError",
            "privateToVerify": "SyntaxError",
            "unknownUsage": "TypeError",
            "usagesNotArray": "TypeError",
            "hmacEncrypt": "SyntaxError",
            "secretWithoutUsages": "SyntaxError",
            "generateWithoutSign": "SyntaxError",
            "signWithPublic": "InvalidAccessError",
            "signWithVerifyOnlyHmac": "InvalidAccessError",
            "wrongAlgorithm": "InvalidAccessError",
            "verifyWithPrivate": "InvalidAccessError",
            "jwkOpsWithout": "DataError",
            "jwkUseEnc": "DataError",
            "jwkExtFalse": "DataError",
            "forged": "TypeError",
            "lookAlike": "TypeError",
            "construct": "TypeError",
            "constructSubtle": "TypeError",
            "stillVerifyOnly": "public",
        })
    );
    assert_neighbour_ok(&pool).await;
}

#[tokio::test]
async fn non_extractable_keys_are_never_exported_and_formats_follow_the_key_type() {
    let (pool, _) = pool();
    let answer = run(
        &pool,
        "export",
        r#"
        const hmac = await subtle.generateKey({ name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
        const ed = await subtle.generateKey("Ed25519", false, ["sign", "verify"]);
        const ec = await subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
        const found = [];
        for (const key of [hmac, ed.privateKey]) {
            found.push(Reflect.ownKeys(key).length, JSON.stringify(key), Object.getOwnPropertySymbols(Object.getPrototypeOf(key)).length);
        }
        return {
            hmacRaw: await attempt(() => subtle.exportKey("raw", hmac)),
            hmacJwk: await attempt(() => subtle.exportKey("jwk", hmac)),
            edPkcs8: await attempt(() => subtle.exportKey("pkcs8", ed.privateKey)),
            edJwk: await attempt(() => subtle.exportKey("jwk", ed.privateKey)),
            // The public half of a pair is always extractable.
            edPublic: await attempt(() => subtle.exportKey("spki", ed.publicKey)),
            ecPrivateRaw: await attempt(() => subtle.exportKey("raw", ec.privateKey)),
            ecPrivateSpki: await attempt(() => subtle.exportKey("spki", ec.privateKey)),
            ecPublicPkcs8: await attempt(() => subtle.exportKey("pkcs8", ec.publicKey)),
            notAKey: await attempt(() => subtle.exportKey("raw", new Uint8Array(32))),
            found,
        };
        "#,
    )
    .await;
    assert_eq!(
        answer,
        json!({
            "hmacRaw": "InvalidAccessError",
            "hmacJwk": "InvalidAccessError",
            "edPkcs8": "InvalidAccessError",
            "edJwk": "InvalidAccessError",
            "edPublic": "ok",
            "ecPrivateRaw": "InvalidAccessError",
            "ecPrivateSpki": "InvalidAccessError",
            "ecPublicPkcs8": "InvalidAccessError",
            "notAKey": "TypeError",
            // No own properties, nothing in JSON, one symbol (Symbol.toStringTag): the bytes
            // are nowhere a handler can look.
            "found": [0, "{}", 1, 0, "{}", 1],
        })
    );
    assert_neighbour_ok(&pool).await;
}

#[tokio::test]
async fn random_values_refuse_more_than_65536_bytes_and_non_integer_arrays() {
    let (pool, _) = pool();
    let answer = run(
        &pool,
        "random-limits",
        r#"
        const getRandomValues = crypto.getRandomValues;
        return {
            max: await attempt(() => crypto.getRandomValues(new Uint8Array(65536))),
            over: await attempt(() => crypto.getRandomValues(new Uint8Array(65537))),
            overWide: await attempt(() => crypto.getRandomValues(new BigUint64Array(8193))),
            float: await attempt(() => crypto.getRandomValues(new Float64Array(4))),
            dataView: await attempt(() => crypto.getRandomValues(new DataView(new ArrayBuffer(4)))),
            plain: await attempt(() => crypto.getRandomValues([1, 2, 3])),
            detached: await attempt(() => getRandomValues(new Uint8Array(4))),
            otherThis: await attempt(() => crypto.randomUUID.call({})),
        };
        "#,
    )
    .await;
    assert_eq!(
        answer,
        json!({
            "max": "ok",
            "over": "QuotaExceededError",
            "overWide": "QuotaExceededError",
            "float": "TypeMismatchError",
            "dataView": "TypeMismatchError",
            "plain": "TypeError",
            "detached": "TypeError",
            "otherThis": "TypeError",
        })
    );
    assert_neighbour_ok(&pool).await;
}

/// An input over 16 MiB is refused before it is copied; hashing in a loop is stopped at the
/// time limit like any other code.
#[tokio::test]
async fn huge_inputs_are_bounded_by_the_input_and_time_limits() {
    let (pool, _) = pool();
    let answer = run(
        &pool,
        "huge",
        r#"
        const huge = new Uint8Array(16 * 1024 * 1024 + 1);
        const key = await subtle.importKey("raw", new Uint8Array(32), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
        return {
            digest: await attempt(() => subtle.digest("SHA-512", huge)),
            sign: await attempt(() => subtle.sign("HMAC", key, huge)),
            verify: await attempt(() => subtle.verify("HMAC", key, huge, new Uint8Array(1))),
            importKey: await attempt(() => subtle.importKey("raw", huge, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])),
            generate: await attempt(() => subtle.generateKey({ name: "HMAC", hash: "SHA-256", length: 2 ** 31 }, false, ["sign"])),
            eightMiB: await attempt(() => subtle.digest("SHA-256", huge.subarray(0, 8 * 1024 * 1024))),
        };
        "#,
    )
    .await;
    assert_eq!(
        answer,
        json!({
            "digest": "OperationError",
            "sign": "OperationError",
            "verify": "OperationError",
            "importKey": "OperationError",
            "generate": "OperationError",
            "eightMiB": "ok",
        })
    );
    let spin = endpoint(
        "hash-forever",
        r#"export default async function () {
            const block = new Uint8Array(1024 * 1024);
            for (;;) await crypto.subtle.digest("SHA-512", block);
        }"#,
    );
    let err = err(invoke(&pool, &spin, json!(null)).await);
    assert_eq!(err, SandboxError::Timeout);
    assert_neighbour_ok(&pool).await;
}

/// A handler that replaces the builtins the glue would use (typed arrays, WeakMap, Array and
/// Object methods, Promise) before calling crypto: the glue took its copies at startup.
#[tokio::test]
async fn tampered_builtins_do_not_change_crypto() {
    let (pool, _) = pool();
    let answer = run(
        &pool,
        "tamper-crypto",
        r#"
        const key = await subtle.importKey("raw", utf8("Jefe"), { name: "HMAC", hash: "SHA-256" }, true, ["sign"]);
        Uint8Array.prototype.slice = () => new Uint8Array(0);
        Object.defineProperty(Uint8Array.prototype.__proto__, "byteLength", { get: () => 0 });
        WeakMap.prototype.get = () => ({ type: "secret", usageList: ["sign"], name: "HMAC", hash: "SHA-256", material: new Uint8Array(0) });
        Array.prototype.includes = () => true;
        Object.create = () => ({});
        ArrayBuffer.isView = () => false;
        const mac = await subtle.sign("HMAC", key, utf8("what do ya want for nothing?"));
        const bytes = Array.from(new Uint8Array(mac)).map((x) => x.toString(16).padStart(2, "0")).join("");
        return {
            mac: bytes,
            forged: await attempt(() => subtle.sign("HMAC", {}, utf8("x"))),
            digest: (await subtle.digest("SHA-1", utf8(""))).constructor.name,
        };
        "#,
    )
    .await;
    assert_eq!(
        answer,
        json!({
            "mac": "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            "forged": "TypeError",
            "digest": "ArrayBuffer",
        })
    );
    assert_neighbour_ok(&pool).await;
}
