"""``kernlens.dask``: the per-rank reads of a job fanned out over a ``dask.distributed``
cluster (``pip install 'kernlens[dask]'``).

One task per trace file; each worker reads its file with the Rust reader (GIL released) and
sends back a small outcome (the rank's ``kernlens.summary/1`` document and busy%, or the
error text); the client reduces the outcomes with the library's own all-ranks reduction, so
:func:`analyze_ranks` on a directory returns exactly the document ``kernlens summary DIR
--all-ranks --json`` prints, spread included.

Each worker needs the ``kernlens`` package (same version as the client) and the trace files
at the same paths (a shared filesystem, or the same copy on every host).

>>> from dask.distributed import Client
>>> import kernlens.dask
>>> client = Client("scheduler:8786")            # or LocalCluster() for one host
>>> ranks = kernlens.dask.analyze_ranks("/shared/run42/traces", client=client)
>>> ranks.spread.busy_pct.median
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Union

from . import Ranks, _native

PathLike = Union[str, "os.PathLike[str]"]
PathsOrDir = Union[PathLike, Sequence[PathLike]]

__all__ = ["analyze_ranks", "kernels_to_parquet", "plan"]


def _client(client: Any) -> Any:
    if client is not None:
        return client
    try:
        from dask.distributed import get_client
    except ImportError as e:  # pragma: no cover - exercised only without dask
        raise ImportError(
            "kernlens.dask needs dask.distributed: pip install 'kernlens[dask]'"
        ) from e
    # The client the caller made current (raises ValueError when there is none).
    return get_client()


def plan(paths_or_dir: PathsOrDir, *, cycle: str = "latest") -> "tuple[str, List[Dict[str, Any]]]":
    """The files to read and the ``input`` the ranks document names: a directory is planned
    as ``summary --all-ranks`` plans it (one file per rank, the latest capture cycle unless
    ``cycle="all"``); a list of files is one entry per file, ranked by its name's rank tag."""
    if isinstance(paths_or_dir, (str, os.PathLike)):
        input = os.fspath(paths_or_dir)
        return input, _native.plan_ranks(input, cycle=cycle)
    paths = [os.fspath(p) for p in paths_or_dir]
    if not paths:
        raise _native.UsageError("invalid paths: no trace files given")
    input = os.path.commonpath([os.path.abspath(p) for p in paths])
    return input, _native.plan_files(paths)


def _analyze(file: Dict[str, Any], window: Optional[str], top: int) -> Dict[str, Any]:
    """One task: one file's outcome (runs on a worker)."""
    return _native.analyze_rank(file, window=window, top=top)


def analyze_ranks(
    paths_or_dir: PathsOrDir,
    client: Any = None,
    window: Optional[str] = None,
    *,
    top: int = 10,
    cycle: str = "latest",
) -> Ranks:
    """Every rank of a job, one Dask task per file, reduced to the ``kernlens.ranks/1``
    document with the busy% spread (``.to_dict()`` equals ``kernlens summary DIR
    --all-ranks --json`` for a directory).

    ``client`` is a ``dask.distributed.Client`` (default: the current one). ``window`` takes
    the CLI's ``--window`` values; ``top`` rows per rank. A rank that cannot be read is
    listed under ``failed``, as in the CLI; an error of Dask itself (a lost worker) raises.
    """
    input, files = plan(paths_or_dir, cycle=cycle)
    client = _client(client)
    futures = client.map(_analyze, files, window=window, top=top, pure=False)
    outcomes = client.gather(futures)
    return Ranks(_native.ranks_document(input, outcomes, cycle=cycle))


def _kernel_table(file: Dict[str, Any], out_dir: str, window: Optional[str]) -> Dict[str, Any]:
    """One task: one file's kernel rows written as one Parquet file of the dataset."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    outcome = _native.analyze_rank(file, window=window, top=0)
    result = outcome["result"]
    if "Err" in result:
        return {"trace_file": outcome["trace_file"], "rows": 0, "error": result["Err"]}
    summary = result["Ok"]["summary"]
    rank = outcome["rank"]
    rows = summary["kernels"]
    table = pa.table(
        {
            "trace_file": pa.array([outcome["trace_file"]] * len(rows), pa.string()),
            "name": pa.array([k["name"] for k in rows], pa.string()),
            "calls": pa.array([k["calls"] for k in rows], pa.int64()),
            "total_us": pa.array([k["total_us"] for k in rows], pa.float64()),
            "min_us": pa.array([k["min_us"] for k in rows], pa.float64()),
            "max_us": pa.array([k["max_us"] for k in rows], pa.float64()),
            "share": pa.array([k["share"] for k in rows], pa.float64()),
            "op_name": pa.array([k.get("op_name") for k in rows], pa.string()),
            "op_count": pa.array([k.get("op_count") for k in rows], pa.int64()),
        }
    )
    part = os.path.join(out_dir, f"rank={'none' if rank is None else rank}")
    os.makedirs(part, exist_ok=True)
    stem = os.path.basename(outcome["trace_file"])
    target = os.path.join(part, f"{stem}.parquet")
    # Written beside the target, then renamed: a reader never sees half a file.
    tmp = f"{target}.tmp-{os.getpid()}"
    pq.write_table(table, tmp)
    os.replace(tmp, target)
    return {"trace_file": outcome["trace_file"], "rows": len(rows), "error": None}


def kernels_to_parquet(
    paths: PathsOrDir,
    out_dir: PathLike,
    client: Any = None,
    *,
    window: Optional[str] = None,
    cycle: str = "latest",
) -> List[Dict[str, Any]]:
    """Every kernel row of every rank (the summary's kernels table with no top cut) as one
    Parquet dataset under ``out_dir``, Hive-partitioned by rank (``rank=0/``, ``rank=1/``,
    ...; ``rank=none`` for an untagged file), one task and one file per trace. Columns:
    trace_file, name, calls, total_us, min_us, max_us, share, op_name, op_count.

    Read it back with ``pyarrow.dataset.dataset(out_dir, partitioning="hive")``, DuckDB
    (``read_parquet('out/*/*.parquet', hive_partitioning=true)``), Spark or DataFusion.
    Returns one ``{trace_file, rows, error}`` per file; a failed rank writes nothing.
    """
    _, files = plan(paths, cycle=cycle)
    out = os.path.abspath(os.fspath(out_dir))
    os.makedirs(out, exist_ok=True)
    client = _client(client)
    futures = client.map(_kernel_table, files, out_dir=out, window=window, pure=False)
    return list(client.gather(futures))
