#!/usr/bin/env python3
"""Helper of bench/micro.sh (standard library only).

  cpu                               print the aggregate /proc/stat CPU counters as JSON
  report --criterion DIR --since T --meta FILE [--out RESULTS.md]
                                    summarize the criterion estimates written since unix time T;
                                    with --out, write them as the "Micro-benchmarks (criterion)"
                                    section of RESULTS.md (replacing the previous one)
"""

import argparse
import json
import os
import re
import sys

BEGIN = "<!-- micro-benchmarks: written by bench/micro.sh (RECORD=1); bench/run.sh keeps it -->"
END = "<!-- /micro-benchmarks -->"

# What each benchmark measures, in the order of the report.
DESCRIPTIONS = [
    ("isolate_creation/cold_start_spare_ready",
     "first `Pool::invoke` of a new endpoint while a spare runtime is ready: bind (op state, env, "
     "glue setup), module load and evaluation, first call of a trivial handler"),
    ("isolate_creation/cold_start_no_spare",
     "the same with `spare_isolates: 0`: also spawns the isolate thread and restores a fresh runtime "
     "from the startup snapshot"),
    ("warm_call/trivial_handler",
     "`Pool::invoke` of a trivial handler on its live isolate, one call at a time: dispatch to the "
     "isolate thread, request JSON in, call, result JSON out, reply; each call wakes the parked "
     "isolate thread and then the caller, which on this VM costs more when the machine is idle"),
    ("warm_call/trivial_handler_64_in_flight",
     "the same with 64 calls in flight at once (the per-endpoint admission bound), per call: the "
     "isolate thread goes from one queued call to the next without parking, as on a loaded server"),
    ("ctx_op/kv_get",
     "one `await ctx.kv.get(key)` against an in-memory host, per op (a handler loops over 1,000 "
     "gets per invocation; the invocation's own cost adds ~1/1000 of a warm call)"),
    ("ctx_op/await_baseline",
     "the same loop awaiting `Promise.resolve(i)` instead of the op: the JS side of the loop"),
    ("eip712_verify/verify_exact",
     "`verify_exact` on a real EIP-3009 authorization signed with alloy-signer-local: EIP-712 "
     "hash, secp256k1 signer recovery, payee, value and validity window"),
    ("eip712_verify/decode_and_verify",
     "the same plus decoding the payment header (base64, JSON), as a paid request does"),
    ("receipt/sign",
     "Ed25519 signature of a paid receipt: canonical JSON, sign, base64"),
    ("receipt/verify",
     "checking that receipt offline: canonical JSON, base64 decode, Ed25519 verify"),
    ("catalog_listing/all/",
     "the body of `GET /ai/endpoints` (`catalog::routes::listing`) with no filter: every listed "
     "endpoint's public record in the catalog envelope, as a JSON value; the number is the "
     "catalog size (8 = the seeded catalog)"),
    ("catalog_listing/search/",
     "the same with `q=receipt` (case-insensitive text search; a quarter of the records match)"),
    ("catalog_listing/all_serialized/",
     "unfiltered listing plus `serde_json::to_vec` of the body, as the HTTP response does"),
]

CPU_FIELDS = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice"]


def cmd_cpu(_a):
    with open("/proc/stat") as f:
        parts = f.readline().split()
    print(json.dumps(dict(zip(CPU_FIELDS, map(int, parts[1:])))))


def cpu_shares(before, after):
    d = {k: after[k] - before[k] for k in before}
    total = sum(v for k, v in d.items() if k not in ("guest", "guest_nice"))
    if not total:
        return None, None
    return 100.0 * d["steal"] / total, 100.0 * (d["idle"] + d["iowait"]) / total


def fmt_ns(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}" if ns / scale < 100 else f"{ns / scale:.0f} {unit}"
    return f"{ns:.3g} ns"


def sort_key(bench_id):
    for index, (prefix, _) in enumerate(DESCRIPTIONS):
        if bench_id == prefix or (prefix.endswith("/") and bench_id.startswith(prefix)):
            tail = bench_id[len(prefix):]
            return (index, int(tail) if tail.isdigit() else 0, bench_id)
    return (len(DESCRIPTIONS), 0, bench_id)


def collect(criterion_dir, since):
    """(id, estimates, samples) of every benchmark whose `new/estimates.json` is newer than since."""
    found = []
    for root, _dirs, files in os.walk(criterion_dir):
        if os.path.basename(root) != "new" or "estimates.json" not in files:
            continue
        path = os.path.join(root, "estimates.json")
        if os.path.getmtime(path) < since:
            continue
        with open(os.path.join(root, "benchmark.json")) as f:
            bench = json.load(f)
        with open(path) as f:
            est = json.load(f)
        with open(os.path.join(root, "sample.json")) as f:
            sample = json.load(f)
        found.append((bench["title"], est, sample))
    found.sort(key=lambda t: sort_key(t[0]))
    return found


def typical(est):
    """Criterion's headline figure: the slope for linear sampling, else the mean."""
    return est["slope"] if est.get("slope") else est["mean"]


