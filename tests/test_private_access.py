"""No module reaches into another object's private parts (issue 18, "Clean seams").

`x._name` (and `getattr(x, "_name")`, `hasattr`, `setattr`) is allowed only on `self`, `cls`, or a
name defined in the same module (a class reaching its own class attributes). Everything else gets a
public, named way; the few third-party privates that have no public API are listed below, with why."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "bertstudio"

# (file under bertstudio/, the expression) -> why it stays. Only third-party objects belong here.
ALLOWED = {
    # os._exit is the documented way to leave without interpreter teardown (app.exit_now says why).
    ("app.py", "os._exit"): "stdlib, public despite the underscore",
    # argparse has no public name for the type that add_subparsers() returns (typeshed uses this one).
    ("cli/evaluate.py", "argparse._SubParsersAction"): "stdlib type with no public name",
    ("cli/explain.py", "argparse._SubParsersAction"): "stdlib type with no public name",
    ("cli/head_importance.py", "argparse._SubParsersAction"): "stdlib type with no public name",
    ("cli/models.py", "argparse._SubParsersAction"): "stdlib type with no public name",
    ("cli/task_command.py", "argparse._SubParsersAction"): "stdlib type with no public name",
    ("cli/train.py", "argparse._SubParsersAction"): "stdlib type with no public name",
    ("cli/check.py", "argparse._SubParsersAction"): "stdlib type with no public name",
    ("cli/patch.py", "argparse._SubParsersAction"): "stdlib type with no public name",
    # transformers 5.23: Trainer has no public "save a checkpoint now" (Stop must save mid-run).
    ("core/training/engine.py", "trainer._save_checkpoint"): "transformers: no public API",
    # transformers 5.23: a Pipeline's preprocess kwargs come only from _sanitize_parameters.
    ("core/tasks/ner/__init__.py", "pipe._sanitize_parameters"): "transformers: no public API",
    # transformers 5.23: the auto classes' config -> model table is public only per task constant.
    ("core/model_checks.py", "model_class(task)._model_mapping"): "transformers: no public API",
    # transformers 5.23: the attention implementation has a setter on the model, no public getter.
    ("core/tasks/attention/__init__.py", "model.config._attn_implementation"): "transformers: no public getter",
    # transformers 5.24: the engine switches eager <-> sdpa for a batch run (and back): the current
    # implementation, whether the model has sdpa and may be switched have no public names.
    ("core/engine.py", "config._attn_implementation"): "transformers: no public getter",
    ("core/engine.py", "model._supports_sdpa"): "transformers: no public API",
    ("core/engine.py", "model._can_set_attn_implementation"): "transformers: no public API",
}

REFLECTION = {"getattr", "hasattr", "setattr", "delattr"}
NAMEDTUPLE_API = {"_replace", "_asdict", "_fields", "_make"}  # public; the underscore only avoids field names


def _private(name: str) -> bool:
    dunder = name.startswith("__") and name.endswith("__")
    return name.startswith("_") and not dunder and name not in NAMEDTUPLE_API


def _own_names(tree: ast.Module) -> set[str]:
    """Names a module defines itself (classes, functions, assignments): not its imports."""
    names = {"self", "cls"}
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(target.id for target in targets if isinstance(target, ast.Name))
    return names


def _foreign(base: ast.expr, own: set[str]) -> bool:
    if isinstance(base, ast.Name):
        return base.id not in own
    if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id in {"super", "type"}:
        return False  # super()._x / type(self)._x: the object's own class
    return True


def private_accesses(source: str) -> list[str]:
    """Each `x._name` in `source` (attribute or reflection) where x is another object."""
    tree = ast.parse(source)
    own = _own_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and _foreign(node.value, own):
            found.append(f"{ast.unparse(node.value)}.{node.attr}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in REFLECTION
              and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and _private(node.args[1].value)
              and _foreign(node.args[0], own)):
            found.append(f"{ast.unparse(node.args[0])}.{node.args[1].value}")
    return found


def _all_accesses() -> set[tuple[str, str]]:
    return {(path.relative_to(PACKAGE).as_posix(), expr)
            for path in sorted(PACKAGE.rglob("*.py"))
            for expr in private_accesses(path.read_text(encoding="utf-8"))}


def test_no_private_access_to_other_objects() -> None:
    unexpected = sorted(_all_accesses() - set(ALLOWED))
    assert not unexpected, "give these a public, named way (or list a third-party one in ALLOWED):\n" + "\n".join(
        f"  bertstudio/{path}: {expr}" for path, expr in unexpected)


def test_allow_list_has_no_stale_entries() -> None:
    stale = sorted(set(ALLOWED) - _all_accesses())
    assert not stale, f"no longer needed, remove from ALLOWED: {stale}"


def test_the_checker_sees_what_it_should() -> None:
    """The sites issue 18 named are caught; a class's own privates are not."""
    bad = '''
def f(window, settings, plot, tab):
    window._choose_models_dir()
    getattr(settings, "_store", None)
    plot._guides = []
    hasattr(tab, "_stop_event")
    self.partner._scale()
'''
    assert sorted(private_accesses(bad)) == sorted(["window._choose_models_dir", "settings._store", "plot._guides",
                                                   "tab._stop_event", "self.partner._scale"])
    good = '''
class Runner:
    _live = set()
    def f(self):
        self._x = 1
        Runner._live.add(self)
        getattr(self, "_y", None)
        super()._z()
        return self.__class__
'''
    assert private_accesses(good) == []
