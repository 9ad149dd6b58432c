"""The speed targets of ``kc-sim bench``: checked on the figures a run measured, and the
whole-command figures measured by running the real command."""

from __future__ import annotations

from kc_sim.bench import targets
from kc_sim.bench.tournament import bench_tournament


def test_targets_are_checked_on_the_measured_figures_only():
    rows = targets.check({"import_tournament_s": 0.4, "agent_planner_2p_rounds_per_s": 9_000.0, "other": 1})
    by_key = {r["key"]: r for r in rows}
    assert set(by_key) == {"import_tournament_s", "agent_planner_2p_rounds_per_s"}
    assert by_key["import_tournament_s"]["met"] and by_key["import_tournament_s"]["side"] == "<="
    assert not by_key["agent_planner_2p_rounds_per_s"]["met"]
    text = targets.format_rows(rows)
    assert "NO" in text and "yes" in text and text.count("\n") == 2


def test_every_target_names_a_figure_the_bench_measures():
    from kc_sim.bench import agents

    keys = {t.key for t in targets.TARGETS}
    measured = {"specialised_vs_inline", "command_1m_rounds_s", "command_jobs2_vs_jobs1", "command_jobs2_ceiling",
                "import_tournament_s",
                "cold_command_s", "first_vs_tenth_play_rate", "agent_python-first-legal_rounds_per_s", "vector_env_steps_per_s", "vector_vs_aec"}
    measured |= {f"agent_{name}_2p_rounds_per_s" for name in agents.STRONG_2P}
    assert keys == measured


def test_the_whole_command_figures_come_from_real_commands():
    fig = bench_tournament(rounds=20_000, repeats=1)
    for key in ("command_1m_rounds_s", "command_jobs1_s", "command_jobs2_s", "command_jobs2_vs_jobs1",
                "command_1m_rounds_s_min", "command_1m_rounds_s_max", "import_tournament_s"):
        assert fig[key] > 0, key
    assert fig["command_1m_rounds_s"] > fig["import_tournament_s"]      # a process that imports, then plays
    # Amdahl's bound on 2 processes: at least 1, below 2 (start-up is not shared)
    assert 1 <= fig["command_jobs2_ceiling_min"] <= fig["command_jobs2_ceiling_max"] < 2


def test_the_two_process_ceiling_halves_only_the_play_phase():
    from kc_sim.bench.tournament import two_process_ceiling

    line = "1,000,000 rounds in 3.5 s (compile and start-up 0.6 s, play 2.9 s at 344,828 rounds/s, specialised loop)"
    assert abs(two_process_ceiling(3.5, line) - 3.5 / (3.5 - 1.45)) < 1e-12


def test_the_env_figures_come_from_both_environments_stepping():
    from kc_sim.bench.env import bench_env

    fig = bench_env(seconds=0.2)
    assert fig["vector_env_steps_per_s"] > 0 and fig["aec_env_steps_per_s"] > 0
    assert fig["vector_vs_aec"] == fig["vector_env_steps_per_s"] / fig["aec_env_steps_per_s"]
