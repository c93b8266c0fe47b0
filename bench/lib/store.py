#!/usr/bin/env python3
"""Helper for bench/store.sh (standard library only; reuses bench.py's wrk parsing and CPU reading).

  measure --label L --round R --kind free|paid --raw FILE --server PID... --wrk 'CMD'...
          [--pg-postmaster PID --psql 'CMD'] [--perf] [--timeout S]
      Runs the wrk commands at once (one per loaded node), and prints and appends to FILE one JSON
      line: summed req/s, per-wrk p50/p99, non-2xx, socket errors, the CPU (in cores) of the loaded
      servers, of PostgreSQL (the postmaster and all its children), of wrk and of everything else,
      fsync/fdatasync calls of the servers and of PostgreSQL (perf tracepoints, when --perf), and
      PostgreSQL's commit/rollback/WAL-sync counts over the run (pg_stat_database, pg_stat_wal).
  report --raw FILE --meta FILE [--out RESULTS.md]
      The "Store: durability and PostgreSQL (issue 12)" section as Markdown; with --out, replaces
      the generated part of that section in RESULTS.md (between the `store` markers), keeping
      the hand-written analysis that follows it.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import parse_wrk, proc_cpu_s, read_cpu  # noqa: E402

BEGIN = "<!-- store: written by bench/store.sh (RECORD=1); bench/run.sh keeps it -->"
END = "<!-- /store -->"
ANALYSIS = "<!-- store-analysis:"
# Where a first run inserts the section: before the micro-benchmarks, else at the end.
BEFORE = "<!-- micro-benchmarks:"

FSYNC_EVENTS = ("syscalls:sys_enter_fsync", "syscalls:sys_enter_fdatasync")
# sled's Db::flush() writes its log with pwrite + sync_file_range (WAIT_BEFORE|WRITE|WAIT_AFTER);
# only its periodic flusher calls fsync. Counted apart: sync_file_range starts and waits for the
# writeback of those pages, but neither flushes the device's write cache nor file metadata.
SFR_EVENT = "syscalls:sys_enter_sync_file_range"


def children(pid):
    """All descendants of pid (PostgreSQL's backends and helpers)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        out += kids
        todo += kids
    return out


def group_cpu(pids):
    return {p: proc_cpu_s(p) for p in pids}


def group_delta(before, after):
    """CPU seconds of a process group between two snapshots: processes in both count their
    difference, processes that appeared count all they used."""
    total = 0.0
    for p, t in after.items():
        if t is None:
            continue
        t0 = before.get(p)
        total += t - (t0 or 0.0)
    return total


def pg_stats(psql):
    if not psql:
        return None
    q = ("SELECT d.xact_commit, d.xact_rollback, d.conflicts, w.wal_records, w.wal_write, w.wal_sync, w.wal_bytes "
         "FROM pg_stat_database d, pg_stat_wal w WHERE d.datname = current_database()")
    try:
        out = subprocess.run(shlex.split(psql) + ["-X", "-A", "-t", "-F", " ", "-c", q], capture_output=True,
                             text=True, timeout=20).stdout.split()
        names = ["xact_commit", "xact_rollback", "conflicts", "wal_records", "wal_write", "wal_sync", "wal_bytes"]
        return dict(zip(names, map(int, out)))
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def pg_locks(psql):
    """Mid-run sample: backends by state and wait event, and SSI's predicate locks by granularity
    (a 'page' SIRead lock covers a whole index or heap page, so unrelated keys on it conflict)."""
    q = ("SELECT 'backend ' || state || coalesce(' / ' || wait_event_type || ':' || wait_event, ''), count(*) "
         "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() GROUP BY 1 "
         "UNION ALL SELECT 'SIRead ' || locktype || coalesce(' ' || relation::regclass::text, ''), count(*) "
         "FROM pg_locks WHERE mode = 'SIReadLock' GROUP BY 1 "
         "UNION ALL SELECT 'lock wait ' || locktype || ' ' || mode, count(*) FROM pg_locks WHERE NOT granted GROUP BY 1 "
         "ORDER BY 1")
    try:
        out = subprocess.run(shlex.split(psql) + ["-X", "-A", "-t", "-F", "\t", "-c", q], capture_output=True,
                             text=True, timeout=10).stdout
        return {k: int(v) for k, v in (l.split("\t") for l in out.splitlines() if "\t" in l)}
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def start_perf(out):
    """perf record of every fsync/fdatasync on the machine (tracepoints: a few thousand events,
    little overhead); attributed to processes afterwards, so threads and backends that start
    during the run count too."""
    cmd = ["perf", "record", "-q", "-a", "-e", ",".join(FSYNC_EVENTS + (SFR_EVENT,)), "-o", out]
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    time.sleep(0.5)  # recording before the load starts
    return p


def stop_perf(p, out):
    """{(pid, "fsync" or "sfr"): calls} over the recording (fsync + fdatasync, sync_file_range), or None."""
    if p is None:
        return None
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        return None
    try:
        text = subprocess.run(["perf", "script", "-i", out, "-F", "pid,comm,event"], capture_output=True, text=True,
                              timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    counts = {}
    for line in text.splitlines():
        # "  1234 thread-name syscalls:sys_enter_fsync:" (the thread name may hold spaces)
        m = re.match(r"\s*(.*?)\s+(\d+)\s+(syscalls:\S+?):?\s*$", line) or re.match(r"\s*(\d+)\s+(.*?)\s+(syscalls:\S+?):?\s*$", line)
        if not m:
            continue
        a, b, event = m.groups()
        pid, comm = (int(b), a) if b.isdigit() and not a.isdigit() else (int(a), b)
        kind = "sfr" if event.startswith(SFR_EVENT) else "fsync"
        counts[(pid, kind)] = counts.get((pid, kind), 0) + 1
        counts[(pid, kind, re.sub(r"[-_ ]?\d+$", "", comm))] = counts.get((pid, kind, re.sub(r"[-_ ]?\d+$", "", comm)), 0) + 1
    return counts


def cmd_measure(a):
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    tmp = tempfile.mkdtemp(prefix="store-measure-")
    servers = [int(p) for p in a.server]
    pg = [a.pg_postmaster] + children(a.pg_postmaster) if a.pg_postmaster else []
    pg0 = pg_stats(a.psql)
    perf = start_perf(f"{tmp}/perf.data") if a.perf else None
    # PostgreSQL's CPU from its postmaster alone: proc_cpu_s adds every live descendant (the
    # backends) and the children it reaped; listing the backends too counted each twice.
    pg_root = [a.pg_postmaster] if a.pg_postmaster else []
    cpu0, srv0, pgc0, wall0 = read_cpu(), group_cpu(servers), group_cpu(pg_root), time.monotonic()
    procs = []
    for i, cmd in enumerate(a.wrk):
        f = open(f"{tmp}/wrk{i}.out", "w")
        procs.append((subprocess.Popen(shlex.split(cmd), stdout=f, stderr=subprocess.STDOUT), f))
    wrk_s, codes, deadline = 0.0, [], time.monotonic() + a.timeout
    sample_at, sample = (wall0 + a.sample_after) if a.psql and a.sample_after else None, None
    for p, f in procs:
        while True:
            if sample_at and time.monotonic() >= sample_at:
                sample, sample_at = pg_locks(a.psql), None
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.05)
        p.returncode = os.waitstatus_to_exitcode(status)
        wrk_s += ru.ru_utime + ru.ru_stime
        codes.append(p.returncode)
        f.close()
    wall = time.monotonic() - wall0
    cpu1 = read_cpu()
    pg1_pids = [a.pg_postmaster] + children(a.pg_postmaster) if a.pg_postmaster else []
    srv_s = group_delta(srv0, group_cpu(servers))
    pg_s = group_delta(pgc0, group_cpu(pg_root))
    fsyncs = stop_perf(perf, f"{tmp}/perf.data")
    fs_srv = sum(fsyncs.get((p, "fsync"), 0) for p in servers) if fsyncs is not None else None
    sfr_srv = sum(fsyncs.get((p, "sfr"), 0) for p in servers) if fsyncs is not None else None
    by_thread = {}
    for key, n in (fsyncs or {}).items():
        if len(key) == 3 and key[0] in servers:
            name = f"{'sync_file_range' if key[1] == 'sfr' else 'fsync'} by {key[2]}"
            by_thread[name] = by_thread.get(name, 0) + n
    pg_all = set(pg) | set(pg1_pids)
    fs_pg = sum(fsyncs.get((p, "fsync"), 0) for p in pg_all) if fsyncs is not None and pg else None
    if a.psql:
        time.sleep(2)  # idle backends report their statistics within about a second
    pg1 = pg_stats(a.psql)
    runs = []
    for i in range(len(a.wrk)):
        with open(f"{tmp}/wrk{i}.out") as f:
            text = f.read()
        runs.append(parse_wrk(text))
        if a.keep:
            with open(f"{a.keep}.wrk{i}.out", "w") as g:
                g.write(text)
    hz = os.sysconf("SC_CLK_TCK")
    d = {k: cpu1[k] - cpu0[k] for k in cpu0}
    busy_s = sum(v for k, v in d.items() if k not in ("idle", "iowait", "steal", "guest", "guest_nice")) / hz
    all_s = sum(v for k, v in d.items() if k not in ("guest", "guest_nice")) / hz
    requests = sum(r["requests"] or 0 for r in runs)
    res = {
        "label": a.label, "round": a.round, "kind": a.kind, "loadavg": load, "wall_s": round(wall, 2),
        "rps": round(sum(r["rps"] or 0 for r in runs), 1), "requests": requests,
        "p50_ms": [r["p50_ms"] for r in runs], "p99_ms": [r["p99_ms"] for r in runs],
        "non2xx": sum(r["non2xx"] for r in runs), "socket_errors": sum(r["socket_errors"] for r in runs),
        "wrk_exit": codes,
        "server_cores": round(srv_s / wall, 2), "pg_cores": round(pg_s / wall, 2) if pg else None,
        "wrk_cores": round(wrk_s / wall, 2),
        "other_cores": round((busy_s - srv_s - pg_s - wrk_s) / wall, 2),
        "iowait_pct": round(100.0 * d["iowait"] / hz / all_s, 1) if all_s else None,
        "steal_pct": round(100.0 * d["steal"] / hz / all_s, 1) if all_s else None,
        "fsync_server": fs_srv, "sfr_server": sfr_srv, "fsync_pg": fs_pg, "server_syncs_by_thread": by_thread,
    }
    if pg0 and pg1:
        res["pg"] = {k: pg1[k] - pg0[k] for k in pg0}
    if sample is not None:
        res["pg_locks"] = sample
    line = json.dumps(res)
    with open(a.raw, "a") as f:
        f.write(line + "\n")
    p50 = "/".join(str(v) for v in res["p50_ms"])
    p99 = "/".join(str(v) for v in res["p99_ms"])
    extra = ""
    if "pg" in res:
        extra = f" pg commits={res['pg']['xact_commit']} rollbacks={res['pg']['xact_rollback']} wal_sync={res['pg']['wal_sync']}"
    print(f"{a.label:<11} {a.kind:<4} round {a.round}: {res['rps']:>8.0f} req/s p50={p50}ms p99={p99}ms "
          f"non2xx={res['non2xx']} sockerr={res['socket_errors']} cores server/pg/wrk/other="
          f"{res['server_cores']}/{res['pg_cores']}/{res['wrk_cores']}/{res['other_cores']} "
          f"fsync srv/pg={fs_srv}/{fs_pg} sync_file_range srv={sfr_srv}{extra}", file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)


# ---------- report ----------

def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt_range(values, fmt="{:.0f}"):
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    m = fmt.format(statistics.median(values))
    return m if len(values) == 1 else f"{m} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def per_request(count, requests):
    if count is None or not requests:
        return None
    return count / requests


def metrics_summary(directory):
    """Per server (a NAME.metrics file from GET /metrics): answers of /tools/{slug} by status."""
    if not directory or not os.path.isdir(directory):
        return []
    out = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".metrics"):
            continue
        by_status = {}
        with open(os.path.join(directory, name)) as f:
            for line in f:
                if line.startswith("toolhost_http_requests_total{") and 'route="/tools/{slug}"' in line:
                    status = re.search(r'status="(\d+)"', line)
                    if status:
                        by_status[status.group(1)] = by_status.get(status.group(1), 0) + int(float(line.split()[-1]))
        text = ", ".join(f"{k}: {v}" for k, v in sorted(by_status.items())) or "no /tools answers in /metrics"
        out.append((name[: -len(".metrics")], text))
    return out


