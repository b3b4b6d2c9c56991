#!/usr/bin/env python3
"""Time `kernlens summary` against the anchors of issue 3, in the same run, same file.

  (a) a Python + orjson script computing the same figures (busy/idle union, top
      kernels, graph coverage): plain traces;
  (b) `gzip -dc > /dev/null`: .json.gz traces (kernlens should be decompression-bound).

Prints wall seconds (best of --repeat), MB/s over the uncompressed size, peak RSS of
kernlens, and the ratios. Usage:
  python3 benches/compare.py TRACE.json [TRACE.json.gz ...] [--repeat 3] [--bin target/release/kernlens]
Needs `pip install orjson` for (a). This machine is shared and noisy: compare ratios
from one run, not absolute numbers across runs.
"""
import argparse
import gzip
import os
import subprocess
import sys
import time

PY_SUMMARY = r'''
import sys, orjson, gzip
from collections import defaultdict
raw = open(sys.argv[1], "rb").read()
if raw[:2] == b"\x1f\x8b":
    raw = gzip.decompress(raw)
events = orjson.loads(raw)["traceEvents"]
del raw
corr_ext, ext_op, graph = {}, {}, set()
kern, busy = [], []
for e in events:
    cat = e.get("cat")
    a = e.get("args") or {}
    if cat in ("cuda_runtime", "cuda_driver"):
        c = a.get("correlation")
        if "GraphLaunch" in e.get("name", "") and cat == "cuda_runtime":
            graph.add(c)
    elif cat in ("kernel", "gpu_memcpy", "gpu_memset") and e.get("ph") == "X":
        ts = round(e.get("ts", 0) * 1000); d = max(0, round(e.get("dur", 0) * 1000))
        busy.append((ts, ts + d))
        if cat == "kernel":
            kern.append((e.get("name", ""), d, a.get("correlation")))
busy.sort()
tot, cs, ce = 0, None, None
for s, t in busy:
    if cs is None or s > ce:
        if cs is not None: tot += ce - cs
        cs, ce = s, t
    else:
        ce = max(ce, t)
if cs is not None: tot += ce - cs
span = (max(t for _, t in busy) - min(s for s, _ in busy)) if busy else 0
by = defaultdict(int)
with_k = set()
for n, d, c in kern:
    by[n] += d
    if c in graph: with_k.add(c)
top = sorted(by.items(), key=lambda kv: -kv[1])[:10]
print(orjson.dumps({"busy_ns": tot, "total_ns": span, "top": top[:1], "launches": len(graph), "with_kernels": len(with_k)}).decode())
'''


def best(cmd, repeat, stdout=subprocess.DEVNULL):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=stdout)
        times.append(time.perf_counter() - t)
    return min(times)


def peak_rss_mb(cmd):
    """Peak RSS of one run, read by GNU time (ru_maxrss of children would mix processes)."""
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, check=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return int(out.stderr.strip().splitlines()[-1]) / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bin", default="target/release/kernlens")
    ap.add_argument("--no-python", action="store_true")
    args = ap.parse_args()
    for path in args.traces:
        is_gz = open(path, "rb").read(2) == b"\x1f\x8b"
        if is_gz:
            with gzip.open(path, "rb") as f:
                size = sum(len(b) for b in iter(lambda: f.read(1 << 24), b""))
        else:
            size = os.path.getsize(path)
        if not is_gz:  # warm the page cache
            subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)
        kl = [args.bin, "summary", path, "--json"]
        t_kl = best(kl, args.repeat)
        print(f"{os.path.basename(path)}: {size / 1e6:.0f} MB uncompressed")
        print(f"  kernlens summary      {t_kl:8.3f} s  {size / t_kl / 1e9:6.2f} GB/s")
        if is_gz:
            t_gz = best(["sh", "-c", f"gzip -dc '{path}' > /dev/null"], args.repeat)
            print(f"  gzip -dc > /dev/null  {t_gz:8.3f} s   ratio kernlens/gzip = {t_kl / t_gz:.2f}")
        elif not args.no_python:
            t_py = best([sys.executable, "-c", PY_SUMMARY, path], 1)
            print(f"  python + orjson       {t_py:8.3f} s   speed-up = {t_py / t_kl:.1f}x")
        print(f"  kernlens peak RSS     {peak_rss_mb(kl):8.1f} MB (mapped file pages count in RSS)")


if __name__ == "__main__":
    main()
