#!/usr/bin/env bash
# Builds against each other (PERFORMANCE.md, session 10): per round, every build in
# $KERNLENS_BENCH_BIN (default .bench/) named on the command line runs summary (graph x12,
# eager x100) and triage (graph x12) in turn, pinned to two cores; ratios are to the first
# build, per round, so the host's drift between rounds cancels.
# Usage: benches/build_pairs.sh [ROUNDS] ["kernlens kernlens-base ..."]
set -u
cd "$(dirname "$0")/.."
B=${KERNLENS_BENCH_BIN:-$PWD/.bench}; export LD_LIBRARY_PATH=$B; chmod +x "$B"/* 2>/dev/null
[ -s /tmp/gm12.json ] || "$B"/scale fixtures/traces/graph_many.json.gz /tmp/gm12.json --copies 12 >/dev/null
[ -s /tmp/e100.json ] || "$B"/scale fixtures/traces/eager.json.gz /tmp/e100.json --copies 100 >/dev/null
cat /tmp/gm12.json /tmp/e100.json >/dev/null
python3 - "$B" "${1:-9}" "${2:-kernlens kernlens-base}" <<'PY'
import statistics, subprocess, sys, time
B, rounds, bins = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
cases = {"summary gm12": ["summary", "--json", "/tmp/gm12.json"],
         "summary e100": ["summary", "--json", "/tmp/e100.json"],
         "triage gm12": ["triage", "/tmp/gm12.json", "--root", "fixtures/src", "--json"]}
def t(c):
    s = time.perf_counter(); subprocess.run(["taskset", "-c", "0,1"] + c, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - s
for case, args in cases.items():
    w = {b: [] for b in bins}
    for _ in range(rounds):
        for b in bins: w[b].append(t([B + "/" + b] + args))
    print("==", case)
    for b in bins:
        r = sorted(x / y for x, y in zip(w[b], w[bins[0]]))
        print("  %-16s best %.3f median %.3f  / %s per-round median %.3f (%.3f-%.3f)" % (b, min(w[b]), statistics.median(w[b]), bins[0], statistics.median(r), r[0], r[-1]))
PY
