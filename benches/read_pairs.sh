#!/usr/bin/env bash
# Issue 20's read-speed goals on an idle host (PERFORMANCE.md, "Run 6"): per round, on two
# pinned cores, the plain reads of graph_many x12 and eager x100 against `rg -c '"kernel"'`
# on the same file, and their `.json.gz` reads against `libdeflate-gunzip -c`, each by this
# build (`new`), the build before it (`base`, when present) and the ISA-L build (`isal`,
# when present). Ratios are taken per round, so the host's drift between rounds cancels.
# $KERNLENS_BENCH_BIN (default .bench/) holds stripped release builds: kernlens, and
# optionally kernlens-base and kernlens-isal; scale; rg and libdeflate-gunzip (with any
# shared library they need beside them).
# Usage: [KERNLENS_CACHE_STATE=small|large] benches/read_pairs.sh [ROUNDS]   (15 rounds by default)
set -u
cd "$(dirname "$0")/.."
B=${KERNLENS_BENCH_BIN:-$PWD/.bench}; export LD_LIBRARY_PATH=$B; chmod +x "$B"/* 2>/dev/null
[ -s /tmp/gm12.json ] || "$B/scale" fixtures/traces/graph_many.json.gz /tmp/gm12.json --copies 12 >/dev/null
[ -s /tmp/e100.json ] || "$B/scale" fixtures/traces/eager.json.gz /tmp/e100.json --copies 100 >/dev/null
[ -s /tmp/gm12.json.gz ] || gzip -k -6 -f /tmp/gm12.json
[ -s /tmp/e100.json.gz ] || gzip -k -6 -f /tmp/e100.json
cat /tmp/gm12.json /tmp/e100.json /tmp/gm12.json.gz /tmp/e100.json.gz > /dev/null
# KERNLENS_CACHE_STATE=small|large puts the plain inputs' cached pages in that state first
# (benches/cache_state.py says why rg's time depends on it).
if [ -n "${KERNLENS_CACHE_STATE:-}" ]; then
  for f in /tmp/gm12.json /tmp/e100.json; do python3 benches/cache_state.py "$f" "$KERNLENS_CACHE_STATE"; done
fi
python3 - "$B" "${1:-15}" <<'PY'
import os, statistics, subprocess, sys, time
B, rounds = sys.argv[1], int(sys.argv[2])
builds = [n for n in ["new", "base", "isal"]
          if os.path.exists(B + "/kernlens" + {"new": "", "base": "-base", "isal": "-isal"}[n])]
def kl(n): return B + "/kernlens" + {"new": "", "base": "-base", "isal": "-isal"}[n]
cases = {
  "graph plain": ("/tmp/gm12.json", [B + "/rg", "-c", '"kernel"', "/tmp/gm12.json"], "rg"),
  "eager plain": ("/tmp/e100.json", [B + "/rg", "-c", '"kernel"', "/tmp/e100.json"], "rg"),
  "graph gz": ("/tmp/gm12.json.gz", [B + "/libdeflate-gunzip", "-c", "/tmp/gm12.json.gz"], "libdeflate"),
  "eager gz": ("/tmp/e100.json.gz", [B + "/libdeflate-gunzip", "-c", "/tmp/e100.json.gz"], "libdeflate"),
}
def t(c):
    s = time.perf_counter()
    subprocess.run(["taskset", "-c", "0,1"] + c, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - s
for case, (f, anchor, aname) in cases.items():
    walls = {n: [] for n in builds + [aname]}
    for _ in range(rounds):
        walls[aname].append(t(anchor))
        for n in builds:
            walls[n].append(t([kl(n), "summary", "--json", f]))
    size = os.path.getsize(f.removesuffix(".gz"))
    print("== %s (%s, %.0f MB decoded)" % (case, f, size / 1e6))
    for n, v in walls.items():
        print("  %-10s wall best %.3f median %.3f s  (%.2f GB/s best)" % (n, min(v), statistics.median(v), size / min(v) / 1e9))
    for n in builds:
        pairs = [(aname, walls[aname])] + ([("base", walls["base"])] if n != "base" and "base" in walls else [])
        for other, ov in pairs:
            r = [a / b for a, b in zip(walls[n], ov)]
            q = statistics.quantiles(r, n=4)
            print("  %-5s / %-10s per-round median %.3f (quartiles %.3f-%.3f, min %.3f, max %.3f)" % (
                n, other, statistics.median(r), q[0], q[2], min(r), max(r)))
PY
