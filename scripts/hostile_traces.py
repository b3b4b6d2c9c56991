#!/usr/bin/env python3
"""Writes the hostile traces of docs/hardening.md ("Resource bounds") into a directory.

Usage: scripts/hostile_traces.py OUT_DIR [--bomb-gib N]

- long_string.json      one kernel whose name is a 200 MB string (over the 64 MiB event limit)
- tiny_events.json      10 million tiny kernel events (~600 MB)
- tiny_events.json.gz   the same, gzip
- nested_array.json     one event whose args hold arrays nested 200 000 deep
- nested_object.json    the same with objects ({"a":{"a":...}})
- nested_elements.json  200 000 nested arrays as a bare traceEvents element
- bomb.json.gz          a small .gz that expands to N GiB (default 8) of whitespace inside the
                        traceEvents array, then one kernel and the closing bracket
- event_bomb.json.gz    a small .gz of 50 million identical tiny kernel events (~2.6 GB expanded):
                        whitespace costs nothing, but every GPU event keeps a compact record

Streams everything: memory stays small whatever the sizes.
"""

import gzip
import sys
import zlib
from pathlib import Path

MIB = 1 << 20
DEPTH = 200_000
EVENTS = 10_000_000


def long_string(path: Path) -> None:
    with path.open("wb") as f:
        f.write(b'{"traceEvents":[{"ph":"X","cat":"kernel","name":"')
        chunk = b"a" * MIB
        for _ in range(200):
            f.write(chunk)
        f.write(b'","ts":1,"dur":1,"pid":0,"tid":7}]}')


def tiny_lines():
    yield b'{"traceEvents":[\n'
    batch = []
    for i in range(EVENTS):
        batch.append(b'{"ph":"X","cat":"kernel","name":"k%d","ts":%d,"dur":1,"pid":0,"tid":7},\n' % (i % 64, 2 * i))
        if len(batch) == 100_000:
            yield b"".join(batch)
            batch = []
    yield b"".join(batch)
    yield b'{"ph":"X","cat":"kernel","name":"last","ts":0,"dur":1,"pid":0,"tid":7}\n]}\n'


def tiny_events(path: Path, gz: Path) -> None:
    with path.open("wb") as f, gzip.open(gz, "wb", compresslevel=1) as g:
        for part in tiny_lines():
            f.write(part)
            g.write(part)


def nested(path: Path, open_: bytes, close: bytes, inside_event: bool) -> None:
    with path.open("wb") as f:
        if inside_event:
            f.write(b'{"traceEvents":[{"ph":"X","cat":"kernel","name":"deep","ts":1,"dur":1,"args":{"a":')
        else:
            f.write(b'{"traceEvents":[')
        f.write(open_ * DEPTH)
        f.write(b"1")
        f.write(close * DEPTH)
        if inside_event:
            f.write(b"}}")
        f.write(b',{"ph":"X","cat":"kernel","name":"after","ts":5,"dur":1}]}')


def bomb(path: Path, gib: int) -> None:
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip container
    with path.open("wb") as f:
        f.write(comp.compress(b'{"traceEvents":['))
        chunk = b" " * (16 * MIB)
        for _ in range(gib * 64):
            f.write(comp.compress(chunk))
        f.write(comp.compress(b'{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1}]}'))
        f.write(comp.flush())


def event_bomb(path: Path, events: int) -> None:
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    one = b'{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"pid":0,"tid":7},'
    block = one * 100_000
    with path.open("wb") as f:
        f.write(comp.compress(b'{"traceEvents":['))
        for _ in range(events // 100_000):
            f.write(comp.compress(block))
        f.write(comp.compress(b'{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1}]}'))
        f.write(comp.flush())


def main() -> None:
    out = Path(sys.argv[1])
    gib = int(sys.argv[sys.argv.index("--bomb-gib") + 1]) if "--bomb-gib" in sys.argv else 8
    out.mkdir(parents=True, exist_ok=True)
    long_string(out / "long_string.json")
    tiny_events(out / "tiny_events.json", out / "tiny_events.json.gz")
    nested(out / "nested_array.json", b"[", b"]", True)
    nested(out / "nested_object.json", b'{"a":', b"}", True)
    nested(out / "nested_elements.json", b"[", b"]", False)
    bomb(out / "bomb.json.gz", gib)
    event_bomb(out / "event_bomb.json.gz", 50_000_000)


if __name__ == "__main__":
    main()
