"""No module names a task key outside the task's own places (issue 18), checked as test_layering.py
checks imports: a new task is added by its spec, its view and its CLI declaration, and every list
of tasks elsewhere is derived from the specs.

A task key ("fill-mask", "qa"...) may be written only in core/tasks/ (the specs), in the task's own
tab module (ui/tabs/<key or CLI name>_tab.py) and in its own CLI module (cli/<key or CLI name>.py),
and there only its own key. Every other module asks a spec (`all_specs()`, `spec.explain`,
`spec.script`...) or a declaration (a trainable's heads). Read with `ast`: only string constants
count (docstrings do not: prose may name a task), so `"qa"` in code is found, `qa_tab` is not.
"""

from __future__ import annotations

import ast
from pathlib import Path

from bertstudio.core.tasks.spec import TaskSpec, all_specs

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bertstudio"

# Modules that still name task keys while their capability is moved onto the specs. Each entry is
# a debt with an owner; the list may only shrink: test_allowed_for_now_only_shrinks fails when a
# module here no longer names a key (remove it then). Empty at the end of issue 18.
ALLOWED_FOR_NOW: frozenset[str] = frozenset()
# Strings that are spelled like a task key but are not one (module, string): why. Same rule: each
# must still occur, so a stale entry fails the test and is removed.
HOMONYMS: dict[tuple[str, str], str] = {
    ("bertstudio/core/tasks/attention/export.py", "attention"): "the JSON field of one head's matrix",
    ("bertstudio/core/training/model_card.py", "fill-mask"): "the Hub's pipeline_tag of a masked-LM head",
}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def named_keys(source: str, keys: set[str]) -> list[tuple[int, str]]:
    """(line, key) for every string constant of `source` equal to one of `keys`, docstrings left out."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and node.value in keys and id(node) not in skip)


def own_modules(spec: TaskSpec) -> set[str]:
    """The task's own tab and CLI modules, as paths from the repository root."""
    names = {name.replace("-", "_") for name in (spec.key, spec.cli_name)}
    return {f"bertstudio/ui/tabs/{name}_tab.py" for name in names} | {f"bertstudio/cli/{name}.py" for name in names}


def offenders() -> dict[str, list[tuple[int, str]]]:
    """Module -> the task keys it names that are not its own (core/tasks/ left out)."""
    specs = all_specs()
    keys = set(specs)
    owner = {module: key for key, spec in specs.items() for module in own_modules(spec)}
    found: dict[str, list[tuple[int, str]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(ROOT).as_posix()
        if module.startswith("bertstudio/core/tasks/"):
            continue
        hits = [(line, key) for line, key in named_keys(path.read_text(encoding="utf-8"), keys)
                if key != owner.get(module) and (module, key) not in HOMONYMS]
        if hits:
            found[module] = hits
    return found


def test_no_module_outside_a_tasks_own_places_names_a_task_key() -> None:
    found = {module: hits for module, hits in offenders().items() if module not in ALLOWED_FOR_NOW}
    assert not found, ("Ask the spec instead of naming its key (all_specs(), spec.explain, spec.evaluate, "
                       f"spec.script...): {found}")


def test_allowed_for_now_only_shrinks() -> None:
    found = offenders()
    cleared = sorted(module for module in ALLOWED_FOR_NOW if module not in found)
    assert not cleared, f"These modules no longer name a task key: remove them from ALLOWED_FOR_NOW: {cleared}"
    keys = set(all_specs())
    stale = sorted(f"{module}: {word}" for module, word in HOMONYMS if not (ROOT / module).is_file()
                   or word not in {key for _line, key in named_keys((ROOT / module).read_text(encoding="utf-8"), keys)})
    assert not stale, f"Remove these HOMONYMS entries (the string is gone): {stale}"


def test_the_scan_finds_keys_in_code_and_not_in_prose() -> None:
    """The check itself can fail: a key in code is found (a comparison, a dict key, an f-string part),
    the same word in a docstring or inside a longer string is not."""
    source = '''"""Module prose may say qa."""
def pick(task):
    """Docstrings may say "qa" too."""
    table = {"fill-mask": 1}
    label = f"{task}qa"
    return task == "qa" or "qa_tab" or "not qa"
'''
    assert named_keys(source, {"qa", "fill-mask"}) == [(4, "fill-mask"), (5, "qa"), (6, "qa")]


def test_own_modules_follow_the_key_and_the_command() -> None:
    """A task's own modules are named after its key or its CLI name (and may name only that key)."""
    specs = all_specs()
    assert {"bertstudio/ui/tabs/classification_tab.py", "bertstudio/cli/classify.py"} <= own_modules(
        specs["classification"])
    assert "bertstudio/ui/tabs/choice_tab.py" in own_modules(specs["multiple-choice"])
    assert "bertstudio/ui/tabs/fill_mask_tab.py" in own_modules(specs["fill-mask"])
