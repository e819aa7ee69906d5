"""A task is one package (issues 28 #1, 38 #5): core/tasks/<task>/ holds what the task knows, and the
shared capabilities (explain/, evaluate/, whatif/, training/, suites/, snippets, compare) keep only
generic machinery: they ask the task through its spec, never import it or define a function for it.

Read with `ast` (nothing imported) for the layout rules; the reachability tests import the specs.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path
from typing import Any

from bertstudio.core.tasks.spec import TaskSpec, all_specs

ROOT = Path(__file__).resolve().parent.parent / "bertstudio" / "core"
TASKS = ROOT / "tasks"
SHARED_FOLDERS = ("explain", "evaluate", "whatif", "training", "suites")
HORIZONTAL = [*(path for folder in SHARED_FOLDERS for path in sorted((ROOT / folder).glob("*.py"))),
              ROOT / "snippets.py", ROOT / "compare.py"]
PACKAGES = sorted(path.parent.name for path in TASKS.glob("*/__init__.py"))
# What a shared module still imports from one task package, and why (the list can only shrink). Empty.
ALLOWED_TASK_IMPORTS: dict[tuple[str, str], str] = {}
# Per-task names a shared module still defines, and precisely why each cannot move (only shrinks). Empty.
PER_TASK_LEFT: dict[tuple[str, str], str] = {}
# Words of a per-task name ("classification_texts", "SpanDiff", "read_conll", "QuestionAnswering"...).
TASK_WORDS = {"classification", "ner", "qa", "nsp", "fill_mask", "multiple_choice", "choice", "choices", "masked_lm",
              "similarity", "attention", "regression", "pretraining", "tagging", "entity", "entities", "span",
              "spans", "squad", "conll", "answer", "answers", "tags", "question", "windows", "wordpiece",
              "distillation"}


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
    """A function or class name with a task's word in it (CamelCase read as words)."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower().strip("_").split("_")
    return any(word in TASK_WORDS for word in words) or any(
        f"{a}_{b}" in TASK_WORDS for a, b in zip(words, words[1:], strict=False))


def _per_task_names(path: Path) -> list[tuple[int, str]]:
    """(line, name) of every module-level function and class named after a task."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.lineno, node.name) for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and _task_named(node.name)]


def _spec_packages() -> dict[str, tuple[str, TaskSpec]]:
    """Task key -> (its package, its spec), read from each package's own spec module."""
    found = {}
    for name in PACKAGES:
        spec = importlib.import_module(f"bertstudio.core.tasks.{name}.spec").SPEC
        found[spec.key] = (f"bertstudio.core.tasks.{name}", spec)
    return found


def _holders(spec: TaskSpec) -> list[Any]:
    """The spec and every adapter on it that names functions."""
    suite_fix = spec.suite.fix if spec.suite is not None else None
    return [spec, *(a for a in (spec.explain, spec.evaluate, spec.counterfactual, spec.pipeline, spec.suite, suite_fix)
                    if a is not None)]


def test_every_task_is_a_package_with_its_spec() -> None:
    assert not [p.name for p in TASKS.glob("*.py") if p.name not in ("__init__.py", "spec.py")], \
        "a task is a package (core/tasks/<task>/), not a module"
    specs = {importlib.import_module(f"bertstudio.core.tasks.{name}.spec").SPEC.key for name in PACKAGES}
    assert specs == set(all_specs())


