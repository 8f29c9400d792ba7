"""The package's modules import each other without a cycle.

The rule: every `import` / `from ... import` statement in a module counts, at module level
or inside a function (a function-level import is still a dependency, only a later one),
except those under `if TYPE_CHECKING:`, which never run. `from pkg import name` is an edge
to `pkg.name` when that is a module of the package, else to `pkg`. The parent packages
Python runs first (`anatid/__init__.py` before any submodule) are not edges: every module
would otherwise sit in a cycle with the package that re-exports it.
"""
from __future__ import annotations

import ast
from pathlib import Path

import anatid

PACKAGE = Path(anatid.__file__).parent


def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package's __init__)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _type_checking_only(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skip


def _targets(name: str, is_pkg: bool, node: ast.Import | ast.ImportFrom, known) -> list[str]:
    top = name.split(".")[0]
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == top]
    if node.level:
        base = name.split(".") if is_pkg else name.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != top:
        return []
    return [f"{target}.{a.name}" if f"{target}.{a.name}" in known else target for a in node.names]


def import_graph(root: Path) -> dict[str, set[str]]:
    known = modules(root)
    graph: dict[str, set[str]] = {}
    for name, (path, is_pkg) in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_only(tree)
        graph[name] = {t for node in ast.walk(tree)
                       if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skip
                       for t in _targets(name, is_pkg, node, known) if t in known and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
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

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _describe(graph, component) -> str:
    return "; ".join(f"{v} -> {sorted(w for w in graph[v] if w in component)}" for v in component)


def test_the_package_has_no_import_cycle():
    graph = import_graph(PACKAGE)
    assert "anatid.engines" in graph and "anatid.verbs.reads" in graph     # the walk found the package
    found = cycles(graph)
    assert not found, "import cycles: " + " | ".join(_describe(graph, c) for c in found)


def test_engines_import_no_verb_at_module_level():
    """The engine switch sits below the verbs: a read verb asks it which engine answers."""
    tree = ast.parse((PACKAGE / "engines.py").read_text(encoding="utf-8"))
    names = [ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not [n for n in names if "verbs" in n], names


def test_the_walk_sees_function_level_and_relative_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n    return b\n")
    (pkg / "sub" / "b.py").write_text("from ..c import g\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
                              "def g():\n    import pkg.a\n")
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.sub.b"} and graph["pkg.sub.b"] == {"pkg.c"} and graph["pkg.c"] == {"pkg.a"}
    assert cycles(graph) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    assert cycles(import_graph(pkg)) == []
