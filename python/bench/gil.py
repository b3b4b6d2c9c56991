"""Does a read release the GIL? Two traces read by two Python threads at once vs one after
the other, interleaved best-of-N; prints the ratio (a benchmark, not a test).

    python python/bench/gil.py [TRACE_A [TRACE_B]] [--rounds N] [--threads T]

Each read is single-threaded inside (`threads=1`), so the only parallelism is the two Python
threads: with the GIL held during reads the ratio would be about 1.0, with it released about
0.5 on a host with two idle cores.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from pathlib import Path

import kernlens

REPO = Path(__file__).resolve().parents[2]


def read(path: str, threads: int) -> None:
    kernlens.summary(path, threads=threads)


def sequential(paths, threads):
    t = time.perf_counter()
    for p in paths:
        read(p, threads)
    return time.perf_counter() - t


def parallel(paths, threads):
    workers = [threading.Thread(target=read, args=(p, threads)) for p in paths]
    t = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("traces", nargs="*", default=[str(REPO / "fixtures/traces/train.json.gz")] * 2)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1, help="parse threads inside each read")
    a = ap.parse_args()
    paths = (a.traces * 2)[:2]
    read(paths[0], a.threads)  # warm the page cache
    seq, par = [], []
    for _ in range(a.rounds):  # interleaved, so drift on a shared host hits both alike
        seq.append(sequential(paths, a.threads))
        par.append(parallel(paths, a.threads))
    print(f"traces: {paths}")
    print(f"sequential: best {min(seq)*1e3:.1f} ms, median {statistics.median(seq)*1e3:.1f} ms")
    print(f"two threads: best {min(par)*1e3:.1f} ms, median {statistics.median(par)*1e3:.1f} ms")
    print(f"ratio two threads / sequential: best {min(par)/min(seq):.2f}, "
          f"median {statistics.median(par)/statistics.median(seq):.2f} (1.0 = no overlap, 0.5 = perfect)")


if __name__ == "__main__":
    main()
