"""The official Python MCP client (`mcp` on PyPI) against a running toolhost, paying with the
official Python x402 client (`x402` on PyPI) in `_meta`.

Reads the server's base URL from TOOLHOST_URL and its admin token (to issue a developer credit)
from TOOLHOST_ADMIN_TOKEN; starts nothing itself (tests/mcp/run.sh does).
Prints one `N passed, N failed` line and exits non-zero on any failure.
"""

import asyncio
import json
import os
import sys
import traceback
import urllib.request

from eth_account import Account
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError
from x402 import x402Client
from x402.mechanisms.evm.exact import register_exact_evm_client
from x402.mechanisms.evm.signers import EthAccountSigner
from x402.schemas.payments import PaymentRequired

URL = os.environ["TOOLHOST_URL"].rstrip("/") + "/ai/mcp"


async def list_all(client):
    tools, cursor = [], None
    while True:
        page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


async def connects_and_negotiates(client):
    # The SDK probes server/discover first, so it speaks the stateless revision with toolhost.
    assert client.protocol_version == "2026-07-28", client.protocol_version
    assert client.server_info.name == "toolhost"
    assert client.server_capabilities.tools is not None


async def lists_catalog_and_service_tools(client):
    tools = {t.name: t for t in await list_all(client)}
    for name in ("receipt-echo", "receipt-echo-paid", "x402-readiness-check", "catalog_search", "receipt_lookup"):
        assert name in tools, sorted(tools)
    paid = tools["receipt-echo-paid"]
    assert "USD" in paid.description and "x402" in paid.description, paid.description
    assert paid.meta["x402"]["accepts"][0]["scheme"] == "exact", paid.meta
    assert paid.meta["toolhost/pricing"]["priceUsd"] == 0.001
    assert tools["receipt-echo"].annotations.read_only_hint is True


async def calls_a_free_tool(client):
    result = await client.call_tool("receipt-echo", {"hello": "world"})
    assert not result.is_error, result
    assert result.structured_content["ok"] is True
    assert json.loads(result.content[0].text) == result.structured_content
    assert result.meta["toolhost/receipt"]["charged"] is False


async def searches_the_catalog(client):
    result = await client.call_tool("catalog_search", {"query": "receipt", "limit": 5})
    assert not result.is_error, result
    slugs = [e["slug"] for e in result.structured_content["endpoints"]]
    assert "receipt-echo-paid" in slugs, slugs


async def unpaid_call_returns_payment_requirements(client):
    result = await client.call_tool("receipt-echo-paid", {"hello": "world"})
    assert result.is_error, result
    required = result.structured_content
    assert json.loads(result.content[0].text) == required
    assert required["x402Version"] == 2 and required["accepts"], required


async def x402_payment_in_meta_pays(client):
    """The official Python x402 client (`x402` on PyPI) signs the EIP-3009 authorization for
    the PaymentRequired the unpaid call returned; sent in `_meta["x402/payment"]`, it pays once."""
    unpaid = await client.call_tool("receipt-echo-paid", {"hello": "x402"})
    assert unpaid.is_error, unpaid
    required = PaymentRequired.model_validate(unpaid.structured_content)
    account = Account.create()
    payer = x402Client()
    register_exact_evm_client(payer, EthAccountSigner(account))
    payload = await payer.create_payment_payload(required)
    meta = {"x402/payment": payload.model_dump(by_alias=True, exclude_none=True)}
    paid = await client.call_tool("receipt-echo-paid", {"hello": "x402"}, meta=meta)
    assert not paid.is_error, paid
    receipt = paid.meta["toolhost/receipt"]
    assert receipt["paymentMethod"] == "x402", receipt
    assert receipt["payer"].lower() == account.address.lower(), receipt
    assert paid.meta["x402/payment-response"]["success"] is True, paid.meta
    replay = await client.call_tool("receipt-echo-paid", {"hello": "x402"}, meta=meta)
    assert replay.is_error, "a payment pays once"


async def developer_credit_in_meta_pays(client):
    request = urllib.request.Request(
        os.environ["TOOLHOST_URL"].rstrip("/") + "/ai/admin/credits",
        data=json.dumps({"amountUsd": 0.001, "note": "python mcp client test"}).encode(),
        headers={"content-type": "application/json", "x-admin-token": os.environ["TOOLHOST_ADMIN_TOKEN"]},
    )
    with urllib.request.urlopen(request) as response:
        token = json.load(response)["credit"]["token"]
    meta = {"toolhost/developer-credit": token}
    result = await client.call_tool("receipt-echo-paid", {"hello": "credit"}, meta=meta)
    assert not result.is_error, result
    receipt = result.meta["toolhost/receipt"]
    assert receipt["paymentMethod"] == "developer_credit", receipt
    again = await client.call_tool("receipt-echo-paid", {"hello": "credit"}, meta=meta)
    assert again.is_error, "the credit is used up"


async def failing_tool_is_a_result(client):
    result = await client.call_tool("receipt_lookup", {"receiptId": "rcpt_missing"})
    assert result.is_error
    assert result.structured_content is None
    assert json.loads(result.content[0].text)["error"]["code"] == "receipt_not_found"


async def unknown_tool_is_an_error(client):
    try:
        await client.call_tool("no-such-tool", {})
    except MCPError as e:
        assert e.error.code == -32602, e
        return
    raise AssertionError("unknown tool did not raise")


async def streams_progress(client):
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    result = await client.call_tool("receipt-echo", {"n": 1}, progress_callback=on_progress)
    assert not result.is_error
    assert [p for p, _, _ in seen] == [0, 1], seen


TESTS = [
    connects_and_negotiates,
    lists_catalog_and_service_tools,
    calls_a_free_tool,
    searches_the_catalog,
    unpaid_call_returns_payment_requirements,
    x402_payment_in_meta_pays,
    developer_credit_in_meta_pays,
    failing_tool_is_a_result,
    unknown_tool_is_an_error,
    streams_progress,
]


async def main():
    passed = failed = 0
    async with Client(URL) as client:
        for test in TESTS:
            try:
                await test(client)
                passed += 1
                print(f"ok {test.__name__}")
            except Exception:  # noqa: BLE001 - report every failure, then the summary
                failed += 1
                print(f"FAILED {test.__name__}")
                traceback.print_exc()
    print(f"python mcp client: {passed} passed, {failed} failed")
    return failed == 0


if __name__ == "__main__":
    sys.exit(0 if asyncio.run(main()) else 1)
