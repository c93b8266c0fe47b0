// The official TypeScript MCP client (`@modelcontextprotocol/sdk`, Client with
// StreamableHTTPClientTransport) against a running toolhost. Reads the server's base URL from
// TOOLHOST_URL; starts nothing itself (tests/mcp/run.sh does).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const base = process.env.TOOLHOST_URL;
assert.ok(base, "TOOLHOST_URL must name a running toolhost");
const url = new URL("/ai/mcp", base);
let client;
let transport;

before(async () => {
  client = new Client({ name: "toolhost-tests", version: "1.0.0" });
  transport = new StreamableHTTPClientTransport(url);
  await client.connect(transport);
});

after(async () => {
  await client?.close();
});

async function listAll() {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return new Map(tools.map((t) => [t.name, t]));
}

test("initialize negotiates the newest revision and names the server", () => {
  assert.equal(transport.protocolVersion, "2025-11-25");
  assert.equal(client.getServerVersion().name, "toolhost");
  assert.ok(client.getServerCapabilities().tools);
  assert.equal(transport.sessionId, undefined, "stateless: no session id");
});

test("ping", async () => {
  assert.deepEqual(await client.ping(), {});
});

test("tools/list shows the catalog and the service tools with prices", async () => {
  const tools = await listAll();
  for (const name of ["receipt-echo", "receipt-echo-paid", "x402-readiness-check", "catalog_search", "receipt_lookup"]) {
    assert.ok(tools.has(name), `${name} listed`);
  }
  const paid = tools.get("receipt-echo-paid");
  assert.match(paid.description, /0\.001 USD/);
  assert.equal(paid._meta["toolhost/pricing"].pricingMode, "fixed_price_success_receipt");
  assert.equal(paid._meta.x402.accepts[0].amount, "1000");
  assert.equal(paid.outputSchema, undefined, "paid tools publish their result schema in _meta");
  assert.equal(paid._meta["toolhost/outputSchema"].type, "object");
  assert.equal(tools.get("receipt-echo").outputSchema.type, "object");
  assert.equal(tools.get("receipt-echo").annotations.readOnlyHint, true);
});

test("a free tool returns structured and text content and its receipt", async () => {
  await listAll(); // lets the client validate structuredContent against outputSchema
  const result = await client.callTool({ name: "receipt-echo", arguments: { hello: "world" } });
  assert.equal(result.isError, false);
  assert.equal(result.structuredContent.ok, true);
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  assert.equal(result._meta["toolhost/receipt"].charged, false);
});

test("catalog_search finds tools", async () => {
  const result = await client.callTool({ name: "catalog_search", arguments: { tag: "paid" } });
  assert.equal(result.isError, false);
  assert.ok(result.structuredContent.endpoints.some((e) => e.toolName === "receipt-echo-paid"));
});

test("a paid tool: PaymentRequired, then paid with x402 in _meta, settlement and receipt back", async () => {
  const tools = await listAll();
  const unpaid = await client.callTool({ name: "receipt-echo-paid", arguments: { hello: "mcp" } });
  assert.equal(unpaid.isError, true);
  const required = unpaid.structuredContent;
  assert.deepEqual(JSON.parse(unpaid.content[0].text), required);
  assert.equal(required.x402Version, 2);
  assert.deepEqual(tools.get("receipt-echo-paid")._meta.x402.accepts, required.accepts);

  // The official x402 client signs the EIP-3009 authorization (viem account).
  const account = privateKeyToAccount(generatePrivateKey());
  const payer = new x402Client();
  registerExactEvmScheme(payer, { signer: account });
  const payment = await payer.createPaymentPayload(required);

  const paid = await client.callTool({
    name: "receipt-echo-paid",
    arguments: { hello: "mcp" },
    _meta: { "x402/payment": payment },
  });
  assert.equal(paid.isError, false, JSON.stringify(paid));
  const settlement = paid._meta["x402/payment-response"];
  assert.equal(settlement.success, true);
  assert.equal(settlement.payer.toLowerCase(), account.address.toLowerCase());
  const receipt = paid._meta["toolhost/receipt"];
  assert.equal(receipt.paymentMethod, "x402");
  assert.equal(receipt.amount, "1000");

  const lookup = await client.callTool({ name: "receipt_lookup", arguments: { receiptId: receipt.receiptId } });
  assert.equal(lookup.isError, false);
  assert.equal(lookup.structuredContent.receiptId, receipt.receiptId);

  const replay = await client.callTool({
    name: "receipt-echo-paid",
    arguments: { hello: "mcp" },
    _meta: { "x402/payment": payment },
  });
  assert.equal(replay.isError, true, "a payment pays once");
  assert.equal(replay.structuredContent.x402Version, 2);
});

test("a failing tool is a result with isError and the error body as text", async () => {
  await listAll(); // the tool has an outputSchema: the error must not trip its validation
  const result = await client.callTool({ name: "x402-readiness-check", arguments: {} });
  assert.equal(result.isError, true);
  assert.equal(result.structuredContent, undefined);
  assert.equal(JSON.parse(result.content[0].text).error.code, "input_invalid");
});

test("an unknown tool is a JSON-RPC error", async () => {
  await assert.rejects(
    client.callTool({ name: "no-such-tool", arguments: {} }),
    (e) => e instanceof McpError && e.code === -32602,
  );
});

test("progress is streamed over SSE", async () => {
  const seen = [];
  const result = await client.callTool({ name: "receipt-echo", arguments: { n: 1 } }, undefined, {
    onprogress: (p) => seen.push(p.progress),
  });
  assert.equal(result.isError, false);
  assert.deepEqual(seen, [0, 1]);
});

test("unknown methods are -32601", async () => {
  await assert.rejects(client.listPrompts(), (e) => e instanceof McpError && e.code === -32601);
});
