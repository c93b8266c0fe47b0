// toolhost's receipt log, checked with nothing but the standard Web Crypto API (browsers,
// Node 20+, Deno, Workers): no dependencies, one file to copy. It does what the Rust crate
// `toolhost-tlog` does (crates/tlog): RFC 6962 / RFC 9162 leaf hashes and proofs, and the
// tree head as a C2SP signed note (Ed25519) holding a C2SP tlog checkpoint.
//
//   import { openCheckpoint, leafHash, verifyInclusion } from "./tlog-verify.mjs";
//   const head = await openCheckpoint(noteText, "<the log's verifier key>");
//   await verifyInclusion(await leafHash(entryBytes), index, head.size, proof, head.root);
//
// A paid call's answer carries its `receipt` and `receiptLog`; the log's verifier key is
// `receipts.log.verifierKey` in `/ai/manifest` (and in `/.well-known/receipt-log`):
//
//   import { verifyReceiptInclusion } from "./tlog-verify.mjs";
//   const head = await verifyReceiptInclusion(answer.receipt, answer.receiptLog, verifierKey);
//
// Every function that checks something returns nothing when the check holds and throws a
// `TlogError` (with a `code`) when it does not. Hashes are Uint8Arrays of 32 bytes.

const subtle = globalThis.crypto.subtle;
const encoder = new TextEncoder();

export class TlogError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

async function sha256(...parts) {
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return new Uint8Array(await subtle.digest("SHA-256", bytes));
}

/** The hash of a leaf holding `entry` (bytes): SHA-256(0x00 || entry). */
export function leafHash(entry) {
  return sha256(Uint8Array.of(0), entry);
}

/** The hash of an interior node: SHA-256(0x01 || left || right). */
export function nodeHash(left, right) {
  return sha256(Uint8Array.of(1), left, right);
}

function equal(a, b) {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** Checks that `leaf` (a leaf hash) is leaf `index` of the tree of `size` leaves with `root`. */
export async function verifyInclusion(leaf, index, size, proof, root) {
  if (!(index >= 0 && index < size)) throw new TlogError("sizes", `index ${index} is not in a tree of ${size}`);
  let [f, s] = [BigInt(index), BigInt(size) - 1n];
  let r = leaf;
  for (const p of proof) {
    if (s === 0n) throw new TlogError("length", "the proof has too many hashes");
    if ((f & 1n) === 1n || f === s) {
      r = await nodeHash(p, r);
      while ((f & 1n) === 0n && f !== 0n) [f, s] = [f >> 1n, s >> 1n];
    } else {
      r = await nodeHash(r, p);
    }
    [f, s] = [f >> 1n, s >> 1n];
  }
  if (s !== 0n) throw new TlogError("length", "the proof has too few hashes");
  if (!equal(r, root)) throw new TlogError("mismatch", "the proof leads to another root");
}

/** Checks that the tree of `oldSize` leaves with `oldRoot` is a prefix of the tree of `size` with `root`. */
export async function verifyConsistency(oldSize, size, oldRoot, root, proof) {
  if (!(oldSize > 0 && oldSize <= size)) throw new TlogError("sizes", `no proof joins sizes ${oldSize} and ${size}`);
  if (oldSize === size) {
    if (proof.length !== 0) throw new TlogError("length", "equal sizes take an empty proof");
    if (!equal(oldRoot, root)) throw new TlogError("mismatch", "two roots for one size");
    return;
  }
  const path = [...proof];
  // A power-of-two old tree is a node of the new one: the proof leaves its root out.
  const powerOfTwo = (oldSize & (oldSize - 1)) === 0;
  if (powerOfTwo) path.unshift(oldRoot);
  if (path.length === 0) throw new TlogError("length", "the proof has too few hashes");
  let [f, s] = [BigInt(oldSize) - 1n, BigInt(size) - 1n];
  while ((f & 1n) === 1n) [f, s] = [f >> 1n, s >> 1n];
  let [fr, sr] = [path[0], path[0]];
  for (const c of path.slice(1)) {
    if (s === 0n) throw new TlogError("length", "the proof has too many hashes");
    if ((f & 1n) === 1n || f === s) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      while ((f & 1n) === 0n && f !== 0n) [f, s] = [f >> 1n, s >> 1n];
    } else {
      sr = await nodeHash(sr, c);
    }
    [f, s] = [f >> 1n, s >> 1n];
  }
  if (s !== 0n) throw new TlogError("length", "the proof has too few hashes");
  if (!equal(fr, oldRoot) || !equal(sr, root)) throw new TlogError("mismatch", "the proof leads to other roots");
}

function fromBase64(text) {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) throw new TlogError("malformed", "not base64");
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

