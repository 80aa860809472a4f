# SPDX-License-Identifier: GPL-3.0-or-later
"""The package's import structure, read statically (docs/design.md): no import cycle among
its modules, core/ never imports bpy, the command line imports nothing from operators/;
and, run, Auto Skin's preparation loads no module of the rig package.

Modules are found by walking the repository, so the checks follow files that move.
Imports inside functions count too; `from pkg import sub` depends on the submodule only."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "bonesmith"
NOT_PACKAGE = {"tests", "bench", "scripts", "out"}      # top-level folders outside the extension


def package_modules(root: Path = ROOT) -> dict:
    """{dotted module name: path} of every .py file of the extension."""
    mods = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if rel.parts[0] in NOT_PACKAGE or any(part.startswith(".") for part in rel.parts):
            continue
        name = ".".join((PACKAGE,) + rel.with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = path
    return mods


def _targets(module: str, is_package: bool, node, mods: dict) -> list:
    """The package's modules an import statement depends on."""
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[:len(base) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods]
        out = subs if len(subs) == len(node.names) else [target] + subs
    else:
        out = [a.name for a in node.names]
    return [t for t in out if t in mods]


def _imports(path: Path):
    return [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, (ast.Import, ast.ImportFrom))]


def import_graph(mods: dict) -> dict:
    """{module: set of the package's modules it imports}."""
    graph = {}
    for name, path in mods.items():
        deps = set()
        for node in _imports(path):
            deps.update(_targets(name, path.name == "__init__.py", node, mods))
        deps.discard(name)
        graph[name] = deps
    return graph


def cycles(graph: dict) -> list:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_modules_are_found():
    mods = package_modules()
    for name in ("bonesmith", "bonesmith.core", "bonesmith.core.skeleton", "bonesmith.core.skinning.heat",
                 "bonesmith.cli", "bonesmith.operators"):
        assert name in mods, name
    assert sum(m.startswith("bonesmith.core.") for m in mods) > 30


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle():
    graph = import_graph(package_modules())
    found = cycles(graph)
    detail = "\n".join(f"{c}: " + "; ".join(f"{m} -> {sorted(graph[m] & set(c))}" for m in c) for c in found)
    assert not found, detail


def test_core_never_imports_bpy():
    offenders = []
    for name, path in package_modules().items():
        if not name.startswith(f"{PACKAGE}.core"):
            continue
        for node in _imports(path):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if not node.level else []
            offenders += [f"{name}: {n}" for n in names if n == "bpy" or n.startswith("bpy.")]
    assert not offenders, offenders


def test_the_command_line_imports_nothing_from_operators():
    mods = package_modules()
    graph = import_graph(mods)
    cli = [m for m in mods if m == f"{PACKAGE}.cli" or m.startswith(f"{PACKAGE}.cli.")]
    assert cli
    operators = f"{PACKAGE}.operators"
    bad = {m: sorted(d for d in graph[m] if d == operators or d.startswith(operators + ".")) for m in cli}
    assert not any(bad.values()), bad


def test_auto_skin_prep_loads_no_rig_module(cli_env):
    """Orientation and symmetry are shared from core/, not from the rig package (humanoid,
    fingers, presets ...), which Auto Skin does not need."""
    code = ("import sys, bonesmith.core.skinning.prep; "
            "print([m for m in sys.modules if m.startswith('bonesmith.core.rig')])")
    out = subprocess.run([sys.executable, "-c", code], env=cli_env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


if __name__ == "__main__":       # a report: python tests/test_imports.py
    g = import_graph(package_modules())
    for c in cycles(g):
        print(len(c), c)
    sys.exit(bool(cycles(g)))
