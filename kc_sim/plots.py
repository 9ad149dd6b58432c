"""Figures of a run folder (``kc-sim plot RUN_DIR``): PNG files in ``RUN_DIR/figures/``.

One function per figure, each taking a run folder (or a loaded :class:`RunData`) and
returning the path of the PNG it wrote:

=====================  ============================  ===================================
function               file                          what it shows
=====================  ============================  ===================================
plot_head_to_head      head_to_head.png              how often the row agent finishes a
                                                     round ahead of the column agent
plot_penalties         penalties.png                 penalty per round, by agent
plot_seats             seats.png                     win rate by position in turn order
plot_round_length      round_length.png              turns per round, by end reason
plot_end_reasons       end_reasons.png               rounds ending out / blocked
=====================  ============================  ===================================

Every figure has a title, labelled axes and a caption line with the rule set, the
number of rounds (and deals), the agents and the seed. Figures are drawn on the Agg
canvas through matplotlib's object interface (no pyplot, no global backend switch), so
importing this module never changes the backend of a notebook.

**Intervals.** A tournament plays every deal several times (once per seating
rotation, and again in every line-up), so rounds on the same deal are not
independent: in self-play of a deterministic agent the rotations even replay the same
game. All intervals here are 95% intervals clustered by deal (the rotation group):
means use the cluster-robust (ratio) standard error; rates use a Wilson interval on the
effective sample size ``p (1 - p) / se**2`` (Kish), which equals the ordinary Wilson
interval when rounds are independent. ``summary.parquet`` keeps its independent-round
Wilson intervals.

**Seats.** The dealer is drawn from each deal's seed, so a seat number says little on
its own; what matters is the position in turn order: position 1 plays first (the seat
left of the dealer), position K last.

This module also holds the loading and interval helpers the report, the experiments
and the notebook share (:func:`load_run`, :func:`cluster_mean`, :func:`cluster_rate`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kc_sim.errors import UserError

Z95 = 1.959963984540054
FIGURES_DIR = "figures"
DPI = 110
#: figure name -> (file name, title), in the order the report shows them
FIGURES = {
    "head_to_head": "head_to_head.png",
    "penalties": "penalties.png",
    "seats": "seats.png",
    "round_length": "round_length.png",
    "end_reasons": "end_reasons.png",
}


# --- loading -----------------------------------------------------------------------

@dataclass
class RunData:
    """The rounds of a run as numpy arrays (one row per round, one column per seat)."""

    path: Path
    manifest: dict
    labels: list[str]            # agent names, index = agent code
    players: int                 # seats per table (K)
    rules: str                   # canonical rule spec
    mode: str                    # "rounds" or "matches"
    seed: int
    lineup: np.ndarray           # (n,)
    group: np.ndarray            # (n,) deal number: the cluster of the intervals
    rotation: np.ndarray         # (n,)
    agent: np.ndarray            # (n, K) agent code by seat
    penalty: np.ndarray          # (n, K) penalty by seat, -1 when the seat was not dealt in
    winner: np.ndarray           # (n,) winning seat, -1 when blocked
    first: np.ndarray            # (n,) seat that played first
    blocked: np.ndarray          # (n,) bool
    turns: np.ndarray            # (n,)
    actions: np.ndarray          # (n,)
    match: np.ndarray            # (n,) match id, -1 for single rounds
    matches: dict | None = None  # match rows: group, agent (m, K), total (m, K), win (m, K), rounds
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return len(self.group)

    @property
    def deals(self) -> int:
        """Distinct deals (rotation groups; the same group is the same deal in every line-up)."""
        if "deals" not in self._cache:
            self._cache["deals"] = _n_clusters(self.group)
        return self._cache["deals"]

    @property
    def rules_label(self) -> str:
        return rules_label(self.rules)

    @property
    def position(self) -> np.ndarray:
        """(n, K) position in turn order of each seat: 0 plays first."""
        if "position" not in self._cache:
            seats = np.arange(self.players)[None, :]
            self._cache["position"] = (seats - self.first[:, None]) % self.players
        return self._cache["position"]

    @property
    def winner_position(self) -> np.ndarray:
        """(n,) position in turn order of the winner, -1 when blocked."""
        return np.where(self.winner >= 0, (self.winner - self.first) % self.players, -1)

    def seat_of(self, a: int) -> np.ndarray:
        """(n,) seat of agent ``a`` in each round, -1 when it had no seat (or was not dealt in)."""
        key = ("seat_of", a)
        if key not in self._cache:
            here = (self.agent == a) & (self.penalty >= 0)
            self._cache[key] = np.where(here.any(axis=1), here.argmax(axis=1), -1)
        return self._cache[key]

    def agents_seen(self) -> list[int]:
        """Agent codes that played at least one round, in label order."""
        return [a for a in range(len(self.labels)) if ((self.agent == a) & (self.penalty >= 0)).any()]

    def caption(self) -> str:
        size = f"{self.n:,} rounds ({self.deals:,} deals)"
        if self.matches is not None:
            size = f"{len(self.matches['group']):,} matches, " + size
        agents = ", ".join(self.labels)
        return (f"rules: {self.rules_label} | {self.players} players | {size} | agents: {agents} | "
                f"seed {self.seed} | intervals: 95%, clustered by deal")


def rules_label(spec: str) -> str:
    """A short name of a rule set: the closest preset plus the switches that differ
    (``classic``, ``draw_first``, ``classic,draw=start,scoring=face``)."""
    from kc_sim.rules import PRESETS, parse_rules

    rs = parse_rules(spec)
    best = None
    for preset in PRESETS:
        base = parse_rules(preset)
        diff = []
        for f in dataclasses.fields(rs):
            v, b = getattr(rs, f.name), getattr(base, f.name)
            if v != b:
                diff.append(f"{f.name}={str(v).lower() if isinstance(v, bool) else v}")
        if best is None or len(diff) < len(best[1]):
            best = (preset, diff)
    return ",".join([best[0], *best[1]])


def _base_label(label: str) -> str:
    """``greedy#2`` -> ``greedy`` (copies of one agent in self-play)."""
    head, _, tail = label.rpartition("#")
    return head if head and tail.isdigit() else label


