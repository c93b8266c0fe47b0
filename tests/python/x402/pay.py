"""The official Python x402 client (`x402` on PyPI) pays a running toolhost over x402 v2.

The 402's PAYMENT-REQUIRED header is decoded by the client, an eth_account key signs an
EIP-3009 authorization (`register_exact_evm_client`), the httpx transport retries with
PAYMENT-SIGNATURE, and PAYMENT-RESPONSE is decoded with the package's own helper.
TOOLHOST_URL names the server (the Rust test `py_client::official_python_x402_client_pays`
starts it). Prints `N passed, N failed` and exits non-zero on any failure.
"""

import asyncio
import json
import os
import sys
import traceback
import urllib.request

import httpx
from eth_account import Account
from x402 import x402Client
from x402.http.clients import x402HttpxClient
from x402.http.utils import decode_payment_required_header, decode_payment_response_header
from x402.mechanisms.evm.exact import register_exact_evm_client
from x402.mechanisms.evm.signers import EthAccountSigner

BASE = os.environ["TOOLHOST_URL"].rstrip("/")
PAID = f"{BASE}/tools/receipt-echo-paid"


def paying_client(account):
    client = x402Client()
    register_exact_evm_client(client, EthAccountSigner(account))
    return client


async def asks_for_payment():
    async with httpx.AsyncClient() as plain:
        response = await plain.post(PAID, json={})
    assert response.status_code == 402, response.text
    required = decode_payment_required_header(response.headers["PAYMENT-REQUIRED"])
    assert required.x402_version == 2
    assert required.accepts[0].scheme == "exact"
    assert required.accepts[0].amount == "1000"


async def pays_and_gets_a_signed_receipt():
    account = Account.create()
    async with x402HttpxClient(paying_client(account)) as http:
        response = await http.post(PAID, json={"hello": "x402 from python"})
    body = response.json()
    assert response.status_code == 200, body
    settlement = decode_payment_response_header(response.headers["PAYMENT-RESPONSE"])
    assert settlement.success is True
    assert settlement.payer.lower() == account.address.lower()
    receipt = body["receipt"]
    assert receipt["paymentMethod"] == "x402"
    assert receipt["x402Version"] == 2
    assert receipt["amount"] == "1000"
    assert receipt["charged"] is True
    assert receipt["payer"].lower() == account.address.lower()
    assert response.headers["x-receipt-id"] == receipt["receiptId"]
    with urllib.request.urlopen(f"{BASE}/ai/receipts/{receipt['receiptId']}") as stored:
        assert json.load(stored) == receipt


async def main():
    passed = failed = 0
    for test in (asks_for_payment, pays_and_gets_a_signed_receipt):
        try:
            await test()
            passed += 1
            print(f"ok {test.__name__}")
        except Exception:  # noqa: BLE001 - every failure is reported, then counted
            failed += 1
            print(f"FAILED {test.__name__}")
            traceback.print_exc()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


asyncio.run(main())
