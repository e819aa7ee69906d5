"""The Explain tab's result knows where it came from (issue 29): model, task, input, target and the
method settings that change the numbers. An edit marks it Out of date naming what changed, an
edit undone clears the mark, and File → Export result writes the origin, not the boxes now."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.tasks.classification import ClassificationInput
from bertstudio.ui.export import export_tab
from bertstudio.ui.local_models import LocalModelsIndex
from bertstudio.ui.tabs.explain_tab import ExplainTab
from tests.ui.conftest import load_model_in, only_tabs

TEXT = "a good film about a big dog ."
window_tabs = only_tabs("classification_tab", "explain_tab")


@pytest.fixture
def tab(qtbot, settings) -> ExplainTab:  # noqa: ANN001
    widget = ExplainTab(settings, LocalModelsIndex(settings))
    widget.resize(1280, 800)
    qtbot.addWidget(widget)
    widget.show()
    return widget


def _explained(qtbot, tab: ExplainTab, folder: Path, method: str = "integrated-gradients") -> None:  # noqa: ANN001
    """The tiny classifier loaded, TEXT typed, `method` at 4 steps (IG) explained."""
    tab.set_task("classification")
    load_model_in(qtbot, tab, folder)
    tab.input.setPlainText(TEXT)
    tab.method.setCurrentIndex(tab.method.findData(method))
    tab.steps.setValue(4)
    with qtbot.waitSignal(tab.runner.result, timeout=120_000):
        tab.run_button.click()
    qtbot.waitUntil(lambda: not tab.runner.busy, timeout=10_000)


def _marked(qtbot, tab: ExplainTab, reason: str) -> None:  # noqa: ANN001
    """The banner says `reason` (or is gone for ""), and so does the tab's state object."""
    qtbot.waitUntil(lambda: tab.stale_banner.reason == reason, timeout=5_000)
    assert tab.stale_banner.isVisibleTo(tab) == bool(reason)
    assert tab.read_state().stale_reason() == reason
    if reason:
        assert f"previous {reason}" in tab.stale_banner.text()


def test_each_change_is_named_and_undoing_it_clears_the_mark(qtbot, tab, checkpoint_factory) -> None:  # noqa: ANN001
    folder = checkpoint_factory("bert", "SequenceClassification")
    _explained(qtbot, tab, folder)
    shown = tab.read_state().result
    assert shown is not None and shown.model.source == str(folder) and shown.model.task == "classification"
    assert shown.inputs.texts == (TEXT,) and shown.inputs.settings.steps == 4
    _marked(qtbot, tab, "")

    tab.input.setPlainText("a bad film .")
    _marked(qtbot, tab, "input")
    tab.input.setPlainText("")  # nothing Explain could run
    _marked(qtbot, tab, "input")
    tab.input.setPlainText(TEXT)
    _marked(qtbot, tab, "")

    tab.steps.setValue(8)
    _marked(qtbot, tab, "method settings")
    tab.steps.setValue(4)
    _marked(qtbot, tab, "")
    tab.options.baseline.setCurrentIndex(1)
    _marked(qtbot, tab, "method settings")
    tab.options.baseline.setCurrentIndex(0)
    tab.options.faithfulness.setChecked(False)
    _marked(qtbot, tab, "method settings")
    tab.options.faithfulness.setChecked(True)
    _marked(qtbot, tab, "")

    tab.method.setCurrentIndex(tab.method.findData("gradient"))
    _marked(qtbot, tab, "method")
    tab.method.setCurrentIndex(tab.method.findData("integrated-gradients"))
    _marked(qtbot, tab, "")

    tab.target.setCurrentIndex(tab.target.findData("negative"))
    _marked(qtbot, tab, "target")
    tab.target.setCurrentIndex(0)
    _marked(qtbot, tab, "")

    other = checkpoint_factory("distilbert", "SequenceClassification")
    load_model_in(qtbot, tab, other)
    _marked(qtbot, tab, "model")
    load_model_in(qtbot, tab, folder)
    _marked(qtbot, tab, "")


