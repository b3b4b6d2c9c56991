"""Type stubs of the native module (python/src/lib.rs). Use the wrappers in ``kernlens``."""

from os import PathLike
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

_Path = Union[str, PathLike[str]]
_Progress = Optional[Callable[[int, Optional[int]], Any]]
_Doc = Dict[str, Any]

__version__: str

class KernlensError(Exception): ...
class TraceError(KernlensError): ...
class LocateError(KernlensError): ...
class ScratchError(KernlensError): ...
class UsageError(KernlensError): ...

def summary(
    path: _Path,
    *,
    window: Optional[str] = ...,
    top: int = ...,
    threads: Optional[int] = ...,
    progress: _Progress = ...,
    max_input_bytes: Optional[int] = ...,
) -> Tuple[_Doc, List[_Doc]]: ...
def all_ranks(dir: _Path, *, window: Optional[str] = ..., top: int = ..., cycle: str = ...) -> _Doc: ...
def plan_ranks(dir: _Path, *, cycle: str = ...) -> List[_Doc]: ...
def plan_files(paths: Sequence[_Path]) -> List[_Doc]: ...
def analyze_rank(file: Mapping[str, Any], *, window: Optional[str] = ..., top: int = ...) -> _Doc: ...
def ranks_document(input: str, outcomes: Sequence[Mapping[str, Any]], *, cycle: str = ...) -> _Doc: ...
def split(path: _Path, window: str, out: _Path, *, progress: _Progress = ...) -> _Doc: ...
def gate(
    path: _Path,
    *,
    idle_threshold: Optional[float] = ...,
    min_compute: Optional[float] = ...,
    progress: _Progress = ...,
) -> Tuple[_Doc, List[str]]: ...
def ident(names: Sequence[str]) -> _Doc: ...
def locate(
    names: Sequence[str],
    *,
    roots: Sequence[_Path] = ...,
    trace: Optional[_Path] = ...,
    discover: bool = ...,
) -> Tuple[_Doc, List[str]]: ...
def triage(
    path: _Path,
    *,
    roots: Sequence[_Path] = ...,
    window: Optional[str] = ...,
    top: int = ...,
    idle_threshold: Optional[float] = ...,
    min_compute: Optional[float] = ...,
    gate: bool = ...,
    rewrite_opt_in: bool = ...,
    rewrite_budget_minutes: Optional[int] = ...,
    discover: bool = ...,
    progress: _Progress = ...,
) -> Tuple[_Doc, List[str], Optional[str]]: ...
def diff(
    before: _Path,
    after: _Path,
    *,
    window: Optional[str] = ...,
    before_window: Optional[str] = ...,
    after_window: Optional[str] = ...,
    normalize: str = ...,
) -> _Doc: ...
def scratch_create(
    source: _Path,
    output: _Path,
    *,
    session: Optional[str] = ...,
    attempt: Optional[str] = ...,
    branch: Optional[str] = ...,
    repo: Optional[_Path] = ...,
    owner_pid: Optional[int] = ...,
    grace_secs: Optional[int] = ...,
) -> _Doc: ...
def scratch_diff(scratch_dir: _Path, *, out: Optional[_Path] = ..., best: Optional[str] = ...) -> _Doc: ...
def scratch_release(scratch_dir: _Path) -> _Doc: ...
def scratch_sweep(*, local_root: Optional[_Path] = ..., grace_secs: Optional[int] = ...) -> _Doc: ...
def rewrite_route(
    kind: str,
    *,
    candidate: str = ...,
    budget_minutes: Optional[int] = ...,
    default_budget_minutes: Optional[int] = ...,
    opted_in: bool = ...,
) -> _Doc: ...

class LaneGuard:
    def __init__(
        self,
        *,
        max_ticks: Optional[int] = ...,
        min_seconds: Optional[float] = ...,
        heartbeat_stale_seconds: Optional[float] = ...,
        lane_kinds: Optional[Sequence[str]] = ...,
    ) -> None: ...
    def observe(
        self,
        *,
        in_lane_phase: bool = ...,
        tasks: Sequence[Tuple[str, str, str]] = ...,
        records: Sequence[Sequence[str]] = ...,
        fields: Mapping[str, str] = ...,
    ) -> None: ...
    def heartbeat(self, stamp: float) -> None: ...
    def tick(self, now: float, *, hint: Optional[str] = ..., work_pending: bool = ...) -> _Doc: ...
    @property
    def state(self) -> _Doc: ...
    @property
    def config(self) -> _Doc: ...
    def restore(self, ticks: int, fingerprint: str, since_unix: float) -> None: ...
