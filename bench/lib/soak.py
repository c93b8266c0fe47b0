#!/usr/bin/env python3
"""Helpers for bench/soak.sh (standard library only).

Subcommands:
  setup BASE ADMIN_TOKEN SOAK_DIR WORDS_JS   a builder, its soak-kv and soak-files endpoints
                                            (capabilities granted by the admin), and the
                                            admin's soak-words; prints the builder key
  credit BASE ADMIN_TOKEN USD               a developer credit; prints its token
  check BASE                                one call of every kind in the mix; prints them
  sample PID BASE LABEL T                   one sample (JSON line): RSS, fds and threads of the
                                            server and of each of its child processes, and the
                                            sandbox and request counters from /metrics
  brief                                     one line about the sample on stdin
  report SAMPLES ROUNDS META OUT            the markdown report; exit status 1 when the soak
                                            failed its criteria (see soak.sh)
"""

import http.client
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the work tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import descendants, rss_kib, split_url  # noqa: E402


def request(base, method, path, body=None, headers=None, timeout=30.0):
    host, port, _ = split_url(base + "/")
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        data = json.dumps(body).encode() if body is not None else None
        h = {"content-type": "application/json"} if data is not None else {}
        h.update(headers or {})
        conn.request(method, path, body=data, headers=h)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def must(base, method, path, body=None, headers=None):
    status, data = request(base, method, path, body, headers)
    if status != 200:
        sys.exit(f"{method} {path}: {status} {data[:500]!r}")
    return json.loads(data)


def endpoint(slug, title, source, capabilities, input_schema):
    return {
        "slug": slug,
        "title": title,
        "description": "Soak test handler (bench/soak.sh).",
        "priceUsd": 0,
        "handlerType": "js_request_response",
        "tags": ["bench"],
        "inputSchema": input_schema,
        "capabilities": capabilities,
        "source": source,
        "safetyAttestation": {"accepted": True},
    }


def cmd_setup(a):
    admin = {"x-admin-token": a.admin_token}
    built = must(a.base, "POST", "/ai/admin/builders", {"name": "soak"}, admin)
    key = built["builderKey"]
    number = {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}
    for slug, cap in (("soak-kv", "kv"), ("soak-files", "files")):
        with open(os.path.join(a.soak_dir, slug + ".js")) as f:
            source = f.read()
        must(a.base, "POST", "/ai/endpoints/create",
             endpoint(slug, slug, source, {cap: True}, number), {"x-builder-key": key})
        must(a.base, "PATCH", f"/ai/endpoints/{slug}", {"grantedCapabilities": {cap: True}}, admin)
    with open(a.words_js) as f:
        source = f.read()
    text = {"type": "object", "required": ["text"], "properties": {"text": {"type": "string", "maxLength": 100000}}}
    words = endpoint("soak-words", "soak-words", source, {}, text)
    del words["safetyAttestation"]
    must(a.base, "POST", "/ai/endpoints/create", words, admin)
    print(key)


def cmd_credit(a):
    got = must(a.base, "POST", "/ai/admin/credits", {"amountUsd": a.usd, "note": "bench/soak.sh"},
               {"x-admin-token": a.admin_token})
    print(got["credit"]["token"])


