// Not named *.test.mjs so the handler tests' `node --test` in tests/js never picks it up.
// toolhost's x402 extensions checked with the reference package, @x402/extensions 2.27.0:
// - bazaar: every 402 (HTTP and MCP) carries discovery info that the package's facilitator-side
//   validators accept and extract, and GET /discovery/resources is listed by its bazaar client
//   (`withBazaar(new HTTPFacilitatorClient({url}))`, toolhost standing as the facilitator);
// - payment-identifier: the package's client helper sets the id (`@x402/fetch` pays), the same
//   signed payment sent again gets the first answer, and a new payment under the id is 409;
// - offer-receipt: the settlement response carries a JWS receipt the package verifies, both by
//   its did:key and by the receipt key the manifest publishes.
// TOOLHOST_URL names the server (the Rust test `js_client::reference_x402_extensions` starts it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { decodePaymentRequiredHeader, HTTPFacilitatorClient } from "@x402/core/http";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import {
  withBazaar,
  validateDiscoveryExtension,
  validateDiscoveryExtensionSpec,
  extractDiscoveryInfo,
} from "@x402/extensions/bazaar";
import {
  PAYMENT_IDENTIFIER,
  validatePaymentIdentifier,
  generatePaymentId,
} from "@x402/extensions/payment-identifier";
import {
  OFFER_RECEIPT,
  extractReceiptFromResponse,
  extractReceiptPayload,
  verifyReceiptSignatureJWS,
} from "@x402/extensions/offer-receipt";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { payingUnderId } from "./pay-with-id.mjs";

const base = process.env.TOOLHOST_URL;
const skip = !base && "TOOLHOST_URL is not set";
const paid = `${base}/tools/receipt-echo-paid`;

async function unpaid(url) {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  assert.equal(response.status, 402);
  return decodePaymentRequiredHeader(response.headers.get("PAYMENT-REQUIRED"));
}

/** Valid for the package's facilitator: schema check, spec check, and extraction from a payload. */
function assertDiscoverable(bazaar, resource, accepted) {
  assert.deepEqual(validateDiscoveryExtension(bazaar), { valid: true });
  assert.deepEqual(validateDiscoveryExtensionSpec(bazaar), { valid: true });
  const payload = { x402Version: 2, resource, accepted, payload: {}, extensions: { bazaar } };
  const found = extractDiscoveryInfo(payload, accepted);
  assert.ok(found, "extractDiscoveryInfo found the resource");
  return found;
}

test("every HTTP 402 carries bazaar discovery info the reference validates", { skip }, async () => {
  const required = await unpaid(paid);
  const bazaar = required.extensions.bazaar;
  assert.equal(bazaar.info.input.type, "http");
  assert.equal(bazaar.info.input.method, "POST");
  assert.equal(bazaar.info.input.bodyType, "json");
  const found = assertDiscoverable(bazaar, required.resource, required.accepts[0]);
  assert.equal(found.resourceUrl, paid);
  assert.equal(found.method, "POST");
  assert.equal(found.description, required.resource.description);
});

test("a metered endpoint's bazaar declaration says how it charges and the reference validates it", { skip: skip || (!process.env.METERED_SLUG && "METERED_SLUG is not set") }, async () => {
  const url = `${base}/tools/${process.env.METERED_SLUG}`;
  const required = await unpaid(url);
  assert.equal(required.accepts[0].scheme, "upto");
  const bazaar = required.extensions.bazaar;
  assert.equal(bazaar.info.pricing.mode, "metered");
  assert.equal(typeof bazaar.info.pricing.unit, "string");
  const found = assertDiscoverable(bazaar, required.resource, required.accepts[0]);
  assert.equal(found.resourceUrl, url);
});

