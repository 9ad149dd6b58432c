"""Starting a run's worker processes early, before the plan, when the run will surely use them.

Rule: a command that will surely use workers (:func:`workers_likely`: ``--jobs`` above 1
and more than a chunk to play, or by default at least two workers' worth of compiled
rounds, :data:`~kc_sim.tournament.sizes.ROUNDS_PER_WORKER`) starts them before anything
heavy is imported (:func:`start_early`), so their start overlaps its own: each worker
first imports what every chunk needs and loads numba's registries (:func:`preload`) while
this process imports and plans.

Light on purpose: imported by the command line before numba (the sizes, the compile cache's
folder, the pool and joblib only; the options only for their type).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kc_sim.core.cache import configure
from kc_sim.processes.pool import WorkerPool
from kc_sim.tournament.sizes import CHUNK_ROUNDS, ROUNDS_PER_MATCH, processes_paid

if TYPE_CHECKING:
    from kc_sim.tournament.options import TournamentOptions

__all__ = ["preload", "run_pool", "start_early", "workers_likely"]


def workers_likely(opts: TournamentOptions) -> bool:
    """Whether a run will surely want worker processes, known before its plan (the rule of
    :func:`~kc_sim.tournament.sizes.processes_paid`): ``--jobs`` above 1 and more than a chunk
    to play, or by default at least two workers' worth of compiled rounds."""
    units = opts.rounds if opts.rounds is not None else (opts.matches or 0) * ROUNDS_PER_MATCH
    if not units:
        return False
    # before the plan: more than a chunk's rounds is at least two chunks; compiled agents need
    # the most rounds per worker; whole workers' worth only (sizes.processes_paid)
    chunks = 2 if units > CHUNK_ROUNDS else 1
    return processes_paid(opts.processes, opts.jobs_given, chunks, units, compiled=True, surely=True) >= 2


def preload() -> None:
    """The first task of a run's pool: a started worker has imported what every chunk needs
    and loaded numba's registries, while this process plans (then loading the run's
    compiled code takes the worker a few hundredths of a second)."""
    import kc_sim.tournament.worker  # noqa: F401
    from kc_sim.core.kernel import prepare_numba

    prepare_numba()


def run_pool() -> WorkerPool:
    """A new (not yet started) worker pool for a run: its workers :func:`preload` first. The
    compile-cache folder is set up here (:func:`kc_sim.core.cache.configure`, no numba import),
    so the workers inherit it and none hashes the sources again."""
    configure()
    return WorkerPool(preload=preload)


def start_early(pool: WorkerPool, opts: TournamentOptions) -> bool:
    """Start the workers of ``pool`` now, before the plan loads the agents, when the run
    will surely use them (:func:`workers_likely`). Returns whether they were started."""
    if opts.backend != "loky" or not workers_likely(opts):
        return False
    pool.start(opts.processes - 1)
    return True
