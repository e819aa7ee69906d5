"""The tabs reach each other through the window: Explain…, heads chosen in the grid, an evaluated row."""

from __future__ import annotations

from bertstudio.core.tasks.classification import ClassificationInput
from tests.ui.conftest import load_model_in, with_tabs


@with_tabs("classification_tab", "explain_tab")
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


def test_heads_selected_in_the_grid_stay_there_until_sent(window) -> None:
    """Selecting heads (Ctrl+click) touches no other tab; the explicit button sends them, with their origin."""
    attention = window.task_tabs["attention"]
    attention.view_state.update(selected=((0, 1), (1, 0)))
    assert attention.send_heads.isEnabled()
    for key in ("fill-mask", "nsp", "ner", "qa", "classification", "multiple-choice"):
        assert window.task_tabs[key].heads_off.text() == "", key
    attention.send_heads.click()
    for key in ("fill-mask", "nsp", "ner", "qa", "classification", "multiple-choice"):
        tab = window.task_tabs[key]
        assert tab.heads_off.text().replace(" ", "") == "0:1,1:0", key
        assert tab.controls.heads_origin.text() == "from Attention, 2 heads", key
        assert not tab.controls.heads_origin.isHidden() and not tab.controls.heads_clear.isHidden(), key
    assert attention.heads_off.text() == ""  # the grid's own tab keeps its heads on


@with_tabs("evaluate_tab", "classification_tab")
def test_an_evaluated_row_opens_in_its_task_tab(qtbot, window, checkpoint_factory) -> None:
    folder = str(checkpoint_factory("bert", "SequenceClassification"))
    evaluate = window.task_tabs["evaluate"]
    tab = window.task_tabs["classification"]
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        evaluate.open_row.emit("classification", folder, ClassificationInput("a row from the file", None))
    assert window.tabs.currentWidget() is tab
    assert tab.inputs() == ClassificationInput("a row from the file", None)
    assert tab.model_request().source == folder
    # it runs once the model is ready: the chart shows this row's result, not the previous text's
    qtbot.waitUntil(lambda: tab.result is not None and not tab.runner.busy, timeout=30_000)
    assert tab.last_run() == (folder, ClassificationInput("a row from the file", None))
    first = tab.result
    # a second row, same model (already loaded): it runs at once; the first row's result does not stay
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        evaluate.open_row.emit("classification", folder, ClassificationInput("another row", None))
    assert tab.result is not first and tab.last_run()[1] == ClassificationInput("another row", None)
    assert tab.stale_reason() == "" and tab.stale_banner.isHidden()


@with_tabs("evaluate_tab")
def test_train_tab_evaluate_reaches_the_evaluate_tab(window, monkeypatch) -> None:
    evaluate = window.task_tabs["evaluate"]
    seen = []
    monkeypatch.setattr(evaluate, "open_evaluation", lambda *args: seen.append(args))
    window.open_evaluation("runs/model", "eval.csv", "classification")
    assert seen == [("runs/model", "eval.csv", "classification")]
    assert window.tabs.currentWidget() is evaluate


@with_tabs("train_tab")
def test_train_tab_open_in_goes_through_wiring(window, monkeypatch) -> None:
    """The Train tab only asks (a signal); ui/wiring.py finds the task tab and shows it (issue 18)."""
    from types import SimpleNamespace

    from bertstudio.ui.tabs.train_tab import TrainTab
    from tests.ui.conftest import tab_of

    train, fill_mask = tab_of(window, TrainTab), window.task_tabs["fill-mask"]
    opened = []
    monkeypatch.setattr(fill_mask, "open_model", opened.append)
    assert train.can_open("fill-mask") and not train.can_open("no-such-task")  # told by wiring
    # a finished run as the runner hands it over (its own folder: what Open in… hands on, issue 29)
    train.runner.result.emit(SimpleNamespace(output_dir="runs/trained", checkpoints_dir="", max_steps=2, step=2,
                                             metrics={}, open_in=("fill-mask",), stopped=False))
    with_signal = []
    train.open_model_requested.connect(lambda *args: with_signal.append(args))
    train.open_result_in("fill-mask")
    assert with_signal == [("fill-mask", "runs/trained")] and opened == ["runs/trained"]
    assert window.tabs.currentWidget() is fill_mask
    train.open_result_in("no-such-task")  # a tab this build lacks: nothing happens
    assert opened == ["runs/trained"] and window.tabs.currentWidget() is fill_mask


def test_heads_go_to_every_tab_but_the_one_that_sent_them() -> None:
    """The sender is told apart by identity, not by a task key (issue 18): any tab may offer heads."""
    from bertstudio.ui import wiring

    class Tab:
        def __init__(self, title: str) -> None:
            self.TITLE, self.got = title, None

        def set_ablated_heads(self, heads, origin) -> None:  # noqa: ANN001
            self.got = (heads, origin)

    sender, other, third = Tab("Grid"), Tab("Fill-mask"), Tab("NER")
    wiring.switch_heads_off({"a": sender, "b": other, "c": third}, [(0, 1)], sender)
    assert sender.got is None
    assert other.got == third.got == (((0, 1),), "from Grid, 1 head")