def test_nothing_names_a_function_by_a_string() -> None:
    """No lazy("module:name") and no .named(...) lookups anywhere in core: what is used is imported
    (a grep for a function finds its callers)."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "lazy":
                argument = node.args[0] if node.args else None
                found.append(f"{_relative(path)}:{node.lineno} "
                             f"{argument.value if isinstance(argument, ast.Constant) else ast.unparse(node)}")
            if isinstance(node, ast.Attribute) and node.attr == "named":
                found.append(f"{_relative(path)}:{node.lineno} .named(...)")
            if isinstance(node, ast.FunctionDef) and node.name == "lazy":
                found.append(f"{_relative(path)}:{node.lineno} def lazy")
    assert not found, "import the function instead:\n" + "\n".join(found)


def test_shared_modules_hold_no_per_task_code() -> None:
    """explain/, evaluate/, whatif/, training/, suites/, snippets and compare ask the task through its spec:
    they import no task package and define no function or class named after a task."""
    imports, names = [], []
    for path in HORIZONTAL:
        where = _relative(path)
        imports += [f"{where}: {name}" for name in sorted(_task_imports(path))
                    if (where, name) not in ALLOWED_TASK_IMPORTS]
        names += [f"{where}:{line} {name}" for line, name in _per_task_names(path)
                  if (where, name) not in PER_TASK_LEFT]
    assert not imports, "move the task's part into core/tasks/<task>/:\n" + "\n".join(imports)
    assert not names, "a per-task function or class belongs in its package:\n" + "\n".join(names)


def test_the_exemptions_only_shrink() -> None:
    stale = [key for key in ALLOWED_TASK_IMPORTS if key[1] not in _task_imports(ROOT / key[0])]
    assert not stale, f"remove from ALLOWED_TASK_IMPORTS: {stale}"
    left = [key for key in PER_TASK_LEFT if key[1] not in {name for _line, name in _per_task_names(ROOT / key[0])}]
    assert not left, f"remove from PER_TASK_LEFT: {left}"


def test_the_scans_see_what_they_forbid() -> None:
    assert _task_named("classification_texts") and _task_named("fill_mask") and _task_named("qa_scores")
    assert _task_named("SpanDiff") and _task_named("QuestionAnswering") and _task_named("read_conll")
    assert _task_named("TokenClassification") and _task_named("meets_tags") and _task_named("masked_lm_words")
    assert not _task_named("label_metrics") and not _task_named("pair_of_two") and not _task_named("prepare")
    assert not _task_named("TrainableTask") and not _task_named("masked_templates") and not _task_named("RateWindow")
    old = ROOT.parent.parent / "tests" / "_old_layout_probe.py"
    try:
        old.write_text("def f():\n    from bertstudio.core.tasks.ner import NerInput\n\n\n"
                       "class EntityDiff:\n    pass\n", encoding="utf-8")
        assert _task_imports(old) == {"bertstudio.core.tasks.ner"}
        assert _per_task_names(old) == [(5, "EntityDiff")]
    finally:
        old.unlink()


def test_every_function_a_spec_names_is_reachable_by_its_import() -> None:
    """Each function on a spec and its adapters is a module-level function of a task package (or a
    generic helper of core), held under its own name: `from <module> import <name>` gives it back."""
    unreachable = []
    for key, spec in all_specs().items():
        for holder in _holders(spec):
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
    """The capabilities a spec offers come from its own package (a generic helper may be shared), and so
    do the trainables it lists."""
    shared = ("bertstudio.core.evaluate.", "bertstudio.core.whatif.tasks", "bertstudio.core.explain.")
    for key, (package, spec) in _spec_packages().items():
        for holder in _holders(spec)[1:]:
            for name, value in vars(holder).items():
                if inspect.isfunction(value) and not value.__module__.startswith(shared):
                    assert value.__module__.startswith(package), (key, name, value.__module__)
        for trainable in spec.trainables:
            assert type(trainable).__module__.startswith(package), (key, type(trainable).__module__)


def test_each_task_trains_under_its_own_name() -> None:
    """A spec's first trainable is named as the task (its key or CLI name: `train --task qa` trains what
    `evaluate --task qa` scores); every trainable the registry holds is a spec's."""
    from bertstudio.core.training.trainable import TRAINABLE

    for key, spec in all_specs().items():
        if spec.trainables:
            first = spec.trainables[0]
            assert {first.key, first.cli_name} & {spec.key, spec.cli_name}, (key, first.key, first.cli_name)
    assert list(TRAINABLE.values()) == sorted((t for s in all_specs().values() for t in s.trainables),
                                              key=lambda t: t.order)
