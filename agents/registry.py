"""Finding agents by name: built-ins, ``package.module:Name`` and ``path/to/file.py:Name``.

``Name`` is either a compiled policy (a numba dispatcher compiled with
``kc_sim.core.policy.POLICY_SIG``, e.g. made with ``compiled_policy``) or a subclass of
:class:`agents.base.PythonAgent`. A loaded agent is named by the text it was loaded
by; built-in aliases resolve to the canonical name (``merger`` -> ``pile-merger``).
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
from functools import lru_cache
from pathlib import Path

from agents.base import AgentSpec, PythonAgent
from kc_sim.errors import UserError

__all__ = ["ALIASES", "BASELINES", "builtin_agents", "builtin_names", "load_agent", "spec_from_object"]

#: alias -> canonical built-in name
ALIASES = {"merger": "pile-merger"}
#: the four baseline agents new agents are measured against
BASELINES = ("random", "greedy", "king-first", "pile-merger")
LOAD_HELP = "or give package.module:Name or path/to/file.py:Name (a compiled policy or a PythonAgent subclass)"


def _doc_line(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split("\n\n")[0].split())


@lru_cache(maxsize=None)
def _builtins() -> dict[str, AgentSpec]:
    from agents.greedy import greedy_policy
    from agents.king_first import king_first_policy
    from agents.merger import merger_policy
    from agents.planner import planner_policy
    from agents.sampler import DEFAULT_BUDGET, sampler_policy
    from kc_sim.core.policy import random_policy

    specs = [
        AgentSpec("random", "a uniformly random legal placement or pile move; stops only when none is left",
                  policy=random_policy, source="random"),
        AgentSpec("greedy", "sheds as many cards as it can, highest rank first; moves a pile only to place a card now",
                  policy=greedy_policy, source="greedy"),
        AgentSpec("king-first", "puts every king it can into a corner first, then plays like greedy",
                  policy=king_first_policy, source="king-first"),
        AgentSpec("pile-merger", "makes every pile move it can, fills freed sides with its highest cards, "
                  "then plays like greedy", policy=merger_policy, source="pile-merger"),
        AgentSpec("planner", "searches every order of its turn's placements and pile moves and plays the line "
                  "whose end position scores best: the penalty kept, weighed against what it opens to the next player",
                  policy=planner_policy, source="planner"),
        AgentSpec("sampler", f"determinized Monte Carlo over the planner's best lines ({DEFAULT_BUDGET} sampled "
                  "worlds per decision; sampler:N for N)", policy=sampler_policy, source="sampler"),
    ]
    out = {s.name: s for s in specs}
    for alias, name in ALIASES.items():
        out[alias] = out[name]
    return out


def builtin_agents() -> dict[str, AgentSpec]:
    """The built-in agents by name, aliases included (an alias maps to the canonical spec)."""
    return dict(_builtins())


def builtin_names() -> list[str]:
    """The canonical built-in names (no aliases)."""
    return [n for n in _builtins() if n not in ALIASES]


def builtin_labels() -> dict[str, str]:
    """Each canonical built-in name with its aliases and parameterised form, e.g.
    ``pile-merger (alias merger)``, ``sampler (or sampler:N)``."""
    labels = {}
    for n in builtin_names():
        alias = [a for a, c in ALIASES.items() if c == n]
        text = f"{n} (alias {', '.join(alias)})" if alias else n
        if n in PARAMETERISED:
            text += f" (or {n}:N)"
        labels[n] = text
    return labels


def _known_text() -> str:
    return ", ".join(builtin_labels().values())


def load_agent(name) -> AgentSpec:
    """The agent called ``name``; unknown names get the known ones and the closest match."""
    if isinstance(name, AgentSpec):
        return name
    if not isinstance(name, str) or not name.strip():
        raise UserError(f"bad agent name {name!r}: expected a built-in name ({_known_text()}), {LOAD_HELP}")
    name = name.strip()
    known = _builtins()
    key = name.lower().replace("_", "-")
    if key in known:
        return known[key]
    param = _parameterised(key)
    if param is not None:
        return param
    if ":" in name and not name.endswith(":"):
        where, attr = name.rsplit(":", 1)
        if where and attr.isidentifier():
            module = _load_file(where) if _is_path(where) else _import(where)
            if not hasattr(module, attr):
                defined = [k for k, v in vars(module).items() if _is_agent_object(v)]
                close = difflib.get_close_matches(attr, defined, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                listed = f"; agents it defines: {', '.join(defined)}" if defined else ""
                raise UserError(f"bad agent {name!r}: {where} has no {attr!r}{hint}{listed}")
            return spec_from_object(getattr(module, attr), name)
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.5)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise UserError(f"unknown agent {name!r}{hint}: known agents are {_known_text()}, {LOAD_HELP}")


#: built-in agents that take one integer option after a colon: name -> (option, lowest, highest)
PARAMETERISED = {"sampler": ("worlds sampled per decision", 1, 4096)}


def _parameterised(key: str):
    """``sampler:N`` (or ``sampler-N``): a built-in with its integer option (None if ``key`` is
    not of that form). The canonical name is ``sampler-N`` (results label agents by it; a
    colon would read as ``module:Name``), and ``sampler`` for the default option."""
    m = re.fullmatch(r"([a-z][a-z-]*?)[:-](.*)", key)
    if m is None or m.group(1) not in PARAMETERISED:
        return None
    base, value = m.group(1), m.group(2)
    what, lo, hi = PARAMETERISED[base]
    if not value.isdigit() or not lo <= int(value) <= hi:
        raise UserError(f"bad agent {key!r}: {base}:N takes N = {what}, an integer from {lo} to {hi}")
    return _parameterised_spec(base, int(value))


@lru_cache(maxsize=None)
def _parameterised_spec(base: str, value: int) -> AgentSpec:
    if base == "sampler":
        from agents.sampler import DEFAULT_BUDGET, sampler_with_budget
        name = "sampler" if value == DEFAULT_BUDGET else f"sampler-{value}"
        return AgentSpec(name, f"the sampler with {value} sampled worlds per decision",
                         policy=sampler_with_budget(value), source=name)
    raise KeyError(base)  # pragma: no cover


def _is_path(where: str) -> bool:
    return where.endswith(".py") or "/" in where or "\\" in where


def _import(module_name: str):
    try:
        return importlib.import_module(module_name)
    except ImportError as e:
        raise UserError(f"cannot import module {module_name!r} ({e}); check the name and that it is on the "
                        "Python path, or give path/to/file.py:Name") from None


def _load_file(where: str):
    path = Path(where).expanduser()
    if not path.is_file():
        raise UserError(f"bad agent file {where!r}: no such file (expected path/to/file.py:Name)")
    path = path.resolve()
    mod_name = "kc_sim_user_" + path.stem + "_" + hashlib.sha1(str(path).encode()).hexdigest()[:10]
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise UserError(f"bad agent file {where!r}: not a Python module (expected a .py file)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    added = str(path.parent) not in sys.path
    if added:  # let the file import its neighbours
        sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[mod_name]
        raise UserError(f"bad agent file {where!r}: importing it raised {type(e).__name__}: "
                        f"{' '.join(str(e).split())}") from e
    finally:
        if added:
            sys.path.remove(str(path.parent))
    return module


def _is_dispatcher(obj) -> bool:
    from numba.core.dispatcher import Dispatcher

    return isinstance(obj, Dispatcher)


def _is_agent_object(obj) -> bool:
    return _is_dispatcher(obj) or (inspect.isclass(obj) and issubclass(obj, PythonAgent) and obj is not PythonAgent
                                   and not inspect.isabstract(obj))


def spec_from_object(obj, name: str) -> AgentSpec:
    """An AgentSpec for a compiled policy or a PythonAgent subclass, named ``name``."""
    if _is_dispatcher(obj):
        from numba import types

        from kc_sim.core.policy import POLICY_SIG

        args = POLICY_SIG.args
        if args not in obj.overloads:
            try:
                obj.compile(POLICY_SIG)
            except Exception as e:
                raise UserError(f"bad agent {name!r}: a numba function that does not compile with the policy "
                                f"signature policy(state int64[::1], seat int64, mem int64[::1]) -> int64 "
                                f"({type(e).__name__}); decorate it with kc_sim.core.policy.compiled_policy") from e
        ret = obj.overloads[args].signature.return_type
        if ret != types.int64:
            raise UserError(f"bad agent {name!r}: its policy returns {ret}, expected int64 (an action id); "
                            "decorate it with kc_sim.core.policy.compiled_policy")
        return AgentSpec(name, _doc_line(obj.py_func) or "compiled policy", policy=obj, source=name)
    if inspect.isclass(obj) and issubclass(obj, PythonAgent):
        if inspect.isabstract(obj):
            raise UserError(f"bad agent {name!r}: {obj.__name__} does not implement act(obs)")
        return AgentSpec(name, _doc_line(obj) or "Python agent", factory=obj, source=name)
    if isinstance(obj, PythonAgent):
        raise UserError(f"bad agent {name!r}: an instance; give the PythonAgent subclass itself "
                        f"({type(obj).__name__}), the runner makes one instance per seat")
    raise UserError(f"bad agent {name!r}: got {type(obj).__name__}, expected a compiled policy "
                    "(kc_sim.core.policy.compiled_policy) or a subclass of agents.base.PythonAgent")
