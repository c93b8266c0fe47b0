#!/usr/bin/env python3
"""Helpers for bench/run.sh and bench/idle-isolates.sh (standard library only).

Subcommands:
  body OUT                      write the ~200-byte JSON POST body
  ports N                       print N free loopback ports
  seed DIR FIXTURES N HANDLER   write a toolhost seed dir: bench-words, receipt-echo and N cold endpoints
  wait URL BODY TIMEOUT_S       poll POST URL until it answers 200 (exit 1 on timeout)
  check URL BODY KIND           one POST; verify the answer (KIND words|echo); print it
  coldstart ...                 spawn a server, time spawn -> first 200 of POST URL, stop it
  endpoints ...                 first call of each never-called endpoint; RSS before/after
  rss PID                       VmRSS of PID in KiB
  rsstree PID                   VmRSS of PID and of its descendants (sandbox workers), as JSON
  cpu                           /proc/stat aggregate cpu counters as JSON
  wrk FILE                      parse wrk --latency output into JSON
  report ...                    write RESULTS.md from the raw JSON lines
"""

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

TEXT = (
    "The quick brown fox jumps over the lazy dog while x402 lets a server ask for payment "
    "with HTTP 402; the agent's client signs, retries and gets a receipt that proves what was paid, call by call."
)


def body_bytes():
    return json.dumps({"text": TEXT}, separators=(",", ":")).encode()


def expected_words():
    return {"words": len(TEXT.split()), "upper": TEXT.upper(), "input": {"text": TEXT}}


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def descendants(pid):
    """Live descendants of PID (children of every thread, recursively): toolhost's sandbox
    worker processes."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                with open(f"/proc/{p}/task/{t}/children") as f:
                    kids = [int(x) for x in f.read().split()]
            except (OSError, ValueError):
                continue
            out += kids
            todo += kids
    return out


def rss_tree(pid):
    """(VmRSS of PID, VmRSS of its descendants summed, number of descendants), in KiB. The sum
    counts pages the processes share (the executable) once per process."""
    kids = descendants(pid)
    return rss_kib(pid), sum(rss_kib(k) or 0 for k in kids), len(kids)


def post(host, port, path, body, timeout=10.0):
    """One POST on a fresh connection; returns (status, body bytes)."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("POST", path, body=body, headers={"content-type": "application/json"})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def split_url(url):
    assert url.startswith("http://127.0.0.1:"), f"loopback only: {url}"
    rest = url[len("http://127.0.0.1:"):]
    port, _, path = rest.partition("/")
    return "127.0.0.1", int(port), "/" + path


def poll_until_200(url, body, deadline):
    """Polls until a 200 or the deadline (monotonic seconds). Returns (ok, last_status)."""
    host, port, path = split_url(url)
    last = None
    while time.monotonic() < deadline:
        try:
            status, _ = post(host, port, path, body, timeout=max(0.1, deadline - time.monotonic()))
            last = status
            if status == 200:
                return True, status
        except (ConnectionError, OSError, http.client.HTTPException) as e:
            last = type(e).__name__
        time.sleep(0.001)
    return False, last


def cmd_body(a):
    with open(a.out, "wb") as f:
        f.write(body_bytes())
    print(len(body_bytes()))


