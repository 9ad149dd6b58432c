"""The layout rules of docs/design.md, read from the sources (no import runs):

* no import cycle between the modules of ``kc_sim`` and ``agents``, counting imports at any
  depth (inside functions too) and relative ones;
* at most 3 modules at the root of ``kc_sim/`` (``__init__``, ``errors``, ``testing``);
* no module over 500 lines;
* no plain-Python function over 80 lines: a compiled kernel (decorated with numba's ``njit``,
  ``kernel``, ...) may be longer only where numba needs one function, and its docstring says
  so (it names numba).

The checks are made per package, so a failure names the package it is in.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("kc_sim", "agents")
MAX_ROOT_MODULES = 3
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
#: decorators that compile a function with numba (their docstring may then justify a long body)
COMPILERS = {"njit", "jit", "kernel", "compiled_policy", "generated_jit", "cfunc", "vectorize"}

def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    """Every module of the sources, by dotted name."""
    found = {}
    for top in SOURCES:
        for f in sorted((ROOT / top).rglob("*.py")):
            found[_module_name(f)] = f
    return found


@cache
def tree(name: str) -> ast.Module:
    return ast.parse(modules()[name].read_text(encoding="utf-8"))


def _resolve(name: str, node: ast.ImportFrom) -> str:
    """The absolute module an ``ImportFrom`` names (relative ones resolved against ``name``)."""
    if not node.level:
        return node.module or ""
    is_package = modules()[name].name == "__init__.py"
    base = name.split(".")
    base = base[:len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


@cache
def imports(name: str) -> frozenset[str]:
    """The modules of the sources that module ``name`` imports, at any depth."""
    known = modules()
    out = set()
    for node in ast.walk(tree(name)):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(name, node)
            # ``from mod import name`` imports the module mod; ``from pkg import mod`` both pkg.mod and
            # pkg (it reads the name from pkg, whose __init__ may itself import what imports this)
            targets = [base] + [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
        else:
            continue
        for t in targets:
            while t and t not in known:          # ``import a.b.c`` of a name inside a module
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return frozenset(out)


def cycles() -> list[list[str]]:
    """The import cycles (strongly connected components of more than one module, each as one
    cycle through it)."""
    graph = {m: sorted(imports(m)) for m in modules()}
    index, low, stack, on_stack, comps = {}, {}, [], set(), []

    def visit(v):                                 # Tarjan's algorithm, iteratively
        work = [(v, iter(graph[v]))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        comps.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return [_one_cycle(comp, graph) for comp in comps]


def _one_cycle(comp: list[str], graph: dict) -> list[str]:
    """A cycle through the first module of a strongly connected component, for the message."""
    inside, start = set(comp), comp[0]
    paths, seen = {start: [start]}, {start}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in graph[v]:
                if w == start:
                    return paths[v] + [start]
                if w in inside and w not in seen:
                    seen.add(w)
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    return comp


def package_of(name: str) -> str:
    """The package a module counts for: ``kc_sim.<package>``, ``kc_sim`` (its root) or ``agents``."""
    parts = name.split(".")
    if parts[0] != "kc_sim":
        return parts[0]
    return "kc_sim" if len(parts) == 1 or (ROOT / "kc_sim" / f"{parts[1]}.py").is_file() else ".".join(parts[:2])


def _packages() -> list[str]:
    return sorted({package_of(m) for m in modules()})


def package_params():
    return _packages()


def is_compiled(fn: ast.FunctionDef) -> bool:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in COMPILERS:
            return True
    return False


def long_functions(name: str) -> list[str]:
    """The functions of module ``name`` over the limit that are not excused (a compiled
    kernel whose docstring says why numba needs it whole)."""
    out = []
    for node in ast.walk(tree(name)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        n = node.end_lineno - node.lineno + 1
        if n <= MAX_FUNCTION_LINES:
            continue
        doc = ast.get_docstring(node) or ""
        if is_compiled(node) and "numba" in doc:
            continue
        kind = "compiled kernel without a docstring saying why numba needs it whole" if is_compiled(node) \
            else "plain-Python function"
        out.append(f"{name}.{node.name} ({modules()[name].relative_to(ROOT)}:{node.lineno}): {n} lines, {kind}")
    return out


# --- the checks -----------------------------------------------------------------------------------

@pytest.mark.parametrize("package", package_params())
def test_no_import_cycle(package):
    """No cycle through a module of ``package``, counting imports inside functions."""
    found = [c for c in cycles() if any(package_of(m) == package for m in c)]
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_at_most_three_modules_at_the_root():
    root = sorted(m for m in modules() if package_of(m) == "kc_sim")
    assert len(root) <= MAX_ROOT_MODULES, f"modules at the root of kc_sim/: {root}"


@pytest.mark.parametrize("package", package_params())
def test_no_module_over_500_lines(package):
    long = [f"{m} ({n} lines)" for m, f in modules().items() if package_of(m) == package
            for n in [len(f.read_text(encoding="utf-8").splitlines())] if n > MAX_MODULE_LINES]
    assert not long, "modules over 500 lines: " + ", ".join(long)


@pytest.mark.parametrize("package", package_params())
def test_no_function_over_80_lines(package):
    long = [line for m in modules() if package_of(m) == package for line in long_functions(m)]
    assert not long, "functions over 80 lines:\n" + "\n".join(long)


def test_the_checks_see_what_they_check():
    """The graph is read right: a function-level import counts, a relative one is resolved,
    and a kernel is told from a plain function."""
    assert "kc_sim.core.layout" in imports("kc_sim.core.step")
    assert "kc_sim.cli" in imports("kc_sim.cli.__main__")      # ``from pkg import x`` counts pkg
    assert package_of("kc_sim.errors") == "kc_sim" and package_of("kc_sim.play.agents.registry") == "kc_sim.play"
    src = ast.parse("@nb.njit(cache=True)\ndef f(): pass\n@kernel\ndef g(): pass\ndef h(): pass\n")
    assert [is_compiled(f) for f in src.body] == [True, True, False]
    assert _one_cycle(["a", "b", "c"], {"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
