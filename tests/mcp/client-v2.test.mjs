// The official TypeScript MCP client, v2 line (`@modelcontextprotocol/client`, which speaks MCP
// 2026-07-28) against a running toolhost: negotiated with `server/discover` into the stateless
// revision (per-request `_meta` envelope, `Mcp-Method`/`Mcp-Name` headers), listing, calling a
// free tool, and paying for a paid one with the official x402 client's signer. Also its default
// (legacy) mode, which still connects through `initialize`. Reads TOOLHOST_URL; starts nothing
// itself (tests/mcp/run.sh does).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport, ProtocolError } from "@modelcontextprotocol/client";
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const base = process.env.TOOLHOST_URL;
assert.ok(base, "TOOLHOST_URL must name a running toolhost");
const url = new URL("/ai/mcp", base);

// Every request the client sends, as the server received it (method, headers, _meta).
const sent = [];
const recordingFetch = async (input, init) => {
  const body = typeof init?.body === "string" ? JSON.parse(init.body) : undefined;
  sent.push({ headers: new Headers(init?.headers), body });
  return fetch(input, init);
};

let client;

before(async () => {
  client = new Client(
    { name: "toolhost-tests-v2", version: "1.0.0" },
    { versionNegotiation: { mode: "auto" } },
  );
  await client.connect(new StreamableHTTPClientTransport(url, { fetch: recordingFetch }));
});

after(async () => {
  await client?.close();
});

test("negotiates 2026-07-28 through server/discover, with no initialize", () => {
  assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");
  assert.equal(client.getProtocolEra(), "modern");
  const discover = client.getDiscoverResult();
  assert.ok(discover.supportedVersions.includes("2025-11-25"), "the older revisions stay served");
  assert.ok(client.getServerCapabilities().tools);
  assert.equal(client.getServerVersion().name, "toolhost");
  const methods = sent.map((r) => r.body?.method);
  assert.equal(methods[0], "server/discover");
  assert.ok(!methods.includes("initialize"), `no initialize: ${methods}`);
});

test("lists the catalog with prices", async () => {
  const { tools } = await client.listTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  for (const name of ["receipt-echo", "receipt-echo-paid", "catalog_search", "receipt_lookup"]) {
    assert.ok(byName.has(name), `${name} listed`);
  }
  const paid = byName.get("receipt-echo-paid");
  assert.match(paid.description, /0\.001 USD/);
  assert.equal(paid._meta.x402.accepts[0].amount, "1000");
  // What went over the wire: the revision header and envelope, and the method header.
  const list = sent.findLast((r) => r.body?.method === "tools/list");
  assert.equal(list.headers.get("mcp-protocol-version"), "2026-07-28");
  assert.equal(list.headers.get("mcp-method"), "tools/list");
  assert.equal(list.body.params._meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
});

test("calls a free tool", async () => {
  const result = await client.callTool({ name: "receipt-echo", arguments: { hello: "v2" } });
  assert.equal(result.isError, false);
  assert.equal(result.structuredContent.ok, true);
  assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
  assert.equal(result._meta["toolhost/receipt"].charged, false);
  const call = sent.findLast((r) => r.body?.method === "tools/call");
  assert.equal(call.headers.get("mcp-name"), "receipt-echo");
});

test("pays for a paid tool with x402 in _meta", async () => {
  const unpaid = await client.callTool({ name: "receipt-echo-paid", arguments: { hello: "v2" } });
  assert.equal(unpaid.isError, true);
  const required = unpaid.structuredContent;
  assert.equal(required.x402Version, 2);

  const account = privateKeyToAccount(generatePrivateKey());
  const payer = new x402Client();
  registerExactEvmScheme(payer, { signer: account });
  const payment = await payer.createPaymentPayload(required);

  const paid = await client.callTool({
    name: "receipt-echo-paid",
    arguments: { hello: "v2" },
    _meta: { "x402/payment": payment },
  });
  assert.equal(paid.isError, false, JSON.stringify(paid));
  const settlement = paid._meta["x402/payment-response"];
  assert.equal(settlement.success, true);
  assert.equal(settlement.payer.toLowerCase(), account.address.toLowerCase());
  const receipt = paid._meta["toolhost/receipt"];
  assert.equal(receipt.paymentMethod, "x402");
  assert.equal(receipt.amount, "1000");

  const replay = await client.callTool({
    name: "receipt-echo-paid",
    arguments: { hello: "v2" },
    _meta: { "x402/payment": payment },
  });
  assert.equal(replay.isError, true, "a payment pays once");
});

test("an unknown tool is a JSON-RPC error", async () => {
  await assert.rejects(
    client.callTool({ name: "no-such-tool", arguments: {} }),
    (e) => e instanceof ProtocolError && e.code === -32602,
  );
});

test("the default (legacy) mode still connects through initialize", async () => {
  const legacy = new Client({ name: "toolhost-tests-v2-legacy", version: "1.0.0" });
  try {
    await legacy.connect(new StreamableHTTPClientTransport(url));
    assert.equal(legacy.getNegotiatedProtocolVersion(), "2025-11-25");
    const { tools } = await legacy.listTools();
    assert.ok(tools.some((t) => t.name === "receipt-echo"));
    const result = await legacy.callTool({ name: "receipt-echo", arguments: {} });
    assert.equal(result.isError, false);
  } finally {
    await legacy.close();
  }
});
