"""The tabs reach each other through the window: Explain…, heads chosen in the grid, an evaluated row."""

from __future__ import annotations

from bertstudio.core.tasks.classification import ClassificationInput
from tests.ui.conftest import load_model_in


def test_explain_button_opens_the_explain_tab_on_that_result(qtbot, window, checkpoint_factory) -> None:
    tab = window.task_tabs["classification"]
    load_model_in(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"))
    tab.set_inputs(ClassificationInput("the cat sat on the mat", None))
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run()
    explain_tab = window.task_tabs["explain"]
    with qtbot.waitSignal(explain_tab.runner.result, timeout=60_000):
        tab.explain_button.click()
    assert window.tabs.currentWidget() is explain_tab
    assert explain_tab.task_key == "classification"
    assert "the cat sat on the mat" in explain_tab.input.toPlainText()
    assert explain_tab.model_bar.source.currentText() == tab.model_request().source


def test_heads_chosen_in_the_grid_switch_off_in_every_task_tab(window) -> None:
    attention = window.task_tabs["attention"]
    attention.heads_selected.emit(((0, 1), (1, 0)))
    for key in ("fill-mask", "nsp", "ner", "qa", "classification", "multiple-choice"):
        assert window.task_tabs[key].heads_off.text().replace(" ", "") == "0:1,1:0", key
    assert attention.heads_off.text() == ""  # the grid's own tab keeps its heads on


def test_an_evaluated_row_opens_in_its_task_tab(qtbot, window, checkpoint_factory) -> None:
    folder = str(checkpoint_factory("bert", "SequenceClassification"))
    evaluate = window.task_tabs["evaluate"]
    tab = window.task_tabs["classification"]
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        evaluate.open_row.emit("classification", folder, ClassificationInput("a row from the file", None))
    assert window.tabs.currentWidget() is tab
    assert tab.inputs() == ClassificationInput("a row from the file", None)
    assert tab.model_request().source == folder


def test_train_tab_evaluate_reaches_the_evaluate_tab(window, monkeypatch) -> None:
    evaluate = window.task_tabs["evaluate"]
    seen = []
    monkeypatch.setattr(evaluate, "open_evaluation", lambda *args: seen.append(args))
    window.open_evaluation("runs/model", "eval.csv", "classification")
    assert seen == [("runs/model", "eval.csv", "classification")]
    assert window.tabs.currentWidget() is evaluate
