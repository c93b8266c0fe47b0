// Not named *.test.mjs so the handler tests' `node --test` in tests/js never picks it up.
// Pays a toolhost endpoint end to end with the official x402 client: the 402's PAYMENT-REQUIRED
// header is decoded by @x402/core, @x402/evm signs an EIP-3009 authorization with a viem
// account, @x402/fetch retries with PAYMENT-SIGNATURE and reads PAYMENT-RESPONSE.
// TOOLHOST_URL names the server (the Rust test `js_client::official_x402_client_pays` starts it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const base = process.env.TOOLHOST_URL;

test("the official x402 client pays a paid endpoint and gets a signed receipt", { skip: !base && "TOOLHOST_URL is not set" }, async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account });
  const payingFetch = wrapFetchWithPayment(fetch, client);

  const unpaid = await fetch(`${base}/tools/receipt-echo-paid`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  assert.equal(unpaid.status, 402);

  const response = await payingFetch(`${base}/tools/receipt-echo-paid`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ hello: "x402" }),
  });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  const settlement = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE"));
  assert.equal(settlement.success, true);
  assert.equal(settlement.payer.toLowerCase(), account.address.toLowerCase());
  assert.equal(body.receipt.paymentMethod, "x402");
  assert.equal(body.receipt.x402Version, 2);
  assert.equal(body.receipt.amount, "1000");
  assert.equal(body.receipt.payer.toLowerCase(), account.address.toLowerCase());

  const stored = await (await fetch(`${base}/ai/receipts/${body.receipt.receiptId}`)).json();
  assert.deepEqual(stored, body.receipt);
});
