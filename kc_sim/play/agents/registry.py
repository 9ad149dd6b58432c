"""Finding agents by name: registered agents, ``package.module:Name`` and ``path/to/file.py:Name``.

Registered agents are found through the entry-point group ``kc_sim.agents`` (the Python
packaging plugin mechanism): each entry names an :class:`~kc_sim.play.agents.interface.AgentSpec`, a
compiled policy or a :class:`~kc_sim.play.agents.interface.PythonAgent` subclass. kc-sim's own
distribution registers the built-ins (``agents/``) this way, and any installed package can
add its own with, in its ``pyproject.toml``::

    [project.entry-points."kc_sim.agents"]
    my-agent = "my_package.my_module:MyAgent"

Only the entry asked for is imported, so a broken agent module breaks only its own name.
An entry whose spec has another canonical name is an alias (``merger`` -> ``pile-merger``).
A name ``prefix:rest`` whose prefix is registered in the group ``kc_sim.agent_loaders`` is made
by that loader, ``loader(rest, name) -> AgentSpec``: kc-sim registers ``sb3:path/model.zip``
(a trained policy) and ``openspiel:ismcts`` this way, so agents that need the environments'
encodings or other libraries are found without this layer importing them.
``module:Name`` and ``file.py:Name`` load a compiled policy or a PythonAgent subclass
directly; a loaded agent is named by the text it was loaded by.

The compiled agents kc-sim ships (registered here by kc-sim's own distribution, and their
options such as ``random:N``) are **trusted** (:func:`trusted`): the compiled loop compiles
them into itself and does not check their actions again (kc_sim.core.policy_set). Every
other agent, installed by another package or loaded from a module or file, is checked at
every decision.
"""

from __future__ import annotations

import copyreg
import difflib
import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import re
import sys
from functools import lru_cache
from pathlib import Path

from numba import types
from numba.core.dispatcher import Dispatcher

from kc_sim.core.policy import POLICY_SIG
from kc_sim.errors import UserError
from kc_sim.play.agents.interface import AgentSpec, PythonAgent
from kc_sim.play.agents.names import parse_agent_list

__all__ = ["BASELINES", "GROUP", "LOADERS", "broken_agents", "loader_prefixes", "builtin_agents", "builtin_labels", "builtin_names", "load_agent",
           "load_agents", "names_code", "parse_agent_list", "spec_from_object", "trusted"]

#: the entry-point group agents are registered in
GROUP = "kc_sim.agents"
#: the entry-point group of name prefixes that make agents (``sb3:``, ``openspiel:``)
LOADERS = "kc_sim.agent_loaders"
#: the four baseline agents new agents are measured against
BASELINES = ("random", "greedy", "king-first", "pile-merger")
LOAD_HELP = ("or give package.module:Name or path/to/file.py:Name (a compiled policy or a PythonAgent subclass), "
             "net:path/model.zip (a network trained by kc-sim train), sb3:path/model.zip or openspiel:ismcts")


def _doc_line(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split("\n\n")[0].split())


@lru_cache(maxsize=None)
def _entries() -> dict[str, importlib.metadata.EntryPoint]:
    """The registered entry points by name (not yet imported)."""
    found = {ep.name: ep for ep in importlib.metadata.entry_points(group=GROUP)}
    if not found:
        raise UserError(f"no agents are registered in the entry-point group {GROUP!r}: kc-sim is not installed "
                        "as a package; install it with pip install -e . (or make install)")
    return found


#: the distribution whose registered agents are trusted: kc-sim itself
OWN_DISTRIBUTION = "kc-sim"
_trusted_policies: set = set()


def trusted(spec: AgentSpec) -> bool:
    """True for a compiled agent kc-sim ships: registered in the entry-point group by kc-sim's
    own distribution (or made by such an agent's option, ``random:N``). Each is checked
    against the rules by the agent tests and ``kc-sim bench-agent --check``, so the compiled
    loop does not check its actions again; any other agent's actions are checked."""
    return spec.compiled and spec.policy in _trusted_policies


def _ships_with_kc_sim(ep: importlib.metadata.EntryPoint) -> bool:
    dist = getattr(ep, "dist", None)
    return dist is not None and dist.name.lower().replace("_", "-") == OWN_DISTRIBUTION


@lru_cache(maxsize=None)
def _registered(name: str) -> AgentSpec:
    """Import the entry ``name`` and make it a spec."""
    ep = _entries()[name]
    obj = _load_entry(ep, f"agent {name!r} is registered")
    spec = obj if isinstance(obj, AgentSpec) else spec_from_object(obj, name)
    if spec.compiled and _ships_with_kc_sim(ep):
        _trusted_policies.add(spec.policy)
    return spec


def _load_entry(ep: importlib.metadata.EntryPoint, what: str):
    """Import an entry point; a failure is one UserError line: ``what`` as ``ep.value`` and why."""
    try:
        return ep.load()
    except Exception as e:
        raise UserError(f"{what} as {ep.value} but importing it raised {type(e).__name__}: "
                        f"{' '.join(str(e).split())}") from e


@lru_cache(maxsize=None)
def _loaders() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=LOADERS)}


@lru_cache(maxsize=None)
def _from_loader(prefix: str, rest: str, name: str) -> AgentSpec:
    """The agent ``prefix:rest`` made by its registered loader; one spec per name."""
    ep = _loaders()[prefix]
    spec = _load_entry(ep, f"agent {name!r}: the loader {prefix!r} is registered")(rest, name)
    if not isinstance(spec, AgentSpec):
        raise UserError(f"agent {name!r}: the loader {ep.value} returned {type(spec).__name__}, not an AgentSpec")
    return spec


