"""Explain reads each task through its spec's ExplainAdapter: the lists come from the specs and no
explain module switches on a task key (issue 18)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.tasks.spec import all_specs

# one typed input per task, as a person writes it in the Explain tab (one part per line)
TYPED = {
    "fill-mask": ("the cat sat on the [MASK] .",),
    "nsp": ("the cat sat .", "the dog ran ."),
    "similarity": ("the cat sat .", "a cat is sitting ."),
    "ner": ("john lives in paris .",),
    "qa": ("where does john live ?", "john lives in paris ."),
    "classification": ("a good film .", "a bad day ."),
    "multiple-choice": ("the cat", "sat .", "ran ."),
}
ROOT = Path(__file__).resolve().parents[2] / "bertstudio"
OWNED = [*sorted((ROOT / "core" / "explain").glob("*.py")), ROOT / "cli" / "explain.py",
         ROOT / "cli" / "head_importance.py", ROOT / "cli" / "_per_layer.py", ROOT / "ui" / "tabs" / "explain_tab.py",
         ROOT / "ui" / "widgets" / "attribution_view.py", ROOT / "ui" / "widgets" / "head_importance_view.py",
         ROOT / "ui" / "widgets" / "layer_predictions.py"]


def _explainable() -> list[str]:
    return [key for key, spec in all_specs().items() if spec.explain is not None]


def test_the_tasks_explain_supports_declare_an_adapter() -> None:
    assert _explainable() == list(TYPED)  # in the specs' order; attention has none
    assert all_specs()["attention"].explain is None


@pytest.mark.parametrize("key", list(TYPED))
def test_texts_and_inputs_round_trip_through_the_adapter(key: str) -> None:
    adapter = all_specs()[key].explain
    assert adapter is not None and adapter.parts
    inputs = adapter.inputs_of(TYPED[key])
    assert type(inputs).__module__ == all_specs()[key].run.__module__  # the task's own input dataclass
    assert adapter.texts_of(inputs) == TYPED[key]


def test_wrong_part_counts_say_what_the_task_takes() -> None:
    from bertstudio.core.explain.inputs import WrongParts, task_inputs

    with pytest.raises(WrongParts, match="two sentences"):
        task_inputs("nsp", ("only one",))
    with pytest.raises(WrongParts, match="two or more endings"):
        task_inputs("multiple-choice", ("prompt", "one ending"))
    with pytest.raises(InputError, match="attention cannot be explained"):
        task_inputs("attention", ("text",))


def test_typed_lines_follow_the_adapter(monkeypatch) -> None:  # noqa: ANN001
    from bertstudio.core.explain.inputs import split_lines

    assert split_lines("fill-mask", "the cat\nsat on the [MASK] .") == ("the cat sat on the [MASK] .",)
    assert split_lines("qa", "a question ?\n\nits context .") == ("a question ?", "its context .")
    spec = all_specs()["qa"]
    changed = dataclasses.replace(spec, explain=dataclasses.replace(spec.explain, one_text=True))
    monkeypatch.setitem(all_specs(), "qa", changed)
    assert split_lines("qa", "a question ?\nits context .") == ("a question ? its context .",)


def test_cli_choices_are_the_specs_with_an_adapter(monkeypatch) -> None:  # noqa: ANN001
    import argparse

    from bertstudio.cli import build_parser

    def task_names() -> tuple[str, ...]:  # what `explain --task` takes
        commands = next(a for a in build_parser("explain")._actions if isinstance(a, argparse._SubParsersAction))
        return tuple(next(a for a in commands.choices["explain"]._actions if a.dest == "task").choices)

    assert task_names() == ("fill-mask", "nsp", "similarity", "ner", "qa", "classify", "choice")
    spec = all_specs()["ner"]
    monkeypatch.setitem(all_specs(), "ner", dataclasses.replace(spec, explain=None))
    assert "ner" not in task_names()


def test_prepare_asks_the_spec(monkeypatch) -> None:  # noqa: ANN001
    """targets.prepare calls the function the spec names and stamps the spec's key on the result."""
    from bertstudio.core.explain import targets

    seen = []

    def fake(loaded, texts, target):  # noqa: ANN001, ANN202
        seen.append((texts, target))
        return targets.Prepared(task="", inputs={}, tokens=(), keep=(), special=(), rows=(0, 0, 1, 1), target=None,
                                target_label="", probability=lambda outputs: outputs)

    spec = all_specs()["nsp"]
    monkeypatch.setitem(all_specs(), "nsp", dataclasses.replace(spec, explain=dataclasses.replace(spec.explain,
                                                                                                  prepare=fake)))
    prepared = targets.prepare(None, "nsp", ("a", "b"), "is_next")
    assert seen == [(("a", "b"), "is_next")] and prepared.task == "nsp" and prepared.sequences == 2
    with pytest.raises(InputError, match="cannot be explained"):
        targets.prepare(None, "attention", ("a",))


def test_summaries_come_from_the_adapter() -> None:
    from types import SimpleNamespace

    nsp = all_specs()["nsp"].explain
    assert nsp is not None and nsp.summary is not None
    assert "P(IsNext) = 75.00%" in nsp.summary(SimpleNamespace(is_next=0.75, not_next=0.25))


def test_no_explain_module_names_a_task_key() -> None:
    """Outside the task modules, behaviour that differs per task is the adapter's, not `if task == ...`."""
    keys = set(all_specs()) | {spec.cli_name for spec in all_specs().values()}
    for path in OWNED:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value in keys]
        assert not named, f"{path.relative_to(ROOT)} names task keys {named}"
