"""The Train tab with the new heads: each offers its demo data and draws the planned curve before
Start; a QA run shows live exact match and F1 and opens in the QA tab and in Evaluate."""

from __future__ import annotations

import os
from pathlib import Path

from bertstudio.ui.tabs.train_tab import TrainTab
from tests.core.test_training_tasks import small_copy
from tests.ui.conftest import TRAIN_AND_ITS_TARGETS, evaluate_tab, only_tabs, tab_of

window_tabs = only_tabs(*TRAIN_AND_ITS_TARGETS)  # these tests drive the Train tab only

SHOTS = os.environ.get("BERTSTUDIO_SHOTS", "")  # a folder: the test also saves its screens there


def _save_in_both_themes(qtbot, widget, stem: str) -> None:  # noqa: ANN001
    """With SHOTS set, `widget` as <stem>-light.png and <stem>-dark.png; the theme is put back after."""
    if not SHOTS:
        return
    from bertstudio.ui import theme

    manager = theme.manager()
    mode = manager.mode
    try:
        for name in ("light", "dark"):
            manager.set_mode(name, remember=False)
            qtbot.wait(50)
            widget.grab().save(str(Path(SHOTS) / f"{stem}-{name}.png"))
    finally:
        manager.set_mode(mode, remember=False)


def test_demo_data_draws_the_plan(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    tab.base_model.setText(str(checkpoint_factory("bert", "Model")))
    tab.max_length.setValue(64)
    for task in ("qa", "choice", "regression"):
        tab.task.setCurrentIndex(tab.task.findData(task))
        with qtbot.waitSignal(tab.plan_runner.result, timeout=60_000):
            tab.use_demo_data()
        assert tab.plan_result is not None and len(tab.plots.planned_lr.xData) == tab.progress.maximum() > 0, task
        assert tab.columns_box.isVisibleTo(tab) == (task == "regression")
    assert (tab.text_column.currentText(), tab.pair_column.currentText(), tab.label_column.currentText()) == (
        "sentence1", "sentence2", "score")
    if SHOTS:
        window.tabs.setCurrentWidget(tab)
        window.resize(1280, 800)
        qtbot.wait(50)
        window.grab().save(str(Path(SHOTS) / "H-train-regression-plan.png"))


def test_qa_run_shows_exact_match_and_f1_and_opens_in_qa_and_evaluate(qtbot, window, checkpoint_factory,  # noqa: ANN001
                                                                       tmp_path: Path) -> None:
    tab = tab_of(window, TrainTab)
    window.tabs.setCurrentWidget(tab)
    window.resize(1280, 800)
    tab.task.setCurrentIndex(tab.task.findData("qa"))
    tab.base_model.setText(str(checkpoint_factory("bert", "Model")))
    tab.train_file.setText(str(small_copy("qa", "qa_train.json", tmp_path, 8)))
    tab.eval_file.setText(str(small_copy("qa", "qa_eval.json", tmp_path, 3)))
    tab.output_dir.setText(str(tmp_path / "qa-run"))
    for widget, value in ((tab.max_steps, 8), (tab.batch_size, 8), (tab.max_length, 64), (tab.warmup_steps, 2),
                          (tab.eval_steps, 4)):
        widget.setValue(value)
    with qtbot.waitSignal(tab.runner.result, timeout=240_000):
        tab.start()
    tab.plots.flush()
    assert {"exact_match", "f1"} <= set(tab.plots.metrics)
    assert "exact_match" in tab.metrics_label.text() and "f1" in tab.metrics_label.text()
    assert tab.result.open_in == ("qa",) and tab.open_buttons["qa"].isVisibleTo(tab)
    assert not tab.open_buttons["multiple-choice"].isVisibleTo(tab)
    calls: list[tuple] = []
    window.open_evaluation = lambda *args: calls.append(args)
    tab.evaluate_result()
    assert calls == [(tab.result.output_dir, tab.eval_file.text(), "qa")]
    _save_in_both_themes(qtbot, window, "H-train-qa")


def test_regression_model_evaluates_by_correlation_in_the_evaluate_tab(qtbot, settings, checkpoint_factory,  # noqa: ANN001
                                                                      tmp_path: Path) -> None:
    from bertstudio.core.training.engine import train
    from tests.core.test_training_tasks import task_config

    config = task_config("regression", tmp_path, checkpoint_factory("bert", "Model"), max_steps=2)
    result = train(config)
    tab = evaluate_tab(qtbot, settings)
    with qtbot.waitSignal(tab.runner.finished, timeout=120_000):
        tab.open_evaluation(result.output_dir, str(config.eval_file), "classification")
    assert tab.evaluation is not None and {"pearson", "spearman", "mse", "mae"} <= set(tab.evaluation.metrics)
    shown = dict(tab.metrics_page.metrics.source_model.records)
    assert shown["pearson"] == tab.evaluation.metrics["pearson"]
    _save_in_both_themes(qtbot, tab, "H-evaluate-regression")


def test_distillation_scores_stay_on_the_teacher_plot_and_the_model_row_names_the_student(qtbot, window) -> None:  # noqa: ANN001
    """Teacher vs student goes to its own plot; the hidden validation plot never gets those legend
    entries (a later QA run would show them); the model row says what it is for that task."""
    from bertstudio.core.progress import ProgressEvent
    from bertstudio.core.training.events import TrainingEvent
    from bertstudio.core.training.trainable import TRAINABLE

    tab = tab_of(window, TrainTab)
    label = tab.form.layouts["Data"].labelForField(tab.form.rows["model"])
    assert label.text() == "Base model"
    distil = next(key for key, task in TRAINABLE.items() if getattr(task, "distils", False))
    tab.task.setCurrentIndex(tab.task.findData(distil))
    assert label.text() == "Student model" and "teacher cut" in tab.base_model.placeholderText()
    scores = {"loss": 0.7, "accuracy": 0.8, "teacher_accuracy": 0.9, "agreement": 0.85}
    tab.live.on_progress(ProgressEvent("eval", None, TrainingEvent("eval", step=4, max_steps=8, metrics=scores)))
    tab.plots.flush()
    assert not tab.plots.metrics and list(tab.teacher_plot.items["agreement"].getData()[1]) == [0.85]
    assert len(tab.plots.eval_loss) == 1
    tab.task.setCurrentIndex(tab.task.findData("qa"))
    assert label.text() == "Base model" and "teacher" not in tab.base_model.placeholderText()
    assert tab.plots.metric_plot.isVisibleTo(tab) == tab.teacher_plot.isHidden()


def test_held_out_share_is_off_while_a_validation_file_is_set(qtbot, window) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    tab.eval_file.setText("")
    assert tab.eval_share.isEnabled()
    tab.eval_file.setText("valid.csv")
    assert not tab.eval_share.isEnabled() and "Not used" in tab.eval_share.toolTip()
    tab.eval_file.setText("")
    assert tab.eval_share.isEnabled() and "Not used" not in tab.eval_share.toolTip()
