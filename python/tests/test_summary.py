"""`kernlens.summary` and its DataFrames against `kernlens summary --json` / `--csv`."""

from __future__ import annotations

import csv
import io
import math

import pytest

import kernlens
from conftest import TRACE_FILES, TRACES, trace


@pytest.mark.parametrize("name", TRACE_FILES)
def test_summary_document_equals_the_cli_json(cli, name):
    assert kernlens.summary(trace(name)).to_dict() == cli.json("summary", trace(name))


@pytest.mark.parametrize(
    "name,window,top",
    [
        ("train.json.gz", "auto", 10),
        ("train.json.gz", "cpu-steps", 0),
        ("compiled.json.gz", "auto", 3),
        ("eager.json.gz", "+1ms:+20ms", 5),
    ],
)
def test_windows_and_top_equal_the_cli_json(cli, name, window, top):
    got = kernlens.summary(trace(name), window=window, top=top).to_dict()
    assert got == cli.json("summary", trace(name), "--window", window, "--top", str(top))


def test_a_directory_input_reads_the_file_the_cli_chooses(cli):
    memprof = str(TRACES / "memprof")
    assert kernlens.summary(memprof).to_dict() == cli.json("summary", memprof)


def test_attributes_mirror_the_document():
    s = kernlens.summary(trace("eager.json.gz"))
    d = s.to_dict()
    assert d["schema"] == "kernlens.summary/1"
    assert s.timeline.busy_pct == d["timeline"]["busy_pct"]
    assert s.graph.coverage == d["graph"]["coverage"]
    assert [k.name for k in s.kernels] == [k["name"] for k in d["kernels"]]
    assert s.stream_errors == []
    assert s["attribution"].kernel_count == d["attribution"]["kernel_count"]
    with pytest.raises(AttributeError):
        s.no_such_field


@pytest.mark.parametrize("name", ["eager.json.gz", "train.json.gz", "multistream.json.gz"])
def test_dataframe_totals_equal_the_json(cli, name):
    pytest.importorskip("pandas")
    doc = cli.json("summary", trace(name), "--top", "0")
    s = kernlens.summary(trace(name), top=0)
    kernels = s.kernels_df()
    assert len(kernels) == len(doc["kernels"])
    assert math.fsum(kernels["total_us"].tolist()) == math.fsum(k["total_us"] for k in doc["kernels"])
    assert int(kernels["calls"].sum()) == sum(k["calls"] for k in doc["kernels"])
    assert list(kernels["name"]) == [k["name"] for k in doc["kernels"]]
    ops = s.ops_df()
    assert len(ops) == len(doc["ops"])
    assert math.fsum(ops["total_us"].tolist()) == math.fsum(o["total_us"] for o in doc["ops"])
    # The categories cover every kernel: their time is the kernels' time.
    cats = s.categories_df()
    assert math.isclose(
        math.fsum(cats["total_us"].tolist()), doc["timeline"]["kernel_sum_us"], rel_tol=1e-12
    )
    assert int(cats["kernels"].sum()) == len(doc["kernels"])


@pytest.mark.parametrize("name", ["eager.json.gz", "compiled.json.gz"])
def test_categories_equal_the_cli_csv(cli, name):
    out = cli.run("summary", trace(name), "--csv", "categories")
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    got = kernlens.summary(trace(name)).categories
    assert [r["category"] for r in rows] == [c["category"] for c in got]
    assert [int(r["calls"]) for r in rows] == [c["calls"] for c in got]
    assert [float(r["total_us"]) for r in rows] == pytest.approx([c["total_us"] for c in got], rel=1e-9)


def test_pyarrow_backed_columns_when_pyarrow_is_installed():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    if int(pd.__version__.split(".")[0]) < 2:
        pytest.skip("pyarrow dtypes need pandas 2")
    df = kernlens.summary(trace("eager.json.gz")).kernels_df()
    assert "pyarrow" in str(df["total_us"].dtype)


def test_summary_pickles_for_dask():
    import pickle

    s = kernlens.summary(trace("graph.json.gz"))
    back = pickle.loads(pickle.dumps(s))
    assert back.to_dict() == s.to_dict() and back.categories == s.categories


def test_progress_is_called_and_throttled():
    calls = []
    s = kernlens.summary(trace("train.json.gz"), progress=lambda done, total: calls.append((done, total)))
    assert s.timeline.busy_pct > 0
    assert calls, "the callback was never called"
    dones = [d for d, _ in calls]
    assert dones == sorted(dones)
    # Throttled: a handful of calls, not one per read chunk.
    assert len(calls) < 50


def test_an_exception_in_the_progress_callback_is_raised():
    def boom(done, total):
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop"):
        kernlens.summary(trace("eager.json.gz"), progress=boom)
