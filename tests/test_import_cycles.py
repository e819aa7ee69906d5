"""No import circle among bertstudio's modules.

Two graphs, read with `ast` (nothing is imported):
- run time: module-level imports AND imports inside functions. Both execute; an import moved into
  a function only defers a circle, it does not remove it. This graph must have no circle at all.
- typing: the run-time graph plus the imports under `if TYPE_CHECKING:`. They never execute, but a
  circle there still means two modules that each need the other to be understood. Allowed only
  where listed below, and the list can only shrink (a listed circle that is gone fails the test
  until its entry is removed).

`from package import module` counts as importing that module (as grimp reads it), not the package.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "bertstudio"

ALLOWED_TYPE_CYCLES: set[frozenset[str]] = set()  # none left: a new circle through TYPE_CHECKING fails too


def module_names(root: Path) -> dict[str, Path]:
    names = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _targets(node: ast.Import | ast.ImportFrom, module: str, path: Path, known: dict[str, Path]) -> set[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:  # relative: from the module's package, one level up per extra dot
            package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
            package = package[: len(package) - (node.level - 1)]
            base = ".".join(package + ([base] if base else []))
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
    found = set()
    for name in names:
        while name and name not in known:  # `import a.b.c` of a name inside a module
            name = name.rpartition(".")[0]
        if name and name != module:
            found.add(name)
    return found


def import_graph(root: Path, typing: bool) -> dict[str, set[str]]:
    """module -> the bertstudio modules it imports (run time; with `typing`, TYPE_CHECKING too)."""
    graph: dict[str, set[str]] = {}
    for module, target, type_only in _imports(root):
        graph.setdefault(module, set())
        if target != module and (typing or not type_only):
            graph[module].add(target)
    return graph


@cache
def _imports(root: Path) -> tuple[tuple[str, str, bool], ...]:
    """(module, imported module, under TYPE_CHECKING) for every import of every module, parsed once."""
    known = module_names(root)
    found: list[tuple[str, str, bool]] = []

    def visit(node: ast.AST, module: str, path: Path, under_type_checking: bool) -> None:
        for child in ast.iter_child_nodes(node):
            type_only = under_type_checking or _is_type_checking(child)
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend((module, target, type_only) for target in _targets(child, module, path, known))
            visit(child, module, path, type_only)

    for module, path in known.items():
        found.append((module, module, False))  # every module is a node, even one that imports nothing
        visit(ast.parse(path.read_text(encoding="utf-8")), module, path, False)
    return tuple(found)


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _describe(found: list[frozenset[str]]) -> str:
    return "\n".join(" <-> ".join(sorted(c)) for c in found)


def test_no_import_cycle_at_run_time() -> None:
    found = cycles(import_graph(ROOT, typing=False))
    assert not found, f"import circles (module-level or in functions):\n{_describe(found)}"


def test_no_import_cycle_with_type_checking_imports() -> None:
    found = set(cycles(import_graph(ROOT, typing=True)))
    new = found - ALLOWED_TYPE_CYCLES
    assert not new, f"import circles through TYPE_CHECKING imports:\n{_describe(sorted(new, key=sorted))}"
    gone = ALLOWED_TYPE_CYCLES - found
    assert not gone, f"these circles are gone: remove them from ALLOWED_TYPE_CYCLES:\n{_describe(list(gone))}"


def test_the_finder_sees_a_circle_in_every_kind(tmp_path: Path) -> None:
    """A package with one circle per kind of import: the checks above would fail on each."""
    package = tmp_path / "bertstudio"
    package.mkdir()
    files = {
        "__init__.py": "",
        "a.py": "from bertstudio import b\n",
        "b.py": "def f():\n    from bertstudio.a import x\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from bertstudio.d import D\n",
        "d.py": "from . import c\n",
        "e.py": "import bertstudio.f\n",
        "f.py": "import bertstudio.g\n",
        "g.py": "x = 1\n",
    }
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
    assert cycles(import_graph(package, typing=False)) == [frozenset({"bertstudio.a", "bertstudio.b"})]
    assert set(cycles(import_graph(package, typing=True))) == {
        frozenset({"bertstudio.a", "bertstudio.b"}), frozenset({"bertstudio.c", "bertstudio.d"})}
