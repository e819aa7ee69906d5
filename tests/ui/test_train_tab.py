"""Drive the Train tab: the planned LR curve before Start, live plots, Stop, open the result elsewhere."""

from __future__ import annotations

from pathlib import Path

from bertstudio.ui.tabs.train_tab import TrainTab


def _tab(window) -> TrainTab:  # noqa: ANN001
    tab = window.task_tabs["pretraining"]
    assert isinstance(tab, TrainTab)
    return tab


def test_planned_curve_follows_settings(qtbot, window) -> None:  # noqa: ANN001
    tab = _tab(window)
    tab.task.setCurrentIndex(tab.task.findData("text-classification"))
    with qtbot.waitSignal(tab.plan_runner.result, timeout=30_000):
        tab.use_demo_data()
    assert tab.text_column.currentText() == "text" and tab.label_column.currentText() == "label"
    x, y = (tab.plots.planned_lr.xData, tab.plots.planned_lr.yData)
    assert len(x) == tab.progress.maximum() and y.max() > 0
    with qtbot.waitSignal(tab.plan_runner.result, timeout=30_000):
        tab.max_steps.setValue(50)
        tab.warmup_steps.setValue(10)
    x, y = (tab.plots.planned_lr.xData, tab.plots.planned_lr.yData)
    assert len(x) == 50 and int(y.argmax()) == 10  # peak at step 11, after 10 warmup steps
    assert "50 steps with 10 warmup" in tab.plan_label.text()


def test_start_live_plots_stop_and_open_in_fill_mask(qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    tab = _tab(window)
    tab.task.setCurrentIndex(tab.task.findData("pretraining"))
    tab.base_model.setText(str(checkpoint_factory("bert", "PreTraining")))
    tab.use_demo_data()
    tab.output_dir.setText(str(tmp_path / "pretrained"))
    tab.max_steps.setValue(500)
    tab.batch_size.setValue(4)
    tab.max_length.setValue(32)
    tab.warmup_steps.setValue(5)
    tab.eval_steps.setValue(3)
    tab.start()
    qtbot.waitUntil(lambda: tab.plots.counts()["loss"] >= 4 and tab.plots.counts()["eval"] >= 1, timeout=120_000)
    tab.plots.flush()
    assert len(tab.plots.live_lr.item.xData) >= 4
    assert len(tab.plots.raw_loss.item.xData) >= 4 and len(tab.plots.smooth_loss.item.xData) >= 4
    assert "samples/s" in tab.rate_label.text() and tab.progress.value() >= 4
    assert "decay applies to" in tab.plan_label.text()
    with qtbot.waitSignal(tab.runner.result, timeout=60_000):
        tab.stop_button.click()
    assert tab.result.stopped and tab.result.step < 500
    assert tab.result.open_in == ("fill-mask", "nsp") and tab.open_buttons["fill-mask"].isVisibleTo(tab)
    assert tab.open_buttons["nsp"].isVisibleTo(tab) == ("nsp" in window.task_tabs)  # offered where the tab exists
    assert not tab.open_buttons["classification"].isVisibleTo(tab)
    assert tab.plots.export_png(str(tmp_path / "plots.png")) and (tmp_path / "plots.png").stat().st_size > 0

    fill_mask = window.task_tabs["fill-mask"]
    with qtbot.waitSignal(fill_mask.model_bar.loaded, timeout=60_000):
        tab.open_buttons["fill-mask"].click()
    assert window.tabs.currentWidget() is fill_mask
    assert fill_mask.model_info.architecture == "BertForMaskedLM"
    assert fill_mask.model_info.head_report.complete


def test_bad_settings_are_shown(qtbot, window) -> None:  # noqa: ANN001
    tab = _tab(window)
    tab.task.setCurrentIndex(tab.task.findData("text-classification"))
    tab.train_file.setText("")
    tab.base_model.setText("")
    tab.start()
    assert "No base model" in tab.message.text() and tab.start_button.isEnabled()
