"""One forward path (issue 39.1): the model lock and `torch.inference_mode` are taken in core/engine.py
only: batches through `engine.run` (custom forwards allowed), one input through `engine.exclusive`.
Until they move, the files in REMAINING still take them themselves. A new file that takes either, or
that holds `engine.exclusive` without being named in SINGLE_INPUT (one forward on one input, said
why), fails here: run its forwards through `engine.run` instead. Both lists can only shrink: a listed
file that no longer does it fails until its entry is removed. Read with `ast`: strings (the Copy as
Python snippets) and `<output>.lock` paths do not count."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "bertstudio"
THE_ONE = {"core/engine.py"}
# Still taking them (issue 39 lists the paths that batch on their own): they hold the lock around a
# whole job or run their own loops.
REMAINING = {
    "core/corpus/index.py", "core/corpus/query.py",
    "core/evaluate/projector.py", "core/explain/attribution.py",
    "core/explain/faithfulness.py", "core/explain/importance.py", "core/explain/perturbation.py",
    "core/explain/targets.py", "core/export/onnx.py", "core/features/card.py", "core/features/erase.py",
    "core/features/sae.py", "core/features/tuned_lens.py", "core/patching/attribution.py",
    "core/patching/trace.py", "core/suites/masks.py", "core/tasks/attention/norms.py", "core/tasks/fill_mask/layers.py",
    "core/whatif/generators.py", "core/whatif/search.py",
}
# Hold `engine.exclusive` for one input's forward (several rows of one input count as a batch). cli/explain.py
# holds it around one input's explanation with heads off; the method's own forwards (IG's steps, occlusion's and
# LIME's perturbed rows) are core/explain's, listed in REMAINING.
SINGLE_INPUT = {
    "cli/_per_layer.py", "cli/explain.py", "core/jobs.py", "core/features/card.py", "core/patching/trace.py",
    "core/tasks/attention/__init__.py", "core/tasks/classification/__init__.py", "core/tasks/ner/__init__.py",
    "core/tasks/nsp/__init__.py", "core/tasks/qa/__init__.py",
}


def holds_exclusive(tree: ast.AST) -> bool:
    """`engine.exclusive(...)` or `from ...engine import exclusive`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "exclusive" and \
                isinstance(node.value, ast.Name) and node.value.id == "engine":
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("engine") and \
                any(alias.name == "exclusive" for alias in node.names):
            return True
    return False


def takes_lock_or_inference_mode(tree: ast.AST) -> bool:
    """`x.lock` or `torch.inference_mode`."""
    return any(isinstance(node, ast.Attribute) and node.attr in {"lock", "inference_mode"} for node in ast.walk(tree))


def files_where(sees: object) -> set[str]:
    return {path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
            if sees(ast.parse(path.read_text(encoding="utf-8")))}  # type: ignore[operator]


def takers() -> set[str]:
    return files_where(takes_lock_or_inference_mode)


def test_the_model_lock_and_inference_mode_are_taken_in_the_engine_only() -> None:
    found = takers()
    assert THE_ONE <= found
    new = found - THE_ONE - REMAINING
    assert not new, f"these take the model lock or inference_mode outside core/engine.py: {sorted(new)}"
    gone = REMAINING - found
    assert not gone, f"these no longer take them: remove them from REMAINING: {sorted(gone)}"


def test_one_input_forwards_hold_the_engine_only_where_named() -> None:
    found = files_where(holds_exclusive) - THE_ONE
    new = found - SINGLE_INPUT
    assert not new, f"these hold engine.exclusive: run their forwards through engine.run: {sorted(new)}"
    gone = SINGLE_INPUT - found
    assert not gone, f"these no longer hold engine.exclusive: remove them from SINGLE_INPUT: {sorted(gone)}"
    assert holds_exclusive(ast.parse("with engine.exclusive(loaded):\n    pass"))
    assert holds_exclusive(ast.parse("from bertstudio.core.engine import exclusive"))


def test_the_scan_sees_each_way_of_taking_them() -> None:
    for source in ("with loaded.lock:\n    pass", "with torch.inference_mode():\n    pass",
                   ):
        assert takes_lock_or_inference_mode(ast.parse(source)), source
    for source in ("path = output.name + '.lock'", "print('with torch.inference_mode():')"):
        assert not takes_lock_or_inference_mode(ast.parse(source)), source
