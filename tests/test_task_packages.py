"""A task is one package (issue 28 #1): core/tasks/<task>/ holds what the task knows, and the
horizontal capabilities (explain/, evaluate/, whatif/, snippets) keep only generic machinery.

Read with `ast` (nothing imported) for the layout rules; the reachability test imports the specs.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

from bertstudio.core.tasks.spec import all_specs

ROOT = Path(__file__).resolve().parent.parent / "bertstudio" / "core"
TASKS = ROOT / "tasks"
HORIZONTAL = [*sorted((ROOT / "explain").glob("*.py")), *sorted((ROOT / "evaluate").glob("*.py")),
              *sorted((ROOT / "whatif").glob("*.py")), ROOT / "snippets.py"]
PACKAGES = sorted(path.parent.name for path in TASKS.glob("*/__init__.py"))
# What a horizontal module still imports from one task package, and why (the list can only shrink).
ALLOWED_TASK_IMPORTS = {
    # The logit lens reads the masked-LM head's candidates at every layer (fill-mask's per_layer).
    ("explain/layers.py", "bertstudio.core.tasks.fill_mask"): "the per-layer view is fill-mask's own",
}
# Names a per-task function had in the horizontal modules ("classification", "ner_input", "qa_scores"...).
TASK_WORDS = {"classification", "ner", "qa", "nsp", "fill_mask", "multiple_choice", "choice", "masked",
              "similarity", "attention", "regression"}


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _task_imports(path: Path) -> set[str]:
    """The task packages (bertstudio.core.tasks.<task>...) a module imports anywhere in its code."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[:3] == ["bertstudio", "core", "tasks"] and len(parts) > 3 and parts[3] in PACKAGES:
                found.add(".".join(parts[:4]))
    return found


def _task_named(name: str) -> bool:
    words = name.lstrip("_").split("_")
    return any("_".join(words[:n]) in TASK_WORDS for n in (1, 2))


def test_every_task_is_a_package_with_its_spec() -> None:
    assert not [p.name for p in TASKS.glob("*.py") if p.name not in ("__init__.py", "spec.py")], \
        "a task is a package (core/tasks/<task>/), not a module"
    specs = {importlib.import_module(f"bertstudio.core.tasks.{name}.spec").SPEC.key for name in PACKAGES}
    assert specs == set(all_specs())


def test_no_spec_names_a_function_by_a_string() -> None:
    """No lazy("module:name") and no f-string lookups in a task package: a spec imports what it names."""
    found = []
    for path in sorted(TASKS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "lazy":
                argument = node.args[0] if node.args else None
                text = argument.value if isinstance(argument, ast.Constant) else ast.unparse(node)
                found.append(f"{_relative(path)}:{node.lineno} {text}")
            if isinstance(node, ast.Attribute) and node.attr == "named":
                found.append(f"{_relative(path)}:{node.lineno} .named(...)")
    assert not found, "import the function instead:\n" + "\n".join(found)


def test_horizontal_modules_hold_no_per_task_function() -> None:
    """explain/, evaluate/, whatif/ and snippets ask the task through its spec: they import no task
    package and define no function named after a task."""
    imports, functions = [], []
    for path in HORIZONTAL:
        where = _relative(path)
        imports += [f"{where}: {name}" for name in sorted(_task_imports(path))
                    if (where, name) not in ALLOWED_TASK_IMPORTS]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions += [f"{where}:{node.lineno} {node.name}" for node in tree.body
                      if isinstance(node, ast.FunctionDef) and _task_named(node.name)]
    assert not imports, "move the task's part into core/tasks/<task>/:\n" + "\n".join(imports)
    assert not functions, "a per-task function belongs in its package:\n" + "\n".join(functions)


def test_allowed_task_imports_only_shrink() -> None:
    stale = [key for key in ALLOWED_TASK_IMPORTS if key[1] not in _task_imports(ROOT / key[0])]
    assert not stale, f"remove from ALLOWED_TASK_IMPORTS: {stale}"


def test_the_scans_see_what_they_forbid() -> None:
    assert _task_named("classification_texts") and _task_named("fill_mask") and _task_named("qa_scores")
    assert not _task_named("label_metrics") and not _task_named("pair_of_two") and not _task_named("prepare")
    old = ROOT.parent.parent / "tests" / "_old_layout_probe.py"
    try:
        old.write_text("def f():\n    from bertstudio.core.tasks.ner import NerInput\n", encoding="utf-8")
        assert _task_imports(old) == {"bertstudio.core.tasks.ner"}
    finally:
        old.unlink()


def test_every_function_a_spec_names_is_reachable_by_its_import() -> None:
    """Each function on a spec and its adapters is a module-level function of a task package (or a
    generic helper of core), held under its own name: `from <module> import <name>` gives it back."""
    unreachable = []
    for key, spec in all_specs().items():
        holders = [spec] + [a for a in (spec.explain, spec.evaluate, spec.counterfactual) if a is not None]
        for holder in holders:
            for name, value in vars(holder).items():
                if not inspect.isfunction(value):
                    continue
                module = importlib.import_module(value.__module__)
                if getattr(module, value.__name__, None) is not value or "<locals>" in value.__qualname__:
                    unreachable.append(f"{key}.{type(holder).__name__}.{name}: {value.__module__}.{value.__qualname__}")
                elif not value.__module__.startswith("bertstudio.core."):
                    unreachable.append(f"{key}.{name}: {value.__module__} is outside core")
    assert not unreachable, "\n".join(unreachable)


def test_each_task_package_keeps_its_knowledge() -> None:
    """The capabilities a spec offers come from its own package (a generic helper may be shared)."""
    shared = ("bertstudio.core.evaluate.", "bertstudio.core.whatif.tasks", "bertstudio.core.explain.")
    for key, spec in all_specs().items():
        package = spec.run.__module__ if spec.run is not None else None
        if package is None:
            continue
        for holder in (spec.explain, spec.evaluate, spec.counterfactual):
            for name, value in (vars(holder).items() if holder is not None else ()):
                if inspect.isfunction(value) and not value.__module__.startswith(shared):
                    assert value.__module__.startswith(package), (key, name, value.__module__)
