#!/usr/bin/env python3
"""Victims' latency with and without hostile agents (issue 43), for bench/hostile-agents.sh.

    hostile.py BASE_URL ADMIN_TOKEN DURATION_SECS SERVER_PID

Victims call a free tool (POST /tools/receipt-echo) and a paid one (POST
/tools/receipt-echo-paid, paid with a developer credit) from 127.0.1.1..127.0.1.8, each paced
under the anonymous-write limit, for DURATION seconds alone, then DURATION seconds while
attackers from 127.0.0.2.. run the hostile-agent suite's attacks in a loop: validation
amplification, held and trickled bodies, trickled and oversized heads, idle connections, deep
and wide JSON, unpaid calls of a paid tool, MCP batches. Prints p50/p99 of each phase, victims' errors, attackers' answers
by status, and the server's peak RSS (VmRSS of SERVER_PID and of its worker processes).
"""

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from urllib.parse import urlparse

from bench import rss_tree

ATTACKER = sys.argv[1] == "--attack"  # the attackers' own process (see `phase`)
SAMPLER = sys.argv[1] == "--sample"  # the memory sampler's own process (see `phase`)
if ATTACKER:
    BASE, DURATION = sys.argv[2], float(sys.argv[3])
elif SAMPLER:
    SERVER_PID, DURATION = int(sys.argv[2]), float(sys.argv[3])
else:
    BASE, ADMIN, DURATION, SERVER_PID = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
URL = urlparse(BASE) if not SAMPLER else None
HOST, PORT = (URL.hostname, URL.port) if URL else (None, None)
VICTIMS = [f"127.0.1.{i}" for i in range(1, 9)]
# The attack runs twice: with the attackers' own process at the normal priority, and at nice
# 19. On this 2-core machine the attackers' Python takes a core that the server and the
# victims would otherwise have; at nice 19 it takes only what they leave, which measures what
# the server's own work for the attackers costs the victims, as attackers on other machines
# would. ATTACKER_NICE=0 runs only the first.
ATTACKER_NICES = sorted({0, int(os.environ.get("ATTACKER_NICE", "19"))})
# One call per victim every PACE seconds, half of them free: 5 free calls a second per
# address, under the default bucket (600 a minute).
PACE = 0.1


def rss_mib():
    """VmRSS of the server and of its sandbox worker processes, summed."""
    server, workers, _ = rss_tree(SERVER_PID)
    return ((server or 0) + workers) / 1024


def conn(source, timeout=30):
    return http.client.HTTPConnection(HOST, PORT, timeout=timeout, source_address=(source, 0))


def post(c, path, body, headers=None):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    h = {"content-type": "application/json"}
    h.update(headers or {})
    c.request("POST", path, body=data, headers=h)
    r = c.getresponse()
    payload = r.read()
    return r.status, payload


def credit():
    c = conn("127.0.0.1")
    status, body = post(c, "/ai/admin/credits", {"amountUsd": 1000}, {"x-admin-token": ADMIN})
    assert status == 200, body
    return json.loads(body)["credit"]["token"]


def victim(source, token, stop, latencies, errors):
    c = conn(source)
    n = 0
    while not stop.is_set():
        started = time.monotonic()
        paid = n % 2 == 1
        n += 1
        try:
            if paid:
                status, body = post(c, "/tools/receipt-echo-paid", {}, {"x-developer-credit": token})
            else:
                status, body = post(c, "/tools/receipt-echo", {})
        except (OSError, http.client.HTTPException) as e:
            errors.append(f"{source}: {e}")
            c.close()
            c = conn(source)
            continue
        elapsed = time.monotonic() - started
        if status == 200:
            latencies.append(elapsed)
        else:
            errors.append(f"{source}: {status} {body[:200]!r}")
        time.sleep(max(0.0, PACE - elapsed))


def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] * 1000


