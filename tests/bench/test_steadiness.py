"""The note ``kc-sim bench`` prints under its targets when the machine's speed varied."""

from __future__ import annotations

from kc_sim.bench import steadiness
from kc_sim.bench.steadiness import Probes


def test_the_spread_is_the_slowest_point_over_the_fastest(monkeypatch):
    times = iter([100, 300, 101, 99, 150, 98])                # two points of three probes: medians 101 and 99
    monkeypatch.setattr(steadiness, "probe_ms", lambda: next(times))
    probes = Probes()
    probes.take()
    probes.take()
    fig = probes.figures()
    assert (fig["machine_probe_ms_min"], fig["machine_probe_ms_max"]) == (99, 101)
    assert fig["machine_probe_spread"] == round(101 / 99, 2)             # one slow probe is not a slow machine


def test_a_steady_machine_gets_no_note_and_an_unsteady_one_gets_one_line():
    steady = {"machine_probe_ms": 90.0, "machine_probe_ms_min": 88.0, "machine_probe_ms_max": 95.0,
              "machine_probe_spread": 1.08}
    assert steadiness.note(steady) is None and steadiness.note({}) is None
    unsteady = {**steady, "machine_probe_ms_max": 180.0, "machine_probe_spread": 2.05}
    line = steadiness.note(unsteady)
    assert "\n" not in line and "88-180 ms, 2.05x" in line and "ratios" in line