def cmd_check(a):
    mcp = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
    calls = [
        ("/tools/soak-words", {"text": "hello soak"}, None),
        ("/tools/soak-kv", {"n": 1}, None),
        ("/tools/soak-files", {"n": 1}, None),
        ("/ai/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "soak-kv", "arguments": {"n": 2}}}, mcp),
    ]
    bad = 0
    for path, body, headers in calls:
        status, data = request(a.base, "POST", path, body, headers)
        text = data.decode(errors="replace")
        ok = status == 200 and '"isError":true' not in text.replace(" ", "")
        bad += not ok
        print(f"{'ok ' if ok else 'BAD'} {status} {path}: {text[:200]}")
    if bad:
        sys.exit(1)


def proc_facts(pid):
    """RSS (KiB), open file descriptors and threads of PID; None when it is gone."""
    try:
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        with open(f"/proc/{pid}/status") as f:
            threads = next(int(line.split()[1]) for line in f if line.startswith("Threads:"))
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().split(b"\0")
    except (OSError, StopIteration, ValueError):
        return None
    return {"pid": pid, "rss_kib": rss_kib(pid), "fds": fds, "threads": threads,
            "cmd": " ".join(c.decode(errors="replace") for c in cmd[1:3] if c)}


METRIC = re.compile(r"^(toolhost_[a-z_]+)(\{.*\})? ([0-9.eE+-]+)$")


def metrics(base):
    status, data = request(base, "GET", "/metrics")
    if status != 200:
        return {}, {}
    sandbox, requests = {}, {}
    for line in data.decode().splitlines():
        m = METRIC.match(line)
        if not m:
            continue
        name, labels, value = m.group(1), m.group(2) or "", float(m.group(3))
        if name.startswith("toolhost_sandbox_"):
            sandbox[name[len("toolhost_"):]] = value
        elif name == "toolhost_http_requests_total":
            lab = dict(re.findall(r'(\w+)="([^"]*)"', labels))
            key = f"{lab.get('method', '?')} {lab.get('route', '?')} {lab.get('status', '?')}"
            requests[key] = requests.get(key, 0) + value
    return sandbox, requests


def cmd_sample(a):
    server = proc_facts(a.pid)
    workers = [w for w in (proc_facts(k) for k in descendants(a.pid)) if w]
    sandbox, requests = metrics(a.base)
    print(json.dumps({"label": a.label, "t": a.t, "server": server, "workers": workers,
                      "sandbox": sandbox, "requests": requests}))


def cmd_brief(a):
    """One line about a sample (read from stdin), for the progress log."""
    s = json.loads(sys.stdin.read())
    w, sb = s["workers"], s["sandbox"]
    print(f"server rss {s['server']['rss_kib'] / 1024:.1f} MiB fds {s['server']['fds']}; {len(w)} workers rss "
          f"{sum(x['rss_kib'] or 0 for x in w) / 1024:.1f} MiB fds {sum(x['fds'] for x in w)}; live isolates "
          f"{sb.get('sandbox_live_isolates')} restarts {sb.get('sandbox_worker_restarts_total')}")


# ---------- report ----------

def totals(s):
    w = s["workers"]
    return {
        "server_rss_kib": s["server"]["rss_kib"], "server_fds": s["server"]["fds"],
        "server_threads": s["server"]["threads"],
        "workers": len(w), "worker_pids": sorted(x["pid"] for x in w),
        "workers_rss_kib": sum(x["rss_kib"] or 0 for x in w), "workers_fds": sum(x["fds"] for x in w),
        "workers_threads": sum(x["threads"] for x in w),
        "live_isolates": s["sandbox"].get("sandbox_live_isolates"),
        "spare_isolates": s["sandbox"].get("sandbox_spare_isolates"),
        "worker_processes": s["sandbox"].get("sandbox_worker_processes"),
        "worker_restarts": s["sandbox"].get("sandbox_worker_restarts_total"),
        "worker_recycles": s["sandbox"].get("sandbox_worker_recycles_total"),
        "abandoned_isolates": s["sandbox"].get("sandbox_abandoned_isolates"),
        "recycled": s["sandbox"].get("sandbox_recycled_total"),
        "overloaded": s["sandbox"].get("sandbox_overloaded_total"),
        "invocations": s["sandbox"].get("sandbox_invocations_total"),
        "isolates_created": s["sandbox"].get("sandbox_isolates_created_total"),
    }


def pct(a, b):
    if a is None or b is None:
        return "n/a"
    if a == 0:
        return "0%" if b == 0 else "+∞"
    return f"{100.0 * (b - a) / a:+.1f}%"


def cmd_report(a):
    samples = [json.loads(line) for line in open(a.samples) if line.strip()]
    rounds = [json.loads(line) for line in open(a.rounds) if line.strip()]
    with open(a.meta) as f:
        meta = json.load(f)
    rss_limit = float(meta["rss_limit_pct"])
    fd_slack = int(meta["fd_slack"])
    max_errors = int(meta["max_errors"])
    warm = next(s for s in samples if s["label"] == "warm")
    end = next(s for s in samples if s["label"] == "end")
    tw, te = totals(warm), totals(end)

    failures = []

    def grew(name, limit=0):
        if tw[name] is not None and te[name] is not None and te[name] > tw[name] + limit:
            failures.append(f"{name} grew from {tw[name]:g} to {te[name]:g}")

    grew("server_fds", fd_slack)
    grew("workers_fds", fd_slack)
    grew("workers")
    grew("worker_processes")
    grew("worker_restarts")
    grew("live_isolates")
    grew("abandoned_isolates")
    # A worker may be replaced only the planned way (recycled after dropping its share of
    # isolates), never for a fault (worker_restarts, checked above).
    recycles = (te["worker_recycles"] or 0) - (tw["worker_recycles"] or 0)
    if tw["worker_pids"] != te["worker_pids"] and recycles <= 0:
        failures.append(f"worker pids changed: {tw['worker_pids']} -> {te['worker_pids']}")
    # RSS is judged by its peaks: the highest sample of the second half of the warm part of the
    # run against the highest of the first half. Workers are recycled the planned way (their
    # RSS is a sawtooth), so the end sample alone would pass or fail by where in a tooth the run
    # stopped; a leak shows as peaks that keep rising. The end-vs-warm growth stays in the table.
    after_warm = [totals(s) for s in samples if s["t"] > warm["t"]]
    half = len(after_warm) // 2
    peaks = {}
    for name in ("server_rss_kib", "workers_rss_kib"):
        first_half = max((t[name] or 0) for t in after_warm[:half]) if half else tw[name]
        second_half = max((t[name] or 0) for t in after_warm[half:])
        peaks[name] = (first_half, second_half)
        if first_half and (second_half - first_half) / first_half * 100 > rss_limit:
            failures.append(f"{name} peaks grew {pct(first_half, second_half)} (limit {rss_limit:g}%)")

    # Requests by route and status over the whole load (before -> end) and after warm-up.
    first = next(s for s in samples if s["label"] == "before")
    def delta(x, y):
        keys = sorted(set(x["requests"]) | set(y["requests"]))
        return {k: y["requests"].get(k, 0) - x["requests"].get(k, 0) for k in keys
                if y["requests"].get(k, 0) - x["requests"].get(k, 0) > 0}
    all_req = delta(first, end)
    errors = sum(v for k, v in all_req.items() if k.split()[-1].startswith("5"))
    if errors > max_errors:
        failures.append(f"{errors:.0f} answers with status 5xx (limit {max_errors})")
    wrk_requests = sum(r.get("requests") or 0 for r in rounds)
    sockerr = sum(r.get("socket_errors") or 0 for r in rounds)
    non2xx = sum(r.get("non2xx") or 0 for r in rounds)
    log_lines = meta.get("log_problems", [])

    out = [f"Run of {meta['started']}: {meta['mode']}, {meta['duration']} s of load in rounds of "
           f"{meta['round']} s (wrk `-t{meta['threads']} -c{meta['connections']}`), sandbox: {meta['sandbox']}; "
           f"paid calls: {meta['paid']}. Warm = the sample after the round that ends at or after "
           f"{meta['warm_pct']}% of the load ({warm['t']:.0f} s); end = after the last round ({end['t']:.0f} s). "
           f"Machine: {meta['machine']}; load average at end: {meta['loadavg']}.", "",
           "| | before load | warm | end | growth warm → end |", "|---|---:|---:|---:|---:|"]
    tb = totals(first)
    rows = [
        ("server RSS MiB", "server_rss_kib", lambda v: f"{v / 1024:.1f}"),
        ("server open fds", "server_fds", str),
        ("server threads", "server_threads", str),
        ("worker processes (children of the server)", "workers", str),
        ("worker pids", "worker_pids", lambda v: ", ".join(map(str, v)) or "–"),
        ("workers' RSS MiB (summed)", "workers_rss_kib", lambda v: f"{v / 1024:.1f}"),
        ("workers' open fds (summed)", "workers_fds", str),
        ("workers' threads (summed)", "workers_threads", str),
        ("`toolhost_sandbox_worker_processes`", "worker_processes", lambda v: f"{v:g}"),
        ("`toolhost_sandbox_worker_restarts_total`", "worker_restarts", lambda v: f"{v:g}"),
        ("`toolhost_sandbox_worker_recycles_total`", "worker_recycles", lambda v: f"{v:g}"),
        ("`toolhost_sandbox_live_isolates`", "live_isolates", lambda v: f"{v:g}"),
        ("`toolhost_sandbox_spare_isolates`", "spare_isolates", lambda v: f"{v:g}"),
        ("`toolhost_sandbox_abandoned_isolates`", "abandoned_isolates", lambda v: f"{v:g}"),
        ("`toolhost_sandbox_isolates_created_total`", "isolates_created", lambda v: f"{v:g}"),
        ("`toolhost_sandbox_recycled_total`", "recycled", lambda v: f"{v:g}"),
        ("`toolhost_sandbox_overloaded_total`", "overloaded", lambda v: f"{v:g}"),
        ("`toolhost_sandbox_invocations_total`", "invocations", lambda v: f"{v:g}"),
    ]
    for title, key, fmt in rows:
        cell = lambda t: "n/a" if t[key] is None else fmt(t[key])  # noqa: E731
        growth = "" if key == "worker_pids" else pct(tw[key], te[key])
        out.append(f"| {title} | {cell(tb)} | {cell(tw)} | {cell(te)} | {growth} |")
    out += ["", "RSS peaks after warm (the criterion; first half → second half of the samples after warm): "
            + "; ".join(f"{name.replace('_kib', '')} {a / 1024:.1f} → {b / 1024:.1f} MiB ({pct(a, b)})"
                        for name, (a, b) in peaks.items()) + "."]
    out += ["", "Samples (after each round):", "",
            "| t s | label | server RSS MiB | server fds | workers | workers' RSS MiB | workers' fds | live isolates | restarts | recycles |",
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in samples:
        t = totals(s)
        out.append(f"| {s['t']:.0f} | {s['label']} | {t['server_rss_kib'] / 1024:.1f} | {t['server_fds']} | {t['workers']} | "
                   f"{t['workers_rss_kib'] / 1024:.1f} | {t['workers_fds']} | {t['live_isolates'] if t['live_isolates'] is not None else 'n/a':g} | "
                   f"{t['worker_restarts'] if t['worker_restarts'] is not None else 'n/a':g} | "
                   f"{t['worker_recycles'] if t['worker_recycles'] is not None else 'n/a':g} |")
    out += ["", f"Load: {wrk_requests} requests in {len(rounds)} rounds "
            f"({wrk_requests / max(1, sum(r.get('wall_s', 0) for r in rounds)):.0f}/s), "
            f"{non2xx} non-2xx, {sockerr} socket errors (wrk). Answers by route and status (from `/metrics`):", ""]
    out += [f"- `{k}`: {v:.0f}" for k, v in all_req.items()]
    out += ["", f"Server log: {len(log_lines)} line(s) at WARN or ERROR" + (":" if log_lines else ".")]
    if log_lines:
        out += ["", "```"] + log_lines[:20] + (["…"] if len(log_lines) > 20 else []) + ["```"]
    out += ["", "**Verdict: " + ("FAIL** — " + "; ".join(failures) if failures else "pass**") +
            f" (criteria: no growth of fds beyond {fd_slack}, of worker processes, worker restarts (planned recycles "
            f"may change worker pids), live or "
            f"abandoned isolates; the RSS peaks of the server and of the workers in the second half of the warm run "
            f"within +{rss_limit:g}% of those in the first half; at most {max_errors} 5xx answers).", ""]
    text = "\n".join(out)
    with open(a.out, "w") as f:
        f.write(text)
    print(text)
    sys.exit(1 if failures else 0)


def main():
    import argparse
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("setup")
    for n in ("base", "admin_token", "soak_dir", "words_js"):
        p.add_argument(n)
    p.set_defaults(fn=cmd_setup)
    p = sub.add_parser("credit"); p.add_argument("base"); p.add_argument("admin_token"); p.add_argument("usd", type=float)
    p.set_defaults(fn=cmd_credit)
    p = sub.add_parser("check"); p.add_argument("base"); p.set_defaults(fn=cmd_check)
    p = sub.add_parser("sample"); p.add_argument("pid", type=int); p.add_argument("base"); p.add_argument("label")
    p.add_argument("t", type=float); p.set_defaults(fn=cmd_sample)
    p = sub.add_parser("brief"); p.set_defaults(fn=cmd_brief)
    p = sub.add_parser("report")
    for n in ("samples", "rounds", "meta", "out"):
        p.add_argument(n)
    p.set_defaults(fn=cmd_report)
    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
