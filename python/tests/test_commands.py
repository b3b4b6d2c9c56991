"""gate, ident, locate, triage, split, diff and scratch against the CLI's `--json`."""

from __future__ import annotations

import json
import os

import pytest

import kernlens
from conftest import REPO, TRACES, trace


def clean_env():
    env = dict(os.environ)
    for key in ("KERNLENS_SOURCE_ROOTS", "KERNLENS_IDLE_THRESHOLD_PCT", "KERNLENS_MIN_COMPUTE_PCT"):
        env.pop(key, None)
    return env


@pytest.fixture(autouse=True)
def _no_kernlens_env(monkeypatch):
    for key in ("KERNLENS_SOURCE_ROOTS", "KERNLENS_IDLE_THRESHOLD_PCT", "KERNLENS_MIN_COMPUTE_PCT"):
        monkeypatch.delenv(key, raising=False)


@pytest.mark.parametrize("name", ["eager.json.gz", "graph_under_recorded.json.gz", "multistream.json.gz"])
def test_gate_equals_the_cli_json(cli, name):
    got = kernlens.gate(trace(name))
    assert got.to_dict() == cli.json("gate", trace(name), env=clean_env())
    assert got.stream_errors == []


def test_gate_thresholds_equal_the_cli_flags(cli):
    got = kernlens.gate(trace("eager.json.gz"), idle_threshold=50, min_compute=5).to_dict()
    want = cli.json("gate", trace("eager.json.gz"), "--idle-threshold", "50", "--min-compute", "5", env=clean_env())
    assert got == want


def test_ident_equals_the_cli_json(cli):
    names = [
        "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
        "triton_poi_fused_add_0",
    ]
    assert kernlens.ident(names).to_dict() == cli.json("ident", *names)


def test_locate_equals_the_cli_json(cli):
    root = str(REPO / "fixtures" / "locate" / "cuda_tree")
    names = ["triton_poi_fused_add_0", "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"]
    got = kernlens.locate(names, roots=[root], discover=False).to_dict()
    assert got == cli.json("locate", *names, "--root", root, "--no-discover", env=clean_env())


def test_triage_equals_the_cli_json_and_its_groups_frame(cli):
    pytest.importorskip("pandas")
    got = kernlens.triage(trace("compiled.json.gz"), discover=False)
    want = cli.json("triage", trace("compiled.json.gz"), "--no-discover", env=clean_env())
    assert got.to_dict() == want
    assert got.sources_unavailable is not None
    df = got.groups_df()
    assert len(df) == len(want["task_groups"])
    assert list(df["share"]) == pytest.approx([g["share"] for g in want["task_groups"]], rel=0, abs=0)
    assert list(df["rewrite_eligible"]) == [g["rewrite_route"]["eligible"] for g in want["task_groups"]]


def test_split_writes_the_same_chunk_and_report_as_the_cli(cli, tmp_path):
    ours, theirs = tmp_path / "ours.json", tmp_path / "theirs.json"
    got = kernlens.split(trace("train.json.gz"), "auto", str(ours)).to_dict()
    want = cli.json("split", trace("train.json.gz"), "--window", "auto", "-o", str(theirs))
    assert got == want
    assert ours.read_bytes() == theirs.read_bytes()
    assert kernlens.summary(str(ours)).to_dict()["event_total"] == want["events_written"]


def test_diff_equals_the_cli_json(cli):
    a, b = trace("eager.json.gz"), trace("compiled.json.gz")
    assert kernlens.diff(a, b).to_dict() == cli.json("diff", a, b)


def test_rewrite_route_verdicts():
    eligible = kernlens.gate.rewrite_route("triton", budget_minutes=120)
    assert eligible.eligible is True and eligible.reason is None
    short = kernlens.gate.rewrite_route("cuda", budget_minutes=10)
    assert short.eligible is False and short.reason == "budget_insufficient"
    assert kernlens.gate.rewrite_route("flydsl").reason == "already_flydsl_source"
    assert kernlens.gate.rewrite_route("vendor_binary").reason == "non_portable_language"
    # The opt-in floors the default budget at what the route needs.
    floored = kernlens.gate.rewrite_route("hip", default_budget_minutes=10, opted_in=True)
    assert floored.eligible is True and floored.budget_source == "default_floored"


def test_scratch_create_diff_release_sweep(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("KERNLENS_LOCAL_SCRATCH_ROOT", str(tmp_path / "scratch-root"))
    pkg = tmp_path / "site-packages" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "k.py").write_text("def k(x):\n    return x + 1\n")
    attempt = tmp_path / "runs" / "sess" / "att"
    made = kernlens.scratch.create(str(pkg / "k.py"), str(attempt))
    assert made.schema == "kernlens.scratch/1"
    worktree = attempt / "worktree"
    assert (worktree / ".git").exists()
    kernel = os.path.join(made.worktree, os.path.relpath(made.kernel_path, made.worktree))
    with open(kernel, "a") as f:
        f.write("# faster\n")
    exported = kernlens.scratch.diff(str(attempt))
    assert [c.status for c in exported.changes] == ["modified"]
    # The CLI exports the same change from the same worktree.
    want = cli.json("scratch", "diff", str(attempt), "-o", str(tmp_path / "cli-export"))
    assert [(c["status"], c["path"]) for c in want["changes"]] == [
        (c.status, c.path) for c in exported.changes
    ]
    released = kernlens.scratch.release(str(attempt))
    assert released.to_dict() == json.loads(json.dumps(released.to_dict()))
    swept = kernlens.scratch.sweep(local_root=str(tmp_path / "empty-root"))
    assert swept.to_dict() == cli.json("scratch", "sweep", "--local-root", str(tmp_path / "empty-root"))


def test_threads_read_in_parallel_and_agree():
    from concurrent.futures import ThreadPoolExecutor

    names = [trace("train.json.gz"), trace("multistream.json.gz")] * 2
    with ThreadPoolExecutor(4) as pool:
        docs = list(pool.map(lambda p: kernlens.summary(p).to_dict(), names))
    assert docs[0] == docs[2] and docs[1] == docs[3]
    assert docs[0] == kernlens.summary(names[0]).to_dict()
