#!/usr/bin/env python3
"""Puts a file's cached pages into one of two states, so read timings compare like with like.

Why: how the page cache holds a file decides what mapping it costs. Read back by readahead
(or just written), a file sits in large folios and a map of it faults rarely: `rg -c` then
reads graph_many x12 (827 MB) at 12-14 GB/s on this project's machine. Faulted in a page at a
time, it sits in 4 KiB pages, a map of it faults every 64 KiB, and the same `rg` takes twice as
long (PERFORMANCE.md, "Session 14"). Which state a trace is in depends on how it got there,
so a ratio against `rg` means little unless the state is named.

Usage: benches/cache_state.py FILE small|large
  small: drop FILE's cached pages, then fault each page in through a map, readahead off;
  large: drop them, then read FILE start to end (readahead builds large folios).
"""
import mmap
import os
import sys


def main():
    path, state = sys.argv[1], sys.argv[2]
    if state not in ("small", "large"):
        sys.exit("usage: cache_state.py FILE small|large")
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        size = os.fstat(fd).st_size
        if state == "small":
            with mmap.mmap(fd, size, prot=mmap.PROT_READ) as m:
                m.madvise(mmap.MADV_RANDOM)
                for off in range(0, size, mmap.PAGESIZE):
                    m[off]
        else:
            while os.read(fd, 1 << 20):
                pass
    finally:
        os.close(fd)


if __name__ == "__main__":
    main()
