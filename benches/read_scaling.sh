#!/usr/bin/env bash
# How issue 20's plain-read ratios move with the cores a read may use (PERFORMANCE.md, "Run
# 10"): per round and per core count, `kernlens summary --json` of graph_many x12 and eager
# x100 against `rg -c '"kernel"'` on the same file, both pinned to the same cores with
# taskset (kernlens sizes its worker pool from the affinity mask; rg reads one file on one
# thread whatever it is given). Ratios are taken per round, so drift between rounds cancels.
# $KERNLENS_BENCH_BIN (default .bench/) holds stripped release builds as for read_pairs.sh.
# Usage: benches/read_scaling.sh [ROUNDS] [CORE COUNTS...]   (7 rounds; 1 2 4 8 by default)
set -u
cd "$(dirname "$0")/.."
B=${KERNLENS_BENCH_BIN:-$PWD/.bench}; export LD_LIBRARY_PATH=$B; chmod +x "$B"/* 2>/dev/null
[ -s /tmp/gm12.json ] || "$B/scale" fixtures/traces/graph_many.json.gz /tmp/gm12.json --copies 12 >/dev/null
[ -s /tmp/e100.json ] || "$B/scale" fixtures/traces/eager.json.gz /tmp/e100.json --copies 100 >/dev/null
cat /tmp/gm12.json /tmp/e100.json > /dev/null
rounds=${1:-7}; shift || true
python3 - "$B" "$rounds" "${@:-1 2 4 8}" <<'PY'
import os, statistics, subprocess, sys, time
B, rounds = sys.argv[1], int(sys.argv[2])
counts = [int(c) for arg in sys.argv[3:] for c in arg.split()]
have = os.cpu_count() or 1
print("host: %d cores" % have)
def t(cores, c):
    s = time.perf_counter()
    subprocess.run(["taskset", "-c", "0-%d" % (cores - 1)] + c, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - s
for name, f in [("graph plain", "/tmp/gm12.json"), ("eager plain", "/tmp/e100.json")]:
    size = os.path.getsize(f)
    print("== %s (%s, %.0f MB)" % (name, f, size / 1e6))
    for cores in [c for c in counts if c <= have]:
        kl, rg = [], []
        for _ in range(rounds):
            rg.append(t(cores, [B + "/rg", "-c", '"kernel"', f]))
            kl.append(t(cores, [B + "/kernlens", "summary", "--json", f]))
        r = sorted(a / b for a, b in zip(kl, rg))
        print("  %2d cores: kernlens best %.3f median %.3f s (%.2f GB/s best, %.2f median); "
              "rg best %.3f s; kernlens/rg per-round median %.2f (min %.2f, max %.2f)" % (
                  cores, min(kl), statistics.median(kl), size / min(kl) / 1e9,
                  size / statistics.median(kl) / 1e9, min(rg), statistics.median(r), r[0], r[-1]))
PY
