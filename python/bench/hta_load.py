"""kernlens.summary + kernels_df() vs HTA's trace load on the same trace: wall time and peak
RSS, each measured in a fresh child process (the load after imports, and with them) (a benchmark, not a test).

    python python/bench/hta_load.py TRACE.json.gz [--rounds N]

HTA (`pip install HolisticTraceAnalysis`) reads a directory of rank traces; the trace is
linked into a temporary directory for it. Without HTA installed, only kernlens is measured
and the script says so.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

KERNLENS = """
import json, resource, sys, time
t0 = time.perf_counter()
import kernlens, pandas
t = time.perf_counter()
s = kernlens.summary(sys.argv[1], top=0)
df = s.kernels_df()
end = time.perf_counter()
print(json.dumps({"wall_s": end - t0, "load_s": end - t, "rows": len(df), "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

HTA = """
import json, resource, sys, time
t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
t = time.perf_counter()
a = TraceAnalysis(trace_dir=sys.argv[1])
df = a.t.get_trace(next(iter(a.t.traces)))
end = time.perf_counter()
print(json.dumps({"wall_s": end - t0, "load_s": end - t, "rows": len(df), "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def child(code: str, arg: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, arg], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    trace = str(Path(a.trace).resolve())
    try:
        import hta  # noqa: F401
        have_hta = True
    except ImportError:
        have_hta = False
        print("HTA is not installed (pip install HolisticTraceAnalysis): measuring kernlens only")
    with tempfile.TemporaryDirectory() as d:
        name = "rank0.json.gz" if trace.endswith(".gz") else "rank0.json"
        os.symlink(trace, os.path.join(d, name))
        runs = {"kernlens": [], "hta": []}
        for _ in range(a.rounds):  # interleaved
            runs["kernlens"].append(child(KERNLENS, trace))
            if have_hta:
                try:
                    runs["hta"].append(child(HTA, d))
                except RuntimeError as e:
                    print(f"HTA failed on {trace}: {e}")
                    have_hta = False
    for tool, rs in runs.items():
        if not rs:
            continue
        wall = statistics.median(r["wall_s"] for r in rs)
        load = statistics.median(r["load_s"] for r in rs)
        rss = max(r["peak_rss_mb"] for r in rs)
        print(f"{tool:9s} load (after imports) median {load:8.3f} s best {min(r['load_s'] for r in rs):8.3f} s; "
              f"with imports median {wall:8.3f} s; peak RSS {rss:8.1f} MB; rows {rs[0]['rows']}")
    if runs["hta"]:
        for key in ("load_s", "wall_s"):
            k = statistics.median(r[key] for r in runs["kernlens"])
            h = statistics.median(r[key] for r in runs["hta"])
            print(f"HTA / kernlens {key}: {h / k:.1f}x")


if __name__ == "__main__":
    main()