def _int(table, name: str, fill: int = -1, dtype=np.int64) -> np.ndarray:
    return table.column(name).fill_null(fill).to_numpy().astype(dtype)


def _codes(table, name: str, index: dict) -> np.ndarray:
    """A dictionary column of agent names as agent codes (-1 for null)."""
    col = table.column(name).combine_chunks()
    if not hasattr(col, "dictionary"):          # a plain string column
        vals = col.to_pylist()
        return np.array([index.get(v, -1) if v is not None else -1 for v in vals], np.int64)
    lookup = np.array([index.get(x, -1) for x in col.dictionary.to_pylist()] + [-1], np.int64)
    idx = col.indices.fill_null(len(lookup) - 1).to_numpy().astype(np.int64)
    return lookup[idx]


def load_run(run_dir) -> RunData:
    """Load a run folder (manifest and round parts; match parts when present).
    Raises :class:`UserError` when the folder is missing or holds no finished rounds."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from kc_sim import results as R

    if isinstance(run_dir, RunData):
        return run_dir
    path = Path(run_dir)
    if not path.is_dir():
        raise UserError(f"run folder {path} does not exist (make one with kc-sim tournament --out {path})")
    if not (path / R.MANIFEST_FILE).exists():
        raise UserError(f"{path} is not a run folder: it has no {R.MANIFEST_FILE} "
                        "(make one with kc-sim tournament --out DIR)")
    try:
        manifest = R.read_manifest(path)
        config = manifest["config"]
        labels = list(config["labels"])
        players = int(config["players"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise UserError(f"cannot read {path / R.MANIFEST_FILE}: {e}") from None
    parts = R.parts(path, R.ROUNDS_DIR)
    if not parts:
        raise UserError(f"{path} holds no rounds yet ({R.ROUNDS_DIR}/ is empty): finish the run first "
                        f"(rerun its command: {manifest.get('command', 'kc-sim tournament ...')})")
    cols = (["lineup", "group", "rotation", "match", "first", "winner", "end", "turns", "actions"]
            + [f"agent_{s}" for s in range(players)] + [f"penalty_{s}" for s in range(players)])
    try:
        t = pa.concat_tables([pq.read_table(p, columns=cols) for p in parts])
    except (OSError, ValueError, pa.ArrowException) as e:
        raise UserError(f"cannot read the rounds of {path}: {e}") from None
    index = {name: i for i, name in enumerate(labels)}
    end = t.column("end").combine_chunks()
    end = end.dictionary_decode() if hasattr(end, "dictionary") else end
    data = RunData(
        path=path, manifest=manifest, labels=labels, players=players, rules=config.get("rules", "classic"),
        mode=config.get("mode", "rounds"), seed=int(config.get("seed", 0)),
        lineup=_int(t, "lineup", dtype=np.int16), group=_int(t, "group"), rotation=_int(t, "rotation", dtype=np.int8),
        agent=np.stack([_codes(t, f"agent_{s}", index).astype(np.int16) for s in range(players)], axis=1),
        penalty=np.stack([_int(t, f"penalty_{s}", dtype=np.int16) for s in range(players)], axis=1),
        winner=_int(t, "winner", dtype=np.int8), first=_int(t, "first", dtype=np.int8),
        blocked=pc.equal(end, "blocked").fill_null(False).to_numpy(zero_copy_only=False).astype(bool),
        turns=_int(t, "turns", 0, np.int32), actions=_int(t, "actions", 0, np.int32), match=_int(t, "match"),
    )
    del t
    mparts = R.parts(path, R.MATCHES_DIR)
    if mparts:
        mcols = ["group", "rounds"] + [f"agent_{s}" for s in range(players)] + \
            [f"total_{s}" for s in range(players)] + ["winners"]
        m = pa.concat_tables([pq.read_table(p, columns=mcols) for p in mparts])
        winners = _int(m, "winners", 0)
        data.matches = {
            "group": _int(m, "group"), "rounds": _int(m, "rounds", 0),
            "agent": np.stack([_codes(m, f"agent_{s}", index) for s in range(players)], axis=1),
            "total": np.stack([_int(m, f"total_{s}", 0) for s in range(players)], axis=1),
            "win": np.stack([((winners >> s) & 1).astype(bool) for s in range(players)], axis=1),
        }
    return data


# --- intervals clustered by deal ---------------------------------------------------

def _select(x, cluster, mask):
    """The outcomes and their deal ids as arrays, restricted to ``mask`` when given."""
    x = np.asarray(x, dtype=np.float64)
    cluster = np.asarray(cluster, dtype=np.int64)
    return (x[mask], cluster[mask]) if mask is not None else (x, cluster)


def cluster_mean(x, cluster, mask=None, z: float = Z95) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` of ``x`` with a cluster-robust normal interval: the ratio
    estimator sum(x) / n over clusters (deals), standard error from the per-cluster
    residuals. NaNs when there is nothing to average."""
    x, cluster = _select(x, cluster, mask)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    s, n = _cluster_sums(x, cluster)
    g = len(s)
    mean = s.sum() / n.sum()
    if g < 2:
        return float(mean), math.nan, math.nan
    r = s - mean * n
    se = math.sqrt(g / (g - 1) * float((r * r).sum())) / n.sum()
    return float(mean), float(mean - z * se), float(mean + z * se)


