"""Process machinery: the processes a run plays in, and keeping them from hanging.

Generic on purpose: it knows units of work (chunks, each a picklable task with an
``index``; a negative index is a warm-up) played by some agents, and nothing of what a
chunk is; the tournament passes in what it plays (:mod:`kc_sim.tournament`).

* :mod:`~kc_sim.processes.pool` - :class:`~kc_sim.processes.pool.WorkerPool`, joblib's
  loky pool as a context manager, started once; ``--jobs``;
* :mod:`~kc_sim.processes.backends` - in this process, loky (this process plays too) or
  dask: a function mapped over tasks, results in completion order, ``WorkerLost``;
* :mod:`~kc_sim.processes.watch` and :mod:`~kc_sim.processes.watchfile` - one watchdog
  per process, a watch per unit of work and per run, the watch files and their limits;
* :mod:`~kc_sim.processes.supervise` - the command's supervisor;
* :mod:`~kc_sim.processes.rederive` - a child process sharing an int64 block with this
  one, watched for progress and killed past a limit;
* :mod:`~kc_sim.processes.lifeline` - every process dies with its parent;
* :mod:`~kc_sim.processes.compat` - the only place that reaches a library's private parts.

Light: importing the package or its pool loads neither numba nor the play layer (the
command line starts workers before it loads numba).
"""
