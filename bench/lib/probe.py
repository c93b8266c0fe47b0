"""A latency probe: sequential POSTs over one keep-alive connection for a while, beside a load.

Usage: probe.py URL BODY_FILE SECONDS OUT_JSON

Every call has a 15 s socket timeout, so a call that never gets its answer is counted (and
the connection reopened) instead of hanging the probe. Writes one JSON object: how many calls,
their latency percentiles, every call slower than 50 ms with the wall-clock time it started
(to line up with the server's log), timeouts and other errors.
"""

import http.client
import json
import sys
import time
from urllib.parse import urlparse

SLOW_MS = 50
TIMEOUT_S = 15


def main():
    url, body_file, seconds, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
    target = urlparse(url)
    with open(body_file, "rb") as f:
        body = f.read()
    headers = {"content-type": "application/json"}
    conn = None
    latencies, slow, errors = [], [], []
    timeouts = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if conn is None:
            conn = http.client.HTTPConnection(target.hostname, target.port, timeout=TIMEOUT_S)
        started_wall = time.time()
        started = time.monotonic()
        try:
            conn.request("POST", target.path, body, headers)
            response = conn.getresponse()
            data = response.read()
            status = response.status
        except TimeoutError:
            timeouts += 1
            errors.append({"at": started_wall, "error": "no answer within %d s" % TIMEOUT_S})
            conn.close()
            conn = None
            continue
        except (OSError, http.client.HTTPException) as e:
            errors.append({"at": started_wall, "error": repr(e)})
            conn.close()
            conn = None
            time.sleep(0.01)
            continue
        ms = (time.monotonic() - started) * 1000
        latencies.append(ms)
        if status != 200:
            errors.append({"at": started_wall, "error": "status %d: %r" % (status, data[:200])})
        if ms >= SLOW_MS:
            slow.append({"at": started_wall, "ms": round(ms, 1), "status": status})
    latencies.sort()

    def pct(p):
        if not latencies:
            return None
        return round(latencies[min(len(latencies) - 1, int(len(latencies) * p))], 2)

    report = {
        "calls": len(latencies),
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "p999_ms": pct(0.999),
        "max_ms": round(latencies[-1], 1) if latencies else None,
        "slow": slow,
        "timeouts": timeouts,
        "errors": errors[:20],
        "error_count": len(errors),
    }
    with open(out, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main()
