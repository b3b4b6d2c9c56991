"""``kernlens.gate``: the gate verdict of a trace, the lane idle guard and the rewrite route."""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native
from ._document import Document


class GateReport(Document):
    """The ``kernlens.gate/1`` document (``decision``, ``idle_pct``, ``compute_pct``,
    ``warnings``, ...), with the read's recovered ``stream_errors`` beside it."""

    def __init__(self, document: Dict[str, Any], stream_errors: List[str]) -> None:
        super().__init__(document)
        self.stream_errors = stream_errors

    def __reduce__(self) -> Any:
        return (GateReport, (self._document, self.stream_errors))


Task = Union[Tuple[str, str, str], Mapping[str, str]]


class LaneGuard:
    """The lane idle guard (gate.md "Lane idle guard") an orchestrator embeds: it winds down a
    work lane that keeps "working" without progress.

    ``config`` (a mapping) or keywords set ``max_ticks`` (idle scans, default 3),
    ``min_seconds`` (idle seconds, default 600), ``heartbeat_stale_seconds`` (default 450)
    and ``lane_kinds`` (task kinds that count as lane work). ``clock`` is the time source
    (seconds since the epoch; default ``time.time``): inject one to drive the guard in tests.

    Each scan: :meth:`observe` what the coordinator sees, :meth:`heartbeat` while an inline
    step runs, then :meth:`tick`, which returns the scan's outcome (``progress``, ``frozen``,
    ``idle``, ``outside_phase``), the new ``state`` and ``wind_down`` (None, or the reason and
    evidence to record when the lane should be left).
    """

    def __init__(
        self,
        config: Optional[Mapping[str, Any]] = None,
        *,
        clock: Callable[[], float] = time.time,
        max_ticks: Optional[int] = None,
        min_seconds: Optional[float] = None,
        heartbeat_stale_seconds: Optional[float] = None,
        lane_kinds: Optional[Sequence[str]] = None,
    ) -> None:
        settings: Dict[str, Any] = dict(config or {})
        for key, value in (
            ("max_ticks", max_ticks),
            ("min_seconds", min_seconds),
            ("heartbeat_stale_seconds", heartbeat_stale_seconds),
            ("lane_kinds", lane_kinds),
        ):
            if value is not None:
                settings[key] = value
        unknown = set(settings) - {"max_ticks", "min_seconds", "heartbeat_stale_seconds", "lane_kinds"}
        if unknown:
            raise _native.UsageError(f"invalid lane guard config: unknown keys {sorted(unknown)}")
        if settings.get("lane_kinds") is not None:
            settings["lane_kinds"] = list(settings["lane_kinds"])
        self._guard = _native.LaneGuard(**settings)
        self._clock = clock

    @property
    def config(self) -> Dict[str, Any]:
        """The guard's configuration."""
        return self._guard.config

    @property
    def state(self) -> Dict[str, Any]:
        """The guard's memory: ``ticks``, ``fingerprint``, ``since_unix``. Keep it where the
        lane's agents cannot write it; :meth:`restore` puts it back."""
        return self._guard.state

    def restore(self, state: Mapping[str, Any]) -> None:
        """Restores a persisted :attr:`state`."""
        self._guard.restore(int(state["ticks"]), str(state["fingerprint"]), float(state["since_unix"]))

    def observe(
        self,
        *,
        in_lane_phase: bool = True,
        tasks: Iterable[Task] = (),
        records: Iterable[Sequence[str]] = (),
        fields: Optional[Mapping[str, str]] = None,
    ) -> None:
        """What the coordinator sees now: whether it is in the lane phase, its tasks (``(id,
        kind, status)`` or mappings with those keys; status queued, running, succeeded,
        failed or cancelled), and the lane's progress as ``records`` (rows of strings) and
        ``fields``. The next :meth:`tick` fingerprints them: a change is progress."""
        views = []
        for t in tasks:
            if isinstance(t, Mapping):
                views.append((str(t["id"]), str(t["kind"]), str(t["status"])))
            else:
                task_id, kind, status = t
                views.append((str(task_id), str(kind), str(status)))
        self._guard.observe(
            in_lane_phase=in_lane_phase,
            tasks=views,
            records=[[str(c) for c in r] for r in records],
            fields={str(k): str(v) for k, v in (fields or {}).items()},
        )

    def heartbeat(self, stamp: Optional[float] = None) -> None:
        """An inline step is alive at ``stamp`` (default: the clock's now); 0 says none runs.
        A fresh heartbeat freezes the idle count."""
        self._guard.heartbeat(self._clock() if stamp is None else float(stamp))

    def tick(
        self,
        now: Optional[float] = None,
        *,
        hint: Optional[str] = None,
        work_pending: bool = False,
    ) -> Document:
        """One scan at ``now`` (default: the clock's now), then whether to wind down.
        ``hint="skip_to_sweep"`` is the lane planner saying it sees no more leverage."""
        at = self._clock() if now is None else float(now)
        return Document(self._guard.tick(at, hint=hint, work_pending=work_pending))


def rewrite_route(
    kind: str,
    *,
    candidate: str = "",
    budget_minutes: Optional[int] = None,
    default_budget_minutes: Optional[int] = None,
    opted_in: bool = False,
) -> Document:
    """The rewrite-route verdict for a kernel whose source is ``kind`` (triton, cuda, hip,
    cpp, flydsl, python, vendor_binary, ...): ``eligible``, ``reason`` when declined, and the
    budget it was judged with. ``budget_minutes`` is an explicit budget for this attempt
    (wins both ways); ``opted_in`` floors the default budget at what the route needs."""
    return Document(
        _native.rewrite_route(
            kind,
            candidate=candidate,
            budget_minutes=budget_minutes,
            default_budget_minutes=default_budget_minutes,
            opted_in=opted_in,
        )
    )


class _Gate:
    """``kernlens.gate(path)`` runs the gate; ``kernlens.gate.LaneGuard`` and
    ``kernlens.gate.rewrite_route`` are the orchestrator-side pieces."""

    LaneGuard = LaneGuard
    GateReport = GateReport
    rewrite_route = staticmethod(rewrite_route)

    def __call__(
        self,
        path: Any,
        idle_threshold: Optional[float] = None,
        min_compute: Optional[float] = None,
        *,
        progress: Optional[Callable[[int, Optional[int]], Any]] = None,
    ) -> GateReport:
        """The idle gate with its graph guard, then the low-compute gate, as ``kernlens gate
        PATH --json``: the ``kernlens.gate/1`` document. Thresholds are percentages (0..=100);
        unset, ``KERNLENS_IDLE_THRESHOLD_PCT`` / ``KERNLENS_MIN_COMPUTE_PCT`` or the
        defaults (80, 10) apply."""
        doc, stream_errors = _native.gate(
            path, idle_threshold=idle_threshold, min_compute=min_compute, progress=progress
        )
        return GateReport(doc, stream_errors)

    def __repr__(self) -> str:
        return "<kernlens.gate: call gate(path); LaneGuard; rewrite_route>"


gate = _Gate()
