#!/usr/bin/env python3
"""Catalog-size benchmark: what listing the catalog costs as it grows (issue: the hot path).

For each size N, a fresh server is seeded with N static endpoints (`--seed-dir`, created on first
start like the built-in fixtures) and restarted on that data (`start s`: the restart, loading
the catalog from the store), then measured on loopback, one request at a time over one
keep-alive connection (median of `--repeat` runs):

- `GET /ai/endpoints`: the whole catalog (time and size), then revalidated with its ETag (304);
- one page of 50 (`limit=50`), the page after it (`cursor`), a page filtered by a tag five
  endpoints carry, a page searched with `q` for a word one endpoint in a hundred has, and one
  searched for a word no endpoint has;
- MCP `tools/list` (`/ai/mcp`): the first page and the one after it;
- the server's RSS after a restart on the seeded data (at rest: nothing listed or called yet) and after the
  listings, and per endpoint at rest (less the RSS of a server with an empty catalog).

With `--base-bin` the same runs are made against a second binary (the "before"), interleaved
size by size, so both columns come from one run. A binary that lacks a feature (paging, ETag)
shows `n/a` for it rather than a number. Both binaries are then also started on one copy each
of the same seeded data, and what they answer to the same listing requests is compared byte
for byte (`same bytes` at the end: the change must not show).

    python3 bench/catalog.py --bin target/release/toolhost [--base-bin OLD] [--sizes 1000,10000]
"""

import argparse
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

WORDS = ("ledger invoice weather geocode summarize translate receipt quote vector "
         "convert schedule forecast classify extract compare enrich verify").split()