test("an MCP tools/call 402 carries bazaar discovery info for the tool", { skip }, async () => {
  const response = await fetch(`${base}/ai/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "receipt-echo-paid", arguments: {} } }),
  });
  const { result } = await response.json();
  assert.equal(result.isError, true);
  const required = result.structuredContent;
  assert.equal(required.x402Version, 2);
  const bazaar = required.extensions.bazaar;
  assert.equal(bazaar.info.input.type, "mcp");
  assert.equal(bazaar.info.input.toolName, "receipt-echo-paid");
  assert.equal(bazaar.info.input.transport, "streamable-http");
  const found = assertDiscoverable(bazaar, required.resource, required.accepts[0]);
  assert.equal(found.toolName, "receipt-echo-paid");
});

test("the reference bazaar client lists toolhost's paid catalog, every item valid", { skip }, async () => {
  const client = withBazaar(new HTTPFacilitatorClient({ url: base }));
  const all = await client.extensions.bazaar.listResources();
  assert.equal(all.x402Version, 2);
  assert.ok(all.items.length >= 2, JSON.stringify(all.pagination));
  assert.equal(all.pagination.total, all.items.length);
  for (const item of all.items) {
    const found = assertDiscoverable(item.extensions.bazaar, { url: item.resource, description: item.description, mimeType: item.mimeType }, item.accepts[0]);
    assert.ok(item.accepts.length > 0 && item.lastUpdated);
    assert.deepEqual(validatePaymentIdentifier(item.extensions[PAYMENT_IDENTIFIER]), { valid: true });
    if (item.type === "mcp") assert.ok(found.toolName);
  }
  const http = await client.extensions.bazaar.listResources({ type: "http", limit: 1, offset: 0 });
  assert.equal(http.items.length, 1);
  assert.equal(http.items[0].type, "http");
  assert.ok(all.items.some((i) => i.resource === paid && i.type === "http"));
});

test("payment-identifier: the reference client's id makes the paid call idempotent", { skip }, async () => {
  const required = await unpaid(paid);
  assert.deepEqual(validatePaymentIdentifier(required.extensions[PAYMENT_IDENTIFIER]), { valid: true });
  assert.equal(required.extensions[PAYMENT_IDENTIFIER].info.required, false);

  const id = generatePaymentId();
  const account = privateKeyToAccount(generatePrivateKey());
  // Keeps the payment header the client sends, to send it again as a retrying client would.
  const paying = payingUnderId(account, id);
  const call = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ order: 7 }) };
  const first = await paying.fetch(paid, call);
  const firstBody = await first.json();
  assert.equal(first.status, 200, JSON.stringify(firstBody));
  const sent = paying.sent();
  const echoed = JSON.parse(Buffer.from(sent, "base64").toString());
  assert.equal(echoed.extensions[PAYMENT_IDENTIFIER].info.id, id);

  const again = await fetch(paid, { ...call, headers: { ...call.headers, "PAYMENT-SIGNATURE": sent } });
  assert.equal(again.status, 200);
  assert.deepEqual(await again.json(), firstBody);
  assert.equal(again.headers.get("x-receipt-id"), firstBody.receipt.receiptId);
  assert.equal(again.headers.get("PAYMENT-RESPONSE"), first.headers.get("PAYMENT-RESPONSE"));

  // The client signs a new authorization under the same id: refused, nothing run or charged.
  const conflict = await paying.fetch(paid, call);
  assert.equal(conflict.status, 409);
  assert.equal((await conflict.json()).error.code, "payment_identifier_conflict");
});

test("offer-receipt: the settlement carries a JWS receipt the reference verifies", { skip }, async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account });
  const response = await wrapFetchWithPayment(fetch, client)(paid, {
    method: "POST", headers: { "content-type": "application/json" }, body: "{}",
  });
  assert.equal(response.status, 200);
  const receipt = extractReceiptFromResponse(response);
  assert.equal(receipt.format, "jws");
  const byDid = await verifyReceiptSignatureJWS(receipt);
  const manifest = await (await fetch(`${base}/ai/manifest`)).json();
  const x = Buffer.from(manifest.receipts.publicKey, "base64").toString("base64url");
  const byManifest = await verifyReceiptSignatureJWS(receipt, { kty: "OKP", crv: "Ed25519", x });
  assert.deepEqual(byManifest, byDid);
  assert.deepEqual(extractReceiptPayload(receipt), byDid);
  assert.equal(byDid.version, 1);
  assert.equal(byDid.resourceUrl, paid);
  assert.equal(byDid.network, "eip155:84532");
  assert.equal(byDid.payer.toLowerCase(), account.address.toLowerCase());
  assert.ok(Math.abs(byDid.issuedAt - Date.now() / 1000) < 60);
  const [header, body, signature] = receipt.signature.split(".");
  const flipped = signature.slice(0, 10) + (signature[10] === "A" ? "B" : "A") + signature.slice(11);
  const tampered = { ...receipt, signature: [header, body, flipped].join(".") };
  await assert.rejects(verifyReceiptSignatureJWS(tampered));
  const settlement = JSON.parse(Buffer.from(response.headers.get("PAYMENT-RESPONSE"), "base64").toString());
  assert.ok(settlement.extensions[OFFER_RECEIPT].schema);
});
