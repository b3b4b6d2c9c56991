"""All ranks: in process, and on a real Dask cluster of two worker processes on loopback,
against `kernlens summary DIR --all-ranks --json`; the Parquet dataset of kernel rows."""

from __future__ import annotations

import math
import shutil

import pytest

import kernlens
from conftest import TRACES


def test_all_ranks_equals_the_cli_json(cli, ranks_dir):
    got = kernlens.all_ranks(str(ranks_dir)).to_dict()
    want = cli.json("summary", str(ranks_dir), "--all-ranks")
    assert got == want
    assert len(want["failed"]) == 1 and want["spread"] is not None


def test_all_ranks_every_cycle_equals_the_cli_json(cli):
    memprof = str(TRACES / "memprof")
    got = kernlens.all_ranks(memprof, cycle="all").to_dict()
    assert got == cli.json("summary", memprof, "--all-ranks", "--cycle", "all")


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("dask.distributed")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_dask_reproduces_the_cli_all_ranks_document(cli, client, ranks_dir):
    import kernlens.dask

    # Real worker processes, not threads of this one.
    pids = set(client.run(lambda: __import__("os").getpid()).values())
    assert len(pids) == 2 and __import__("os").getpid() not in pids
    got = kernlens.dask.analyze_ranks(str(ranks_dir), client=client).to_dict()
    assert got == cli.json("summary", str(ranks_dir), "--all-ranks")


def test_dask_with_a_window_and_every_cycle_matches_the_cli(cli, client, tmp_path):
    import kernlens.dask

    d = tmp_path / "memprof"
    shutil.copytree(TRACES / "memprof", d)
    got = kernlens.dask.analyze_ranks(str(d), client=client, window="auto", cycle="all").to_dict()
    assert got == cli.json("summary", str(d), "--all-ranks", "--cycle", "all", "--window", "auto")


def test_dask_on_a_list_of_files_ranks_them_by_their_tags(client, ranks_dir):
    import kernlens.dask

    files = sorted(str(p) for p in ranks_dir.glob("trace_rank[0-3].json.gz"))
    got = kernlens.dask.analyze_ranks(list(reversed(files)), client=client)
    assert [r.analyzed_rank for r in got.ranks] == [0, 1, 2, 3]
    whole = kernlens.all_ranks(str(ranks_dir)).to_dict()
    assert [r.timeline.busy_pct for r in got.ranks] == [r["timeline"]["busy_pct"] for r in whole["ranks"]]


def test_parquet_reads_back_with_the_same_rows_and_kernel_time(client, ranks_dir, tmp_path):
    import kernlens.dask

    ds = pytest.importorskip("pyarrow.dataset")
    out = tmp_path / "kernels"
    written = kernlens.dask.kernels_to_parquet(str(ranks_dir), str(out), client=client)
    assert [w["error"] is not None for w in written] == [False, False, False, False, True]
    table = ds.dataset(str(out), format="parquet", partitioning="hive").to_table()
    every = kernlens.all_ranks(str(ranks_dir), top=0).to_dict()["ranks"]
    rows = [k for r in every for k in r["kernels"]]
    assert table.num_rows == len(rows) == sum(w["rows"] for w in written)
    assert math.fsum(table.column("total_us").to_pylist()) == math.fsum(k["total_us"] for k in rows)
    by_rank = {}
    for rank, us in zip(table.column("rank").to_pylist(), table.column("total_us").to_pylist()):
        by_rank.setdefault(int(rank), []).append(us)
    for r in every:
        assert math.fsum(by_rank[r["analyzed_rank"]]) == math.fsum(k["total_us"] for k in r["kernels"])