def cmd_ports(a):
    socks, ports = [], []
    for _ in range(a.n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    print(" ".join(map(str, ports)))


def fixture(slug, title, source):
    return {
        "slug": slug,
        "title": title,
        "description": "Benchmark handler: counts the words of `text` and upper-cases it.",
        "priceUsd": 0,
        "handlerType": "js_request_response",
        "tags": ["bench"],
        "inputSchema": {
            "type": "object",
            "required": ["text"],
            "properties": {"text": {"type": "string", "maxLength": 100000}},
        },
        "outputSchema": {
            "type": "object",
            "required": ["words", "upper", "input"],
            "properties": {
                "words": {"type": "integer"},
                "upper": {"type": "string"},
                "input": {"type": "object"},
            },
        },
        "capabilities": {},
        "source": source,
        "exampleInput": {"text": "hello bench"},
    }


def cmd_seed(a):
    os.makedirs(os.path.join(a.dir, "catalog"), exist_ok=True)
    os.makedirs(os.path.join(a.dir, "handlers"), exist_ok=True)
    shutil.copy(a.handler, os.path.join(a.dir, "handlers", "bench-words.js"))
    shutil.copy(os.path.join(a.fixtures, "catalog", "20-receipt-echo.json"), os.path.join(a.dir, "catalog"))
    with open(os.path.join(a.dir, "catalog", "bench-words.json"), "w") as f:
        json.dump(fixture("bench-words", "Bench words", "handlers/bench-words.js"), f, indent=2)
    for i in range(a.n):
        slug = f"bench-cold-{i:04d}"
        # Same code under a distinct slug: each one gets its own isolate on first call.
        with open(os.path.join(a.dir, "catalog", f"{slug}.json"), "w") as f:
            json.dump(fixture(slug, f"Bench cold {i}", "handlers/bench-words.js"), f)


def cmd_wait(a):
    with open(a.body, "rb") as f:
        body = f.read()
    ok, last = poll_until_200(a.url, body, time.monotonic() + a.timeout)
    if not ok:
        print(f"not ready: {a.url} (last: {last})", file=sys.stderr)
        sys.exit(1)


def check_answer(kind, status, data):
    if status != 200:
        return f"status {status}: {data[:300]!r}"
    try:
        got = json.loads(data)
    except ValueError:
        return f"not JSON: {data[:300]!r}"
    if kind == "words" and got != expected_words():
        return f"unexpected answer: {got!r}"
    if kind == "echo" and got.get("ok") is not True:
        return f"unexpected answer: {got!r}"
    return None


def cmd_check(a):
    with open(a.body, "rb") as f:
        body = f.read()
    host, port, path = split_url(a.url)
    status, data = post(host, port, path, body)
    problem = check_answer(a.kind, status, data)
    print(data.decode(errors="replace")[:400])
    if problem:
        print(f"check failed for {a.url}: {problem}", file=sys.stderr)
        sys.exit(1)


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def cmd_coldstart(a):
    """Spawn -> first 200 of POST URL, in ms. The server is stopped before returning."""
    with open(a.body, "rb") as f:
        body = f.read()
    log = open(a.log, "ab")
    env = dict(os.environ)
    for kv in a.env or []:
        k, _, v = kv.partition("=")
        env[k] = v
    start = time.perf_counter()
    proc = subprocess.Popen(a.cmd, cwd=a.cwd, stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=env)
    try:
        if a.pidfile:
            with open(a.pidfile, "w") as f:
                f.write(str(proc.pid))
        ok, last = poll_until_200(a.url, body, time.monotonic() + a.timeout)
        ms = (time.perf_counter() - start) * 1000
        rss = rss_kib(proc.pid)
    finally:
        stop(proc)
        if a.pidfile:
            try:
                os.unlink(a.pidfile)
            except OSError:
                pass
    if not ok:
        print(f"cold start failed: {a.cmd[0]} (last: {last}); see {a.log}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps({"cold_ms": round(ms, 2), "rss_kib_at_first_200": rss}))


def cmd_endpoints(a):
    """Endpoint cold start: call each never-called endpoint once (timing it), then once more."""
    with open(a.body, "rb") as f:
        body = f.read()
    host, port, _ = split_url(a.base + "/")
    slugs = [f"{a.prefix}{i:04d}" for i in range(a.n)]
    time.sleep(a.settle)
    own_before, kids_before, _ = rss_tree(a.pid)
    rss_before = own_before + kids_before
    first, second = [], []
    for slug in slugs:
        t0 = time.perf_counter()
        status, data = post(host, port, f"/tools/{slug}", body)
        first.append((time.perf_counter() - t0) * 1000)
        problem = check_answer("words", status, data)
        if problem:
            print(f"{slug}: {problem}", file=sys.stderr)
            sys.exit(1)
        t0 = time.perf_counter()
        status, data = post(host, port, f"/tools/{slug}", body)
        second.append((time.perf_counter() - t0) * 1000)
        if a.gap_ms:
            time.sleep(a.gap_ms / 1000)
    time.sleep(a.settle)
    own_after, kids_after, nkids = rss_tree(a.pid)
    rss_after = own_after + kids_after
    print(json.dumps({
        "n": a.n,
        "gap_ms": a.gap_ms,
        "mode": a.mode,
        "workers": nkids,
        "rss_server_before_kib": own_before,
        "rss_server_after_kib": own_after,
        "first_ms": [round(x, 2) for x in first],
        "second_ms": [round(x, 2) for x in second],
        "rss_before_kib": rss_before,
        "rss_after_kib": rss_after,
        "rss_growth_per_endpoint_kib": round((rss_after - rss_before) / a.n, 1) if a.n else None,
    }))


def cmd_rss(a):
    print(rss_kib(a.pid) or 0)


def cmd_rsstree(a):
    own, kids, n = rss_tree(a.pid)
    print(json.dumps({"rss_kib": own or 0, "children_rss_kib": kids, "children": n}))


def cmd_cpu(a):
    with open("/proc/stat") as f:
        fields = f.readline().split()
    names = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice"]
    print(json.dumps(dict(zip(names, map(int, fields[1:])))))


def cmd_cpudiff(a):
    before, after = json.loads(a.before), json.loads(a.after)
    print(f"{steal_pct(before, after):.1f}% steal, {idle_pct(before, after):.1f}% idle over the whole run")


def to_ms(text):
    units = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}
    for u in ("us", "ms", "s", "m"):
        if text.endswith(u):
            try:
                return float(text[: -len(u)]) * units[u]
            except ValueError:
                continue
    return None


def parse_wrk(text):
    out = {"rps": None, "p50_ms": None, "p99_ms": None, "requests": None, "non2xx": 0, "socket_errors": 0}
    for line in text.splitlines():
        s = line.strip()
        parts = s.split()
        if s.startswith("Requests/sec:"):
            out["rps"] = float(parts[1])
        elif s.startswith("50%") and len(parts) == 2:
            out["p50_ms"] = to_ms(parts[1])
        elif s.startswith("99%") and len(parts) == 2:
            out["p99_ms"] = to_ms(parts[1])
        elif "requests in" in s:
            out["requests"] = int(parts[0])
        elif s.startswith("Non-2xx or 3xx responses:"):
            out["non2xx"] = int(parts[-1])
        elif s.startswith("Socket errors:"):
            # Socket errors: connect 0, read 0, write 0, timeout 0
            out["socket_errors"] = sum(int(p.strip(",")) for p in parts[3::2])
    return out


def own_cpu_ticks(pid):
    """utime + stime + cutime + cstime of a process (all its threads, and its children it has
    waited for), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15])


def proc_cpu_s(pid):
    """CPU seconds of a process and of all its live descendants (toolhost's sandbox workers run
    the JavaScript; a worker that ended was waited for, so its time is in the parent's cutime)."""
    try:
        ticks = own_cpu_ticks(pid)
    except (OSError, IndexError, ValueError):
        return None
    for kid in descendants(pid):
        try:
            ticks += own_cpu_ticks(kid)
        except (OSError, IndexError, ValueError):
            pass  # ended between the listing and the read
    return ticks / os.sysconf("SC_CLK_TCK")


def read_cpu():
    with open("/proc/stat") as f:
        fields = f.readline().split()
    names = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice"]
    return dict(zip(names, map(int, fields[1:])))


def cmd_loadrun(a):
    """Runs wrk (the command after --) against server PID; prints the parsed result with the CPU
    time of the server, of wrk and of the whole machine over the run."""
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    cpu0, srv0, wall0 = read_cpu(), proc_cpu_s(a.pid), time.monotonic()
    ru0 = os.times()
    with open(a.out, "wb") as f:
        code = subprocess.run(a.cmd, stdout=f, stderr=subprocess.STDOUT, timeout=a.timeout).returncode
    ru1 = os.times()
    cpu1, srv1, wall = read_cpu(), proc_cpu_s(a.pid), time.monotonic() - wall0
    with open(a.out) as f:
        res = parse_wrk(f.read())
    d = {k: cpu1[k] - cpu0[k] for k in cpu0}
    hz = os.sysconf("SC_CLK_TCK")
    busy_s = sum(v for k, v in d.items() if k not in ("idle", "iowait", "steal", "guest", "guest_nice")) / hz
    wrk_s = (ru1.children_user + ru1.children_system) - (ru0.children_user + ru0.children_system)
    srv_s = (srv1 - srv0) if srv0 is not None and srv1 is not None else None
    res.update({
        "wrk_exit": code, "loadavg": load, "cpu_before": cpu0, "cpu_after": cpu1, "wall_s": round(wall, 3),
        "server_cores": round(srv_s / wall, 2) if srv_s is not None else None,
        "server_cpu_s": round(srv_s, 3) if srv_s is not None else None,
        "server_procs": 1 + len(descendants(a.pid)),
        "wrk_cores": round(wrk_s / wall, 2),
        "other_cores": round((busy_s - wrk_s - (srv_s or 0)) / wall, 2),
    })
    print(f"rps={res['rps']} p50={res['p50_ms']}ms p99={res['p99_ms']}ms non2xx={res['non2xx']} "
          f"sockerr={res['socket_errors']} cores server/wrk/other={res['server_cores']}/{res['wrk_cores']}/"
          f"{res['other_cores']}", file=sys.stderr)
    print(json.dumps(res))


def cmd_wrk(a):
    with open(a.file) as f:
        print(json.dumps(parse_wrk(f.read())))


# ---------- report ----------

def steal_pct(before, after):
    d = {k: after[k] - before[k] for k in before}
    total = sum(v for k, v in d.items() if k not in ("guest", "guest_nice"))
    return 100.0 * d["steal"] / total if total else 0.0


def idle_pct(before, after):
    d = {k: after[k] - before[k] for k in before}
    total = sum(v for k, v in d.items() if k not in ("guest", "guest_nice"))
    return 100.0 * (d["idle"] + d["iowait"]) / total if total else 0.0


def mmm(values, fmt="{:.0f}"):
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    med = statistics.median(values)
    if len(values) == 1:
        return fmt.format(med)
    return f"{fmt.format(med)} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def rss_cell(r):
    if not r or not r.get("rss_kib"):
        return "n/a"
    cell = f"{r['rss_kib'] / 1024:.1f}"
    if r.get("children"):
        cell += f" + {r['children_rss_kib'] / 1024:.1f} ({r['children']} workers)"
    return cell


def cpu_us_per_request(r):
    if r.get("server_cpu_s") is None or not r.get("requests"):
        return None
    return r["server_cpu_s"] / r["requests"] * 1e6


# The figures a ratio of two peers is taken of: (name, value of one wrk run, format).
RATIO_FIGURES = (("req/s", lambda r: r["rps"], "{:.0f}"), ("p50 ms", lambda r: r["p50_ms"], "{:.2f}"),
                 ("p99 ms", lambda r: r["p99_ms"], "{:.2f}"),
                 ("server CPU µs per request", cpu_us_per_request, "{:.0f}"))


def ratio_cells(runs, a, b):
    """Medians of peer A over medians of peer B in one run, per figure: a list of (figure, cell),
    empty when either peer did not run."""
    ra, rb = [r for r in runs if r["peer"] == a], [r for r in runs if r["peer"] == b]
    if not ra or not rb:
        return []

    def med(rs, f):
        v = [x for x in map(f, rs) if x is not None]
        return statistics.median(v) if v else None

    cells = []
    for name, f, fmt in RATIO_FIGURES:
        x, y = med(ra, f), med(rb, f)
        if x is None or not y:
            cells.append((name, "n/a"))
            continue
        cells.append((name, f"{fmt.format(x)} / {fmt.format(y)} = **{x / y:.2f}×**"))
    return cells


def boundary_ratios(runs, a, b):
    """The cost of the process boundary: medians of A over medians of B (one run)."""
    cells = [f"{name} {cell}" for name, cell in ratio_cells(runs, a, b) if cell != "n/a"]
    if not cells:
        return []
    return [f"**Process boundary** ({a} / {b}, medians of this run): " + "; ".join(cells) + ".", ""]


# The ratios issue 15 sets its targets in: toolhost against the ceiling of a Rust HTTP service
# (axum-ceiling) and against the JavaScript runtimes serving the same handler.
PEER_RATIOS = (("toolhost-native", "axum-ceiling"), ("toolhost-js", "axum-ceiling"),
               ("toolhost-js", "deno"), ("toolhost-js", "workerd"), ("toolhost-native", "deno"))


def peer_ratios(runs):
    """A table of PEER_RATIOS, the pairs of which both peers ran."""
    rows = [(a, b, ratio_cells(runs, a, b)) for a, b in PEER_RATIOS]
    rows = [(a, b, cells) for a, b, cells in rows if cells]
    if not rows:
        return []
    out = ["**Ratios to the peers** (medians of this run, A / B; never compare across runs). Issue 15's "
           "targets: toolhost-native / axum-ceiling req/s at least 0.5×; toolhost-js / workerd req/s at least 2× "
           "with p99 below 1×; toolhost-js / deno req/s at least 0.5×.", "",
           "| A / B | " + " | ".join(name for name, _, _ in RATIO_FIGURES) + " |",
           "|---|" + "---:|" * len(RATIO_FIGURES)]
    for a, b, cells in rows:
        out.append(f"| {a} / {b} | " + " | ".join(cell for _, cell in cells) + " |")
    return out + [""]


def cmd_report(a):
    rows = []
    with open(a.raw) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    with open(a.meta) as f:
        meta = json.load(f)
    with open(a.header) as f:
        header = f.read().rstrip() + "\n"
    peers = meta["peers"]
    runs = [r for r in rows if r["type"] == "wrk"]
    colds = [r for r in rows if r["type"] == "cold"]
    rss = {r["peer"]: r for r in rows if r["type"] == "rss_after_load"}
    eps = [r for r in rows if r["type"] == "endpoints"]
    out = [header, "", f"## Run of {meta['started']}", ""]
    if meta.get("smoke"):
        out += ["> **SMOKE RUN** (short durations, one repetition): checks that the harness works; "
                "the figures below are not for comparison.", ""]
    out += ["| | |", "|---|---|"]
    for k, v in meta["facts"]:
        out.append(f"| {k} | {v} |")
    out.append("")
    out += ["### Throughput and latency under load", "",
            f"wrk `-t{meta['threads']} -c{meta['connections']} -d{meta['duration']}s --latency`, "
            f"{meta['reps']} repetition(s) per peer, round-robin; median (min–max) over repetitions. "
            "CPU columns: cores used during the runs (CPU seconds / wall seconds, of 2) by the server process, by wrk, "
            "and by everything else on the machine (other work, kernel; from /proc/stat minus the two); steal is the "
            "share of all CPU time the hypervisor took. "
            "The server's CPU includes its child processes (toolhost's sandbox workers); CPU µs per request is "
            "that CPU time over the requests wrk completed. "
            "RSS is VmRSS of the server process after its last run, plus (after \"+\") the VmRSS of its child "
            "processes summed, when it has any (shared pages are counted in each). Cold start: process spawn until "
            f"the first 200 of the POST, median (min–max) of {meta['cold_reps']} fresh start(s).", "",
            "| peer | req/s | p50 ms | p99 ms | non-2xx / socket errors | RSS after load MiB | cold start ms | server CPU cores | server CPU µs per request | wrk CPU cores | other CPU cores | steal % |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in peers:
        pr = [r for r in runs if r["peer"] == p]
        pc = [r["cold_ms"] for r in colds if r["peer"] == p]
        errs = sum(r["non2xx"] + r["socket_errors"] for r in pr)
        out.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            p,
            mmm([r["rps"] for r in pr]),
            mmm([r["p50_ms"] for r in pr], "{:.2f}"),
            mmm([r["p99_ms"] for r in pr], "{:.2f}"),
            errs if pr else "n/a",
            rss_cell(rss.get(p)),
            mmm(pc, "{:.0f}"),
            mmm([r.get("server_cores") for r in pr], "{:.2f}"),
            mmm([cpu_us_per_request(r) for r in pr], "{:.0f}"),
            mmm([r.get("wrk_cores") for r in pr], "{:.2f}"),
            mmm([r.get("other_cores") for r in pr], "{:.2f}"),
            mmm([steal_pct(r["cpu_before"], r["cpu_after"]) for r in pr], "{:.1f}"),
        ))
    out.append("")
    out += peer_ratios(runs)
    out += boundary_ratios(runs, "toolhost-js", "toolhost-js-inprocess")
    if meta.get("notes"):
        out += [f"- {n}" for n in meta["notes"]]
        out.append("")
    if eps:
        out += ["### toolhost endpoint cold start and idle isolates", "",
                "A server seeded with N endpoints of the same handler under distinct slugs; after it is ready, "
                "each never-called endpoint gets one POST (its isolate starts: the endpoint cold start), then "
                "a second POST (warm), one endpoint after another with the stated gap; one fresh server per row. "
                "The pool keeps a few spare runtimes ready (PoolConfig::spare_isolates): with no gap they run out and "
                "later first calls build a runtime inline; a gap lets them refill. RSS growth is "
                "(VmRSS after all N − VmRSS before) / N, i.e. the cost of one idle isolate.", "",
                "RSS is the server's VmRSS plus its worker processes' (summed): with worker processes the isolates live "
                "in the workers. `workers` is how many child processes the server had at the end.", "",
                "| sandbox | N | gap ms | first call ms | second call ms | RSS before MiB | RSS after MiB | RSS growth per endpoint KiB |",
                "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for e in eps:
            mode = e.get("mode", "?")
            if "workers" in e and mode == "workers":
                mode = f"workers ({e['workers']})"
            out.append("| {} | {} | {:g} | {} | {} | {:.1f} | {:.1f} | {} |".format(
                mode, e["n"], e["gap_ms"], mmm(e["first_ms"], "{:.2f}"), mmm(e["second_ms"], "{:.2f}"),
                e["rss_before_kib"] / 1024, e["rss_after_kib"] / 1024, e["rss_growth_per_endpoint_kib"]))
        out.append("")
    commands = [c.replace(meta["work"], "$WORK") for c in meta["commands"]] if meta.get("work") else meta["commands"]
    out += ["### Commands", "", "`$WORK` is the run's temp dir; ports are free ones picked at run time.", "",
            "```"] + commands + ["```", ""]
    if meta.get("body"):
        out += ["POST body (body.json):", "", "```json", meta["body"], "```", ""]
    out += ["<details><summary>Raw per-run values</summary>", "", "| rep | peer | req/s | p50 ms | p99 ms | requests | non-2xx | socket errors | server / wrk / other cores | steal % | load avg before |",
            "|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---|"]
    for r in runs:
        out.append("| {} | {} | {:.0f} | {} | {} | {} | {} | {} | {} / {} / {} | {:.1f} | {} |".format(
            r["rep"], r["peer"], r["rps"] or 0, r["p50_ms"], r["p99_ms"], r["requests"], r["non2xx"],
            r["socket_errors"], r.get("server_cores"), r.get("wrk_cores"), r.get("other_cores"), steal_pct(r["cpu_before"], r["cpu_after"]), r.get("loadavg", "")))
    out += ["", "Cold starts (ms): " + "; ".join(
        f"{p}: {', '.join(str(r['cold_ms']) for r in colds if r['peer'] == p)}" for p in peers
        if any(r["peer"] == p for r in colds)), "", "</details>", ""]
    out += kept_sections(a.out)
    with open(a.out, "w") as f:
        f.write("\n".join(out))


KEPT_SECTIONS = ("process-boundary", "soak", "optimizations", "store", "store-analysis", "micro-benchmarks")


def kept_sections(path):
    """What a new run keeps of RESULTS.md: everything after the previous run's own section, from
    the first kept marker (`<!-- NAME: ... -->`, NAME in KEPT_SECTIONS) to the end of the file.
    That is the analysis of the process boundary, the soak, the optimization logs, the store and
    micro-benchmark sections their scripts write in place, and every hand-written section added
    after them (issue logs, catalog size, ...): a section without a marker of its own must not
    vanish because a run was recorded."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return []
    starts = [m.start() for m in (re.search(r"<!-- " + name + r":", text) for name in KEPT_SECTIONS) if m]
    return [text[min(starts):]] if starts else []


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd_name", required=True)
    p = sub.add_parser("body"); p.add_argument("out"); p.set_defaults(fn=cmd_body)
    p = sub.add_parser("ports"); p.add_argument("n", type=int); p.set_defaults(fn=cmd_ports)
    p = sub.add_parser("seed"); p.add_argument("dir"); p.add_argument("fixtures"); p.add_argument("n", type=int)
    p.add_argument("handler"); p.set_defaults(fn=cmd_seed)
    p = sub.add_parser("wait"); p.add_argument("url"); p.add_argument("body"); p.add_argument("timeout", type=float)
    p.set_defaults(fn=cmd_wait)
    p = sub.add_parser("check"); p.add_argument("url"); p.add_argument("body"); p.add_argument("kind")
    p.set_defaults(fn=cmd_check)
    p = sub.add_parser("coldstart")
    p.add_argument("--url", required=True); p.add_argument("--body", required=True)
    p.add_argument("--log", required=True); p.add_argument("--cwd"); p.add_argument("--pidfile")
    p.add_argument("--env", action="append"); p.add_argument("--timeout", type=float, default=60)
    p.add_argument("cmd", nargs=argparse.REMAINDER); p.set_defaults(fn=cmd_coldstart)
    p = sub.add_parser("endpoints")
    p.add_argument("--pid", type=int, required=True); p.add_argument("--base", required=True)
    p.add_argument("--body", required=True); p.add_argument("--n", type=int, required=True)
    p.add_argument("--prefix", default="bench-cold-"); p.add_argument("--gap-ms", type=float, default=100)
    p.add_argument("--settle", type=float, default=1.0); p.add_argument("--mode", default="workers")
    p.set_defaults(fn=cmd_endpoints)
    p = sub.add_parser("rss"); p.add_argument("pid", type=int); p.set_defaults(fn=cmd_rss)
    p = sub.add_parser("rsstree"); p.add_argument("pid", type=int); p.set_defaults(fn=cmd_rsstree)
    p = sub.add_parser("cpu"); p.set_defaults(fn=cmd_cpu)
    p = sub.add_parser("cpudiff"); p.add_argument("before"); p.add_argument("after"); p.set_defaults(fn=cmd_cpudiff)
    p = sub.add_parser("loadrun"); p.add_argument("--pid", type=int, required=True); p.add_argument("--out", required=True)
    p.add_argument("--timeout", type=float, required=True); p.add_argument("cmd", nargs=argparse.REMAINDER)
    p.set_defaults(fn=cmd_loadrun)
    p = sub.add_parser("wrk"); p.add_argument("file"); p.set_defaults(fn=cmd_wrk)
    p = sub.add_parser("report")
    for name in ("raw", "meta", "header", "out"):
        p.add_argument(name)
    p.set_defaults(fn=cmd_report)
    a = ap.parse_args()
    if a.cmd_name in ("coldstart", "loadrun") and a.cmd and a.cmd[0] == "--":
        a.cmd = a.cmd[1:]
    a.fn(a)


if __name__ == "__main__":
    main()