def _cluster_sums(x: np.ndarray, cluster: np.ndarray):
    """Per-cluster sums of x and counts, over the clusters that occur."""
    lo, hi = (int(cluster.min()), int(cluster.max())) if len(cluster) else (0, 0)
    if lo >= 0 and hi < 4 * len(cluster) + 1024:          # deal numbers: dense, non-negative
        n = np.bincount(cluster, minlength=hi + 1)
        s = np.bincount(cluster, weights=x, minlength=hi + 1)
        keep = n > 0
        return s[keep], n[keep].astype(np.float64)
    _, inv = np.unique(cluster, return_inverse=True)
    return np.bincount(inv, weights=x), np.bincount(inv).astype(np.float64)


def _n_clusters(cluster: np.ndarray) -> int:
    return len(_cluster_sums(np.zeros(len(cluster)), cluster)[1])


def _wilson(k: float, n: float, z: float = Z95) -> tuple[float, float]:
    if n <= 0:
        return math.nan, math.nan
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / den
    lo = 0.0 if p <= 0 else max(0.0, centre - half)
    hi = 1.0 if p >= 1 else min(1.0, centre + half)
    return lo, hi


def cluster_rate(x, cluster, mask=None, z: float = Z95) -> tuple[float, float, float]:
    """``(rate, lo, hi)`` of a 0/1 outcome (or a score in [0, 1]): a Wilson interval on the
    effective sample size p (1 - p) / se**2, se clustered by deal. With no variation at
    all (p 0 or 1) the number of deals is the sample size."""
    x, cluster = _select(x, cluster, mask)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    p, lo, hi = cluster_mean(x, cluster, z=z)
    if math.isnan(lo):
        n_eff = float(_n_clusters(cluster))
    else:
        se = (hi - lo) / (2 * z)
        if 0 < p < 1 and se > 0:
            n_eff = p * (1 - p) / (se * se)
        elif 0 < p < 1:
            n_eff = 1e15                                  # no variation between deals at all
        else:
            n_eff = float(_n_clusters(cluster))
    lo, hi = _wilson(p * n_eff, n_eff, z)
    return float(p), lo, hi


