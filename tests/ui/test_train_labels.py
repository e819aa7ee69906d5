"""The Train form before Start (issue 41): the label distribution with its advice, multi-label proposed
for a `|` label column, the loss rows only for text classification, and early stopping's marks."""

from __future__ import annotations

from pathlib import Path

from bertstudio.core.progress import ProgressEvent
from bertstudio.core.training.events import TrainingEvent
from bertstudio.ui.tabs.train_tab import TrainTab
from tests.core.test_multilabel import multilabel_csv
from tests.ui.conftest import only_tabs, tab_of

window_tabs = only_tabs("train_tab")


def _choose(qtbot, tab: TrainTab, path: Path) -> None:  # noqa: ANN001
    tab.task.setCurrentIndex(tab.task.findData("text-classification"))
    with qtbot.waitSignal(tab.plan_runner.result, timeout=30_000):
        tab.train_file.setText(str(path))


def test_a_pipe_label_column_ticks_multi_label_with_a_note(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    tab.multi_label.setChecked(False)
    _choose(qtbot, tab, multilabel_csv(tmp_path / "ml.csv", 32))
    qtbot.waitUntil(lambda: tab.plan_result is not None, timeout=30_000)  # ticked, then planned again
    assert tab.multi_label.isChecked() and "ticked for you" in tab.label_box.note.text()
    assert tab.label_box.isVisibleTo(tab) and tab.label_box.distribution.multi_label
    assert tab.label_box.distribution.counts == {"animal": 8, "neg": 14, "pos": 16}
    with qtbot.waitSignal(tab.plan_runner.result, timeout=30_000):
        tab.multi_label.setChecked(False)  # the person's choice stands: the plan says what is wrong
    assert not tab.multi_label.isChecked() and tab.plan_result is None
    assert "tick Multi-label" in tab.plan_label.text()


def test_imbalance_is_shown_with_balanced_weights_suggested(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    rows = ["text,label"] + [f"a good day {i},common" for i in range(24)] + [f"a bad day {i},rare" for i in range(4)]
    (tmp_path / "skew.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    _choose(qtbot, tab, tmp_path / "skew.csv")
    assert not tab.multi_label.isChecked() and tab.plan_result is not None
    assert tab.label_box.bars is not None and list(tab.label_box.bars.opts["width"]) == [4, 24]
    assert "6.0x" in tab.label_box.note.text() and "balanced" in tab.label_box.note.text()


def test_loss_rows_only_for_text_classification(qtbot, window) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    form = tab.form
    for key, shown in (("text-classification", True), ("token-classification", False)):
        tab.task.setCurrentIndex(tab.task.findData(key))
        group = form.layouts["Loss and stopping"]
        assert group.isRowVisible(form.rows["class_weights"]) is shown
        assert group.isRowVisible(form.rows["early_stopping"])  # every task may stop early


def test_early_stopping_marks_the_best_step_and_the_stop(qtbot, window) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    live = tab.live
    for step, score in ((5, 0.6), (10, 0.8), (15, 0.7), (20, 0.7)):
        live.on_progress(ProgressEvent("", payload=TrainingEvent("eval", step=step, metrics={"macro_f1": score})))
    live.on_progress(ProgressEvent("", payload=TrainingEvent(
        "best", step=10, max_steps=40, metrics={"best_step": 10.0, "stopped_step": 20.0},
        message="Early stopping: the best validation macro_f1 0.8000 was at step 10")))
    live.on_progress(ProgressEvent("", payload=TrainingEvent("eval", step=20, metrics={"macro_f1": 0.8})))
    marks = {(id(plot), line.value()) for plot, line in tab.plots.stop_marks}
    assert marks == {(id(p), s) for p in (tab.plots.loss_plot, tab.plots.metric_plot) for s in (10, 20)}
    assert len(tab.plots.metrics["macro_f1"]) == 4  # the kept model's own evaluation is not a new point
    assert "step 10" in tab.results.note_label.text()
    tab.live.clear_run()
    assert not tab.plots.stop_marks and tab.results.note_label.text() == ""