/** A verifier key, `<name>+<id in hex>+<base64 of 0x01 and the Ed25519 public key>`. */
export async function parseVerifierKey(text) {
  const [name, id, material] = [text.split("+")[0], text.split("+")[1], text.split("+").slice(2).join("+")];
  if (!name || /[\s+]/.test(name) || !/^[0-9a-f]{8}$/.test(id ?? "")) throw new TlogError("key", "a key is <name>+<id>+<key>");
  const bytes = fromBase64(material);
  if (bytes.length !== 33 || bytes[0] !== 1) throw new TlogError("key", "only Ed25519 keys (type 0x01) are read");
  const digest = await sha256(encoder.encode(name + "\n"), bytes);
  const expected = [...digest.slice(0, 4)].map((b) => b.toString(16).padStart(2, "0")).join("");
  if (expected !== id) throw new TlogError("key", "the key id does not match the key");
  const key = await subtle.importKey("raw", bytes.slice(1), { name: "Ed25519" }, false, ["verify"]);
  return { name, id: digest.slice(0, 4), key };
}

/** The text of a signed note if one of its signatures is the key's (`vkey`, text or parsed) and verifies. */
export async function openNote(note, vkey) {
  const verifier = typeof vkey === "string" ? await parseVerifierKey(vkey) : vkey;
  const split = note.lastIndexOf("\n\n");
  if (split < 0 || !note.endsWith("\n")) throw new TlogError("malformed", "no blank line before the signatures");
  const text = note.slice(0, split + 1);
  if (text.split("\n").slice(0, -1).some((line) => line === "") || /[\u0000-\u0009\u000b-\u001f\u007f]/.test(text)) {
    throw new TlogError("malformed", "the text breaks the note format");
  }
  let verified = false;
  for (const line of note.slice(split + 2, -1).split("\n")) {
    const match = /^\u2014 (\S+) (\S+)$/.exec(line);
    if (!match) throw new TlogError("malformed", "a signature line is `\u2014 <name> <base64>`");
    const blob = fromBase64(match[2]);
    if (blob.length < 4) throw new TlogError("malformed", "a signature starts with a key id");
    if (match[1] !== verifier.name || !equal(blob.slice(0, 4), verifier.id)) continue;
    if (blob.length !== 68) throw new TlogError("malformed", "an Ed25519 signature is 64 bytes");
    verified ||= await subtle.verify({ name: "Ed25519" }, verifier.key, blob.slice(4), encoder.encode(text));
  }
  if (!verified) throw new TlogError("unverified", `the note carries no valid signature of ${verifier.name}`);
  return text;
}

/** A checkpoint's text: `{ origin, size, root }` (extension lines, such as toolhost's `timestamp <unix ms>`, are skipped). */
export function parseCheckpoint(text) {
  const [origin, size, root] = text.split("\n");
  if (!origin) throw new TlogError("malformed", "a checkpoint names its origin");
  if (!/^(0|[1-9][0-9]*)$/.test(size ?? "")) throw new TlogError("malformed", "a checkpoint's size is a decimal number");
  const hash = fromBase64(root ?? "");
  if (hash.length !== 32) throw new TlogError("malformed", "a checkpoint's root is 32 bytes of base64");
  const count = Number(size);
  if (!Number.isSafeInteger(count)) throw new TlogError("malformed", "a checkpoint's size is too large here");
  return { origin, size: count, root: hash };
}

/** A signed checkpoint, opened with the log's verifier key and read. */
export async function openCheckpoint(note, vkey) {
  return parseCheckpoint(await openNote(note, vkey));
}

function compareBytes(a, b) {
  const [x, y] = [encoder.encode(a), encoder.encode(b)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** JSON with object keys sorted (by their UTF-8 bytes) at every level and no whitespace: a receipt's log entry. */
export function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort(compareBytes);
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * Checks that `receipt` (as a call's answer or `GET /ai/receipts/{id}` gives it) is leaf
 * `receiptLog.leafIndex` of the tree whose signed checkpoint `receiptLog.checkpoint` carries,
 * signed by the log's verifier key. Returns the opened checkpoint.
 */
export async function verifyReceiptInclusion(receipt, receiptLog, vkey) {
  const head = await openCheckpoint(receiptLog.checkpoint, vkey);
  if (head.size !== receiptLog.treeSize) {
    throw new TlogError("sizes", `the checkpoint is of ${head.size} receipts, the proof of ${receiptLog.treeSize}`);
  }
  const leaf = await leafHash(encoder.encode(canonicalJson(receipt)));
  const proof = receiptLog.inclusionProof.map(fromBase64);
  await verifyInclusion(leaf, receiptLog.leafIndex, head.size, proof, head.root);
  return head;
}

/**
 * A receipt's digest of `value` (the call's input, or its result) with the caller's salt
 * (`receiptSalt`, hex): SHA-256 of the salt's bytes and the canonical JSON, in hex. Equal to
 * the receipt's `requestSha256` (`resultSha256`) when `value` is what the call sent (got).
 */
export async function saltedDigest(saltHex, value) {
  if (!/^([0-9a-f]{2})+$/.test(saltHex)) throw new TlogError("malformed", "a salt is hex");
  const salt = Uint8Array.from(saltHex.match(/../g), (byte) => parseInt(byte, 16));
  const digest = await sha256(salt, encoder.encode(canonicalJson(value)));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}