#: what each loader prefix makes, for ``kc-sim agents`` (the loaders themselves are imported only when used)
LOADER_FORMS = {"net": ("net:PATH.zip", "a network trained by kc-sim train, played compiled"),
                "sb3": ("sb3:PATH.zip", "a MaskablePPO policy trained by kc-sim train --method ppo"),
                "openspiel": ("openspiel:ismcts[:N]", "OpenSpiel's IS-MCTS, N simulations per decision (default 100)")}


def loader_prefixes() -> dict[str, tuple[str, str]]:
    """Each registered loader prefix: (the form its names take, what it makes and which entry point)."""
    out = {}
    for p, ep in sorted(_loaders().items()):
        form, what = LOADER_FORMS.get(p, (f"{p}:...", "an agent"))
        out[p] = (form, f"{what} (loader {ep.value})")
    return out


def builtin_agents() -> dict[str, AgentSpec]:
    """Every registered agent by name, aliases included (an alias maps to the canonical spec).
    This imports them all; :func:`load_agent` imports only the one asked for."""
    return {n: spec for n, spec in _import_all().items() if isinstance(spec, AgentSpec)}


def broken_agents() -> dict[str, str]:
    """Registered names whose entry cannot be imported, with the one-line reason; they are left
    out of :func:`builtin_agents` so one broken plugin does not hide the others."""
    return {n: e for n, e in _import_all().items() if isinstance(e, str)}


def _import_all() -> dict:
    out = {}
    for n in _entries():
        try:
            out[n] = _registered(n)
        except UserError as e:
            out[n] = str(e)
    return out


def builtin_names() -> list[str]:
    """The canonical registered names (no aliases): the baselines first, then the rest by name."""
    names = [n for n, spec in builtin_agents().items() if spec.name == n]
    return sorted(names, key=lambda n: (BASELINES.index(n) if n in BASELINES else len(BASELINES), n))


def builtin_labels() -> dict[str, str]:
    """Each canonical name with its aliases and option, e.g. ``pile-merger (alias merger)``,
    ``sampler (or sampler:N)``."""
    known = builtin_agents()
    labels = {}
    for n in builtin_names():
        alias = [a for a, spec in known.items() if spec.name == n and a != n]
        text = f"{n} (alias {', '.join(alias)})" if alias else n
        if known[n].option is not None:
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
        raise UserError(f"bad agent name {name!r}: expected a registered name ({_known_text()}), {LOAD_HELP}")
    name = name.strip()
    known = _entries()
    key = name.lower().replace("_", "-")
    if key in known:
        return _registered(key)
    option = _with_option(key)
    if option is not None:
        return option
    prefix, colon, rest = name.partition(":")
    if colon and prefix.lower() in _loaders():
        return _from_loader(prefix.lower(), rest, name)
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


def names_code(name) -> bool:
    """Whether loading the agent ``name`` imports a file or module the name points at
    (``path/to/file.py:Name``, ``package.module:Name``): code, which kc-sim runs only from a
    name a person gave, never from one read in a file (a run folder's manifest). Registered
    agents, their options and loader names (``sb3:`` reads a model file as data) are not."""
    if isinstance(name, AgentSpec):
        return False
    name = str(name).strip()
    key = name.lower().replace("_", "-")
    if key in _entries() or _with_option(key) is not None:
        return False
    prefix, colon, _ = name.partition(":")
    return bool(colon) and prefix.lower() not in _loaders()


def load_agents(agents) -> list[AgentSpec]:
    """:func:`load_agent` for each of ``agents`` (names or AgentSpecs; a ``"a,b"`` text too)."""
    if isinstance(agents, str):
        agents = parse_agent_list(agents)
    return [load_agent(a) for a in agents]


def _with_option(key: str):
    """``sampler:N`` (or ``sampler-N``): a registered agent with its integer option (None if
    ``key`` is not of that form). The canonical name is ``sampler-N`` (results label agents
    by it; a colon would read as ``module:Name``), and ``sampler`` for the default option."""
    m = re.fullmatch(r"([a-z][a-z-]*)[:-](.*)", key)
    if m is None or m.group(1) not in _entries():
        return None
    base, value = m.group(1), m.group(2)
    option = _registered(base).option
    if option is None:
        return None
    if not value.isdigit() or not option.lowest <= int(value) <= option.highest:
        raise UserError(f"bad agent {key!r}: {base}:N takes N = {option.what}, an integer from "
                        f"{option.lowest} to {option.highest}")
    return _optioned(base, int(value))


@lru_cache(maxsize=None)
def _optioned(base: str, value: int) -> AgentSpec:
    """One spec per option value, so equal names give the same (compiled) agent (trusted
    when the agent it is an option of is)."""
    spec = _registered(base).option.make(value)
    if trusted(_registered(base)) and spec.compiled:
        _trusted_policies.add(spec.policy)
    return spec


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
    return isinstance(obj, Dispatcher)


def _is_agent_object(obj) -> bool:
    return _is_dispatcher(obj) or (inspect.isclass(obj) and issubclass(obj, PythonAgent) and obj is not PythonAgent
                                   and not inspect.isabstract(obj))


def spec_from_object(obj, name: str) -> AgentSpec:
    """An AgentSpec for a compiled policy or a PythonAgent subclass, named ``name``."""
    if _is_dispatcher(obj):
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
                    "(kc_sim.core.policy.compiled_policy) or a subclass of kc_sim.play.agents.interface.PythonAgent")


def _pickle_spec(spec: AgentSpec):
    """Specs loaded by name travel to worker processes as that name and are loaded there
    again, so a worker compiles or imports the agent itself; others pickle their fields."""
    if spec.source is not None:
        return (load_agent, (spec.source,))
    return (AgentSpec, (spec.name, spec.description, spec.policy, spec.factory, None, spec.option))


copyreg.pickle(AgentSpec, _pickle_spec)
