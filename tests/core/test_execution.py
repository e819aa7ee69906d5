"""The one execution path (core/execution.py): lock, inference mode, device move, what fits the model.

The task modules name none of those themselves; the first test reads them to make sure a new or
changed task goes through the path instead of writing its own copy.
"""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import pytest

from bertstudio.core import engine, execution
from bertstudio.core.errors import TaskCancelled
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl

TASKS = Path(__file__).resolve().parents[2] / "bertstudio" / "core" / "tasks"
# pretraining is a model class only; it runs nothing. Each task package's __init__ holds its run path.
NOT_RUN_HERE = {"pretraining"}
# What only core/execution.py may write: the model lock, inference mode, a device move, the cut.
OWN_COPIES = {"lock", "inference_mode", "no_grad", "device", "fit_to_model"}


def own_copies(source: str, where: str) -> list[str]:
    """Every place `source` writes one of OWN_COPIES itself ("where:line name"): the scan the
    guard runs over each task module, and that its own test runs on a task written the old way."""
    found = []
    for node in ast.walk(ast.parse(source)):
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
        if name in OWN_COPIES:
            found.append(f"{where}:{node.lineno} {name}")
    return found


def test_task_modules_run_the_model_through_the_one_path() -> None:
    found = []
    for path in sorted(TASKS.glob("*/__init__.py")):
        if path.parent.name not in NOT_RUN_HERE:
            found += own_copies(path.read_text(encoding="utf-8"), f"{path.parent.name}/__init__.py")
    assert not found, "use core.engine (exclusive, forward) and core.execution (fit) instead:\n" + "\n".join(found)


CORE = TASKS.parent
# Batch work runs through core/engine.py, which alone takes the lock and inference mode around a run.
BATCH_PATHS = {
    "tasks/classification/evaluate.py": ("predict",),
    "tasks/nsp/evaluate.py": ("predict",),
    "tasks/multiple_choice/evaluate.py": ("predict",),
    "tasks/classification/regression.py": ("predict",),
    "tasks/fill_mask/evaluate.py": ("predict",),
    "tasks/nsp/__init__.py": ("rank",),
    "tasks/multiple_choice/__init__.py": ("predict",),
    "corpus/index.py": ("build_index",),
    "whatif/tasks.py": ("score",),
    "tasks/classification/steps.py": ("logits",),
    "tasks/classification/__init__.py": ("_classified",),
    "tasks/similarity/evaluate.py": ("predict",),
    "tasks/similarity/__init__.py": ("embed_rows",),
}
# The engine, or a task's step that calls it (checked itself above: classification's steps.logits, embed_rows).
THROUGH_THE_ENGINE = {"engine", "steps", "embed_rows"}
OWN_BATCHING = {"lock", "inference_mode", "no_grad", "exclusive", "pipeline", "run_pipeline"}


def test_batch_paths_go_through_the_engine() -> None:
    found = []
    for name, functions in BATCH_PATHS.items():
        tree = ast.parse((CORE / name).read_text(encoding="utf-8"))
        defined = {node.name: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
        for function in functions:
            body = list(ast.walk(defined[function]))
            names = {n.attr if isinstance(n, ast.Attribute) else n.id for n in body
                     if isinstance(n, ast.Attribute | ast.Name)}
            found += [f"{name}:{function} {x}" for x in sorted(names & OWN_BATCHING)]
            assert names & THROUGH_THE_ENGINE, f"{name}:{function} does not call core.engine"
    assert not found, "batch through core.engine (run, run_logits) instead:\n" + "\n".join(found)


def test_the_guard_sees_an_own_copy() -> None:
    """The guard's own scan (not a copy of it) on a task written the old way finds each thing it must
    not write, at its line: a scan that missed attributes or bare names would pass every task module."""
    source = ("from torch import no_grad\n\ndef run(loaded, x):\n    import torch\n"
              "    with loaded.lock, torch.inference_mode():\n"
              "        return loaded.model(**x.to(loaded.model.device))\n"
              "\ndef other(loaded):\n    with no_grad():\n        return fit_to_model(loaded)\n")
    assert sorted(own_copies(source, "old.py")) == sorted(
        ["old.py:5 lock", "old.py:5 inference_mode", "old.py:6 device", "old.py:9 no_grad", "old.py:10 fit_to_model"])


@pytest.fixture(scope="module")
def loaded(checkpoint_factory):  # noqa: ANN001, ANN201 - pytest fixture
    return load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))


def test_exclusive_holds_the_lock_and_inference_mode(loaded) -> None:  # noqa: ANN001
    import torch

    seen: list[bool] = []
    with engine.exclusive(loaded) as model:
        assert model is loaded.model and torch.is_inference_mode_enabled()
        other = threading.Thread(target=lambda: seen.append(loaded.lock.acquire(timeout=0.05)))
        other.start()
        other.join()
        with engine.exclusive(loaded):  # re-entrant: a helper inside a task takes it again
            pass
    assert seen == [False]
    assert not torch.is_inference_mode_enabled()


def test_holding_takes_the_lock_only_and_grad_turns_autograd_on(loaded) -> None:  # noqa: ANN001
    import torch

    seen: list[bool] = []
    with engine.holding(loaded) as model:  # a job of several steps: its forwards take inference mode
        assert model is loaded.model and not torch.is_inference_mode_enabled()
        other = threading.Thread(target=lambda: seen.append(loaded.lock.acquire(timeout=0.05)))
        other.start()
        other.join()
        with engine.exclusive(loaded), engine.exclusive(loaded, grad=True):  # a backward pass inside an inference step
            assert torch.is_grad_enabled() and not torch.is_inference_mode_enabled()
    assert seen == [False]


def test_forward_moves_numpy_windows_and_equals_the_model(loaded) -> None:  # noqa: ANN001
    import numpy as np
    import torch

    encoding = loaded.tokenizer(["the cat sat", "a dog"], padding=True, return_tensors="np")
    output = engine.forward(loaded.model, dict(encoding))
    with torch.no_grad():
        expected = loaded.model(**{k: torch.from_numpy(np.asarray(v)) for k, v in encoding.items()}).logits
    assert torch.equal(output.logits, expected)


def test_too_long_equals_counting_every_token(loaded) -> None:  # noqa: ANN001
    limit = loaded.info.max_length
    texts = ["the cat", "the cat sat on the mat " * 12, "dog " * (limit - 2), "dog " * (limit - 1)]
    pairs = ["a dog", "x", "y " * 30, "z"]
    for seconds in (None, pairs):
        ids = loaded.tokenizer(texts, seconds)["input_ids"]
        assert execution.too_long(loaded, texts, seconds) == [len(row) > limit for row in ids]
    assert execution.too_long(loaded, texts)[2:] == [False, True]  # at the limit exactly, and one over


def test_too_long_is_cancellable(loaded) -> None:  # noqa: ANN001
    control = TaskControl()
    control.request_stop()
    with pytest.raises(TaskCancelled):
        execution.too_long(loaded, ["word " * 200] * 3, control=control)


def test_fit_cuts_at_a_token_and_says_so(loaded) -> None:  # noqa: ANN001
    text = "the cat sat on the mat " * 20
    read, truncation = execution.fit(loaded, text)
    assert truncation is not None and text.startswith(read) and len(read) < len(text)
    assert len(loaded.tokenizer(read)["input_ids"]) <= loaded.info.max_length
    (note,) = execution.truncation_notes(truncation)
    assert note.level == "warning" and note.text == truncation.message
    assert execution.fit(loaded, "the cat") == ("the cat", None) and execution.truncation_notes(None) == ()
