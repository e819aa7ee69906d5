"""Drive the Train tab: the planned LR curve before Start, live plots, Stop, open the result elsewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bertstudio.core.progress import ProgressEvent
from bertstudio.ui.tabs.train_tab import TrainTab
from tests.ui.conftest import TRAIN_AND_ITS_TARGETS, only_tabs, set_up_toy_classification, tab_of

window_tabs = only_tabs(*TRAIN_AND_ITS_TARGETS)  # these tests drive the Train tab only


def test_planned_curve_follows_settings(qtbot, window) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
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
    tab = tab_of(window, TrainTab)
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
    checkpoints = tmp_path / "pretrained.checkpoints"  # after Stop: where it is, how large, and delete it
    assert str(checkpoints) in tab.checkpoint_label.text()
    assert re.search(r"\(\d+(\.\d)? (bytes|KB|MB|GB)\)", tab.checkpoint_label.text())
    assert tab.delete_checkpoints.isVisibleTo(tab) and "Saving" not in tab.rate_label.text()
    tab.delete_checkpoints.click()
    assert not checkpoints.exists() and (tmp_path / "pretrained" / "model.safetensors").is_file()
    calls: list[tuple] = []
    window.open_evaluation = lambda *args: calls.append(args)  # the window's method, where it exists
    tab.evaluate_result()
    assert calls == [(tab.result.output_dir, tab.train_file.text(), "fill-mask")]

    fill_mask = window.task_tabs["fill-mask"]
    with qtbot.waitSignal(fill_mask.model_bar.loaded, timeout=60_000):
        tab.open_buttons["fill-mask"].click()
    assert window.tabs.currentWidget() is fill_mask
    assert fill_mask.model_info.architecture == "BertForMaskedLM"
    assert fill_mask.model_info.head_report.complete


def test_bad_settings_are_shown(qtbot, window) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    tab.task.setCurrentIndex(tab.task.findData("text-classification"))
    tab.train_file.setText("")
    tab.base_model.setText("")
    tab.start()
    assert "No base model" in tab.message.text() and tab.start_button.isEnabled()


# -- conventions (issue 12) and the close-mid-run contract (issue 10) -----------------------------
def test_lr_plan_drawn_before_start_on_its_own_range(qtbot, window) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    tab.task.setCurrentIndex(tab.task.findData("text-classification"))
    with qtbot.waitSignal(tab.plan_runner.result, timeout=30_000):
        tab.use_demo_data()
        tab.max_steps.setValue(120)
        tab.warmup_steps.setValue(12)
    assert not tab.runner.busy and tab.plots.counts()["loss"] == 0  # nothing started
    x, y = tab.plots.planned_lr.xData, tab.plots.planned_lr.yData
    assert len(x) == 120 and y.max() > 0
    (x_low, x_high), (y_low, y_high) = tab.plots.lr_plot.getPlotItem().viewRange()
    assert x_low <= 1 and x_high >= 120  # the whole plan, not the empty loss plot's 0-1
    assert y_low <= 0 + 1e-12 and y_high >= y.max()
    assert tab.plots.lr_plot.getPlotItem().getViewBox().state["linkedViews"][0] is None  # not linked to loss


def test_axes_have_no_si_prefix_and_validation_stays_in_0_1(qtbot, window) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    plots = tab.plots
    for step in range(1, 30):
        plots.add_step(step, 0.0005 - step * 1e-6, 5e-5)
    plots.add_eval(10, {"accuracy": 0.9499, "f1": 0.95, "loss": 0.0004, "runtime": 12.0})
    plots.add_eval(20, {"accuracy": 0.95, "f1": 0.9501, "loss": 0.0003, "runtime": 12.0})
    plots.flush()
    for widget in (plots.loss_plot, plots.lr_plot, plots.metric_plot):
        for name in ("left", "bottom"):
            axis = widget.getPlotItem().getAxis(name)
            assert not axis.autoSIPrefix and "x0.001" not in axis.labelString() and "(x" not in axis.labelString()
        assert widget.getPlotItem().legend is None  # legends live in the titles, outside the data
    low, high = plots.metric_plot.getPlotItem().viewRange()[1]
    assert -0.05 <= low < 0.0 and 1.0 < high <= 1.05  # 0.9499 vs 0.95 is not magnified
    assert set(plots.metrics) == {"accuracy", "f1"}  # the runtime is no score
    assert "accuracy" in plots.metric_plot.getPlotItem().titleLabel.text


def test_a_negative_correlation_is_plotted_on_minus_one_to_one(qtbot, window) -> None:  # noqa: ANN001
    plots = tab_of(window, TrainTab).plots
    plots.add_eval(1, {"pearson": -0.35, "spearman": -0.2, "loss": 3.0})
    plots.flush()
    assert set(plots.metrics) == {"pearson", "spearman"}
    low, high = plots.metric_plot.getPlotItem().viewRange()[1]
    assert low < -1.0 and high > 1.0  # both ends whole, with room for a symbol
    assert "-1..1" in plots.metric_plot.getPlotItem().getAxis("left").labelText
    plots.clear_run()  # the next run (a classifier) is back on 0-1
    assert plots.metric_plot.getPlotItem().viewRange()[1][0] > -0.1


def test_step_axes_tick_whole_steps_only(qtbot, window) -> None:  # noqa: ANN001
    plots = tab_of(window, TrainTab).plots
    plots.add_step(1, 2.0, 1e-5)
    plots.add_step(2, 1.9, 1e-5)
    plots.flush()
    for widget in (plots.loss_plot, plots.metric_plot):
        item = widget.getPlotItem()
        low, high = item.viewRange()[0]
        assert low >= 0.0  # one point at step 1 showed -10..11
        ticks = item.getAxis("bottom").tickValues(low, high, 400)
        assert ticks and all(float(v).is_integer() for _, values in ticks for v in values)


def test_eta_comes_from_a_recent_window(qtbot, window) -> None:  # noqa: ANN001
    from bertstudio.core.training.events import RateWindow, TrainingEvent

    now = [0.0]
    window_ = RateWindow(samples_per_step=8, size=20, clock=lambda: now[0])
    window_.start(0)
    for step in range(1, 101):
        now[0] += 1.0 if step <= 50 else 0.1  # slow at first, then ten times faster
        window_.mark(step)
    rate, eta = window_.rate(100, 200)
    assert rate == pytest.approx(80.0) and eta == pytest.approx(10.0)  # the average since the start says 55 s
    tab = tab_of(window, TrainTab)
    tab.progress.setRange(0, 200)
    tab.live.on_progress(ProgressEvent("step", 0.5, TrainingEvent(
        "step", step=100, max_steps=200, loss=0.5, learning_rate=1e-5, samples_per_second=rate, eta_seconds=eta)))
    assert tab.rate_label.text() == "80.0 samples/s  ETA 0:10"


def test_output_picker_never_replaces_a_foreign_folder(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    from bertstudio.core.training.saving import write_marker

    tab = tab_of(window, TrainTab)
    documents = tmp_path / "Documents"
    documents.mkdir()
    (documents / "thesis.txt").write_text("mine", encoding="utf-8")
    tab.choose_output(documents)
    chosen = Path(tab.output_dir.text())
    assert chosen.parent == documents and not chosen.exists() and not tab.overwrite.isChecked()
    earlier = tmp_path / "earlier"
    write_marker(earlier, "model", "pretraining")
    asked: list[Path] = []
    tab.confirm_replace = lambda _parent, folder: asked.append(folder) or True
    tab.choose_output(earlier)
    assert asked == [earlier] and Path(tab.output_dir.text()) == earlier and tab.overwrite.isChecked()


def test_stop_during_final_evaluation_saves_without_blocking(qtbot, window, checkpoint_factory,  # noqa: ANN001
                                                             tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    import threading
    import time

    from transformers import Trainer

    entered, gate = threading.Event(), threading.Event()
    real = Trainer.prediction_step

    def held(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        entered.set()
        gate.wait(15)  # hold the final evaluation until the test has pressed Stop
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Trainer, "prediction_step", held)
    tab = tab_of(window, TrainTab)
    set_up_toy_classification(tab, checkpoint_factory("bert", "Model"), tmp_path, eval_share=0.5, max_steps=3)
    ended: list[bool] = []
    tab.run_ended.connect(lambda: ended.append(True))
    tab.start()
    try:
        assert tab.is_running()
        qtbot.waitUntil(entered.is_set, timeout=120_000)
        started = time.perf_counter()
        assert tab.stop_and_save()
        # the GUI thread never waits for the run: Stop returned while the evaluation is still held
        assert tab.is_running() and not ended and time.perf_counter() - started < 1.0
    finally:
        gate.set()  # never leave the worker held, even when an assertion failed
    with qtbot.waitSignal(tab.run_ended, timeout=60_000):
        pass
    assert ended == [True] and not tab.is_running() and tab.result.stopped and tab.result.step == 3
    assert (tmp_path / "model" / "model.safetensors").is_file()
    assert not (tmp_path / "model.partial").exists()
    assert "Saving" not in tab.rate_label.text() and not tab.message.text().startswith("Stopping")


def test_form_is_generated_from_the_config_fields(qtbot, window) -> None:  # noqa: ANN001
    from bertstudio.core.training.config import TrainConfig
    from bertstudio.core.training.options import options
    from bertstudio.core.training.scratch_config import ScratchConfig

    tab = tab_of(window, TrainTab)
    for cls in (TrainConfig, ScratchConfig):
        for name, option, _default in options(cls):
            widget = tab.form.widgets[name]
            assert option.flag in widget.toolTip()  # the same help and flag as `bertstudio train --help`
    assert tab.learning_rate.minimum() > 0 and tab.eval_share.maximum() < 1  # open ranges stay open
    tab.task.setCurrentIndex(tab.task.findData("token-classification"))
    tab.train_file.setText("data.conll")
    tab.base_model.setText("some-model")
    tab.max_steps.setValue(7)
    config = tab.config()
    assert (config.task, config.train_file, config.model, config.max_steps) == (
        "token-classification", "data.conll", "some-model", 7)


def test_workspace_state_round_trips(qtbot, window) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    tab.task.setCurrentIndex(tab.task.findData("pretraining"))
    tab.from_scratch.setChecked(True)
    tab.learning_rate.setValue(0.0003)
    tab.layers.setValue(4)
    tab.train_file.setText("corpus.txt")
    state = tab.state()
    tab.task.setCurrentIndex(tab.task.findData("text-classification"))
    tab.from_scratch.setChecked(False)
    tab.learning_rate.setValue(0.001)
    tab.layers.setValue(2)
    tab.restore(state)
    assert (tab.task_key, tab.from_scratch.isChecked(), tab.learning_rate.value(), tab.layers.value(),
            tab.train_file.text()) == ("pretraining", True, 0.0003, 4, "corpus.txt")


def test_plan_is_drawn_after_a_restart_without_any_edit(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    from tests.ui.test_workspace import _new_window

    first = _new_window(qtbot, tmp_path / "app")
    tab = tab_of(first, TrainTab)
    tab.task.setCurrentIndex(tab.task.findData("text-classification"))
    with qtbot.waitSignal(tab.plan_runner.result, timeout=30_000):
        tab.use_demo_data()
        tab.max_steps.setValue(40)
    first.close()
    second = _new_window(qtbot, tmp_path / "app")  # the same settings folder: the last workspace comes back
    try:
        restored = tab_of(second, TrainTab)
        if second.workspace.restoring:
            qtbot.waitSignal(second.workspace.restored, timeout=10_000).wait()
        assert restored.task_key == "text-classification" and restored.max_steps.value() == 40
        qtbot.waitUntil(lambda: restored.plots.planned_lr.xData is not None
                        and len(restored.plots.planned_lr.xData) == 40, timeout=30_000)
        assert "40 steps" in restored.plan_label.text()
    finally:
        second.close()


def test_form_is_read_only_during_a_run(qtbot, window, monkeypatch, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 7: the run uses what was set at Start; no wheel or key may seem to change it."""
    from types import SimpleNamespace

    from bertstudio.ui.tabs import train_tab
    from tests.ui.test_wheel_guard import _scroll

    def held_run(config, stop_event, control):  # noqa: ANN001, ANN202
        while not stop_event.wait(0.02):
            control.check()
        return SimpleNamespace(stopped=True, step=0, max_steps=config.max_steps, output_dir=config.output_dir,
                               metrics={}, checkpoints_dir=None, open_in=())

    monkeypatch.setattr(train_tab, "train_job", held_run)
    tab = tab_of(window, TrainTab)
    window.tabs.setCurrentWidget(tab)
    tab.base_model.setText("some-model")
    tab.use_demo_data()
    tab.output_dir.setText(str(tmp_path / "run"))
    tab.weight_decay.setValue(0.01)
    with qtbot.waitSignal(tab.runner.started, timeout=10_000):
        tab.start()
    assert not tab.form.isEnabled() and not tab.weight_decay.isEnabled() and not tab.demo_button.isEnabled()
    assert "Read-only" in tab.form.toolTip()
    _scroll(tab.weight_decay, notches=-3)
    assert tab.weight_decay.value() == 0.01
    with qtbot.waitSignal(tab.run_ended, timeout=10_000):
        tab.stop()
    assert tab.form.isEnabled() and tab.weight_decay.isEnabled() and tab.form.toolTip() == ""


