// The dependency-free JavaScript verifier of toolhost's receipt log (docs/tlog-verify.mjs),
// against the published RFC 6962 and signed-note vectors, and against a log made by the Rust
// crate (fixtures/tlog/log.json, held equal to what toolhost-tlog makes by
// crates/tlog/tests/fixture.rs): everything it was given verifies, and nothing tampered does.
// Run: cd tests/js && node --test

import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import {
  leafHash,
  openCheckpoint,
  openNote,
  parseVerifierKey,
  verifyConsistency,
  verifyInclusion,
} from "../../docs/tlog-verify.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const log = JSON.parse(fs.readFileSync(path.join(root, "fixtures", "tlog", "log.json"), "utf8"));
const hex = (text) => Uint8Array.from(text.match(/../g) ?? [], (byte) => parseInt(byte, 16));
const b64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const flipped = (bytes, at = 0) => bytes.map((byte, i) => (i === at ? byte ^ 1 : byte));
// Refused with `code`, or with any of the verifier's codes when none is given.
const rejects = (promise, code) => assert.rejects(promise, (e) => (code ? e.code === code : e.code !== undefined));

const CT_ENTRIES = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"];
const CT_ROOT_8 = hex("5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328");
const CT_ROOT_6 = hex("76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef");

test("RFC 6962 vectors", async () => {
  const leaves = await Promise.all(CT_ENTRIES.map((e) => leafHash(hex(e))));
  const proof = [
    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  ].map(hex);
  await verifyInclusion(leaves[5], 5, 8, proof, CT_ROOT_8);
  await rejects(verifyInclusion(leaves[4], 5, 8, proof, CT_ROOT_8), "mismatch");
  const consistency = [
    "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
  ].map(hex);
  await verifyConsistency(6, 8, CT_ROOT_6, CT_ROOT_8, consistency);
  await rejects(verifyConsistency(6, 8, CT_ROOT_8, CT_ROOT_8, consistency), "mismatch");
});

test("Go sumdb/note's published note", async () => {
  const vkey = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
  const text = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
  const note = `${text}\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;
  assert.equal(await openNote(note, vkey), text);
  await rejects(openNote(note.replace("cryptography", "cryptographY"), vkey), "unverified");
  await rejects(parseVerifierKey(vkey.replace("c74f20a3", "c74f20a4")), "key");
});

test("the Rust crate's log verifies here", async () => {
  const head = await openCheckpoint(log.checkpoint, log.verifierKey);
  assert.equal(head.origin, "toolhost.test/receipts");
  assert.equal(head.size, 300);
  for (const { index, entry, proof } of log.inclusions) {
    await verifyInclusion(await leafHash(b64(entry)), index, head.size, proof.map(b64), head.root);
  }
  const old = await openCheckpoint(log.oldCheckpoint, log.verifierKey);
  await verifyConsistency(old.size, head.size, old.root, head.root, log.consistency.map(b64));
});

test("nothing tampered verifies", async () => {
  const head = await openCheckpoint(log.checkpoint, log.verifierKey);
  const old = await openCheckpoint(log.oldCheckpoint, log.verifierKey);
  // Another size or root in the signed text, another key.
  await rejects(openNote(log.checkpoint.replace("\n300\n", "\n301\n"), log.verifierKey), "unverified");
  const otherKey = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
  await rejects(openNote(log.checkpoint, otherKey), "unverified");
  const { index, entry, proof } = log.inclusions[3];
  const leaf = await leafHash(b64(entry));
  const hashes = proof.map(b64);
  await rejects(verifyInclusion(await leafHash(flipped(b64(entry))), index, head.size, hashes, head.root), "mismatch");
  await rejects(verifyInclusion(leaf, index + 1, head.size, hashes, head.root));
  await rejects(verifyInclusion(leaf, index, head.size, hashes.slice(1), head.root), "length");
  await rejects(verifyInclusion(leaf, index, head.size, [...hashes, hashes[0]], head.root), "length");
  for (let i = 0; i < hashes.length; i++) {
    const forged = hashes.map((h, j) => (j === i ? flipped(h, i) : h));
    await rejects(verifyInclusion(leaf, index, head.size, forged, head.root), "mismatch");
  }
  await rejects(verifyInclusion(leaf, head.size, head.size, hashes, head.root), "sizes");
  const consistency = log.consistency.map(b64);
  await rejects(verifyConsistency(old.size, head.size, flipped(old.root), head.root, consistency), "mismatch");
  await rejects(verifyConsistency(old.size + 1, head.size, old.root, head.root, consistency));
  await rejects(verifyConsistency(old.size, head.size, old.root, head.root, consistency.slice(1)));
  await rejects(verifyConsistency(0, head.size, old.root, head.root, consistency), "sizes");
});
