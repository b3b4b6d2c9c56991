"""`kernlens.gate.LaneGuard` driven by an injected clock (gate.md "Lane idle guard")."""

from __future__ import annotations

import kernlens


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_idle_scans_over_enough_seconds_wind_the_lane_down():
    clock = Clock(1_000.0)
    guard = kernlens.gate.LaneGuard({"max_ticks": 3, "min_seconds": 600}, clock=clock)
    guard.observe(records=[["attempt-1", "running"]])
    first = guard.tick()
    assert first.outcome == "progress" and first.wind_down is None
    for expected in (1, 2, 3):
        clock.now += 100
        t = guard.tick()
        assert (t.outcome, t.ticks) == ("idle", expected)
        assert t.wind_down is None, "three ticks but only 300 s: not yet"
    clock.now = 1_000.0 + 600
    t = guard.tick()
    assert t.outcome == "idle" and t.ticks == 4
    assert t.wind_down.reason == "kernel_no_more_leverage"
    assert t.wind_down.evidence == "kernel_idle_no_progress"
    assert t.wind_down.idle_seconds == 600.0
    assert guard.state["since_unix"] == 1_000.0


def test_progress_restarts_the_count_and_running_work_freezes_it():
    clock = Clock(50.0)
    guard = kernlens.gate.LaneGuard(max_ticks=1, min_seconds=10, clock=clock)
    guard.observe(records=[["a"]])
    assert guard.tick().outcome == "progress"
    clock.now = 100.0
    assert guard.tick().outcome == "idle"
    guard.observe(records=[["a"], ["b"]])
    clock.now = 200.0
    t = guard.tick()
    assert t.outcome == "progress" and t.ticks == 0 and t.state["since_unix"] == 200.0
    # Running lane work changes the fingerprint once, then freezes the count.
    guard.observe(records=[["a"], ["b"]], tasks=[("t1", "kernel_opt", "running")])
    assert guard.tick().outcome == "progress"
    clock.now = 900.0
    t = guard.tick()
    assert t.outcome == "frozen" and t.wind_down is None and t.state["since_unix"] == 900.0


def test_a_fresh_heartbeat_freezes_and_a_stale_one_does_not():
    clock = Clock(1_000.0)
    guard = kernlens.gate.LaneGuard(max_ticks=1, min_seconds=1, heartbeat_stale_seconds=450, clock=clock)
    guard.observe()
    guard.tick()
    guard.heartbeat()  # now
    clock.now += 100
    assert guard.tick().outcome == "frozen"
    clock.now += 1_000
    t = guard.tick()
    assert t.outcome == "idle" and t.wind_down is not None


def test_the_skip_hint_winds_down_only_without_pending_work():
    guard = kernlens.gate.LaneGuard(clock=Clock(10.0))
    guard.observe()
    assert guard.tick(hint="skip_to_sweep", work_pending=True).wind_down is None
    t = guard.tick(hint="skip_to_sweep")
    assert t.wind_down.evidence == "kernel_no_more_leverage" and t.wind_down.hint == "skip_to_sweep"


def test_outside_the_phase_the_state_resets_and_restore_puts_it_back():
    guard = kernlens.gate.LaneGuard(clock=Clock(10.0))
    guard.restore({"ticks": 5, "fingerprint": "abc", "since_unix": 3.0})
    assert guard.state == {"ticks": 5, "fingerprint": "abc", "since_unix": 3.0}
    guard.observe(in_lane_phase=False)
    assert guard.tick(20.0).outcome == "outside_phase"
    assert guard.state == {"ticks": 0, "fingerprint": "", "since_unix": 0.0}


def test_bad_task_status_and_hint_are_usage_errors():
    import pytest

    guard = kernlens.gate.LaneGuard()
    with pytest.raises(kernlens.UsageError):
        guard.observe(tasks=[("t", "kernel_opt", "sleeping")])
    with pytest.raises(kernlens.UsageError):
        guard.tick(1.0, hint="later")
    with pytest.raises(kernlens.UsageError):
        kernlens.gate.LaneGuard({"max_tick": 3})