def _fmt(v, lo, hi, digits: int, scale: float, unit: str, sign: str = "") -> str:
    """``v`` (times ``scale``) with its unit and, when known, its interval; ``sign="+"``
    prints the sign of differences."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    spec = f"{sign}.{digits}f"
    text = f"{scale * v:{spec}}{unit}"
    if lo is None or math.isnan(lo):
        return text
    return f"{text} [{scale * lo:{spec}}, {scale * hi:{spec}}]"


def fmt_pct(v, lo=None, hi=None, digits: int = 1) -> str:
    """``52.3% [52.1, 52.5]`` (or ``-`` for NaN)."""
    return _fmt(v, lo, hi, digits, 100, "%")


def fmt_pp(v, lo=None, hi=None, digits: int = 2) -> str:
    """A difference of rates in percentage points: ``+1.74 pp [+1.61, +1.87]``."""
    return _fmt(v, lo, hi, digits, 100, " pp", "+")


def fmt_signed(v, lo=None, hi=None, digits: int = 3) -> str:
    """A difference of means with its sign: ``+0.048 [+0.041, +0.054]``."""
    return _fmt(v, lo, hi, digits, 1, "", "+")


def fmt_num(v, lo=None, hi=None, digits: int = 2) -> str:
    """``2.60 [2.59, 2.62]`` (or ``-`` for NaN)."""
    return _fmt(v, lo, hi, digits, 1, "")


# --- the numbers behind the figures ----------------------------------------------------

def head_to_head(data: RunData) -> list[dict]:
    """One row per ordered pair of agents that met: rounds together, ``score`` (the row
    agent finished with a lower penalty than the other; ties count half; in 2-player
    rounds without a block this is the win rate), ``win`` (the row agent won the round),
    ``diff`` (mean penalty, row agent minus opponent), each with its interval."""
    rows = []
    seen = data.agents_seen()
    idx = np.arange(data.n)
    for a in seen:
        sa = data.seat_of(a)
        for b in seen:
            if a == b:
                continue
            sb = data.seat_of(b)
            both = (sa >= 0) & (sb >= 0)
            if not both.any():
                continue
            i = idx[both]
            pa, pb = data.penalty[i, sa[both]], data.penalty[i, sb[both]]
            score = np.where(pa < pb, 1.0, np.where(pa == pb, 0.5, 0.0))
            won = (data.winner[both] == sa[both]).astype(np.float64)
            g = data.group[both]
            rows.append({
                "agent": data.labels[a], "opponent": data.labels[b], "a": a, "b": b, "rounds": int(both.sum()),
                "score": cluster_rate(score, g), "win": cluster_rate(won, g),
                "diff": cluster_mean(pa - pb, g),
            })
    return rows


def agent_rows(data: RunData) -> list[dict]:
    """Per agent: rounds, win rate and mean penalty with intervals, penalty 0 share."""
    rows = []
    for a in data.agents_seen():
        s = data.seat_of(a)
        here = s >= 0
        i = np.flatnonzero(here)
        pen = data.penalty[i, s[here]].astype(np.float64)
        g = data.group[here]
        rows.append({"agent": data.labels[a], "a": a, "rounds": int(here.sum()),
                     "win": cluster_rate((data.winner[here] == s[here]).astype(np.float64), g),
                     "penalty": cluster_mean(pen, g)})
    return rows


def position_rows(data: RunData, agent: int | None = None) -> list[dict]:
    """Win rate by position in turn order (0 plays first), over all agents or one agent."""
    pos = data.position
    wpos = data.winner_position
    out = []
    for p in range(data.players):
        if agent is None:
            seat = (data.first + p) % data.players
            mask = data.penalty[np.arange(data.n), seat] >= 0
        else:
            s = data.seat_of(agent)
            mask = (s >= 0) & (pos[np.arange(data.n), np.maximum(s, 0)] == p)
        out.append({"position": p, "rounds": int(mask.sum()),
                    "win": cluster_rate((wpos == p).astype(np.float64), data.group, mask)})
    return out


def end_rows(data: RunData) -> dict:
    """Round length and end reasons, with intervals."""
    g = data.group
    return {
        "rounds": data.n, "deals": data.deals,
        "turns": cluster_mean(data.turns, g), "actions": cluster_mean(data.actions, g),
        "turns_median": float(np.median(data.turns)) if data.n else math.nan,
        "out": cluster_rate((~data.blocked).astype(np.float64), g),
        "blocked": cluster_rate(data.blocked.astype(np.float64), g),
    }


# --- drawing -----------------------------------------------------------------------

def _figure(width: float = 8.0, height: float = 5.2):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _finish(fig, data: RunData, title: str, name: str, out_dir) -> Path:
    import textwrap

    fig.suptitle(title, fontsize=13, fontweight="bold")
    cap = textwrap.fill(data.caption(), 150)
    lines = cap.count("\n") + 1
    fig.tight_layout(rect=(0, 0.035 * lines + 0.02, 1, 0.95))
    fig.text(0.01, 0.012, cap, fontsize=7.5, color="#444444", ha="left", va="bottom")
    out_dir = Path(out_dir) if out_dir is not None else data.path / FIGURES_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / FIGURES[name]
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, format="png", dpi=DPI)
    tmp.replace(path)
    return path


def _err(values) -> np.ndarray:
    """Asymmetric error bars from (v, lo, hi) triples, in percent."""
    v = np.array([x[0] for x in values])
    lo = np.array([x[1] for x in values])
    hi = np.array([x[2] for x in values])
    return np.maximum(np.nan_to_num(np.vstack([v - lo, hi - v]) * 100), 0.0)


def plot_head_to_head(run_dir, out_dir=None) -> Path:
    """Matrix: how often the row agent finishes a round ahead of the column agent (a
    lower penalty; ties count half), with 95% intervals. In 2-player rounds that are not
    blocked this is the row agent's win rate against the column agent."""
    data = load_run(run_dir)
    rows = head_to_head(data)
    seen = data.agents_seen()
    names = [data.labels[a] for a in seen]
    k = len(seen)
    pos = {a: i for i, a in enumerate(seen)}
    mat = np.full((k, k), np.nan)
    for r in rows:
        mat[pos[r["a"]], pos[r["b"]]] = r["score"][0]
    size = max(5.5, 1.6 * k + 3)
    fig = _figure(size, max(4.6, 1.2 * k + 2.4))
    ax = fig.add_subplot(1, 1, 1)
    dev = np.nanmax(np.abs(mat - 0.5)) if np.isfinite(mat).any() else 0.05
    dev = max(float(dev), 0.02)
    im = ax.imshow(mat, cmap="RdBu", vmin=0.5 - dev, vmax=0.5 + dev)
    for r in rows:
        i, j = pos[r["a"]], pos[r["b"]]
        v, lo, hi = r["score"]
        colour = "white" if abs(v - 0.5) > 0.6 * dev else "black"
        ax.text(j, i, f"{100 * v:.1f}%\n[{100 * lo:.1f}, {100 * hi:.1f}]\n{r['rounds']:,} rounds",
                ha="center", va="center", fontsize=8, color=colour)
    for i in range(k):
        ax.text(i, i, "-", ha="center", va="center", color="#888888")
    ax.set_xticks(range(k), names, rotation=20, ha="right")
    ax.set_yticks(range(k), names)
    ax.set_xlabel("opponent (column)")
    ax.set_ylabel("agent (row)")
    cb = fig.colorbar(im, ax=ax, shrink=0.85)
    cb.set_label("row agent ahead of column agent (share of rounds)")
    return _finish(fig, data, "Head-to-head: row agent finishes ahead of column agent", "head_to_head", out_dir)


