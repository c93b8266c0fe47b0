//! WebCrypto in a real isolate (`50_crypto.js`, `sandbox/src/ops/crypto.rs`):
//! known-answer vectors from the standards (NIST FIPS 180 examples for SHA, RFC 4231 and
//! RFC 2202 for HMAC, RFC 8032 for Ed25519, RFC 6979 A.2.5 for ECDSA P-256), keys through every
//! format, the `CryptoKey` attributes, and randomness in a confined worker process. The
//! hostile side (bad keys, wrong usages, limits) is `crypto_hostile.rs`.

mod util;

use std::sync::Arc;

use sandbox::WorkerPool;
use serde_json::{json, Value};
use util::*;

/// Helpers every scenario's module starts with: hex in and out, UTF-8 bytes.
const PRELUDE: &str = r#"
const hex = (b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, "0")).join("");
const unhex = (s) => new Uint8Array(s.match(/../g)?.map((h) => parseInt(h, 16)) ?? []);
const utf8 = (s) => Uint8Array.from(unescape(encodeURIComponent(s)), (c) => c.charCodeAt(0));
const subtle = crypto.subtle;
const b64url = (b) => {
    const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let bits = 0, n = 0, out = "";
    for (const byte of new Uint8Array(b)) {
        bits = (bits << 8) | byte; n += 8;
        while (n >= 6) { n -= 6; out += abc[(bits >> n) & 63]; }
    }
    return n > 0 ? out + abc[(bits << (6 - n)) & 63] : out;
};
"#;

async fn run(slug: &str, body: &str) -> Value {
    let (pool, _) = pool();
    let source = format!("{PRELUDE}\nexport default async function (req) {{\n{body}\n}}");
    body_of(&pool, slug, &source).await
}

async fn body_of(pool: &sandbox::Pool, slug: &str, source: &str) -> Value {
    let report = invoke(pool, &endpoint(slug, source), json!(null)).await;
    match report.result {
        Ok(response) => response.body,
        Err(err) => panic!("{slug}: {err:?}"),
    }
}

