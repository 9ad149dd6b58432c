"""The run folder: one home for its layout, its manifest, its parts and how they are read.

* :mod:`~kc_sim.runs.layout`: every name in a run folder and the path of a chunk's parts;
* :mod:`~kc_sim.runs.schema`: the columns of the parts, defined once (and a part's metadata keys);
* :mod:`~kc_sim.runs.manifest`: ``manifest.json`` as typed objects;
* :mod:`~kc_sim.runs.parts`: parquet files written whole, their digests, what a part says of itself;
* :mod:`~kc_sim.runs.lock`: one run at a time in a folder;
* :mod:`~kc_sim.runs.folder`: :class:`RunFolder`, the folder while a run writes it (resume,
  verified parts, a rebuilt manifest);
* :mod:`~kc_sim.runs.reader`: :class:`RunReader`, how every reader of a run gets at it,
  each part checked before it is read.

Below the tournament and the analysis, above the statistics and the game records: it knows
the format of a run, not how a run is played. Light to import (numpy only at the top).

    from kc_sim.runs import read_rounds, read_summary, read_manifest
    df = read_rounds("results/greedy-merger_2p_200000r_s0")
"""

from kc_sim.runs.folder import ChunkSpec, RunFolder, RunSpec
from kc_sim.runs.manifest import (
    FORMAT,
    ChunkEntry,
    Manifest,
    PairStop,
    RunConfig,
    ScheduleInfo,
    StopInfo,
    Until,
    read_manifest,
)
from kc_sim.runs.reader import RunReader, read_matches, read_rounds, read_summary

__all__ = ["FORMAT", "ChunkEntry", "ChunkSpec", "Manifest", "PairStop", "RunConfig", "RunFolder", "RunReader",
           "RunSpec", "ScheduleInfo", "StopInfo", "Until", "read_manifest", "read_matches", "read_rounds",
           "read_summary"]
