// The reference x402 client paying under a payment identifier, kept in one place: the extension
// test (extensions.mjs) pays with it, and fixtures/upgrade/make.sh runs this file to leave a
// payment identifier in a release's store. Not a test.
//
// Run as a command, it pays `url` (POST, body `{}`) with the wallet key in the file `keyFile`
// under `id` and prints the JSON of the receipt id and the PAYMENT-SIGNATURE header it sent
// (the upgrade test sends that header again to get the first answer):
//   node pay-with-id.mjs <url> <keyFile> <id>
import { readFileSync, realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { appendPaymentIdentifierToExtensions } from "@x402/extensions/payment-identifier";
import { privateKeyToAccount } from "viem/accounts";

/**
 * A fetch that pays as `account` with the payment identifier `id` set on every payment, and
 * `sent()`: the PAYMENT-SIGNATURE header it last sent, to send again as a retrying client would.
 */
export function payingUnderId(account, id) {
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
  return { fetch: wrapFetchWithPayment(keeping, client), sent: () => sent };
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [url, keyFile, id] = process.argv.slice(2);
  const account = privateKeyToAccount(`0x${readFileSync(keyFile, "utf8").trim()}`);
  const paying = payingUnderId(account, id);
  const response = await paying.fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  const body = await response.text();
  const receiptId = response.headers.get("x-receipt-id");
  if (response.status !== 200 || !paying.sent() || !receiptId) {
    console.error(`paying with an id answered ${response.status}: ${body}`);
    process.exit(1);
  }
  console.log(JSON.stringify({ receiptId, paymentSignature: paying.sent() }));
}