def table(found):
    lines = ["| benchmark | estimate [95% CI] | mean | median | std dev | MAD | sampling |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for bench_id, est, sample in found:
        head = typical(est)
        ci = head["confidence_interval"]
        iters = sample["iters"]
        if sample.get("sampling_mode") == "Flat" or len(set(iters)) == 1:
            how = f"flat: {len(iters)} samples × {int(iters[0])}"
        else:
            how = f"linear: {len(iters)} samples, {int(min(iters))}–{int(max(iters))} iterations"
        lines.append("| `{}` | **{}** [{} – {}] | {} | {} | {} | {} | {} |".format(
            bench_id, fmt_ns(head["point_estimate"]), fmt_ns(ci["lower_bound"]), fmt_ns(ci["upper_bound"]),
            fmt_ns(est["mean"]["point_estimate"]), fmt_ns(est["median"]["point_estimate"]),
            fmt_ns(est["std_dev"]["point_estimate"]), fmt_ns(est["median_abs_dev"]["point_estimate"]), how))
    return lines


TABLE_NOTE = ("Estimate: criterion's headline figure (the one it prints as `time:`): with linear sampling "
              "(sample k runs k·d iterations) the slope of sample time over iterations, with flat sampling "
              "(every sample runs the same iterations: the cold starts, where each iteration is a new endpoint, "
              "and benchmarks too slow for linear sampling) the mean. Mean, median, std dev and MAD are "
              "over the per-sample averages (sample time / its iterations); when the mean sits well above "
              "the slope, short samples were slower (e.g. threads waking from idle).")


def derived(found):
    """Figures computed from two benchmarks of the same run."""
    head = {b: typical(e)["point_estimate"] for b, e, _ in found}
    out = []
    if "ctx_op/kv_get" in head and "ctx_op/await_baseline" in head:
        out.append("- `ctx.kv.get` op alone (`ctx_op/kv_get` − `ctx_op/await_baseline`): "
                   + fmt_ns(head["ctx_op/kv_get"] - head["ctx_op/await_baseline"]))
    spare, no_spare = (head.get("isolate_creation/cold_start_spare_ready"),
                       head.get("isolate_creation/cold_start_no_spare"))
    if spare and no_spare:
        out.append("- what a ready spare saves a cold start (thread spawn + a runtime restored from the "
                   f"startup snapshot): {fmt_ns(no_spare - spare)}")
    for size in sorted({b.rsplit("/", 1)[1] for b in head if b.startswith("catalog_listing/all/")},
                       key=lambda s: int(s) if s.isdigit() else 0):
        if size.isdigit() and int(size) > 0:
            out.append(f"- catalog listing per endpoint at {size} endpoints (`catalog_listing/all/{size}` / {size}): "
                       + fmt_ns(head[f"catalog_listing/all/{size}"] / int(size)))
    return out


def describe(found):
    ids = [b for b, _, _ in found]
    out = []
    for prefix, text in DESCRIPTIONS:
        if any(b == prefix or (prefix.endswith("/") and b.startswith(prefix)) for b in ids):
            shown = prefix + "N" if prefix.endswith("/") else prefix
            out.append(f"- `{shown}`: {text}.")
    return out


def section(found, meta):
    steal, idle = cpu_shares(meta["cpu_before"], meta["cpu_after"])
    facts = [
        ("date", f"{meta['started']} – {meta['finished']}"),
        ("machine", meta["machine"]),
        ("load average", f"before: {meta['load_before']}; after: {meta['load_after']} (1, 5, 15 min)"),
        ("CPU during the run", "n/a" if steal is None else f"{steal:.1f}% steal, {idle:.1f}% idle (/proc/stat, whole machine)"),
        ("rustc", meta["rustc"]),
        ("commit", meta["commit"]),
        ("mode", meta["mode"]),
    ]
    out = [BEGIN, "## Micro-benchmarks (criterion)", ""]
    if meta["quick"]:
        out += ["> **QUICK RUN** (short warm-up and measurement): checks the benchmarks; the figures are rough.", ""]
    out += ["In-process criterion benchmarks of single steps (no HTTP, no load generator): "
            "`bench/criterion/sandbox.rs` and `bench/criterion/server.rs`. Times are per iteration. The machine is "
            "shared and noisy: read the estimates, the spread and the load average together, and compare "
            "figures only within one run.", ""]
    out += ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in facts] + [""]
    out += table(found) + ["", TABLE_NOTE, ""]
    extra = derived(found)
    if extra:
        out += ["Derived (same run):", ""] + extra + [""]
    out += ["What each benchmark measures:", ""] + describe(found) + [""]
    out += ["Command (`bench/micro.sh` builds the benchmarks with `--no-run` first, then runs this):", "",
            "```", f"{meta['invocation']}", f"# runs: {meta['command']}", "```", "",
            "Raw results: `$CARGO_TARGET_DIR/criterion/<group>/<benchmark>/new/estimates.json` "
            "(and `sample.json`); criterion's HTML report `criterion/report/index.html` beside them "
            "when gnuplot is installed.", "", END]
    return "\n".join(out) + "\n"


def write_section(path, text):
    old = ""
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END) + r"\n?", re.S)
    if pattern.search(old):
        new = pattern.sub(lambda _m: text, old, count=1)
    else:
        new = old.rstrip("\n") + "\n\n" + text if old else text
    with open(path, "w") as f:
        f.write(new)


def cmd_report(a):
    with open(a.meta) as f:
        meta = json.load(f)
    found = collect(a.criterion, a.since)
    if not found:
        sys.exit("micro.py: no criterion results written by this run")
    print("\n".join(table(found)))
    extra = derived(found)
    if extra:
        print("\n" + "\n".join(extra))
    if a.out:
        write_section(a.out, section(found, meta))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd_name", required=True)
    p = sub.add_parser("cpu")
    p.set_defaults(fn=cmd_cpu)
    p = sub.add_parser("report")
    p.add_argument("--criterion", required=True)
    p.add_argument("--since", type=float, required=True)
    p.add_argument("--meta", required=True)
    p.add_argument("--out")
    p.set_defaults(fn=cmd_report)
    a = ap.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
