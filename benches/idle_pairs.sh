#!/usr/bin/env bash
# Idle-host check of the speed goals of issues 16, 17 and 20 (PERFORMANCE.md "Run 3").
# Back-to-back pairs on two pinned cores: each round runs summary, report, triage, diff,
# split and the gz reads in a row, and the ratio of each to that round's summary (or
# libdeflate) is taken per round, so the host's drift between rounds cancels.
set -u
# $KERNLENS_BENCH_BIN (default .bench/) holds stripped release builds: kernlens, kernlens-isal
# (built with --features isal), scale, and libdeflate-gunzip (with libdeflate.so.0 beside it).
# Usage: benches/idle_pairs.sh [ROUNDS]   (15 rounds by default)
cd "$(dirname "$0")/.."
B=${KERNLENS_BENCH_BIN:-$PWD/.bench}; export LD_LIBRARY_PATH=$B; chmod +x $B/* 2>/dev/null
# Inputs are made once; a fresh copy's writeback would otherwise run under the first rounds.
[ -s /tmp/gm12.json ] || $B/scale fixtures/traces/graph_many.json.gz /tmp/gm12.json --copies 12 >/dev/null
[ -s /tmp/gm12b.json ] || cp /tmp/gm12.json /tmp/gm12b.json
[ -s /tmp/gm12.json.gz ] || gzip -k -6 -f /tmp/gm12.json
sync
W=$($B/kernlens summary --json /tmp/gm12.json | python3 -c 'import json,sys; a=json.load(sys.stdin); s=a["trace_start_us"]; d=a["timeline"]["total_us"]; print("%.3f:%.3f" % (s+.45*d, s+.55*d))')
cat /tmp/gm12.json /tmp/gm12b.json /tmp/gm12.json.gz > /dev/null
python3 - "$B" "$W" "${1:-15}" <<'PY'
import statistics, subprocess, sys, time
B, W = sys.argv[1], sys.argv[2]
k = B + "/kernlens"
cmds = {
  "summary": [k, "summary", "--json", "/tmp/gm12.json"],
  "report": [k, "report", "/tmp/gm12.json", "-o", "/tmp/gm12.html"],
  "triage": [k, "triage", "/tmp/gm12.json", "--root", "fixtures/src", "--json"],
  "diff": [k, "diff", "/tmp/gm12.json", "/tmp/gm12b.json", "--json"],
  "split": [k, "split", "/tmp/gm12.json", "--window", W, "-o", "/tmp/tenth.json"],
  "libdeflate": [B + "/libdeflate-gunzip", "-c", "/tmp/gm12.json.gz"],
  "gz": [k, "summary", "--json", "/tmp/gm12.json.gz"],
  "gz_isal": [B + "/kernlens-isal", "summary", "--json", "/tmp/gm12.json.gz"],
}
def t(c):
    s = time.perf_counter(); subprocess.run(["taskset", "-c", "0,1"] + c, stdout=subprocess.DEVNULL, check=True); return time.perf_counter() - s
ratios = {n: [] for n in ["report", "triage", "diff", "split", "gz", "gz_isal"]}
walls = {n: [] for n in cmds}
for r in range(int(sys.argv[3]) if len(sys.argv) > 3 else 15):
    w = {n: t(c) for n, c in cmds.items()}
    for n, v in w.items(): walls[n].append(v)
    for n in ["report", "triage", "diff", "split"]: ratios[n].append(w[n] / w["summary"])
    for n in ["gz", "gz_isal"]: ratios[n].append(w[n] / w["libdeflate"])
for n, v in walls.items(): print("%-10s wall best %.3f median %.3f s" % (n, min(v), statistics.median(v)))
for n, v in ratios.items():
    base = "libdeflate" if n.startswith("gz") else "summary"
    print("%-8s / %-10s per-round ratio: median %.3f  quartiles %.3f-%.3f  min %.3f  max %.3f" % (
        n, base, statistics.median(v), *statistics.quantiles(v, n=4)[::2], min(v), max(v)))
PY