def test_a_setting_the_method_does_not_read_leaves_the_result_current(qtbot, tab, checkpoint_factory) -> None:  # noqa: ANN001
    _explained(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"), method="lime")
    tab.options.samples.setValue(tab.options.samples.value() + 10)
    _marked(qtbot, tab, "method settings")
    tab.options.samples.setValue(tab.options.samples.value() - 10)
    tab.steps.setValue(20)  # Integrated Gradients' steps: LIME's numbers are the same
    tab.options.converge.setChecked(True)
    _marked(qtbot, tab, "")


def test_a_typed_target_stays_chosen_after_its_result(qtbot, tab, checkpoint_factory) -> None:  # noqa: ANN001
    """The refilled target list kept only a picked target: a typed one fell back to the model's answer,
    so the next Explain ran another target and the shown result looked stale at once."""
    _explained(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"))
    tab.target.setEditText("negative")
    _marked(qtbot, tab, "target")
    with qtbot.waitSignal(tab.runner.result, timeout=120_000):
        tab.run_button.click()
    assert tab.attributions.explanation.target == "negative" and tab.chosen_target() == "negative"
    _marked(qtbot, tab, "")


def test_export_writes_the_explained_input_not_the_box_now(qtbot, tab, checkpoint_factory, tmp_path) -> None:  # noqa: ANN001
    folder = checkpoint_factory("bert", "SequenceClassification")
    _explained(qtbot, tab, folder)
    tab.input.setPlainText("something else entirely")
    tab.steps.setValue(30)
    tab.method.setCurrentIndex(tab.method.findData("lime"))
    written = json.loads(export_tab(tab, tmp_path / "explained.json").read_text(encoding="utf-8"))
    assert (written["task"], written["model"]) == ("classification", str(folder))
    assert written["inputs"] == {"texts": [TEXT], "task_input": None, "target": None}
    settings = written["settings"]
    assert (settings["method"], settings["steps"], settings["baseline"], settings["samples"]) == (
        "integrated-gradients", 4, "pad", None)
    assert written["result"] == tab.attributions.explanation.to_json()  # the CLI's --json form


def test_a_failed_explain_clears_the_result_and_its_mark(qtbot, tab, checkpoint_factory, tmp_path) -> None:  # noqa: ANN001
    _explained(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"))
    tab.input.setPlainText("")
    _marked(qtbot, tab, "input")
    tab.run_button.click()
    assert "Type the input" in tab.notes.text() and tab.attributions.explanation is None
    _marked(qtbot, tab, "")
    assert tab.result_origin() is None
    with pytest.raises(InputError):
        export_tab(tab, tmp_path / "nothing.json")


def test_a_hand_off_keeps_the_task_input_until_the_box_is_edited(qtbot, window, checkpoint_factory,
                                                                  tmp_path) -> None:  # noqa: ANN001
    folder = checkpoint_factory("bert", "SequenceClassification")
    source = window.task_tabs["classification"]
    load_model_in(qtbot, source, folder)
    inputs = ClassificationInput("one\ntwo")  # one text over two lines: typed back it would be a pair
    source.set_inputs(inputs)
    with qtbot.waitSignal(source.runner.result, timeout=60_000):
        source.run()
    explain_tab = window.task_tabs["explain"]
    with qtbot.waitSignal(explain_tab.runner.result, timeout=120_000):
        source.explain_button.click()
    qtbot.waitUntil(lambda: not explain_tab.runner.busy and not explain_tab.model_bar.busy, timeout=60_000)
    shown = explain_tab.result_origin()
    assert shown is not None and shown.inputs.handed == inputs
    assert shown.inputs.target == source.result.first.top.label
    _marked(qtbot, explain_tab, "")

    explain_tab.input.setPlainText("one\ntwo ")
    _marked(qtbot, explain_tab, "input")
    written = json.loads(export_tab(explain_tab, tmp_path / "handed.json").read_text(encoding="utf-8"))
    assert written["inputs"]["task_input"] == {"text": "one\ntwo", "pair": None}
    assert written["inputs"]["texts"] == ["one\ntwo"]
    explain_tab.input.setPlainText("one\ntwo")  # the hand-off's text again: its input again
    _marked(qtbot, explain_tab, "")


def test_another_task_is_named_and_switching_back_clears_the_mark(qtbot, tab, checkpoint_factory) -> None:  # noqa: ANN001
    _explained(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"), method="gradient")
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.set_task("fill-mask")  # the bar loads the same checkpoint for it
    _marked(qtbot, tab, "task")
    assert not tab.stale_banner.isHidden() and "previous task" in tab.stale_banner.toolTip()
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.set_task("classification")
    _marked(qtbot, tab, "")
