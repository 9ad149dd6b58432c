"""The speed targets of ``kc-sim bench``: ratios only, checked on the figures a run measured;
the figures they judge come from measurements side by side (the command against its loop in
one process, agents against the core in turns, real commands)."""

from __future__ import annotations

import pytest

from kc_sim.bench import targets
from kc_sim.bench.tournament import bench_tournament


def test_targets_are_checked_on_the_measured_figures_only():
    rows = targets.check({"command_vs_loop": 0.95, "command_vs_loop_min": 0.9, "command_vs_loop_max": 0.97,
                          "planner_vs_core": 40.0, "agent_planner_2p_rounds_per_s": 9_000.0, "other": 1})
    by_key = {r["key"]: r for r in rows}
    assert set(by_key) == {"command_vs_loop", "planner_vs_core"}
    assert by_key["command_vs_loop"]["met"] and by_key["command_vs_loop"]["spread"] == (0.9, 0.97)
    assert not by_key["planner_vs_core"]["met"] and by_key["planner_vs_core"]["side"] == "<="
    text = targets.format_rows(rows)
    assert "NO" in text and "yes" in text and text.count("\n") == 2


def test_every_target_judges_a_ratio_the_bench_measures():
    from kc_sim.bench.agents import COMPARISONS

    keys = {t.key for t in targets.TARGETS}
    assert all(targets.is_ratio(k) for k in keys)                  # no absolute figure is judged
    measured = {"specialised_vs_inline", "command_vs_loop", "command_jobs2_vs_jobs1", "first_vs_tenth_play_rate",
                "vector_vs_aec", "judge_rollouts_vs_core", *COMPARISONS}
    assert keys == measured


def test_absolute_figures_are_printed_for_information_after_the_ratios():
    text = targets.format_figures({"command_vs_loop": 0.95, "command_vs_loop_min": 0.9, "command_vs_loop_max": 0.97,
                                   "command_1m_rounds_s": 3.1, "agent_planner_2p_rounds_per_s": 16_000.0})
    lines = text.splitlines()
    assert lines[0].startswith("ratios") and lines[1].startswith("command_vs_loop") and "(0.9-0.97)" in lines[1]
    info = lines.index(targets.INFORMATION)
    assert {line.split()[0] for line in lines[info + 1:]} == {"command_1m_rounds_s", "agent_planner_2p_rounds_per_s"}


def test_the_command_figures_come_from_the_command_and_its_loop():
    fig = bench_tournament(rounds=20_000, repeats=1, turns=1)
    for key in ("command_1m_rounds_s", "command_jobs1_s", "command_jobs2_s", "command_jobs2_vs_jobs1",
                "command_1m_rounds_s_min", "command_1m_rounds_s_max", "import_tournament_s",
                "command_vs_loop", "command_play_rounds_per_s", "loop_rounds_per_s", "command_jobs2_vs_loop"):
        assert fig[key] > 0, key
    assert fig["command_1m_rounds_s"] > fig["import_tournament_s"]      # a process that imports, then plays
    # one turn: the ratio is the command's play rate over the loop's, on the same rounds
    assert fig["command_vs_loop"] == pytest.approx(fig["command_play_rounds_per_s"] / fig["loop_rounds_per_s"],
                                                   rel=1e-2)
    # Amdahl's bound on 2 processes: at least 1, below 2 (start-up is not shared)
    assert 1 <= fig["command_jobs2_ceiling_min"] <= fig["command_jobs2_ceiling_max"] < 2


def test_the_loop_calls_are_the_rounds_the_command_plays():
    from kc_sim.bench.tournament import _loop_calls
    from kc_sim.tournament.options import TournamentOptions
    from kc_sim.tournament.plan import make_plan

    plan = make_plan(TournamentOptions.create(["greedy", "merger"], rounds=120_000, quiet=True, out="unused"))
    calls = _loop_calls(plan)
    assert sum(len(seeds) for _, seeds in calls) == plan.schedule.units
    assert len(calls) == len(plan.schedule.chunks()) * len(plan.schedule.seatings)


def test_the_agents_are_compared_with_the_core_turn_by_turn():
    from kc_sim.bench.agents import agents_vs_core

    fig = agents_vs_core(scale=0.02, turns=2)
    for key in ("planner_vs_core", "sampler_vs_core", "python_vs_compiled"):
        assert fig[f"{key}_min"] <= fig[key] <= fig[f"{key}_max"] and fig[key] > 0
    # a planner decision costs more than a greedy one; a Python agent is slower than compiled code
    assert 1 < fig["planner_vs_core"] < fig["sampler_vs_core"]           # the sampler plays out its candidates
    assert fig["python_vs_compiled_max"] < 1
    assert fig["agent_planner_2p_ns_per_decision"] > fig["agent_greedy_2p_beside_planner_ns_per_decision"]


def test_the_two_process_ceiling_halves_only_the_play_phase():
    from kc_sim.bench.tournament import two_process_ceiling

    line = "1,000,000 rounds in 3.5 s (compile and start-up 0.6 s, play 2.9 s at 344,828 rounds/s, specialised loop)"
    assert abs(two_process_ceiling(3.5, line) - 3.5 / (3.5 - 1.45)) < 1e-12


def test_the_env_figures_come_from_both_environments_stepping():
    from kc_sim.bench.env import bench_env

    fig = bench_env(seconds=0.2)
    assert fig["vector_env_steps_per_s"] > 0 and fig["aec_env_steps_per_s"] > 0
    assert fig["vector_vs_aec"] == fig["vector_env_steps_per_s"] / fig["aec_env_steps_per_s"]


def test_the_judge_figures_time_its_rollouts_beside_the_core_and_a_round_to_the_precision_asked():
    from kc_sim.bench.judge import rollouts_vs_core, round_seconds

    fig = rollouts_vs_core(turns=2, n=60)
    assert fig["judge_rollouts_vs_core_min"] <= fig["judge_rollouts_vs_core"] <= fig["judge_rollouts_vs_core_max"]
    assert fig["judge_rollouts_vs_core"] > 0 and fig["judge_decisions_per_round"] > 1
    # a coarse precision spends fewer worlds than a fine one on the same round
    coarse, fine = round_seconds(rounds=1, within=20.0), round_seconds(rounds=1, within=4.0)
    assert coarse["judge_round_decisions"] == fine["judge_round_decisions"] > 0
    assert 0 < coarse["judge_round_worlds"] < fine["judge_round_worlds"]