def phase(token, attack, nice=0):
    stop = threading.Event()
    latencies, errors = [], []
    threads = [threading.Thread(target=victim, args=(v, token, stop, latencies, errors)) for v in VICTIMS]
    # The attackers run in a process of their own, so they do not hold the victims' GIL.
    command = ["nice", "-n", str(nice), sys.executable, __file__, "--attack", BASE, str(DURATION)]
    attackers = subprocess.Popen(command, stdout=subprocess.PIPE) if attack else None
    # The memory sampler walks /proc every 50 ms: in this process it held the victims' GIL
    # long enough to show in their latency (p99 "alone" 40-150 ms in some runs, 5 in others).
    sampler = subprocess.Popen([sys.executable, __file__, "--sample", str(SERVER_PID), str(DURATION)],
                               stdout=subprocess.PIPE)
    for t in threads:
        t.start()
    time.sleep(DURATION)
    stop.set()
    for t in threads:
        t.join()
    answers = json.loads(attackers.communicate()[0]) if attackers else {}
    peak = float(sampler.communicate()[0])
    return latencies, errors, answers, peak


def sample_main():
    """The peak of `rss_mib` over DURATION seconds, sampled every 50 ms."""
    peak = rss_mib()
    deadline = time.monotonic() + DURATION
    while time.monotonic() < deadline:
        peak = max(peak, rss_mib())
        time.sleep(0.05)
    print(peak)


def run_for(seconds, loops):
    """Runs each of `loops` (each takes the stop event) on a thread of its own for `seconds`,
    then stops them and waits for them to end."""
    stop = threading.Event()
    threads = [threading.Thread(target=loop, args=(stop,)) for loop in loops]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()


def warm(token, seconds=3):
    """The victims call for a few seconds before anything is measured (first connections,
    the paid tool's first offer), so the first phase does not carry the server's warm-up."""
    run_for(seconds, [lambda stop, v=v: victim(v, token, stop, [], []) for v in VICTIMS])


def attack_main():
    answers = Counter()
    run_for(DURATION, [lambda stop, a=a: a(stop, answers) for a in ATTACKS])
    print(json.dumps(answers))


# ---------- attackers: each loops until `stop`, counting answers by status ----------

def status_of(raw):
    try:
        return int(raw.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return "closed"


def raw(source, timeout=15):
    s = socket.create_connection((HOST, PORT), timeout=timeout, source_address=(source, 0))
    return s


def read_answer(s):
    try:
        return s.recv(4096)
    except OSError:
        return b""


def in_threads(n, attack):
    """Runs `attack` in `n` threads at once, until they all return."""
    threads = [threading.Thread(target=attack) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def looped(source, body_fn):
    def attack(stop, answers):
        c = conn(source)
        while not stop.is_set():
            path, body, label = body_fn()
            try:
                status, _ = post(c, path, body)
                answers[f"{label} {status}"] += 1
            except (OSError, http.client.HTTPException):
                answers[f"{label} closed"] += 1
                c.close()
                c = conn(source)
    return attack


ZEROS = b'{"role":"r","goal":"g","constraints":[' + b",".join([b"0"] * 90_000) + b"]}"
HUGE_ZEROS = b'{"role":"r","goal":"g","constraints":[' + b",".join([b"0"] * 500_000) + b"]}"
DEEP = b"[" * 100_000 + b"]" * 100_000
WIDE = b"[" + b",".join([b"0"] * 400_000) + b"]"


def amplify(stop, answers):
    looped("127.0.0.2", lambda: ("/tools/creator-plan", ZEROS, "amplify"))(stop, answers)


def amplify_huge(stop, answers):
    looped("127.0.0.3", lambda: ("/tools/creator-plan", HUGE_ZEROS, "amplify-1MB"))(stop, answers)


def shapes(stop, answers):
    looped("127.0.0.8", lambda: ("/tools/receipt-echo", DEEP if time.monotonic() % 2 < 1 else WIDE, "shape"))(stop, answers)


def unpaid(stop, answers):
    looped("127.0.0.9", lambda: ("/tools/receipt-echo-paid", b"{}", "unpaid"))(stop, answers)


BATCH = json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}] * 2000).encode()


def mcp_batches(stop, answers):
    looped("127.0.0.11", lambda: ("/ai/mcp", BATCH, "mcp-batch"))(stop, answers)


def huge_heads(stop, answers):
    while not stop.is_set():
        try:
            s = raw("127.0.0.10", timeout=5)
            s.sendall(b"GET /healthz HTTP/1.1\r\nx-huge: " + b"a" * (100 * 1024))
            answers[f"huge-head {status_of(read_answer(s))}"] += 1
            s.close()
        except OSError:
            answers["huge-head closed"] += 1