def _planned(tab: TrainTab) -> int:
    x = tab.plots.planned_lr.xData
    return 0 if x is None else len(x)


def test_an_error_clears_the_plan(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 17: switching the task with the old file still set drew the old plan under the new error."""
    tab = tab_of(window, TrainTab)
    tab.task.setCurrentIndex(tab.task.findData("text-classification"))
    with qtbot.waitSignal(tab.plan_runner.result, timeout=30_000):
        tab.use_demo_data()
    assert _planned(tab) > 0 and tab.plan_result is not None
    bad = tmp_path / "broken.csv"
    bad.write_text("text,label\n", encoding="utf-8")  # a header and no rows
    with qtbot.waitSignal(tab.plan_runner.error, timeout=30_000):
        tab.train_file.setText(str(bad))
    assert tab.plan_result is None and _planned(tab) == 0
    assert not tab.progress.isTextVisible() and tab.plan_label.text()  # the error, and no plan under it
    with qtbot.waitSignal(tab.plan_runner.result, timeout=30_000):
        tab.use_demo_data()
    assert _planned(tab) > 0
    # the task switched with the classification file still set: the old plan goes at once
    tab.task.setCurrentIndex(tab.task.findData("token-classification"))
    assert tab.plan_result is None and _planned(tab) == 0
    with qtbot.waitSignal(tab.plan_runner.error, timeout=30_000):  # the CSV is no CoNLL file
        pass
    assert tab.plan_result is None and _planned(tab) == 0 and "malformed" in tab.plan_label.text()


def test_plots_follow_the_dark_theme(qtbot, window) -> None:  # noqa: ANN001
    """Issue 8: the dark theme left the Train plots white."""
    from bertstudio.ui import plot_style, theme
    from bertstudio.ui.widgets.training_plots import CURVES

    plots = tab_of(window, TrainTab).plots
    manager = theme.manager()
    mode = manager.mode
    try:
        manager.set_mode("dark", remember=False)
        for view in (plots.loss_plot, plots.lr_plot, plots.metric_plot):
            assert plot_style.background_of(view) == theme.DARK.background
            axis = view.getPlotItem().getAxis("left")
            assert axis.textPen().color().name() == theme.DARK.foreground
        assert plots.smooth_loss.item.opts["pen"].color().name() == CURVES["dark"][1]
        assert CURVES["dark"][1] in plots.loss_plot.getPlotItem().titleLabel.text
        manager.set_mode("light", remember=False)
        assert plot_style.background_of(plots.loss_plot) == theme.LIGHT.background
        assert plots.smooth_loss.item.opts["pen"].color().name() == CURVES["light"][1]
    finally:
        manager.set_mode(mode, remember=False)


def test_task_choices_and_open_buttons_come_from_trainables_and_specs(window) -> None:  # noqa: ANN001
    """Issue 18: the form lists each trainable by its own title and "Open in…" names each spec by its title;
    choosing a task asks the trainable what it offers (from scratch, named columns)."""
    from bertstudio.core.tasks.spec import spec_for
    from bertstudio.core.training.trainable import TRAINABLE

    tab = tab_of(window, TrainTab)
    assert [tab.task.itemData(i) for i in range(tab.task.count())] == list(TRAINABLE)
    assert [tab.task.itemText(i) for i in range(tab.task.count())] == [t.title for t in TRAINABLE.values()]
    assert {key: button.text() for key, button in tab.open_buttons.items()} == {
        key: f"Open in {spec_for(key).title}" for key in ("fill-mask", "nsp", "ner", "qa", "classification",
                                                          "multiple-choice")}
    for key, trainable in TRAINABLE.items():
        tab.task.setCurrentIndex(tab.task.findData(key))
        assert tab.from_scratch.isVisibleTo(tab) == trainable.from_scratch, key
        assert tab.columns_box.isVisibleTo(tab) == trainable.columns, key


def test_a_new_run_forgets_the_last_runs_validation_curves_and_their_legend(qtbot) -> None:  # noqa: ANN001
    """A classifier's accuracy once stayed in the legend of the QA run that followed it."""
    from bertstudio.ui.widgets.training_plots import TrainingPlots

    plots = TrainingPlots()
    qtbot.addWidget(plots)
    plots.add_eval(10, {"accuracy": 0.8, "loss": 0.4})
    item = plots.metric_plot.getPlotItem()
    assert "accuracy" in item.titleLabel.text and len(item.listDataItems()) == 1
    plots.clear_run()
    plots.add_eval(5, {"exact_match": 0.5})
    assert "accuracy" not in item.titleLabel.text and "exact_match" in item.titleLabel.text
    assert list(plots.metrics) == ["exact_match"] and len(item.listDataItems()) == 1


def test_a_task_switch_forgets_the_last_run_and_proposes_a_new_folder(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 29 #13: the previous task's result, Open in…, curves and output folder do not stay."""
    from types import SimpleNamespace

    tab = tab_of(window, TrainTab)
    tab.task.setCurrentIndex(tab.task.findData("text-classification"))
    tab.output_dir.setText(str(tmp_path / "classifier"))
    tab.overwrite.setChecked(True)
    tab._on_result(SimpleNamespace(stopped=False, step=5, max_steps=5, output_dir=str(tmp_path / "classifier"),
                                   metrics={"accuracy": 0.9}, checkpoints_dir=None, open_in=("classification",)))
    tab.plots.add_step(1, 0.7, 1e-5)
    assert tab.open_buttons["classification"].isVisibleTo(tab)
    state = tab.state()
    tab.task.setCurrentIndex(tab.task.findData("token-classification"))
    assert tab.result is None and not tab.open_buttons["classification"].isVisibleTo(tab)
    assert tab.plots.counts()["loss"] == 0 and tab.metrics_label.text() == ""
    assert tab.output_dir.text() == "" and not tab.overwrite.isChecked()  # a new folder is proposed
    tab.restore(state)  # a restored workspace keeps the folder it names
    assert tab.task_key == "text-classification" and tab.output_dir.text() == str(tmp_path / "classifier")


def test_resume_is_an_action_beside_stop_not_a_setting(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 29 #5: no Resume box in the form to stay ticked; Resume needs the run's folder."""
    tab = tab_of(window, TrainTab)
    assert not tab.resume.isVisibleTo(tab) and tab.resume_button.isVisibleTo(tab)
    tab.output_dir.clear()
    tab.resume_button.click()
    assert "output folder" in tab.message.text() and not tab.runner.busy
    assert not tab.config().resume
