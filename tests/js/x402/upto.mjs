// Not named *.test.mjs so the handler tests' `node --test` in tests/js never picks it up.
// Pays a metered toolhost endpoint with the official x402 client: @x402/evm's `upto` client
// signs a Permit2 permit of the maximum the 402 asks (with the facilitator address it names),
// @x402/fetch retries with PAYMENT-SIGNATURE, and the call is charged what its handler
// reported. TOOLHOST_URL names the server and METERED_SLUG the endpoint (the Rust test
// `js_client::official_x402_client_pays_a_metered_endpoint` starts and makes them).
import { test } from "node:test";
import assert from "node:assert/strict";
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { UptoEvmScheme } from "@x402/evm/upto/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const base = process.env.TOOLHOST_URL;
const slug = process.env.METERED_SLUG;

test("the official x402 upto client pays a metered endpoint what the call reported", { skip: !base && "TOOLHOST_URL is not set" }, async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const client = new x402Client();
  client.register("eip155:*", new UptoEvmScheme(account));
  const payingFetch = wrapFetchWithPayment(fetch, client);
  const url = `${base}/tools/${slug}`;

  const unpaid = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  assert.equal(unpaid.status, 402);

  const response = await payingFetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ pages: 3 }),
  });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  const settlement = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE"));
  assert.equal(settlement.success, true);
  assert.equal(settlement.payer.toLowerCase(), account.address.toLowerCase());
  assert.equal(body.receipt.paymentMethod, "x402");
  assert.equal(body.receipt.amount, "3000");
  assert.equal(body.receipt.metering.maxAmount, "5000");
  assert.equal(body.receipt.metering.units, "3");
  assert.equal(body.receipt.payer.toLowerCase(), account.address.toLowerCase());

  const stored = await (await fetch(`${base}/ai/receipts/${body.receipt.receiptId}`)).json();
  assert.deepEqual(stored, body.receipt);
});
