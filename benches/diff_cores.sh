#!/usr/bin/env bash
# Issue 16 on a host with more cores than one read keeps busy: do the diff's two reads
# overlap, and if not, is it the process or the machine? (PERFORMANCE.md "# kernlens diff",
# "Session 6".) Each round runs, back to back, with wall, user and sys time:
#   summary       one read of BEFORE (the reader's pool: every core)
#   summary_half  one read with half the cores (RAYON_NUM_THREADS=N/2): what a side of the
#                 diff would lose with half the cores; also fewer region buffers (4 per thread)
#   two_procs     two `summary` processes at once, one per file: what the machine gives two
#                 independent reads (no shared process, pool, allocator or address space)
#   diff          `diff BEFORE AFTER` (two reads in one process, each a pool of every core)
#   diff_half     the same with each side's pool half the cores (RAYON_NUM_THREADS=N/2)
#   diff_one      the same with each read on one thread (RAYON_NUM_THREADS=1)
#   summary_one   one read on one thread
# Per-round ratios to that round's summary cancel the host's drift. Reading the result:
#   two_procs ~ diff, both well above summary: the machine (cores, SMT siblings, memory
#     bandwidth, a CPU quota) is what the two reads share; no change in the diff helps;
#   two_procs ~ summary, diff well above it: something in one process serialises them;
#   diff_half well below diff: two pools of every core oversubscribe the host (and
#     summary_half near summary says a read loses little with half the cores);
#   sys time: page faults on the region buffers (4 of 4.25 MiB per thread and read).
#   diff_one ~ summary_one: without pools the two reads overlap fully.
# Usage: benches/diff_cores.sh [ROUNDS] [BEFORE AFTER]   (9 rounds; /tmp/gm12.json and its
# byte copy /tmp/gm12b.json by default, made as benches/idle_pairs.sh makes them).
# $KERNLENS_BENCH_BIN (default .bench/) holds the release `kernlens` (and `scale`); with
# $KERNLENS_NEW_BIN set to another build's `kernlens`, its diff runs in each round too
# (`diff_new`), so a change is compared with the build before it on the same rounds.
set -u
cd "$(dirname "$0")/.."
B=${KERNLENS_BENCH_BIN:-$PWD/.bench}; chmod +x "$B"/* 2>/dev/null
BEFORE=${2:-/tmp/gm12.json}; AFTER=${3:-/tmp/gm12b.json}
if [ ! -e "$BEFORE" ]; then
  "$B"/scale fixtures/traces/graph_many.json.gz "$BEFORE" --copies 12 >/dev/null
fi
[ -e "$AFTER" ] || cp "$BEFORE" "$AFTER"
cat "$BEFORE" "$AFTER" >/dev/null
echo "host: $(nproc) cores online to this process; $(lscpu 2>/dev/null | grep -E '^(Thread|Socket|Model name)' | tr -s ' ' | paste -sd';')"
echo "cpu quota: $(cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo none)  kernel: $(uname -r)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$B/kernlens" "$BEFORE" "$AFTER" "${1:-9}" "${KERNLENS_NEW_BIN:-}" <<'PY'
import os, resource, statistics, subprocess, sys, time
k, before, after, rounds, new = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
n = len(os.sched_getaffinity(0))
summary = lambda f: [k, "summary", "--json", f]
diff = [k, "diff", before, after, "--json"]
runs = {
    "summary": [(summary(before), {})],
    "summary_half": [(summary(before), {"RAYON_NUM_THREADS": str(max(1, n // 2))})],
    "two_procs": [(summary(before), {}), (summary(after), {})],
    "diff": [(diff, {})],
    "diff_half": [(diff, {"RAYON_NUM_THREADS": str(max(1, n // 2))})],
    "diff_one": [(diff, {"RAYON_NUM_THREADS": "1"})],
    "summary_one": [(summary(before), {"RAYON_NUM_THREADS": "1"})],
}
if new:
    runs["diff_new"] = [([new, "diff", before, after, "--json"], {})]
def run(procs):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    s = time.perf_counter()
    ps = [subprocess.Popen(c, stdout=subprocess.DEVNULL, env={**os.environ, **e}) for c, e in procs]
    if any(p.wait() != 0 for p in ps):
        sys.exit("a run failed")
    wall = time.perf_counter() - s
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime
got = {name: [] for name in runs}
for _ in range(rounds):
    for name, procs in runs.items():
        got[name].append(run(procs))
med = lambda xs: statistics.median(xs)
print("%-12s %9s %9s %9s %9s %8s  %s" % ("run", "wall_best", "wall_med", "user_med", "sys_med", "cores", "per-round wall / summary (median, min-max)"))
for name, v in got.items():
    walls = [w for w, _, _ in v]
    cpu = [u + s for _, u, s in v]
    ratio = [w / got["summary"][i][0] for i, (w, _, _) in enumerate(v)]
    print("%-12s %9.3f %9.3f %9.3f %9.3f %8.2f  %.3f (%.3f-%.3f)" % (
        name, min(walls), med(walls), med([u for _, u, _ in v]), med([s for _, _, s in v]),
        med([c / w for c, w in zip(cpu, walls)]), med(ratio), min(ratio), max(ratio)))
PY
