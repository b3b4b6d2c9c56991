"""Shared pieces of the pytest suite: the repository's real traces and the built CLI.

Every figure the package returns is compared with what the `kernlens` binary prints for the
same input (`--json`), so the CLI is the oracle. `KERNLENS_BIN` names a built binary;
otherwise the suite builds it once with `cargo build --bin kernlens` in the repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, List

import pytest

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "fixtures" / "traces"

# Every real trace in fixtures/traces (fixtures/traces/README.md says where each came from).
TRACE_FILES = [
    "eager.json.gz",
    "graph.json.gz",
    "graph_many.json.gz",
    "graph_under_recorded.json.gz",
    "compiled.json.gz",
    "compiled_ro.json.gz",
    "multistream.json.gz",
    "train.json.gz",
]


def trace(name: str) -> str:
    return str(TRACES / name)


@pytest.fixture(scope="session")
def kernlens_bin() -> str:
    given = os.environ.get("KERNLENS_BIN")
    if given:
        return given
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.fail("set KERNLENS_BIN to a kernlens binary, or install cargo to build one")
    subprocess.run([cargo, "build", "--quiet", "--bin", "kernlens"], cwd=REPO, check=True)
    return str(REPO / "target" / "debug" / "kernlens")


class Cli:
    """The built `kernlens` binary."""

    def __init__(self, binary: str) -> None:
        self.binary = binary

    def run(self, *args: str, env: Any = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [self.binary, *args], capture_output=True, text=True, env=env, cwd=REPO
        )

    def json(self, *args: str, env: Any = None) -> Any:
        out = self.run(*args, "--json", env=env)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    def error(self, *args: str) -> str:
        """The one-line failure the CLI prints (without its `kernlens: ` prefix)."""
        out = self.run(*args)
        assert out.returncode == 1, (out.returncode, out.stdout, out.stderr)
        lines: List[str] = out.stderr.strip().splitlines()
        assert lines[-1].startswith("kernlens: "), out.stderr
        return lines[-1][len("kernlens: ") :]


@pytest.fixture(scope="session")
def cli(kernlens_bin: str) -> Cli:
    return Cli(kernlens_bin)


@pytest.fixture()
def ranks_dir(tmp_path: Path) -> Path:
    """A directory of four ranks made from the real traces (one of them not a trace, so the
    ranks document has a failed entry too)."""
    d = tmp_path / "job"
    d.mkdir()
    for rank, name in enumerate(["eager.json.gz", "graph.json.gz", "compiled.json.gz", "train.json.gz"]):
        shutil.copy(TRACES / name, d / f"trace_rank{rank}.json.gz")
    (d / "trace_rank4.json").write_text("this is not a trace\n")
    return d
