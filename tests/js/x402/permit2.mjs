// Not named *.test.mjs so the handler tests' `node --test` in tests/js never picks it up.
// Pays a toolhost endpoint on a network whose asset is paid by Permit2 with the official x402
// client: the 402's `extra.assetTransferMethod` is "permit2", so @x402/evm's exact client signs
// a Permit2 PermitWitnessTransferFrom to x402's exact proxy instead of an EIP-3009
// authorization. TOOLHOST_URL names the server (the Rust test
// `js_client::official_x402_client_pays_exact_by_permit2` starts it on such a network).
import { test } from "node:test";
import assert from "node:assert/strict";
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const base = process.env.TOOLHOST_URL;

test("the official x402 client pays exact by Permit2 where the asset asks for it", { skip: !base && "TOOLHOST_URL is not set" }, async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account });
  let sent = null;
  const payingFetch = wrapFetchWithPayment(async (input, init) => {
    const request = new Request(input, init);
    sent = request.headers.get("PAYMENT-SIGNATURE") ?? sent;
    return fetch(request);
  }, client);
  const url = `${base}/tools/receipt-echo-paid`;

  const response = await payingFetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ hello: "permit2" }),
  });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  const payment = JSON.parse(Buffer.from(sent, "base64").toString());
  assert.equal(payment.accepted.extra.assetTransferMethod, "permit2");
  assert.equal(payment.payload.permit2Authorization.spender, "0x402085c248EeA27D92E8b30b2C58ed07f9E20001");
  const settlement = decodePaymentResponseHeader(response.headers.get("PAYMENT-RESPONSE"));
  assert.equal(settlement.success, true);
  assert.equal(body.receipt.amount, "1000");
  assert.equal(body.receipt.payer.toLowerCase(), account.address.toLowerCase());
});