def endpoint(i, n):
    word = WORDS[i % len(WORDS)]
    tags = [word, f"group-{i % 20}"]
    if i % max(1, n // 5) == 0:
        tags.append("rare")
    description = (f"Endpoint number {i}: {word}s its input and answers with a fixed JSON "
                   f"document; used by the catalog-size benchmark to fill the catalog.")
    if i % 100 == 7:
        description += " Mentions the needle-word."
    return {
        "slug": f"bench-{i:06d}", "title": f"Bench {word} {i}", "description": description,
        "priceUsd": 0, "handlerType": "static_json", "tags": tags,
        "inputSchema": {"type": "object", "properties": {
            "text": {"type": "string", "maxLength": 1000},
            "count": {"type": "integer", "minimum": 1}}},
        "outputSchema": {"type": "object"},
        "response": {"ok": True, "n": i}, "exampleInput": {"text": "hi", "count": 1},
    }


def seed(dir_, n):
    catalog = os.path.join(dir_, "catalog")
    os.makedirs(catalog, exist_ok=True)
    for i in range(n):
        e = endpoint(i, n)
        with open(os.path.join(catalog, e["slug"] + ".json"), "w") as f:
            json.dump(e, f)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Server:
    def __init__(self, binary, seed_dir, work, data=None):
        self.data = data or tempfile.mkdtemp(dir=work)
        # A fixed base URL, so servers on different ports render the same URLs.
        env = dict(os.environ, RUST_LOG="warn", TOOLHOST_ANONYMOUS_WRITES_PER_MINUTE="0",
                   TOOLHOST_BASE_URL="http://catalog-bench.invalid")
        self.proc = subprocess.Popen(
            [binary, "serve", "--addr", "127.0.0.1:0", "--data", self.data,
             "--seed-dir", seed_dir, "--admin-token", "bench-admin-token"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        started = time.monotonic()
        for line in self.proc.stdout:
            if line.startswith("toolhost listening on http://"):
                host, port = line.strip().rsplit("/", 1)[1].rsplit(":", 1)
                self.host, self.port = host, int(port)
                break
        else:
            raise SystemExit(f"{binary} did not start")
        self.start_s = time.monotonic() - started
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=600)

    def request(self, method, path, body=None, headers=None):
        headers = dict(headers or {})
        if body is not None:
            body = json.dumps(body).encode()
            headers["content-type"] = "application/json"
        started = time.perf_counter()
        self.conn.request(method, path, body=body, headers=headers)
        response = self.conn.getresponse()
        data = response.read()
        elapsed = time.perf_counter() - started
        return response.status, dict(response.getheaders()), data, elapsed

    def stop(self, keep_data=False):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        if not keep_data:
            shutil.rmtree(self.data, ignore_errors=True)


def median_ms(server, repeat, method, path, body=None, headers=None, expect=200):
    times, size = [], 0
    for _ in range(repeat):
        status, _, data, elapsed = server.request(method, path, body, headers)
        if status != expect:
            return None, 0
        times.append(elapsed * 1000)
        size = len(data)
    return statistics.median(times), size


MCP_HEADERS = {"mcp-protocol-version": "2025-11-25", "accept": "application/json, text/event-stream"}


def tools_list(cursor=None):
    params = {"cursor": cursor} if cursor else {}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}


def measure(binary, n, seed_dir, work, repeat):
    # Seed, then restart on the seeded data: the catalog is loaded from the store as after any
    # restart, and nothing that seeding allocated is left over.
    seeding = Server(binary, seed_dir, work)
    seeding.stop(keep_data=True)
    server = Server(binary, seed_dir, work, data=seeding.data)
    row = {"start_s": server.start_s}
    try:
        time.sleep(1)
        row["rss_seeded_mib"] = rss_kib(server.proc.pid) / 1024
        # The first whole listing may render it; later ones may come from a cache.
        _, headers, data, elapsed = server.request("GET", "/ai/endpoints")
        row["full_first_ms"] = elapsed * 1000
        row["full_mb"] = len(data) / 1e6
        row["full_ms"], _ = median_ms(server, repeat, "GET", "/ai/endpoints")
        etag = {k.lower(): v for k, v in headers.items()}.get("etag")
        row["revalidate_ms"] = (median_ms(server, repeat, "GET", "/ai/endpoints",
                                          headers={"if-none-match": etag}, expect=304)[0]
                                if etag else None)
        status, _, data, _ = server.request("GET", "/ai/endpoints?limit=50")
        page = json.loads(data) if status == 200 else {}
        paged = "nextCursor" in page
        row["page_ms"] = median_ms(server, repeat, "GET", "/ai/endpoints?limit=50")[0] if paged else None
        cursor = page.get("nextCursor")
        row["page2_ms"] = (median_ms(server, repeat, "GET", f"/ai/endpoints?limit=50&cursor={cursor}")[0]
                           if paged and cursor else None)
        row["tag_page_ms"] = (median_ms(server, repeat, "GET", "/ai/endpoints?tag=rare&limit=50")[0]
                              if paged else median_ms(server, repeat, "GET", "/ai/endpoints?tag=rare")[0])
        row["q_page_ms"] = (median_ms(server, repeat, "GET", "/ai/endpoints?q=needle-word&limit=50")[0]
                            if paged else median_ms(server, repeat, "GET", "/ai/endpoints?q=needle-word")[0])
        row["q_miss_ms"] = (median_ms(server, repeat, "GET", "/ai/endpoints?q=no-such-word&limit=50")[0]
                            if paged else median_ms(server, repeat, "GET", "/ai/endpoints?q=no-such-word")[0])
        row["mcp_first_ms"], _ = median_ms(server, repeat, "POST", "/ai/mcp", tools_list(), MCP_HEADERS)
        _, _, data, _ = server.request("POST", "/ai/mcp", tools_list(), MCP_HEADERS)
        next_cursor = json.loads(data).get("result", {}).get("nextCursor")
        row["mcp_second_ms"] = (median_ms(server, repeat, "POST", "/ai/mcp", tools_list(next_cursor),
                                          MCP_HEADERS)[0] if next_cursor else None)
        row["rss_after_mib"] = rss_kib(server.proc.pid) / 1024
    finally:
        server.stop()
    return row


# Requests both binaries answer alike (no paging: the before binary may have none).
SAME_BYTES = ["/ai/endpoints", "/ai/endpoints?form=legacy", "/ai/endpoints?q=needle-word",
              "/ai/endpoints?q=NEEDLE", "/ai/endpoints?q=ed", "/ai/endpoints?tag=rare",
              "/ai/endpoints?q=no-such-word", "/ai/endpoints/bench-000007",
              "/ai/endpoints/bench-000100?form=legacy"]


def same_bytes(bins, seed_dir, work):
    """Seeds once, starts each binary on its own copy of that data and compares answers."""
    seeding = Server(bins[0][1], seed_dir, work)
    seeding.stop(keep_data=True)
    answers = {}
    for label, binary in bins:
        data = tempfile.mkdtemp(dir=work)
        shutil.copytree(seeding.data, data, dirs_exist_ok=True)
        server = Server(binary, seed_dir, work, data=data)
        try:
            answers[label] = [server.request("GET", path)[::2] for path in SAME_BYTES]
        finally:
            server.stop()
    shutil.rmtree(seeding.data, ignore_errors=True)
    first = answers[bins[0][0]]
    differ = [path for label, _ in bins[1:] for path, a, b in zip(SAME_BYTES, first, answers[label])
              if a != b]
    return differ


def empty_rss(binary, work):
    empty = tempfile.mkdtemp(dir=work)
    os.makedirs(os.path.join(empty, "catalog"))
    server = Server(binary, empty, work)
    try:
        server.request("GET", "/ai/endpoints")
        return rss_kib(server.proc.pid) / 1024
    finally:
        server.stop()


def fmt(value, unit=""):
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.2f}{unit}" if value < 100 else f"{value:.0f}{unit}"
    return f"{value}{unit}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--base-bin")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="toolhost-catalog-bench.")
    bins = [("after", args.bin)] + ([("before", args.base_bin)] if args.base_bin else [])
    rows = []
    compared = None
    try:
        base_rss = {label: empty_rss(binary, work) for label, binary in bins}
        for n in [int(s) for s in args.sizes.split(",")]:
            seed_dir = tempfile.mkdtemp(dir=work)
            seed(seed_dir, n)
            for label, binary in bins:
                print(f"[catalog] {label}: {n} endpoints", file=sys.stderr, flush=True)
                row = measure(binary, n, seed_dir, work, args.repeat)
                row["per_endpoint_kib"] = (row["rss_seeded_mib"] - base_rss[label]) * 1024 / n
                rows.append((label, n, row))
            if len(bins) > 1 and not compared:
                compared = same_bytes(bins, seed_dir, work) or ["none"]
            shutil.rmtree(seed_dir, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("| binary | endpoints | start s | `GET /ai/endpoints` first / again ms | size MB | 304 ms "
          "| page of 50 ms | next page ms | `tag` page ms | `q` page ms | `q` nothing ms | MCP `tools/list` first / second ms "
          "| RSS at rest / after listing MiB | KiB per endpoint at rest |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, n, r in rows:
        print(f"| {label} | {n:,} | {fmt(r['start_s'])} | {fmt(r['full_first_ms'])} / {fmt(r['full_ms'])} "
              f"| {fmt(r['full_mb'])} | {fmt(r['revalidate_ms'])} | {fmt(r['page_ms'])} | {fmt(r['page2_ms'])} "
              f"| {fmt(r['tag_page_ms'])} | {fmt(r['q_page_ms'])} | {fmt(r['q_miss_ms'])} "
              f"| {fmt(r['mcp_first_ms'])} / "
              f"{fmt(r['mcp_second_ms'])} | {fmt(r['rss_seeded_mib'])} / {fmt(r['rss_after_mib'])} "
              f"| {fmt(r['per_endpoint_kib'])} |")
    print(f"\nidle RSS with an empty catalog: " + ", ".join(f"{k} {v:.1f} MiB" for k, v in base_rss.items()))
    if compared:
        print("same bytes from both binaries on one copy each of the same data: "
              + ("all of " + ", ".join(SAME_BYTES) if compared == ["none"]
                 else "DIFFER at " + ", ".join(compared)))


if __name__ == "__main__":
    main()