def cmd_report(a):
    rows = [json.loads(l) for l in open(a.raw) if l.strip()]
    meta = json.load(open(a.meta))
    labels = [p for p in meta["peers"] if any(r["label"] == p for r in rows)]
    rounds = max((r["round"] for r in rows), default=0)
    out = [BEGIN, "## Store: durability and PostgreSQL (issue 12)", ""]
    out += [
        "Paid (x402 v2, local facilitator, a fresh authorization per request) and free calls of the "
        "native receipt echo (`POST /tools/receipt-echo-paid`, `POST /tools/receipt-echo`: both sign "
        "and store a receipt; the paid one also verifies the payment, claims its nonce and records the "
        "sale) on four stores, all servers up at once, measured one peer at a time, interleaved:",
        "",
        "- **sled-before**: the embedded sled store before durability (" + meta["base_desc"] + "): "
        "writes are answered without waiting for sled's log write (its IO threads write the log "
        "buffers in the background; its own flusher fsyncs every 500 ms).",
        "- **sled**: the current build (" + meta["current_desc"] + "), embedded store: every write "
        "made durable by sled's `Db::flush()` before the answer, one flusher thread for all waiting "
        "writers (group commit).",
        "- **pg-1**: one node of the current build on a throwaway PostgreSQL " + meta.get("pg_version", "")
        + " (same machine, loopback, `fsync=on`, `synchronous_commit=on`, defaults otherwise).",
        "- **pg-2**: two nodes on that same database, the load split across both (one wrk per node, "
        "half the connections each, one thread each; req/s summed).",
    ] + ([
        "- **pg-3**: three nodes on that same database, the connections split in three (one wrk "
        "per node, one thread each; req/s summed).",
    ] if "pg-3" in labels else []) + ([
        "- **pg-base**: one node of the base build (" + meta["base_desc"] + ") on a database of its "
        "own in the same PostgreSQL cluster.",
    ] if "pg-base" in labels else []) + [
        "",
        "| | |",
        "|---|---|",
        f"| date | {meta['started']} – {meta['ended']} |",
        f"| machine | {meta['machine']} |",
        f"| disk | {meta['disk']} |",
        f"| load average | before: {meta['load_before']}; after: {meta['load_after']} (1, 5, 15 min) |",
        f"| fsync latency | {meta.get('fsync_test', 'not measured')} |",
        f"| load | wrk `-t{meta['threads']} -c{meta['connections']} -d{meta['duration']}s --latency` per "
        f"measurement ({meta['rounds']} round(s); each round measures every peer, free then paid, the peer "
        f"order rotated by one each round); pg-2: two wrk `-t1 -c{meta['connections'] // 2}` at once |",
        f"| payments | {meta['payments_per_run']} fresh authorizations signed per paid run and node (before "
        "the run, not timed) |",
        "",
        "### Throughput and latency",
        "",
        "Median over the rounds (min–max). p50/p99 from wrk (pg-2: the two nodes' figures, A/B, medians "
        "of each). Cores: CPU seconds per wall second (of 2) during the runs, of the loaded toolhost "
        "server(s), PostgreSQL (postmaster and all backends), wrk, and everything else on the machine "
        "(other work, kernel threads); iowait share of all CPU time.",
        "",
        "| peer | call | req/s | p50 ms | p99 ms | non-2xx / socket errors | toolhost cores | PostgreSQL cores | wrk cores | other cores | iowait % |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    summary = {}
    for kind in ("paid", "free"):
        for label in labels:
            rs = [r for r in rows if r["label"] == label and r["kind"] == kind]
            if not rs:
                continue
            n = len(rs[0]["p50_ms"])
            p50 = "/".join(f"{med([r['p50_ms'][i] for r in rs]):.2f}" for i in range(n))
            p99 = "/".join(f"{med([r['p99_ms'][i] for r in rs]):.2f}" for i in range(n))
            rps = [r["rps"] for r in rs]
            summary[(label, kind)] = med(rps)
            errs = f"{sum(r['non2xx'] for r in rs)} / {sum(r['socket_errors'] for r in rs)}"
            out.append(
                f"| {label} | {kind} | {fmt_range(rps)} | {p50} | {p99} | {errs} | "
                f"{fmt_range([r['server_cores'] for r in rs], '{:.2f}')} | "
                f"{fmt_range([r['pg_cores'] for r in rs], '{:.2f}')} | "
                f"{fmt_range([r['wrk_cores'] for r in rs], '{:.2f}')} | "
                f"{fmt_range([r['other_cores'] for r in rs], '{:.2f}')} | "
                f"{fmt_range([r['iowait_pct'] for r in rs], '{:.1f}')} |")
    out += ["", "Ratios (medians of the same run):", ""]
    for a_, b_ in (("sled", "sled-before"), ("pg-1", "sled"), ("pg-2", "pg-1"), ("pg-3", "pg-1"), ("pg-1", "sled-before"),
                   ("pg-1", "pg-base"), ("pg-base", "sled")):
        parts = []
        for kind in ("paid", "free"):
            x, y = summary.get((a_, kind)), summary.get((b_, kind))
            if x and y:
                parts.append(f"{kind} {x / y:.2f}×")
        if parts:
            out.append(f"- {a_} vs {b_}: " + ", ".join(parts))
    # fsyncs and PostgreSQL transactions per request
    out += ["", "### fsyncs and transactions per request", "",
            "fsync + fdatasync calls recorded with `perf record -a -e syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync` "
            "during the same runs and attributed by process (toolhost: the loaded server(s); PostgreSQL: the "
            "postmaster and all its children, i.e. backends, WAL writer, checkpointer), divided by the requests "
            "wrk completed; `sync_file_range` calls apart (sled's `Db::flush()` writes its log with `pwrite` + "
            "`sync_file_range(WAIT_BEFORE|WRITE|WAIT_AFTER)`; only sled's periodic flusher thread calls `fsync`); "
            "PostgreSQL's own counts from `pg_stat_database` (commits, rollbacks: a rolled-back transaction "
            "is a serialization conflict that toolhost retried, or a failed call) and `pg_stat_wal` "
            "(`wal_sync`: WAL flushes to disk) over the same runs. Medians over the rounds.", "",
            "| peer | call | requests per run | toolhost fsyncs / req | toolhost sync_file_range / req | PostgreSQL fsyncs / req | commits / req | rollbacks / req | WAL syncs / req | WAL bytes / req |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for kind in ("paid", "free"):
        for label in labels:
            rs = [r for r in rows if r["label"] == label and r["kind"] == kind]
            if not rs:
                continue

            def pr(get, fmt="{:.3f}"):
                vals = [per_request(get(r), r["requests"]) for r in rs]
                vals = [v for v in vals if v is not None]
                return fmt.format(med(vals)) if vals else "–"
            out.append(
                f"| {label} | {kind} | {med([r['requests'] for r in rs]):.0f} | "
                f"{pr(lambda r: r.get('fsync_server'))} | {pr(lambda r: r.get('sfr_server'))} | {pr(lambda r: r.get('fsync_pg'))} | "
                f"{pr(lambda r: r.get('pg', {}).get('xact_commit'), '{:.2f}')} | "
                f"{pr(lambda r: r.get('pg', {}).get('xact_rollback'), '{:.4f}')} | "
                f"{pr(lambda r: r.get('pg', {}).get('wal_sync'))} | "
                f"{pr(lambda r: r.get('pg', {}).get('wal_bytes'), '{:.0f}')} |")
    threads = [r for r in rows if r.get("server_syncs_by_thread")]
    if threads:
        out += ["", "The loaded toolhost server's sync calls by thread name (per request, median over the rounds; "
                "digits at the end of thread names dropped):", ""]
        for kind in ("paid", "free"):
            for label in labels:
                rs = [r for r in threads if r["label"] == label and r["kind"] == kind]
                names = sorted({n for r in rs for n in r["server_syncs_by_thread"]})
                if names:
                    cells = [f"{n} {med([r['server_syncs_by_thread'].get(n, 0) / r['requests'] for r in rs if r['requests']]):.3f}"
                             for n in names]
                    out.append(f"- {label} {kind}: " + "; ".join(cells))
    samples = [r for r in rows if r.get("pg_locks")]
    if samples:
        keys = sorted({k for r in samples for k in r["pg_locks"]})
        cols = [(l, k) for k in ("free", "paid") for l in labels if any(r["label"] == l and r["kind"] == k for r in samples)]
        out += ["", f"PostgreSQL halfway through each run (`pg_stat_activity` of the toolhost database by state and "
                "wait event; SSI predicate locks (`SIReadLock`) by granularity and relation; lock waits), median "
                "over the rounds:", "",
                "| | " + " | ".join(f"{l} {k}" for l, k in cols) + " |",
                "|---|" + "---:|" * len(cols)]
        for key in keys:
            cells = []
            for l, k in cols:
                vals = [r["pg_locks"].get(key, 0) for r in samples if r["label"] == l and r["kind"] == k]
                cells.append(f"{med(vals):.0f}" if vals else "–")
            out.append(f"| {key} | " + " | ".join(cells) + " |")
    metrics = metrics_summary(meta.get("metrics_dir"))
    if metrics:
        out += ["", "Answers by status at the end of the run (`toolhost_http_requests_total` of each server, "
                "route `/tools/{slug}`, warm-up included):", ""]
        for name, text in metrics:
            out.append(f"- {name}: {text}")
    out += ["", "### Commands", "", "```", *meta["commands"], "```", "",
            "<details><summary>Raw per-run values</summary>", "",
            "| round | peer | call | req/s | requests | p50 ms | p99 ms | non-2xx | toolhost / PG / wrk / other cores | fsyncs toolhost / PG; toolhost sync_file_range | PG commits / rollbacks / WAL syncs | load avg before |",
            "|---:|---|---|---:|---:|---|---|---:|---|---|---|---|"]
    for r in rows:
        pg = r.get("pg")
        pgs = f"{pg['xact_commit']} / {pg['xact_rollback']} / {pg['wal_sync']}" if pg else "–"
        out.append(
            f"| {r['round']} | {r['label']} | {r['kind']} | {r['rps']:.0f} | {r['requests']} | "
            f"{'/'.join(str(v) for v in r['p50_ms'])} | {'/'.join(str(v) for v in r['p99_ms'])} | {r['non2xx']} | "
            f"{r['server_cores']} / {r['pg_cores'] if r['pg_cores'] is not None else '–'} / {r['wrk_cores']} / {r['other_cores']} | "
            f"{r.get('fsync_server')} / {r.get('fsync_pg') if r.get('fsync_pg') is not None else '–'}; {r.get('sfr_server')} | {pgs} | {r['loadavg']} |")
    out += ["", "</details>", "", END, ""]
    text = "\n".join(out)
    if not a.out:
        sys.stdout.write(text)
        return
    try:
        with open(a.out) as f:
            old = f.read()
    except FileNotFoundError:
        old = ""
    found = re.search(re.escape(BEGIN) + r".*?" + re.escape(END) + r"\n?", old, re.S)
    if found:
        new = old[: found.start()] + text + old[found.end():]
    elif BEFORE in old:
        i = old.index(BEFORE)
        new = old[:i] + text + "\n" + old[i:]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    with open(a.out, "w") as f:
        f.write(new)
    print(f"wrote the store section of {a.out}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("measure")
    p.add_argument("--label", required=True); p.add_argument("--round", type=int, required=True)
    p.add_argument("--kind", required=True); p.add_argument("--raw", required=True)
    p.add_argument("--server", action="append", default=[]); p.add_argument("--wrk", action="append", required=True)
    p.add_argument("--pg-postmaster", type=int); p.add_argument("--psql")
    p.add_argument("--perf", action="store_true"); p.add_argument("--timeout", type=float, default=120)
    p.add_argument("--keep", help="path prefix for the raw wrk output")
    p.add_argument("--sample-after", type=float, help="seconds into the run to sample pg_stat_activity and pg_locks")
    p.set_defaults(fn=cmd_measure)
    p = sub.add_parser("report")
    p.add_argument("--raw", required=True); p.add_argument("--meta", required=True); p.add_argument("--out")
    p.set_defaults(fn=cmd_report)
    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
