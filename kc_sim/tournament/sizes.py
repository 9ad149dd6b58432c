"""How a run's work is cut and sized: chunk sizes, and what a worker process must have to play.

Rule: a run is cut into chunks of :data:`CHUNK_ROUNDS` rounds (:data:`CHUNK_MATCHES`
matches), the unit a process plays, stores and resumes by; a worker process costs about a
second to start and load the compiled code, so the default ``--jobs`` gives each one at least
:data:`ROUNDS_PER_WORKER` rounds (:func:`processes_paid`, the one rule of how many processes a
run pays for, before its plan and once planned).

No imports on purpose: the schedule (which cuts the chunks) and the light module that starts
workers early (:mod:`kc_sim.tournament.early`, loaded by the command line before numba) both
read these.
"""

#: default chunk sizes: rounds per chunk for single rounds, matches per chunk for matches
CHUNK_ROUNDS = 50_000
CHUNK_MATCHES = 5_000

#: rounds a worker process must have to pay for its start (compiled agents play about
#: 300,000 rounds/s per core, a Python agent about 15,000), keyed by "all agents compiled"
ROUNDS_PER_WORKER = {True: 300_000, False: 15_000}
#: rounds of a match under the classic rules, about (4.9 measured): for sizing runs of matches
ROUNDS_PER_MATCH = 5


def processes_paid(processes: int, jobs_given: bool, chunks: int, rounds: int, compiled: bool,
                   surely: bool = False) -> int:
    """How many processes (this one and its workers) a run of ``chunks`` chunks and about
    ``rounds`` rounds pays for, out of ``processes``: with ``--jobs`` given, all of them, at
    most one per chunk; by default also no more than one per :data:`ROUNDS_PER_WORKER`
    rounds (``compiled``: every agent compiled), counted up. ``surely``: count only whole
    workers' worth, for what is known before the plan (the plan's count is then at least as
    many)."""
    if jobs_given:
        return max(1, min(processes, chunks))
    per_worker = ROUNDS_PER_WORKER[compiled]
    worth = rounds // per_worker if surely else -(-rounds // per_worker)
    return max(1, min(processes, chunks, worth))

