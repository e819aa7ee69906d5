"""Issue 40's minor window findings, each with the test that fails on the code before the fix."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QMessageBox

from bertstudio.core.errors import InputError
from bertstudio.core.training.search import SearchResult, TrialRecord
from bertstudio.ui.log_panel import LogPanel


def test_the_log_follows_its_end_in_a_small_window(qtbot) -> None:  # noqa: ANN001
    log = LogPanel()
    qtbot.addWidget(log)
    log.resize(300, 90)
    log.show()
    qtbot.waitExposed(log)
    for number in range(40):
        log.info(f"line {number}: " + "a long message that wraps in a narrow log " * 3)
        log.error(InputError(f"refused {number}", hint="a hint on a second line"), "Train")
    bar = log.view.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()


def test_the_error_details_box_has_the_error_icon(qtbot) -> None:  # noqa: ANN001
    log = LogPanel()
    qtbot.addWidget(log)
    try:
        raise ValueError("deep")
    except ValueError as cause:
        error = InputError("It failed.")
        error.__cause__ = cause
        log.error(error, "Train")
    log.show_details()
    box = next(w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible())
    assert box.icon() == QMessageBox.Icon.Critical
    box.close()


def _record(number: int, value: float) -> TrialRecord:
    return TrialRecord(number=number, state="finished", params={"learning_rate": 1e-4}, value=value)


def test_the_search_plot_rescales_and_its_success_is_no_warning(qtbot) -> None:  # noqa: ANN001
    from bertstudio.ui.train.search_panel import SearchPanel

    panel = SearchPanel(lambda: None, lambda _text: None)  # type: ignore[arg-type, return-value]
    qtbot.addWidget(panel)
    panel.toggle.setChecked(True)
    panel.show()
    qtbot.waitExposed(panel)
    panel.add_record(_record(0, 0.5))
    panel.plot.getPlotItem().setXRange(0, 2, padding=0)  # a zoom (Ctrl+wheel) switches auto-range off
    for number in range(1, 12):
        panel.add_record(_record(number, 0.5 + number / 10))
    box = panel.plot.getPlotItem().getViewBox()

    def every_trial_in_sight() -> bool:  # pyqtgraph sets an auto range when it next paints
        (x_low, x_high), (_y_low, y_high) = box.viewRange()
        return x_low <= 1 and x_high >= 12 and y_high >= 1.6

    qtbot.waitUntil(every_trial_in_sight, timeout=3000)
    best = panel.records[-1]
    panel.on_result(SearchResult(output_dir="/x", metric="accuracy", direction="maximize",
                                 trials=tuple(panel.records), best=best, stopped=False))
    assert [note.level for note in panel.notes.notes] == ["info"]


def test_a_new_plan_drops_the_previous_runs_actual_learning_rate(qtbot) -> None:  # noqa: ANN001
    from bertstudio.ui.widgets.training_plots import TrainingPlots

    plots = TrainingPlots()
    qtbot.addWidget(plots)
    plots.set_plan([1e-4] * 10)
    for step in range(1, 11):
        plots.add_step(step, 0.5, 1e-4)
    plots.flush()
    assert len(plots.live_lr.x) == 10
    plots.set_plan([5e-5] * 40)  # the form changed: the next run's plan
    plots.flush()
    assert len(plots.live_lr.x) == 0 and (plots.live_lr.item.xData is None or len(plots.live_lr.item.xData) == 0)


def test_checking_its_heads_goes_once_they_are_judged(qtbot, settings) -> None:  # noqa: ANN001
    from types import SimpleNamespace

    from bertstudio.ui.local_models import LocalModelsIndex
    from bertstudio.ui.model_bar import ModelBar

    def listed(judged: bool) -> SimpleNamespace:
        return SimpleNamespace(name="tiny", architecture="BertForSequenceClassification", path="/models/tiny",
                               tasks=("classification",) if judged else (), judged=judged, problem="", note="")

    bar = ModelBar("classification", settings, LocalModelsIndex(settings))
    qtbot.addWidget(bar)
    bar.set_local_models([listed(False)])
    bar.source.setCurrentIndex(bar.source.findData("/models/tiny"))
    assert "checking its heads" in bar.source.currentText()
    bar.set_local_models([listed(True)])  # the index judged its heads
    assert "checking" not in bar.source.currentText() and bar.source_text() == "/models/tiny"


def test_a_disabled_fine_tune_on_failures_says_why(qtbot, settings) -> None:  # noqa: ANN001
    from bertstudio.ui.local_models import LocalModelsIndex
    from bertstudio.ui.tabs.tests_tab import TestsTab

    tab = TestsTab(settings, LocalModelsIndex(settings))
    qtbot.addWidget(tab)
    assert not tab.fix_button.isEnabled() and "Run the suite first" in tab.fix_button.toolTip()


def test_continue_it_with_resume_is_never_cut(qtbot, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from types import SimpleNamespace

    from bertstudio.ui.train import output as output_mod
    from bertstudio.ui.train.result_panel import CHECKPOINT_ACTION, ResultPanel

    folder = tmp_path / ("a-long-folder-name-" * 4) / "run.checkpoints"
    monkeypatch.setattr(output_mod, "checkpoint_note",
                        lambda _out: (folder, f"Resumable checkpoint kept in {folder} (1.2 MB)."))
    panel = ResultPanel()
    qtbot.addWidget(panel)
    panel.resize(420, 200)  # the result's column at 900x600
    panel.show()
    qtbot.waitExposed(panel)
    result = SimpleNamespace(stopped=True, step=19, max_steps=40, output_dir=str(tmp_path / "run"), metrics={},
                             checkpoints_dir=str(tmp_path / "run.checkpoints"), open_in=())
    panel.show_result(result, lambda _key: False, False)
    shown = panel.checkpoint_action
    assert shown.isVisible() and shown.text() == CHECKPOINT_ACTION
    assert shown.width() >= shown.sizeHint().width()  # the whole sentence in sight


def test_a_long_model_description_never_widens_the_page_at_900_px(qtbot, settings) -> None:  # noqa: ANN001
    """Issue 40: at 900 px Evaluate scrolled sideways, the Load button past the edge: the model bar's
    one-line description of a loaded model was as wide as its text. It is elided, whole in its tooltip."""
    from tests.ui.conftest import evaluate_tab as make_evaluate_tab

    evaluate_tab = make_evaluate_tab(qtbot, settings)
    text = ("BertForSequenceClassification · 22.7 M parameters · 6 layers · 12 heads · hidden 384 · vocabulary "
            "30,522 · max 512 tokens · cpu float32 · 90.9 MB")
    label = evaluate_tab.model_bar.info_label
    label.setText(text)
    evaluate_tab.resize(880, 520)
    evaluate_tab.show()
    qtbot.wait(50)
    assert label.minimumSizeHint().width() < label.fontMetrics().horizontalAdvance(text) // 2
    assert evaluate_tab.page.minimumSizeHint().width() < 880
    assert label.text() == text and label.toolTip() == text
