"""One forward path (issue 39.1): the model lock and `torch.inference_mode` are taken in core/engine.py
(every batch) and, until they move there, only in the files listed below. A new file that takes
either (directly, or through core/execution.py's `exclusive`) fails here: run its forwards through
the engine (`engine.run` with a custom forward) instead. The list can only shrink: a listed file
that no longer takes them fails until its entry is removed. Read with `ast`: strings (the Copy as
Python snippets) and `<output>.lock` paths do not count."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "bertstudio"
THE_ONE = {"core/engine.py"}
# Still taking them (issue 39 lists the paths that batch on their own): execution.py is the single-input
# forward the task runs use; the others hold the lock around a whole job or run their own loops.
REMAINING = {
    "cli/_per_layer.py", "cli/explain.py", "core/corpus/index.py", "core/corpus/query.py",
    "core/evaluate/projector.py", "core/execution.py", "core/explain/attribution.py",
    "core/explain/faithfulness.py", "core/explain/importance.py", "core/explain/perturbation.py",
    "core/explain/targets.py", "core/export/onnx.py", "core/features/card.py", "core/features/erase.py",
    "core/features/sae.py", "core/features/tuned_lens.py", "core/jobs.py", "core/patching/attribution.py",
    "core/patching/trace.py", "core/suites/masks.py", "core/tasks/attention/__init__.py",
    "core/tasks/attention/norms.py", "core/tasks/classification/__init__.py", "core/tasks/fill_mask/layers.py",
    "core/tasks/ner/__init__.py", "core/tasks/nsp/__init__.py", "core/tasks/qa/__init__.py",
    "core/whatif/generators.py", "core/whatif/search.py",
}


def takes_lock_or_inference_mode(tree: ast.AST) -> bool:
    """`x.lock`, `torch.inference_mode`, `execution.exclusive` or `from ...execution import exclusive`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in {"lock", "inference_mode"}:
            return True
        if isinstance(node, ast.Attribute) and node.attr == "exclusive" and \
                isinstance(node.value, ast.Name) and node.value.id == "execution":
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("execution") and \
                any(alias.name == "exclusive" for alias in node.names):
            return True
    return False


def takers() -> set[str]:
    return {path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
            if takes_lock_or_inference_mode(ast.parse(path.read_text(encoding="utf-8")))}


def test_the_model_lock_and_inference_mode_are_taken_in_the_engine_only() -> None:
    found = takers()
    assert THE_ONE <= found
    new = found - THE_ONE - REMAINING
    assert not new, f"these take the model lock or inference_mode outside core/engine.py: {sorted(new)}"
    gone = REMAINING - found
    assert not gone, f"these no longer take them: remove them from REMAINING: {sorted(gone)}"


def test_the_scan_sees_each_way_of_taking_them() -> None:
    for source in ("with loaded.lock:\n    pass", "with torch.inference_mode():\n    pass",
                   "with execution.exclusive(loaded):\n    pass", "from bertstudio.core.execution import exclusive"):
        assert takes_lock_or_inference_mode(ast.parse(source)), source
    for source in ("path = output.name + '.lock'", "print('with torch.inference_mode():')"):
        assert not takes_lock_or_inference_mode(ast.parse(source)), source