def head(length):
    return (f"POST /tools/receipt-echo HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            f"content-length: {length}\r\n\r\n").encode()


def held_bodies(stop, answers):
    # 30 bodies of 1 MiB at a time, each all but its last 10 bytes sent.
    def one():
        while not stop.is_set():
            try:
                s = raw("127.0.0.4")
                s.sendall(head(1 << 20))
                s.settimeout(0.5)
                first = read_answer(s)
                if not first:
                    s.settimeout(15)
                    s.sendall(b" " * ((1 << 20) - 10))
                    first = read_answer(s)
                answers[f"held {status_of(first)}"] += 1
                s.close()
            except OSError:
                answers["held closed"] += 1
    in_threads(30, one)


def trickled(stop, answers):
    def one():
        while not stop.is_set():
            try:
                s = raw("127.0.0.5")
                s.sendall(head(1000))
                s.settimeout(0.3)
                got = b""
                for _ in range(100):
                    if stop.is_set():
                        break
                    s.sendall(b" ")
                    try:
                        got = s.recv(4096)
                        break
                    except socket.timeout:
                        continue
                answers[f"trickled-body {status_of(got)}"] += 1
                s.close()
            except OSError:
                answers["trickled-body closed"] += 1
    in_threads(10, one)


def slow_heads(stop, answers):
    def one():
        while not stop.is_set():
            try:
                s = raw("127.0.0.6")
                s.settimeout(0.2)
                for b in b"POST /tools/receipt-echo HTTP/1.1\r\nx-slow: " * 100:
                    if stop.is_set():
                        break
                    s.sendall(bytes([b]))
                    try:
                        if not s.recv(64):
                            break
                    except socket.timeout:
                        continue
                answers["slow-head closed"] += 1
                s.close()
            except OSError:
                answers["slow-head closed"] += 1
    in_threads(10, one)


def idle(stop, answers):
    # 520 idle connections at a time (the default cap per client is 512); the last 8 ask for
    # /healthz and should be refused. Reopened every 8 s, before the header read timeout (10 s)
    # closes them.
    while not stop.is_set():
        held = []
        for i in range(520):
            try:
                s = raw("127.0.0.7", timeout=3)
                held.append(s)
                if i >= 512:
                    s.sendall(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
                    answers[f"idle {status_of(read_answer(s))}"] += 1
            except OSError:
                answers["idle closed"] += 1
        stop.wait(8)
        for s in held:
            s.close()


ATTACKS = [amplify, amplify_huge, shapes, unpaid, held_bodies, trickled, slow_heads, idle, mcp_batches, huge_heads]


def main():
    token = credit()
    warm(token)
    idle_rss = rss_mib()
    results = {}
    phases = [("victims alone", False, 0)] + [
        ("victims under attack" + (f" (attackers at nice {nice})" if nice else ""), True, nice)
        for nice in ATTACKER_NICES]
    for name, attack, nice in phases:
        latencies, errors, answers, peak = phase(token, attack, nice)
        results[name] = (latencies, errors, answers, peak)
        time.sleep(2)
    print(f"server idle RSS {idle_rss:.0f} MiB; {len(VICTIMS)} victims, {DURATION:.0f} s per phase")
    print("| phase | calls | p50 ms | p99 ms | victim errors | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (latencies, errors, _, peak) in results.items():
        print(f"| {name} | {len(latencies)} | {percentile(latencies, 0.5):.1f} | "
              f"{percentile(latencies, 0.99):.1f} | {len(errors)} | {peak:.0f} |")
    base = results["victims alone"][0]
    for name, (attacked, _, _, _) in results.items():
        if base and attacked and attacked is not base:
            print(f"p99 {name} / alone: {percentile(attacked, 0.99) / percentile(base, 0.99):.2f}x (goal: at most 2x)")
    print("attackers' answers:", dict(sorted(results["victims under attack"][2].items())))
    for name, (_, errors, _, _) in results.items():
        for e in errors[:10]:
            print(f"victim error ({name}): {e}")


if __name__ == "__main__":
    attack_main() if ATTACKER else sample_main() if SAMPLER else main()
