"""Bad input raises the package's exception classes with the CLI's one-line messages;
damage the reader recovers from stays in `.stream_errors`, as in the CLI's JSON."""

from __future__ import annotations

import gzip
import os

import pytest

import kernlens
from conftest import TRACES, trace


def test_a_missing_file_is_a_trace_error_with_the_cli_message(cli, tmp_path):
    missing = str(tmp_path / "nope.json.gz")
    with pytest.raises(kernlens.TraceError) as e:
        kernlens.summary(missing)
    assert str(e.value) == cli.error("summary", missing)
    assert isinstance(e.value, kernlens.KernlensError)


def test_a_file_that_is_not_a_trace_is_a_trace_error_with_the_cli_message(cli, tmp_path):
    bad = tmp_path / "notes.json"
    bad.write_text("hello, this is not JSON\n")
    with pytest.raises(kernlens.TraceError) as e:
        kernlens.summary(str(bad))
    assert str(e.value) == cli.error("summary", str(bad))


def test_a_truncated_gzip_keeps_its_complete_events_and_says_so(cli, tmp_path):
    data = (TRACES / "train.json.gz").read_bytes()
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(data[: len(data) // 2])
    s = kernlens.summary(str(cut))
    assert s.stream_errors, "a truncated gzip must say it was damaged"
    assert s.to_dict() == cli.json("summary", str(cut))


def test_a_gzip_header_with_garbage_after_it_matches_the_cli(cli, tmp_path):
    bad = tmp_path / "garbage.json.gz"
    bad.write_bytes(gzip.compress(b"{")[:10] + os.urandom(64))
    out = cli.run("summary", str(bad), "--json")
    if out.returncode == 0:
        assert kernlens.summary(str(bad)).to_dict() == cli.json("summary", str(bad))
    else:
        with pytest.raises(kernlens.TraceError) as e:
            kernlens.summary(str(bad))
        assert str(e.value) == cli.error("summary", str(bad))


def test_a_bad_window_is_a_usage_error():
    with pytest.raises(kernlens.UsageError, match="ends before it starts"):
        kernlens.summary(trace("eager.json.gz"), window="5000:1000")


def test_gate_thresholds_outside_0_to_100_are_usage_errors():
    with pytest.raises(kernlens.UsageError, match="0..=100"):
        kernlens.gate(trace("eager.json.gz"), idle_threshold=150)


def test_a_directory_without_traces_is_a_trace_error_for_all_ranks(cli, tmp_path):
    with pytest.raises(kernlens.TraceError) as e:
        kernlens.all_ranks(str(tmp_path / "absent"))
    assert str(e.value) == cli.error("summary", str(tmp_path / "absent"), "--all-ranks")


def test_scratch_diff_of_a_plain_directory_is_a_scratch_error_with_the_cli_message(cli, tmp_path):
    with pytest.raises(kernlens.ScratchError) as e:
        kernlens.scratch.diff(str(tmp_path))
    assert str(e.value) == cli.error("scratch", "diff", str(tmp_path))
