"""File → Export result… JSON holds exactly what the CLI's --json prints for the same result (issue 18):
one form, `core.jobs.outcome_json`, with and without a compared model, under "result" beside the
task, model, inputs and settings it was computed from (issue 29 #20)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bertstudio.cli import main
from bertstudio.core.jobs import run_spec
from bertstudio.core.models import LoadRequest
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.classification import ClassificationBatchInput, ClassificationInput
from bertstudio.core.tasks.fill_mask import FillMaskInput
from bertstudio.core.tasks.spec import spec_for
from bertstudio.ui.export import export_tab
from bertstudio.ui.tabs.tab_state import TabState


def _exported(task: str, source: str, inputs: Any, compare: str | None, tmp_path: Path) -> Any:
    """What a tab holding this run's Outcome writes to a .json file (the tab's worker runs run_spec)."""
    spec = spec_for(task)
    outcome = run_spec(spec, LoadRequest(source, spec.key, attn_implementation=spec.attn_implementation),
                       inputs, TaskControl(), compare)
    tab = SimpleNamespace(TASK=task, outcome=outcome, read_state=lambda: TabState(task, loaded=source),
                          model_info=SimpleNamespace(request=SimpleNamespace(source=source)))
    written = json.loads(export_tab(tab, tmp_path / "result.json").read_text(encoding="utf-8"))
    assert (written["task"], written["model"]) == (task, source)
    return written["result"]


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("compare", [False, True], ids=["one model", "compared"])
def test_fill_mask_export_equals_cli_json(
    compare: bool, checkpoint_factory: Callable[..., Path], capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    a, b = str(checkpoint_factory("bert")), str(checkpoint_factory("distilbert"))
    text = "The capital of France is [MASK]."
    extra = ("--compare", b) if compare else ()
    printed = _cli(capsys, "fill-mask", "--model", a, text, "--top-k", "3", *extra)
    exported = _exported("fill-mask", a, FillMaskInput(text, 3), b if compare else None, tmp_path)
    assert exported == printed
    if compare:
        assert set(exported) == {"model", "result", "compare", "notes"}
        assert exported["model"] == a and exported["compare"]["model"] == b
        assert {"model", "result", "differences"} <= set(exported["compare"])


@pytest.mark.parametrize("compare", [False, True], ids=["one model", "compared"])
def test_classification_export_equals_cli_json(
    compare: bool, checkpoint_factory: Callable[..., Path], capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    a = str(checkpoint_factory("bert", "SequenceClassification"))
    b = str(checkpoint_factory("distilbert", "SequenceClassification"))
    extra = ("--compare", b) if compare else ()
    printed = _cli(capsys, "classify", "--model", a, "A fine film.", "--pair", "Good.", *extra)
    exported = _exported("classification", a, ClassificationInput("A fine film.", "Good."),
                         b if compare else None, tmp_path)
    assert exported == printed
    if compare:  # one text: the row's difference itself, not a list of one
        assert isinstance(exported["compare"]["differences"], dict)


def test_classification_batch_export_equals_cli_json(
    checkpoint_factory: Callable[..., Path], capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    a = str(checkpoint_factory("bert", "SequenceClassification"))
    b = str(checkpoint_factory("distilbert", "SequenceClassification"))
    rows = tmp_path / "rows.csv"
    rows.write_text("text\nA fine film.\nA dull film.\n", encoding="utf-8")
    printed = _cli(capsys, "classify", "--model", a, "--file", str(rows), "--compare", b)
    inputs = ClassificationBatchInput(("A fine film.", "A dull film."))
    exported = _exported("classification", a, inputs, b, tmp_path)
    assert exported == printed
    assert isinstance(exported["compare"]["differences"], list) and len(exported["compare"]["differences"]) == 2