#[tokio::test]
async fn digest_matches_the_nist_examples_for_every_buffer_source() {
    let answer = run(
        "digest",
        r#"
        const abc = utf8("abc");
        const out = {};
        for (const name of ["SHA-1", "SHA-256", "SHA-384", "SHA-512"]) {
            out[name] = {
                abc: hex(await subtle.digest(name, abc)),
                empty: hex(await subtle.digest({ name }, new ArrayBuffer(0))),
                // "abc" in the middle of a larger buffer, as a view and as a DataView.
                view: hex(await subtle.digest(name.toLowerCase(), new Uint8Array([0, ...abc, 0]).subarray(1, 4))),
                dataView: hex(await subtle.digest(name, new DataView(new Uint8Array([9, ...abc]).buffer, 1))),
            };
        }
        out.twoBlocks = hex(await subtle.digest("SHA-256", utf8("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")));
        out.millionA = hex(await subtle.digest("SHA-1", new Uint8Array(1000000).fill(97)));
        out.isArrayBuffer = (await subtle.digest("SHA-256", abc)) instanceof ArrayBuffer;
        return out;
        "#,
    )
    .await;
    let abc = [
        ("SHA-1", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ("SHA-256", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("SHA-384", "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"),
        ("SHA-512", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"),
    ];
    let empty = [
        ("SHA-1", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ("SHA-256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("SHA-384", "38b060a751ac96384cd9327eb1b1e36a21fdb71114be07434c0cc7bf63f6e1da274edebfe76f65fbd51ad2f14898b95b"),
        ("SHA-512", "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"),
    ];
    for ((name, abc), (_, empty)) in abc.iter().zip(empty) {
        assert_eq!(answer[name]["abc"], *abc, "{name}");
        assert_eq!(answer[name]["view"], *abc, "{name} of a view");
        assert_eq!(answer[name]["dataView"], *abc, "{name} of a DataView");
        assert_eq!(answer[name]["empty"], empty, "{name} of nothing");
    }
    assert_eq!(
        answer["twoBlocks"],
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    );
    assert_eq!(
        answer["millionA"],
        "34aa973cd4c4daa4f61eeb2bdbad27316534016f"
    );
    assert_eq!(answer["isArrayBuffer"], true);
}

#[tokio::test]
async fn hmac_matches_rfc_4231_and_rfc_2202() {
    let answer = run(
        "hmac",
        r#"
        const cases = {
            one: [new Uint8Array(20).fill(0x0b), utf8("Hi There")],
            two: [utf8("Jefe"), utf8("what do ya want for nothing?")],
            six: [new Uint8Array(131).fill(0xaa), utf8("Test Using Larger Than Block-Size Key - Hash Key First")],
        };
        const out = {};
        for (const hash of ["SHA-1", "SHA-256", "SHA-384", "SHA-512"]) {
            out[hash] = {};
            for (const [name, [secret, message]] of Object.entries(cases)) {
                const key = await subtle.importKey("raw", secret, { name: "HMAC", hash }, true, ["sign", "verify"]);
                const mac = await subtle.sign("HMAC", key, message);
                const tampered = new Uint8Array(mac.slice(0)); tampered[0] ^= 1;
                // The same secret as a JWK gives the same MAC.
                const jwk = await subtle.exportKey("jwk", key);
                const again = await subtle.importKey("jwk", jwk, { name: "HMAC", hash: { name: hash } }, false, ["sign"]);
                out[hash][name] = {
                    mac: hex(mac),
                    verifies: await subtle.verify({ name: "HMAC" }, key, mac, message),
                    tampered: await subtle.verify("HMAC", key, tampered, message),
                    short: await subtle.verify("HMAC", key, mac.slice(0, 8), message),
                    jwk: hex(await subtle.sign("HMAC", again, message)) === hex(mac),
                    raw: hex(await subtle.exportKey("raw", key)) === hex(secret),
                };
            }
            const key = await subtle.importKey("raw", cases.one[0], { name: "HMAC", hash }, true, ["verify"]);
            out[hash].algorithm = key.algorithm;
            out[hash].jwk = await subtle.exportKey("jwk", key);
        }
        return out;
        "#,
    )
    .await;
    let expected = [
        ("SHA-256", "one", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        ("SHA-256", "two", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        ("SHA-256", "six", "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        ("SHA-384", "one", "afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6"),
        ("SHA-384", "two", "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649"),
        ("SHA-384", "six", "4ece084485813e9088d2c63a041bc5b44f9ef1012a2b588f3cd11f05033ac4c60c2ef6ab4030fe8296248df163f44952"),
        ("SHA-512", "one", "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"),
        ("SHA-512", "two", "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"),
        ("SHA-512", "six", "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598"),
        // RFC 2202, test cases 1 and 2.
        ("SHA-1", "one", "b617318655057264e28bc0b6fb378c8ef146be00"),
        ("SHA-1", "two", "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
    ];
    for (hash, case, mac) in expected {
        let got = &answer[hash][case];
        assert_eq!(got["mac"], mac, "{hash} {case}");
        assert_eq!(
            got,
            &json!({ "mac": mac, "verifies": true, "tampered": false, "short": false, "jwk": true, "raw": true }),
            "{hash} {case}"
        );
    }
    assert_eq!(
        answer["SHA-256"]["algorithm"],
        json!({ "name": "HMAC", "hash": { "name": "SHA-256" }, "length": 160 })
    );
    assert_eq!(
        answer["SHA-512"]["jwk"],
        json!({ "kty": "oct", "alg": "HS512", "k": "CwsLCwsLCwsLCwsLCwsLCwsLCws", "key_ops": ["verify"], "ext": true })
    );
}

/// RFC 8032 section 7.1, tests 1 to 3: (secret seed, public key, message, signature).
const RFC_8032: [(&str, &str, &str, &str); 3] = [
    (
        "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        "",
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
    ),
    (
        "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
        "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        "72",
        "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
    ),
    (
        "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
        "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
        "af82",
        "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
    ),
];

#[tokio::test]
async fn ed25519_matches_rfc_8032_through_every_key_format() {
    let vectors = serde_json::to_string(&RFC_8032).unwrap();
    let answer = run(
        "ed25519",
        &format!(
            r#"
        const out = [];
        for (const [seed, pub, msg, sig] of {vectors}) {{
            // PKCS #8 v1 as RFC 8410 writes it: the DER prefix, then the seed.
            const pkcs8 = unhex("302e020100300506032b657004220420" + seed);
            const spki = unhex("302a300506032b6570032100" + pub);
            const priv = await subtle.importKey("pkcs8", pkcs8, "Ed25519", true, ["sign"]);
            const fromJwk = await subtle.importKey("jwk", {{ kty: "OKP", crv: "Ed25519", x: b64url(unhex(pub)), d: b64url(unhex(seed)) }}, {{ name: "ed25519" }}, false, ["sign"]);
            const raw = await subtle.importKey("raw", unhex(pub), "Ed25519", true, ["verify"]);
            const fromSpki = await subtle.importKey("spki", spki, "Ed25519", false, ["verify"]);
            const signature = await subtle.sign("Ed25519", priv, unhex(msg));
            const tampered = unhex(sig); tampered[10] ^= 1;
            out.push({{
                signature: hex(signature),
                jwkSignature: hex(await subtle.sign({{ name: "Ed25519" }}, fromJwk, unhex(msg))),
                verifiesRaw: await subtle.verify("Ed25519", raw, unhex(sig), unhex(msg)),
                verifiesSpki: await subtle.verify("Ed25519", fromSpki, unhex(sig), unhex(msg)),
                tampered: await subtle.verify("Ed25519", raw, tampered, unhex(msg)),
                otherMessage: await subtle.verify("Ed25519", raw, unhex(sig), unhex(msg + "00")),
                pkcs8: hex(await subtle.exportKey("pkcs8", priv)) === hex(pkcs8),
                spki: hex(await subtle.exportKey("spki", raw)) === hex(spki),
                raw: hex(await subtle.exportKey("raw", raw)),
                jwk: await subtle.exportKey("jwk", priv),
                types: [priv.type, raw.type, priv.algorithm.name, raw.usages],
            }});
        }}
        return out;
        "#
        ),
    )
    .await;
    for (i, (seed, public, _, signature)) in RFC_8032.iter().enumerate() {
        let got = &answer[i];
        assert_eq!(got["signature"], *signature, "test {}", i + 1);
        assert_eq!(got["jwkSignature"], *signature, "test {}", i + 1);
        for check in ["verifiesRaw", "verifiesSpki", "pkcs8", "spki"] {
            assert_eq!(got[check], true, "test {} {check}", i + 1);
        }
        assert_eq!(got["tampered"], false);
        assert_eq!(got["otherMessage"], false);
        assert_eq!(got["raw"], *public);
        assert_eq!(got["jwk"]["kty"], "OKP");
        assert_eq!(got["jwk"]["crv"], "Ed25519");
        assert_eq!(got["jwk"]["key_ops"], json!(["sign"]));
        assert_eq!(got["jwk"]["ext"], true);
        let d = got["jwk"]["d"].as_str().unwrap();
        assert_eq!(hex_of_b64url(d), *seed);
        assert_eq!(hex_of_b64url(got["jwk"]["x"].as_str().unwrap()), *public);
        assert_eq!(
            got["types"],
            json!(["private", "public", "Ed25519", ["verify"]])
        );
    }
}

/// RFC 6979 A.2.5: the P-256 key, and the signatures of "sample" and "test".
const P256_D: &str = "c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721";
const P256_X: &str = "60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6";
const P256_Y: &str = "7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299";
const P256_SIGNATURES: [(&str, &str, &str); 5] = [
    ("SHA-256", "sample", "efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8"),
    ("SHA-256", "test", "f1abb023518351cd71d881567b1ea663ed3efcf6c5132b354f28d3b0b7d38367019f4113742a2b14bd25926b49c649155f267e60d3814b4c0cc84250e46f0083"),
    ("SHA-1", "sample", "61340c88c3aaebeb4f6d667f672ca9759a6ccaa9fa8811313039ee4a35471d326d7f147dac089441bb2e2fe8f7a3fa264b9c475098fdcf6e00d7c996e1b8b7eb"),
    ("SHA-384", "sample", "0eafea039b20e9b42309fb1d89e213057cbf973dc0cfc8f129edddc800ef77194861f0491e6998b9455193e34e7b0d284ddd7149a74b95b9261f13abde940954"),
    ("SHA-512", "sample", "8496a60b5e9b47c825488827e0495b0e3fa109ec4568fd3f8d1097678eb97f002362ab1adbe2b8adf9cb9edab740ea6049c028114f2460f96554f61fae3302fe"),
];

#[tokio::test]
async fn ecdsa_p256_matches_rfc_6979_through_every_key_format() {
    let vectors = serde_json::to_string(&P256_SIGNATURES).unwrap();
    // The same key as PKCS #8 (with its public key, as OpenSSL and browsers write it) and SPKI.
    let pkcs8 = format!("308187020100301306072a8648ce3d020106082a8648ce3d030107046d306b0201010420{P256_D}a14403420004{P256_X}{P256_Y}");
    let spki = format!("3059301306072a8648ce3d020106082a8648ce3d03010703420004{P256_X}{P256_Y}");
    let answer = run(
        "ecdsa",
        &format!(
            r#"
        const curve = {{ name: "ECDSA", namedCurve: "P-256" }};
        const priv = await subtle.importKey("pkcs8", unhex("{pkcs8}"), curve, true, ["sign"]);
        const publics = {{
            raw: await subtle.importKey("raw", unhex("04{P256_X}{P256_Y}"), curve, true, ["verify"]),
            // Y is odd: the compressed point starts with 03.
            compressed: await subtle.importKey("raw", unhex("03{P256_X}"), curve, true, ["verify"]),
            spki: await subtle.importKey("spki", unhex("{spki}"), curve, true, ["verify"]),
            jwk: await subtle.importKey("jwk", {{ kty: "EC", crv: "P-256", x: b64url(unhex("{P256_X}")), y: b64url(unhex("{P256_Y}")) }}, curve, true, ["verify"]),
        }};
        const fromJwk = await subtle.importKey("jwk", {{ kty: "EC", crv: "P-256", x: b64url(unhex("{P256_X}")), y: b64url(unhex("{P256_Y}")), d: b64url(unhex("{P256_D}")) }}, curve, false, ["sign"]);
        const out = {{ verifies: {{}}, signatures: {{}} }};
        for (const [hash, message, sig] of {vectors}) {{
            const tampered = unhex(sig); tampered[40] ^= 1;
            for (const [name, key] of Object.entries(publics)) {{
                out.verifies[`${{hash}} ${{message}} ${{name}}`] = [
                    await subtle.verify({{ name: "ECDSA", hash }}, key, unhex(sig), utf8(message)),
                    await subtle.verify({{ name: "ECDSA", hash }}, key, tampered, utf8(message)),
                    await subtle.verify({{ name: "ECDSA", hash }}, key, unhex(sig), utf8(message + ".")),
                ];
            }}
            if (hash === "SHA-256") {{
                out.signatures[message] = [
                    hex(await subtle.sign({{ name: "ECDSA", hash }}, priv, utf8(message))),
                    hex(await subtle.sign({{ name: "ecdsa", hash: {{ name: "sha-256" }} }}, fromJwk, utf8(message))),
                ];
            }}
        }}
        // RFC 6979's "sample" signature has a high s; its low-s twin (r, n - s) verifies too.
        const lowS = unhex("efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716" + "0834e36ad29a83bf2bc9385e491d6099c8fdf9d1ed67aa7ea5f51f93782857a9");
        out.lowS = await subtle.verify({{ name: "ECDSA", hash: "SHA-256" }}, publics.raw, lowS, utf8("sample"));
        out.pkcs8 = hex(await subtle.exportKey("pkcs8", priv));
        out.spki = hex(await subtle.exportKey("spki", publics.compressed));
        out.raw = hex(await subtle.exportKey("raw", publics.jwk));
        out.jwk = await subtle.exportKey("jwk", priv);
        out.algorithm = priv.algorithm;
        return out;
        "#
        ),
    )
    .await;
    for (hash, message, signature) in P256_SIGNATURES {
        for format in ["raw", "compressed", "spki", "jwk"] {
            assert_eq!(
                answer["verifies"][format!("{hash} {message} {format}")],
                json!([true, false, false]),
                "{hash} {message} {format}"
            );
        }
        if hash == "SHA-256" {
            // RFC 6979's nonce is deterministic, so the signature is the vector itself.
            assert_eq!(answer["signatures"][message], json!([signature, signature]));
        }
    }
    assert_eq!(answer["lowS"], true);
    assert_eq!(answer["pkcs8"], pkcs8);
    assert_eq!(answer["spki"], spki);
    assert_eq!(answer["raw"], format!("04{P256_X}{P256_Y}"));
    let jwk = &answer["jwk"];
    assert_eq!(
        (jwk["kty"].as_str(), jwk["crv"].as_str()),
        (Some("EC"), Some("P-256"))
    );
    assert_eq!(hex_of_b64url(jwk["d"].as_str().unwrap()), P256_D);
    assert_eq!(hex_of_b64url(jwk["x"].as_str().unwrap()), P256_X);
    assert_eq!(hex_of_b64url(jwk["y"].as_str().unwrap()), P256_Y);
    assert_eq!(
        answer["algorithm"],
        json!({ "name": "ECDSA", "namedCurve": "P-256" })
    );
}

#[tokio::test]
async fn generated_keys_sign_verify_and_round_trip_their_formats() {
    let answer = run(
        "generate",
        r#"
        const message = utf8("webhook body");
        const out = {};
        const hmac = await subtle.generateKey({ name: "HMAC", hash: "SHA-384" }, true, ["sign", "verify"]);
        out.hmac = [hmac.type, hmac.algorithm, (await subtle.exportKey("raw", hmac)).byteLength, hmac.extractable];
        const short = await subtle.generateKey({ name: "HMAC", hash: "SHA-256", length: 100 }, true, ["sign"]);
        const shortRaw = new Uint8Array(await subtle.exportKey("raw", short));
        out.short = [short.algorithm.length, shortRaw.length, shortRaw[12] & 0x0f];
        for (const [name, params, signing] of [
            ["Ed25519", { name: "Ed25519" }, "Ed25519"],
            ["ECDSA", { name: "ECDSA", namedCurve: "P-256" }, { name: "ECDSA", hash: "SHA-256" }],
        ]) {
            const pair = await subtle.generateKey(params, false, ["verify", "sign"]);
            const signature = await subtle.sign(signing, pair.privateKey, message);
            const jwk = await subtle.exportKey("jwk", pair.publicKey);
            const spki = await subtle.exportKey("spki", pair.publicKey);
            const raw = await subtle.exportKey("raw", pair.publicKey);
            const usages = ["verify"];
            const again = [
                await subtle.importKey("jwk", jwk, params, true, usages),
                await subtle.importKey("spki", spki, params, true, usages),
                await subtle.importKey("raw", raw, params, true, usages),
            ];
            const verified = [];
            for (const key of again) verified.push(await subtle.verify(signing, key, signature, message));
            out[name] = {
                verified,
                public: [pair.publicKey.type, pair.publicKey.extractable, pair.publicKey.usages],
                private: [pair.privateKey.type, pair.privateKey.extractable, pair.privateKey.usages],
                tag: Object.prototype.toString.call(pair.privateKey),
                isKey: pair.privateKey instanceof CryptoKey,
                ownKeys: Reflect.ownKeys(pair.privateKey).length,
                sameAlgorithm: pair.privateKey.algorithm === pair.privateKey.algorithm,
            };
        }
        return out;
        "#,
    )
    .await;
    assert_eq!(
        answer["hmac"],
        json!(["secret", { "name": "HMAC", "hash": { "name": "SHA-384" }, "length": 1024 }, 128, true])
    );
    assert_eq!(
        answer["short"],
        json!([100, 13, 0]),
        "100 bits: 13 bytes, the last 4 bits zero"
    );
    for name in ["Ed25519", "ECDSA"] {
        assert_eq!(
            answer[name],
            json!({
                "verified": [true, true, true],
                "public": ["public", true, ["verify"]],
                "private": ["private", false, ["sign"]],
                "tag": "[object CryptoKey]",
                "isKey": true,
                "ownKeys": 0,
                "sameAlgorithm": true,
            }),
            "{name}"
        );
    }
}

#[tokio::test]
async fn random_values_and_uuids_have_the_right_shape() {
    let answer = run(
        "random",
        r#"
        const uuids = new Set();
        for (let i = 0; i < 1000; i++) uuids.add(crypto.randomUUID());
        const wide = new Uint32Array(16384);
        const same = crypto.getRandomValues(wide) === wide;
        const offset = new Uint8Array(64);
        crypto.getRandomValues(offset.subarray(32));
        return {
            distinct: uuids.size,
            shape: [...uuids].every((u) => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(u)),
            same,
            // 65,536 bytes of zeros would be a broken generator.
            nonZero: wide.some((x) => x !== 0),
            headUntouched: offset.subarray(0, 32).every((x) => x === 0),
            tailFilled: offset.subarray(32).some((x) => x !== 0),
            globals: [typeof crypto, typeof Crypto, typeof SubtleCrypto, typeof CryptoKey, crypto.subtle === crypto.subtle],
        };
        "#,
    )
    .await;
    assert_eq!(
        answer,
        json!({
            "distinct": 1000,
            "shape": true,
            "same": true,
            "nonZero": true,
            "headUntouched": true,
            "tailFilled": true,
            "globals": ["object", "function", "function", "function", true],
        })
    );
}

/// In a worker process, confined by its seccomp allow-list (which has `getrandom`), Landlock
/// and namespaces: the randomness comes from the kernel and signing works, with no host op.
#[tokio::test(flavor = "multi_thread")]
async fn randomness_and_signing_work_in_a_confined_worker_process() {
    let host = Arc::new(MemoryHost::default());
    let options = sandbox::WorkerOptions {
        command: worker_command(),
        count: 1,
        recycle_after_dropped: sandbox::WorkerOptions::DEFAULT_RECYCLE_AFTER_DROPPED,
    };
    let pool = WorkerPool::new(test_config(), host, options);
    let source = format!(
        "{PRELUDE}\nexport default async function () {{
            const pair = await subtle.generateKey({{ name: 'ECDSA', namedCurve: 'P-256' }}, false, ['sign', 'verify']);
            const alg = {{ name: 'ECDSA', hash: 'SHA-256' }};
            const signature = await subtle.sign(alg, pair.privateKey, utf8('hi'));
            return {{
                uuids: [crypto.randomUUID(), crypto.randomUUID()],
                random: hex(crypto.getRandomValues(new Uint8Array(32))),
                verified: await subtle.verify(alg, pair.publicKey, signature, utf8('hi')),
            }};
        }}"
    );
    let code = endpoint("worker-crypto", &source);
    let report = pool.invoke(&code, request(json!(null))).await;
    let answer = report.result.expect("the worker answers").body;
    let stats = pool.stats().await;
    assert_eq!(stats.worker_pids.len(), 1);
    assert!(!stats.worker_pids.contains(&std::process::id()));
    let uuids: Vec<&str> = answer["uuids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap())
        .collect();
    assert_eq!(uuids.len(), 2);
    assert_ne!(uuids[0], uuids[1]);
    for uuid in uuids {
        assert_eq!(uuid.len(), 36, "{uuid}");
        assert_eq!(&uuid[14..15], "4", "{uuid}");
    }
    assert_eq!(answer["random"].as_str().unwrap().len(), 64);
    assert_ne!(answer["random"], "0".repeat(64));
    assert_eq!(answer["verified"], true);
}

fn hex_of_b64url(text: &str) -> String {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .expect("base64url");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