def plot_penalties(run_dir, out_dir=None) -> Path:
    """Distribution of the penalty an agent takes per round (share of its rounds at each
    value), one line per agent; the legend gives each mean with its interval."""
    data = load_run(run_dir)
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    values = data.penalty[data.penalty >= 0]
    top = int(np.percentile(values, 99.5)) if len(values) else 1
    top = max(top, 5)
    for r, a in zip(agent_rows(data), data.agents_seen()):
        s = data.seat_of(a)
        here = s >= 0
        pen = data.penalty[np.flatnonzero(here), s[here]]
        counts = np.bincount(np.minimum(pen, top), minlength=top + 1) / max(len(pen), 1)
        m, lo, hi = r["penalty"]
        ax.step(np.arange(top + 1), 100 * counts, where="mid", marker="o", markersize=3, linewidth=1.3,
                label=f"{r['agent']}: mean {fmt_num(m, lo, hi)}")
    ax.set_yscale("log")
    ax.set_xlabel(f"penalty for the cards left in hand at the end of the round (last point: {top} or more)")
    ax.set_ylabel("share of the agent's rounds (%, log scale)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, title="agent: mean penalty [95% CI]", title_fontsize=8)
    return _finish(fig, data, "Penalty per round, by agent", "penalties", out_dir)


def plot_seats(run_dir, out_dir=None) -> Path:
    """Win rate by position in turn order (1 plays first, left of the dealer), over all
    agents and for each agent, with 95% intervals; the dashed line is an equal share of
    the rounds that were not blocked."""
    data = load_run(run_dir)
    k = data.players
    series = [("all agents", position_rows(data))]
    seen = data.agents_seen()
    if len({_base_label(data.labels[a]) for a in seen}) > 1:      # not self-play
        series += [(data.labels[a], position_rows(data, a)) for a in seen]
    fig = _figure(max(8.0, 1.4 * k + 4))
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / len(series)
    x = np.arange(k)
    for i, (name, rows) in enumerate(series):
        vals = [r["win"] for r in rows]
        ax.bar(x + (i - (len(series) - 1) / 2) * width, [100 * v[0] for v in vals], width,
               yerr=_err(vals), capsize=3, label=name, alpha=0.9 if i == 0 else 0.75,
               color="#333333" if i == 0 else None)
    fair = 100 * (1 - data.blocked.mean()) / k if data.n else 100 / k
    ax.axhline(fair, color="#aa3333", linestyle="--", linewidth=1, label=f"equal share ({fair:.1f}%)")
    ax.set_xticks(x, [f"{p + 1}" + (" (first)" if p == 0 else " (last)" if p == k - 1 else "") for p in range(k)])
    ax.set_xlabel("position in turn order (1 = plays first, left of the dealer)")
    ax.set_ylabel("win rate (% of rounds)")
    vals = [100 * r["win"][2] for _, rows in series for r in rows if not math.isnan(r["win"][2])]
    ax.set_ylim(0, max(vals + [fair]) * 1.15)
    ax.legend(fontsize=8, ncol=2)
    ax.grid(True, axis="y", alpha=0.3)
    return _finish(fig, data, "Win rate by seat (position in turn order)", "seats", out_dir)


def plot_round_length(run_dir, out_dir=None) -> Path:
    """Turns per round, stacked by how the round ended (out or blocked)."""
    data = load_run(run_dir)
    e = end_rows(data)
    fig = _figure()
    ax = fig.add_subplot(1, 1, 1)
    top = int(data.turns.max()) if data.n else 1
    edges = np.arange(0, top + 2) - 0.5
    out_counts = np.histogram(data.turns[~data.blocked], bins=edges)[0] / max(data.n, 1)
    blk_counts = np.histogram(data.turns[data.blocked], bins=edges)[0] / max(data.n, 1)
    centres = np.arange(0, top + 1)
    ax.bar(centres, 100 * out_counts, width=0.9, label=f"out ({fmt_pct(*e['out'])})", color="#4477aa")
    ax.bar(centres, 100 * blk_counts, width=0.9, bottom=100 * out_counts,
           label=f"blocked ({fmt_pct(*e['blocked'], digits=2)})", color="#cc6677")
    m, lo, hi = e["turns"]
    ax.axvline(m, color="black", linestyle="--", linewidth=1, label=f"mean {fmt_num(m, lo, hi)} turns")
    ax.set_xlabel("turns in the round (turns started, all players)")
    ax.set_ylabel("share of rounds (%)")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    return _finish(fig, data, "Round length", "round_length", out_dir)


def plot_end_reasons(run_dir, out_dir=None) -> Path:
    """How rounds end: a player goes out, or the round is blocked; per line-up when
    there are several, with 95% intervals and counts."""
    data = load_run(run_dir)
    lineups = data.manifest.get("schedule", {}).get("lineups") or data.manifest["config"].get("lineups", [])
    groups = [("all rounds", np.ones(data.n, bool))]
    if len(lineups) > 1:
        for li, lu in enumerate(lineups):
            groups.append((" vs ".join(data.labels[i] for i in lu), data.lineup == li))
    fig = _figure(max(8.0, 1.1 * len(groups) + 4))
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(len(groups))
    for j, (reason, colour) in enumerate([("out", "#4477aa"), ("blocked", "#cc6677")]):
        vals = []
        for _, mask in groups:
            flag = data.blocked if reason == "blocked" else ~data.blocked
            vals.append(cluster_rate(flag.astype(np.float64), data.group, mask))
        bars = ax.bar(x + (j - 0.5) * 0.38, [100 * v[0] for v in vals], 0.38, yerr=_err(vals), capsize=3,
                      color=colour, label=reason)
        for b, (_, mask), v in zip(bars, groups, vals):
            n = int((flag & mask).sum())
            ax.text(b.get_x() + b.get_width() / 2, b.get_height() + 2, f"{100 * v[0]:.2f}%\n({n:,})",
                    ha="center", va="bottom", fontsize=7)
    ax.set_xticks(x, [g[0] for g in groups], rotation=15 if len(groups) > 3 else 0, ha="right" if len(groups) > 3 else "center")
    ax.set_ylim(0, 120)
    ax.set_xlabel("rounds" if len(groups) == 1 else "line-up")
    ax.set_ylabel("share of rounds (%)")
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(True, axis="y", alpha=0.3)
    return _finish(fig, data, "End reasons: out vs blocked", "end_reasons", out_dir)


PLOTTERS = {
    "head_to_head": plot_head_to_head,
    "penalties": plot_penalties,
    "seats": plot_seats,
    "round_length": plot_round_length,
    "end_reasons": plot_end_reasons,
}


def plot_all(run_dir, out_dir=None) -> dict[str, Path]:
    """Every figure of a run; returns ``{name: path}`` in report order."""
    data = load_run(run_dir)
    return {name: fn(data, out_dir) for name, fn in PLOTTERS.items()}
