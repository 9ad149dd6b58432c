"""The columns of a run's round and match parts, defined once: name, type, meaning.

:data:`ROUND_COLUMNS` and :data:`MATCH_COLUMNS` list the columns in file order. Three
places follow them, so they cannot drift apart:

* the worker turns the core's round rows into compact numpy columns
  (:func:`compact_rounds`, :func:`compact_matches`), typed as listed here;
* the parent turns those into the arrow table of a part (:func:`rounds_table`,
  :func:`matches_table`), column by column in the order listed here;
* readers name the columns they read through :func:`seat_names` and the constants
  below, and turn an ``agent_<s>`` column into agent indices with :func:`agent_codes`
  (the one home of that rule: :class:`kc_sim.runs.RunReader` and every reader of parts),
  a part's agents and values by seat into arrays with :func:`seat_arrays`.

A column listed once with ``per_seat`` is one column per seat: ``agent_0``, ``agent_1``,
... (``k`` seats; seats are match seats when matches are played). A ``nullable`` integer
column stores negative compact values as null. docs/formats.md describes the same
columns for readers of the files.

A part's key-value metadata holds two entries (:data:`TALLY_KEY`, :data:`CHUNK_KEY`).

This module is imported by the workers: numpy only at the top (pyarrow is imported by the
functions that build tables, which only the parent calls).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kc_sim.core import rows
from kc_sim.core.rows import ROUND_COLS
from kc_sim.stats.pairs import agent_index

if TYPE_CHECKING:
    import pyarrow as pa

END_VALUES = ("out", "blocked")        # end codes 1, 2 of the core
AGENT = "agent_"                       # agent_<s>: agent name in seat s
PENALTY = "penalty_"                   # penalty_<s>: penalty of seat s
TOTAL = "total_"                       # total_<s>: match penalty total of seat s
WIN = "win_"                           # win_<s>: seat s shares the match win
LUCK = "luck_"                         # luck_<feature>_<s>: draw control variate of seat s (runs played with --luck)
TALLY_KEY = "kc_sim.tally"             # round part metadata: the chunk's summary statistics (JSON)
CHUNK_KEY = "kc_sim.chunk"             # part metadata: which run and chunk wrote it (JSON)


@dataclass(frozen=True)
class Column:
    """One column of a part. ``kind`` says where its values come from: ``core`` (column
    ``source`` of the core's round or match rows, typed ``dtype``), ``chunk`` (the same
    value on every row of the part), ``worker`` (numpy values the worker computes),
    ``derived`` (computed from other columns when the table is built)."""

    name: str
    arrow: str                 # the type in the file
    meaning: str
    kind: str = "core"
    dtype: str | None = None   # numpy dtype of the compact values (None: not compact)
    source: int | None = None  # column of the core's rows (kind "core")
    nullable: bool = False     # negative values are stored as null
    per_seat: bool = False     # one column per seat: name + seat number
    scale: int = 1             # the core's rows hold the value times this (fixed point)

    def names(self, k: int) -> list[str]:
        return seat_names(self.name, k) if self.per_seat else [self.name]


ROUND_COLUMNS = (
    Column("chunk", "int32", "chunk that played the round (part file number)", "chunk"),
    Column("lineup", "int16", "line-up index (manifest schedule.lineups)", "chunk"),
    Column("group", "int64", "deal number (the same deals in every line-up and seating)", "worker", "int64"),
    Column("seating", "int16", "seating q (manifest schedule.seatings[q]): line-up position q[s] sits in seat s",
           "worker", "int16"),
    Column("match", "int64", "match id when matches are played", "core", "int64", rows.C_MATCH, True),
    Column("match_round", "int16", "round number in the match (0 first)", "core", "int16", rows.C_MATCH_ROUND, True),
    Column("seed", "int64", "deal seed of the round", "core", "int64", rows.C_SEED),
    Column("players", "int8", "seats dealt in (fewer than k after an elimination)", "derived"),
    Column("dealer", "int8", "dealer seat", "core", "int8", rows.C_DEALER),
    Column("first", "int8", "seat of the first player", "core", "int8", rows.C_FIRST),
    Column(AGENT, "dictionary", "agent name in seat s (one dictionary for the run)", "derived", per_seat=True),
    Column(PENALTY, "int16", "penalty of seat s (null: seat not in the round)", "core", "int16", rows.C_PENALTY,
           True, True),
    Column("winner", "int8", "winning seat, null when the round was blocked", "core", "int8", rows.C_WINNER, True),
    Column("winner_agent", "dictionary", "its agent name, null when blocked", "derived"),
    Column("end", "dictionary", "out or blocked (compact: the core's end code 1 or 2)", "core", "int8", rows.C_END),
    Column("turns", "int32", "turns started", "core", "int32", rows.C_TURNS),
    Column("actions", "int32", "placements and pile moves made", "core", "int32", rows.C_ACTIONS),
    Column("stock_left", "int16", "cards left in the stock", "core", "int16", rows.C_STOCK_LEFT),
)

#: the draw control variates (kc_sim.core.draw_luck), after ROUND_COLUMNS in the parts of a run
#: played with --luck only: per feature, the seat's sum of f(c) - mean of f over the stock at its draws
LUCK_COLUMNS = tuple(
    Column(f"{LUCK}{f}_", "float64", f"draw control variate {f} of seat s (sum over its draws; expectation 0)",
           "core", "float64", rows.C_LUCK + j * rows.MAX_SEATS, per_seat=True, scale=rows.LUCK_SCALE)
    for j, f in enumerate(rows.LUCK_FEATURES))

MATCH_COLUMNS = (
    Column("chunk", "int32", "chunk that played the match (part file number)", "chunk"),
    Column("lineup", "int16", "line-up index", "chunk"),
    Column("group", "int64", "deal number", "worker", "int64"),
    Column("seating", "int16", "seating (manifest schedule.seatings)", "worker", "int16"),
    Column("match", "int64", "match id = (lineup * groups + group) * seatings + seating", "worker", "int64"),
    Column("seed", "int64", "match seed", "core", "int64", rows.M_SEED),
    Column("rounds", "int16", "rounds played in the match", "core", "int16", rows.M_ROUNDS),
    Column(AGENT, "dictionary", "agent name in seat s", "derived", per_seat=True),
    Column(TOTAL, "int32", "penalty total of seat s", "core", "int32", rows.M_TOTAL, per_seat=True),
    Column("winners", "int16", "bit mask of the seats sharing the win", "core", "int16", rows.M_WINNERS),
    Column(WIN, "bool", "seat s shares the win", "derived", per_seat=True),
)

#: the round columns a tournament's game records are replayed from (with agent_<s>, penalty_<s>)
RECORD_COLUMNS = ("seed", "dealer", "match", "match_round", "group")


def seat_names(prefix: str, k: int) -> list[str]:
    """``prefix0 .. prefix(k-1)``: the names of a per-seat column."""
    return [f"{prefix}{s}" for s in range(k)]


def seats_of(column_names) -> int:
    """The number of seats of a part, from its column names."""
    return sum(1 for f in column_names if f.startswith(AGENT))


def agent_codes(column, index: dict) -> np.ndarray:
    """An ``agent_<s>`` column (arrow: dictionary or plain strings) as agent indices from
    ``index`` (name -> index); -1 for null or a name not in ``index``."""
    col = column.combine_chunks()
    if not hasattr(col, "dictionary"):          # a plain string column
        return agent_index(col.to_pylist(), index)
    lookup = agent_index(col.dictionary.to_pylist() + [None], index)
    return lookup[col.indices.fill_null(len(lookup) - 1).to_numpy().astype(np.int64)]


def seat_arrays(table, k: int, values: str, index: dict) -> tuple[np.ndarray, np.ndarray]:
    """The per-seat columns of a part's arrow ``table`` (``k`` seats) as two (rows, k) int64
    arrays: the agent indices by seat (:func:`agent_codes` over ``index``) and ``values<s>``
    by seat (``penalty_`` or ``total_``), nulls as -1: what every statistic over a part's
    rows takes."""
    codes = np.empty((table.num_rows, k), np.int64)
    vals = np.empty((table.num_rows, k), np.int64)
    for s in range(k):
        codes[:, s] = agent_codes(table.column(f"{AGENT}{s}"), index)
        vals[:, s] = table.column(f"{values}{s}").fill_null(-1).to_numpy()
    return codes, vals


def column_names(columns, k: int) -> list[str]:
    """Every column name of a part with ``k`` seats, in file order."""
    return [n for c in columns for n in c.names(k)]


# --- in the worker: compact numpy columns ---------------------------------------------------

def _from_core(columns, rows: np.ndarray, k: int) -> dict:
    out = {}
    for c in columns:
        if c.kind != "core":
            continue
        src = rows[:, c.source:c.source + k] if c.per_seat else rows[:, c.source]
        out[c.name.rstrip("_") if c.per_seat else c.name] = src.astype(c.dtype) / c.scale if c.scale != 1 \
            else src.astype(c.dtype)
    return out


def compact_rounds(rows: np.ndarray, k: int, group, seating) -> dict:
    """The compact columns of round rows of the core (``rows.C_*``): every ``core`` and
    ``worker`` column of :data:`ROUND_COLUMNS` by name (``penalty``: (rows, k)), and those of
    :data:`LUCK_COLUMNS` when the rows hold them."""
    return {"group": np.ascontiguousarray(group, dtype=np.int64),
            "seating": np.ascontiguousarray(seating, dtype=np.int16),
            **_from_core(round_columns(rows.shape[1] > ROUND_COLS), rows, k)}


def round_columns(luck: bool) -> tuple:
    """The columns of a round part: :data:`ROUND_COLUMNS`, then :data:`LUCK_COLUMNS` with ``luck``."""
    return ROUND_COLUMNS + LUCK_COLUMNS if luck else ROUND_COLUMNS


def compact_matches(rows: np.ndarray, k: int, group, seating, match) -> dict:
    """The compact columns of match rows of the core (``rows.M_*``) (``total``: (rows, k))."""
    return {"group": np.asarray(group, dtype=np.int64), "seating": np.asarray(seating).astype(np.int16),
            "match": np.asarray(match, dtype=np.int64), **_from_core(MATCH_COLUMNS, rows, k)}


def seat_agents(lineup, seatings, seating: np.ndarray) -> np.ndarray:
    """(rows, k) agent index by seat: in seating ``q = seatings[seating[i]]`` line-up
    position ``q[s]`` sits in seat ``s`` (the schedule's seatings, :mod:`kc_sim.tournament.schedule`)."""
    lu = np.asarray(lineup, dtype=np.int64)
    return lu[np.asarray(seatings, dtype=np.int64).reshape(-1, len(lu))[np.asarray(seating, dtype=np.int64)]]


# --- in the parent: arrow tables -------------------------------------------------------------

def _values(c: Column, values: np.ndarray) -> pa.Array:
    """A compact column as arrow: typed ``c.dtype``, negative entries null when nullable."""
    import pyarrow as pa  # lazy: the workers import this module and never build tables
    values = values.astype(c.dtype, copy=False)
    return pa.array(values, mask=values < 0) if c.nullable else pa.array(values)


def _names(codes: np.ndarray, names: pa.Array) -> pa.DictionaryArray:
    """Agent indices (negative: null) as a dictionary column over the run's agent names."""
    import pyarrow as pa  # lazy: as in _values
    idx = pa.array(codes.astype(np.int16, copy=False), mask=codes < 0)
    return pa.DictionaryArray.from_arrays(idx, names)


def _table(columns, cols: dict, n: int, k: int, chunk_values: dict, derived) -> pa.Table:
    """The arrow table of a part: for every column in order, its values by kind."""
    import pyarrow as pa  # lazy: as in _values
    data = {}
    for c in columns:
        if c.kind == "chunk":
            data[c.name] = pa.array(np.full(n, chunk_values[c.name], c.arrow))
        elif c.kind == "derived" or c.arrow == "dictionary":
            data.update(derived(c))
        elif c.per_seat:
            seat_values = cols[c.name.rstrip("_")]
            data.update({f"{c.name}{s}": _values(c, seat_values[:, s]) for s in range(k)})
        else:
            data[c.name] = _values(c, cols[c.name])
    return pa.table(data)


def rounds_table(cols: dict, chunk: int, lineup_index: int, lineup, seatings, agent_names) -> pa.Table:
    """The arrow table of one chunk's rounds from the compact columns a worker returns."""
    import pyarrow as pa  # lazy: as in _values
    names = pa.array(list(agent_names), pa.string())
    pen = cols["penalty"]
    n, k = pen.shape
    seat_agent = seat_agents(lineup, seatings, cols["seating"])
    winner = cols["winner"].astype(np.int64)

    def derived(c: Column) -> dict:
        if c.name == "players":
            return {"players": pa.array((pen >= 0).sum(axis=1).astype(np.int8))}
        if c.name == AGENT:
            return {f"{AGENT}{s}": _names(seat_agent[:, s], names) for s in range(k)}
        if c.name == "winner_agent":
            win_agent = np.where(winner >= 0, seat_agent[np.arange(n), np.maximum(winner, 0)], -1)
            return {"winner_agent": _names(win_agent, names)}
        if c.name == "end":
            return {"end": pa.DictionaryArray.from_arrays(pa.array((cols["end"] - 1).astype(np.int8)),
                                                          pa.array(END_VALUES, pa.string()))}
        raise KeyError(c.name)

    return _table(round_columns(LUCK_COLUMNS[0].name.rstrip("_") in cols), cols, n, k,
                  {"chunk": chunk, "lineup": lineup_index}, derived)


def matches_table(cols: dict, chunk: int, lineup_index: int, lineup, seatings, agent_names) -> pa.Table:
    """The arrow table of one chunk's matches from the compact columns a worker returns."""
    import pyarrow as pa  # lazy: as in _values
    names = pa.array(list(agent_names), pa.string())
    n, k = cols["total"].shape
    seat_agent = seat_agents(lineup, seatings, cols["seating"])
    winners = cols["winners"].astype(np.int64)

    def derived(c: Column) -> dict:
        if c.name == AGENT:
            return {f"{AGENT}{s}": _names(seat_agent[:, s], names) for s in range(k)}
        if c.name == WIN:
            return {f"{WIN}{s}": pa.array(((winners >> s) & 1).astype(bool)) for s in range(k)}
        raise KeyError(c.name)

    return _table(MATCH_COLUMNS, cols, n, k, {"chunk": chunk, "lineup": lineup_index}, derived)
