// Not a test: fixtures/upgrade/make.sh runs it to leave a payment identifier in a release's
// store. Pays `url` (POST, body `{}`) with the reference x402 client, the wallet key in the file
// `keyFile` signing, under the payment identifier `id`; prints the JSON of the receipt id and the
// PAYMENT-SIGNATURE header sent, which the upgrade test sends again to get the first answer.
// Usage: node pay-with-id.mjs <url> <keyFile> <id>
import { readFileSync } from "node:fs";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { appendPaymentIdentifierToExtensions } from "@x402/extensions/payment-identifier";
import { privateKeyToAccount } from "viem/accounts";

const [url, keyFile, id] = process.argv.slice(2);
const account = privateKeyToAccount(`0x${readFileSync(keyFile, "utf8").trim()}`);
const client = new x402Client();
registerExactEvmScheme(client, { signer: account });
client.onBeforePaymentCreation(async ({ paymentRequired }) => {
  appendPaymentIdentifierToExtensions(paymentRequired.extensions, id);
});
let sent;
const keeping = async (input, init) => {
  const request = new Request(input, init);
  sent = request.headers.get("PAYMENT-SIGNATURE") ?? sent;
  return fetch(request);
};
const response = await wrapFetchWithPayment(keeping, client)(url, {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: "{}",
});
const body = await response.text();
const receiptId = response.headers.get("x-receipt-id");
if (response.status !== 200 || !sent || !receiptId) {
  console.error(`paying with an id answered ${response.status}: ${body}`);
  process.exit(1);
}
console.log(JSON.stringify({ receiptId, paymentSignature: sent }));
