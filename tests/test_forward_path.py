"""One forward path (issue 39.1): the model lock and `torch.inference_mode` are taken in core/engine.py
only: batches through `engine.run` (custom forwards allowed), one input through `engine.exclusive`, a
job of several steps under `engine.holding`, a backward pass under `engine.exclusive(loaded, grad=True)`.
A file that takes either, or that holds `engine.exclusive` without being named in SINGLE_INPUT (one
forward on one input) or in HOLDS (a job of its own: gradient code with `grad=True`, a hook kept across
engine runs; said why), fails here: run its forwards through `engine.run` instead. The lists can only
shrink: a listed file that no longer does it fails until its entry is removed. Read with `ast`: strings (the Copy as
Python snippets) and `<output>.lock` paths do not count."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "bertstudio"
THE_ONE = {"core/engine.py"}
# Hold `engine.exclusive` for one input's forward (several rows of one input count as a batch).
SINGLE_INPUT = {
    "core/corpus/query.py", "core/explain/targets.py", "core/features/card.py", "core/patching/trace.py",
    "core/tasks/attention/__init__.py", "core/tasks/fill_mask/layers.py", "core/tasks/ner/__init__.py",
}


# Hold `engine.exclusive` across a job of their own (their batches still go through `engine.run`): why.
HOLDS = {
    "core/explain/attribution.py": "captum's gradients of F (grad=True); the perturbed copies go through engine.run",
    "core/explain/importance.py": "|d loss / d gate| per input, summed (grad=True): no batch",
    "core/patching/attribution.py": "one forward and backward pass through the corrupted run (grad=True)",
    "core/patching/trace.py": "both inputs prepared outside inference mode: attribution patching differentiates",
    "core/features/tuned_lens.py": "the lens trains through the frozen head (grad=True); the head reads stored states",
    "core/whatif/generators.py": "HotFlip's one backward pass through the embeddings (grad=True)",
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


def files_where(sees: Callable[[ast.AST], bool]) -> set[str]:
    return {path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
            if sees(ast.parse(path.read_text(encoding="utf-8")))}


def takers() -> set[str]:
    return files_where(takes_lock_or_inference_mode)


def test_the_model_lock_and_inference_mode_are_taken_in_the_engine_only() -> None:
    found = takers()
    assert THE_ONE <= found
    assert found == THE_ONE, f"these take the model lock or inference_mode: {sorted(found - THE_ONE)}"


def test_one_input_forwards_hold_the_engine_only_where_named() -> None:
    found = files_where(holds_exclusive) - THE_ONE
    new = found - SINGLE_INPUT - set(HOLDS)
    assert not new, f"these hold engine.exclusive: run their forwards through engine.run: {sorted(new)}"
    gone = (SINGLE_INPUT | set(HOLDS)) - found
    assert not gone, f"these no longer hold engine.exclusive: remove them from SINGLE_INPUT or HOLDS: {sorted(gone)}"
    assert holds_exclusive(ast.parse("with engine.exclusive(loaded):\n    pass"))
    assert holds_exclusive(ast.parse("from bertstudio.core.engine import exclusive"))


def test_the_scan_sees_each_way_of_taking_them() -> None:
    for source in ("with loaded.lock:\n    pass", "with torch.inference_mode():\n    pass"):
        assert takes_lock_or_inference_mode(ast.parse(source)), source
    for source in ("path = output.name + '.lock'", "print('with torch.inference_mode():')"):
        assert not takes_lock_or_inference_mode(ast.parse(source)), source
