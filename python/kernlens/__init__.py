"""kernlens: GPU-kernel triage over PyTorch-profiler (Kineto) traces, from Python.

Every function here calls the Rust library entry point the matching ``kernlens`` CLI command
calls, and returns that command's versioned JSON document wrapped for attribute access:

>>> import kernlens
>>> s = kernlens.summary("fixtures/traces/eager.json.gz")
>>> s.timeline.busy_pct          # the same float as `kernlens summary --json`
25.783225333895786
>>> s.to_dict()["schema"]
'kernlens.summary/1'

Reads release the GIL, so threads (and Dask workers) read traces in parallel. Errors are
:class:`TraceError`, :class:`LocateError`, :class:`ScratchError` and :class:`UsageError`
(all :class:`KernlensError`), with the CLI's one-line messages. Tables come as pandas
DataFrames when pandas is installed (``Summary.kernels_df()``), pyarrow-backed when pyarrow
is. ``kernlens.dask`` spreads the per-rank reads of a job over a ``dask.distributed`` cluster.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from . import _native
from ._document import Document
from ._schema import RanksFields, SummaryFields
from ._native import (
    KernlensError,
    LocateError,
    ScratchError,
    TraceError,
    UsageError,
)
from . import scratch
from ._gate import gate

__version__: str = _native.__version__

PathLike = Union[str, "os.PathLike[str]"]
Progress = Callable[[int, Optional[int]], Any]

__all__ = [
    "Document",
    "KernlensError",
    "LocateError",
    "Ranks",
    "ScratchError",
    "Summary",
    "TraceError",
    "Triage",
    "UsageError",
    "all_ranks",
    "diff",
    "gate",
    "ident",
    "locate",
    "scratch",
    "split",
    "summary",
    "triage",
]


class Summary(SummaryFields):
    """One trace's summary: the ``kernlens.summary/1`` document (``to_dict()``), its fields
    as attributes (``timeline``, ``graph``, ``attribution``, ``kernels``, ``ops``,
    ``stream_errors``, ...), and its tables as DataFrames."""

    def __init__(self, document: Dict[str, Any], categories: List[Dict[str, Any]]) -> None:
        super().__init__(document)
        self._categories = categories

    @property
    def categories(self) -> List[Dict[str, Any]]:
        """Kernel time per kernel category over every kernel (not only the top rows): the
        CLI's categories table (``summary --csv categories``), largest first."""
        return self._categories

    def kernels_df(self) -> "Any":
        """The hot kernels (``kernels``) as a DataFrame, one row per kernel, in the
        document's order; list-valued fields (grid, shapes) stay lists."""
        from ._frames import frame

        return frame(self._document["kernels"])

    def ops_df(self) -> "Any":
        """The hot ops (``ops``) as a DataFrame."""
        from ._frames import frame

        return frame(self._document["ops"])

    def categories_df(self) -> "Any":
        """:attr:`categories` as a DataFrame (category, kernels, calls, total_us, share)."""
        from ._frames import frame

        return frame(self._categories)

    def __reduce__(self) -> Any:
        return (Summary, (self._document, self._categories))


class Ranks(RanksFields):
    """Every rank of a directory: the ``kernlens.ranks/1`` document (``ranks``, ``failed``,
    ``spread``)."""

    def ranks_df(self) -> "Any":
        """One row per analysed rank: rank, trace file, busy%, idle% and kernel count (the
        CLI's ``summary --all-ranks --csv ranks`` columns)."""
        from ._frames import frame

        rows = [
            {
                "rank": r["analyzed_rank"],
                "trace_file": r["trace_file"],
                "busy_pct": r["timeline"]["busy_pct"],
                "idle_pct": r["timeline"]["idle_pct"],
                "kernel_count": r["attribution"]["kernel_count"],
            }
            for r in self._document["ranks"]
        ]
        return frame(rows)


class Triage(Document):
    """One triage: the ``kernlens.triage/1`` document (``summary``, ``gate``, ``task_groups``,
    ...), with the root warnings and why sources were not located beside it."""

    def __init__(
        self,
        document: Dict[str, Any],
        root_warnings: List[str],
        sources_unavailable: Optional[str],
    ) -> None:
        super().__init__(document)
        self.root_warnings = root_warnings
        self.sources_unavailable = sources_unavailable

    @property
    def stream_errors(self) -> List[str]:
        """Structural problems the read recovered from (the summary's ``stream_errors``)."""
        return list(self._document["summary"]["stream_errors"])

    def groups_df(self) -> "Any":
        """The task groups as a DataFrame, one row per group; ``source`` and
        ``rewrite_route`` are flattened to ``source_*`` and ``rewrite_*`` columns."""
        from ._frames import frame

        rows = []
        for g in self._document["task_groups"]:
            row = {k: v for k, v in g.items() if k not in ("source", "rewrite_route")}
            row.update({f"source_{k}": v for k, v in g["source"].items()})
            row.update(
                {f"rewrite_{k}": v for k, v in g["rewrite_route"].items() if k != "candidate"}
            )
            rows.append(row)
        return frame(rows)

    def __reduce__(self) -> Any:
        return (Triage, (self._document, self.root_warnings, self.sources_unavailable))


