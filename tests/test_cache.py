"""One compile cache: the `kc-sim` command, worker processes and library use (notebooks,
scripts) all load numba's compiled code from the same folder, so once one of them has
compiled, no other entry point compiles again.

numba reports every cache save and load with NUMBA_DEBUG_CACHE=1; a second entry point
must only load."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kc_sim

KC_SIM = str(Path(sys.executable).parent / "kc-sim")


def _base_env() -> dict:
    """The environment a person starts kc-sim in: ``NUMBA_CACHE_DIR`` is the base folder they
    chose (or kc-sim's default), not the per-source folder this process has set up under it,
    so a child finds that folder by itself, as a new terminal would."""
    return dict(os.environ, NUMBA_CACHE_DIR=str(Path(kc_sim.CACHE_DIR).parent))


def _env() -> dict:
    return dict(_base_env(), NUMBA_DEBUG_CACHE="1")


def _run(args, cwd) -> str:
    p = subprocess.run(args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout + p.stderr


def test_every_entry_point_shares_one_compile_cache(tmp_path):
    folder = subprocess.run([sys.executable, "-c", "import kc_sim; print(kc_sim.CACHE_DIR)"], env=_env(),
                            capture_output=True, text=True, check=True).stdout.strip()
    assert folder == kc_sim.CACHE_DIR            # the child found the folder under the base, as this process did
    # the command first (it compiles whatever is not cached yet) ...
    _run([KC_SIM, "tournament", "--agents", "greedy,merger", "--rounds", "2000", "--jobs", "1", "-q",
          "--out", "a"], tmp_path)
    # ... then the library, as a notebook uses it, and the command again with worker processes
    library = _run([sys.executable, "-c", "from kc_sim.tournament.run import run_tournament; "
                    "run_tournament(['greedy', 'merger'], rounds=2000, jobs=1, quiet=True, out='b')"], tmp_path)
    workers = _run([KC_SIM, "tournament", "--agents", "greedy,merger", "--rounds", "4000", "--chunk-size",
                    "1000", "--jobs", "2", "-q", "--out", "c"], tmp_path)
    for text in (library, workers):
        assert "[cache] data loaded" in text
        assert "[cache] data saved" not in text and "[cache] index saved" not in text


# --- the folder is set up before any of kc-sim's functions is compiled or loaded --------------

def _compiles(node) -> bool:
    """Whether a module-level statement compiles with numba as it runs: a function decorated
    with a compiler (``nb.njit``, ``kernel``, ...) or a call of one (``nb.njit(...)(f)``)."""
    from tests.test_layout import COMPILERS, is_compiled

    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return is_compiled(node)
    if isinstance(node, (ast.ClassDef, ast.If, ast.Try, ast.With)):
        return False
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func.func if isinstance(sub.func, ast.Call) else sub.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in COMPILERS:
                return True
    return False


def _imports_core(node) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name == "kc_sim.core" or a.name.startswith("kc_sim.core.") for a in node.names)
    if isinstance(node, ast.ImportFrom) and not node.level:
        return node.module == "kc_sim.core" or (node.module or "").startswith("kc_sim.core.")
    return False


def _packages():
    from tests.test_layout import package_params

    return package_params()


@pytest.mark.parametrize("package", _packages())
def test_every_compiling_module_imports_the_core_first(package):
    """Importing kc_sim.core sets the cache folder up (kc_sim/core/__init__.py): every module of
    kc-sim and of the built-in agents that compiles with numba imports it before its first
    compiled function, so the folder is right whatever is imported first (a module of the
    core itself is imported after the package's __init__). Per package, as tests/test_layout.py."""
    from tests.test_layout import modules, package_of, tree

    late = []
    for name in modules():
        if package_of(name) != package or name == "kc_sim.core" or name.startswith("kc_sim.core."):
            continue
        seen = False
        for node in tree(name).body:
            seen = seen or _imports_core(node)
            if _compiles(node) and not seen:
                late.append(f"{name} (line {node.lineno})")
                break
    assert not late, "modules that compile with numba before importing kc_sim.core: " + ", ".join(late)


def test_import_kc_sim_leaves_the_environment_alone():
    """``import kc_sim`` hashes no source and sets no NUMBA_CACHE_DIR; reading ``kc_sim.CACHE_DIR``
    (``kc-sim warm``'s message) sets the folder up."""
    code = ("import os, sys, kc_sim; print(os.environ.get('NUMBA_CACHE_DIR'), 'kc_sim.core' in sys.modules); "
            "folder = kc_sim.CACHE_DIR; print(os.environ['NUMBA_CACHE_DIR'] == folder)")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                         timeout=300).stdout.split()
    assert out == ["None", "False", "True"]


def test_without_numba_cache_dir_the_folder_is_under_home(tmp_path):
    """With no ``NUMBA_CACHE_DIR`` the folder is ``~/.cache/kc-sim/numba/kc-sim-<source hash>``
    (nothing is compiled here: reading the folder's name compiles nothing)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["HOME"] = str(tmp_path)
    folder = subprocess.run([sys.executable, "-c", "import kc_sim; print(kc_sim.CACHE_DIR)"], env=env,
                            capture_output=True, text=True, check=True, timeout=300).stdout.strip()
    assert Path(folder).parent == tmp_path / ".cache" / "kc-sim" / "numba"
    assert Path(folder).name == Path(kc_sim.CACHE_DIR).name


@pytest.mark.parametrize("first", ["import numba", "import agents.greedy", "import kc_sim.env.obs_vector",
                                   "from kc_sim.play import Game"])
def test_the_folder_is_set_whatever_is_imported_first(first):
    """numba compiles and loads kc-sim's functions in the one folder, whether numba, an agent,
    an environment module or the play layer is imported first."""
    code = (f"{first}\nimport numba, kc_sim, agents.greedy\n"
            "print(numba.config.CACHE_DIR == kc_sim.CACHE_DIR, agents.greedy.greedy_policy._cache._cache_path)")
    out = subprocess.run([sys.executable, "-c", code], env=_base_env(), capture_output=True, text=True, check=True,
                         timeout=300).stdout.split()
    assert out[0] == "True" and out[1].startswith(kc_sim.CACHE_DIR), out