def summary(
    path: PathLike,
    *,
    window: Optional[str] = None,
    top: int = 10,
    threads: Optional[int] = None,
    progress: Optional[Progress] = None,
    max_input_bytes: Optional[int] = None,
) -> Summary:
    """Summarise one trace, as ``kernlens summary PATH --json`` does.

    ``path`` is a ``.json`` or ``.json.gz`` trace (gzip detected by content) or a directory
    of traces (one file is chosen, as the CLI chooses). ``window`` takes the CLI's
    ``--window`` values (``auto``, ``annotation``, ``cpu-steps``, ``START_US:END_US``,
    ``+START:+END``); ``top`` rows of kernels and ops are kept (0 keeps all); ``threads``
    caps the parse threads. ``progress(done, total)`` is called at most every 0.1 s while
    the trace is read (bytes; ``total`` may be None). The GIL is released during the read.

    Raises :class:`TraceError` when the trace cannot be opened or read, :class:`UsageError`
    for a bad window. Damage the reader recovered from is in ``.stream_errors``.
    """
    doc, categories = _native.summary(
        path,
        window=window,
        top=top,
        threads=threads,
        progress=progress,
        max_input_bytes=max_input_bytes,
    )
    return Summary(doc, categories)


def all_ranks(
    dir: PathLike, *, window: Optional[str] = None, top: int = 10, cycle: str = "latest"
) -> Ranks:
    """Every rank of a directory in parallel, as ``kernlens summary DIR --all-ranks --json``:
    the ``kernlens.ranks/1`` document with the busy% spread. ``cycle`` is ``latest`` or
    ``all`` (every capture file of a rank)."""
    return Ranks(_native.all_ranks(dir, window=window, top=top, cycle=cycle))


def split(
    path: PathLike, window: str, out: PathLike, *, progress: Optional[Progress] = None
) -> Document:
    """Write one window of a trace as a new valid trace at ``out`` (gzip when it ends in
    ``.gz``), as ``kernlens split PATH --window WINDOW -o OUT --json``; returns the
    ``kernlens.split/1`` report. ``out`` is replaced only once the chunk is complete."""
    return Document(_native.split(path, window, out, progress=progress))




def ident(names: Union[str, Iterable[str]]) -> Document:
    """Identity keys, category and vendor of kernel names, as ``kernlens ident NAME...
    --json`` (the ``kernlens.ident/1`` document; ``.results`` holds one entry per name)."""
    if isinstance(names, str):
        names = [names]
    return Document(_native.ident(list(names)))


def locate(
    names: Union[str, Iterable[str]],
    *,
    roots: Sequence[PathLike] = (),
    trace: Optional[PathLike] = None,
    discover: bool = True,
) -> Document:
    """The file that defines each kernel, as ``kernlens locate NAME... --root DIR --json``:
    the ``kernlens.locate/1`` document. ``roots`` come first, then ``KERNLENS_SOURCE_ROOTS``,
    then installed-package discovery unless ``discover`` is False; ``trace`` adds launcher
    evidence from a trace. Root warnings are in ``.warnings``. Raises :class:`LocateError`
    when the search cannot be set up."""
    if isinstance(names, str):
        names = [names]
    doc, warnings = _native.locate(
        list(names), roots=[os.fspath(r) for r in roots], trace=trace, discover=discover
    )
    located = Document(doc)
    located.warnings = warnings
    return located


def triage(
    path: PathLike,
    *,
    roots: Sequence[PathLike] = (),
    window: Optional[str] = None,
    top: int = 10,
    idle_threshold: Optional[float] = None,
    min_compute: Optional[float] = None,
    gate: bool = True,
    rewrite_opt_in: bool = False,
    rewrite_budget_minutes: Optional[int] = None,
    discover: bool = True,
    progress: Optional[Progress] = None,
) -> Triage:
    """The main job, as ``kernlens triage PATH --json``: gate the trace, then list its hot
    kernels as task groups with their sources and rewrite-route verdicts."""
    doc, warnings, unavailable = _native.triage(
        path,
        roots=[os.fspath(r) for r in roots],
        window=window,
        top=top,
        idle_threshold=idle_threshold,
        min_compute=min_compute,
        gate=gate,
        rewrite_opt_in=rewrite_opt_in,
        rewrite_budget_minutes=rewrite_budget_minutes,
        discover=discover,
        progress=progress,
    )
    return Triage(doc, warnings, unavailable)


def diff(
    before: PathLike,
    after: PathLike,
    *,
    window: Optional[str] = None,
    before_window: Optional[str] = None,
    after_window: Optional[str] = None,
    normalize: str = "auto",
) -> Document:
    """Did the change help? Two traces compared by operator identity, as ``kernlens diff
    BEFORE AFTER --json`` (the ``kernlens.diff/1`` document)."""
    return Document(
        _native.diff(
            before,
            after,
            window=window,
            before_window=before_window,
            after_window=after_window,
            normalize=normalize,
        )
    )
