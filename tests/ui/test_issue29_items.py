"""Issue 29 items whose fix had no test that fails without it: Train's Evaluate… over a model already in
the bar (#1), the training status line at 900x600 (#14); and a guard that the last workspace comes back
without waiting for the background import (#8)."""

from __future__ import annotations

from pathlib import Path

from bertstudio.core.progress import ProgressEvent
from bertstudio.core.training.events import TrainingEvent
from bertstudio.ui.tabs.evaluate_tab import EvaluateTab
from bertstudio.ui.tabs.train_tab import TrainTab
from tests.ui.conftest import evaluate_tab, load_model_in, tab_of

DATA = Path(__file__).resolve().parents[1] / "data" / "evaluate"


def test_evaluate_from_train_scores_and_shows_the_handed_model_not_the_one_in_the_bar(  # noqa: ANN001
        qtbot, settings, real_models, checkpoint_factory) -> None:
    """Issue 29 #1: with the workspace's model in Evaluate's bar, Train's Evaluate… scored the trained model
    while the bar (and the load in the log) named the other one."""
    tab: EvaluateTab = evaluate_tab(qtbot, settings)
    other = checkpoint_factory("bert", "SequenceClassification")
    load_model_in(qtbot, tab, other)
    trained = real_models["categorium-bert-tiny-topics-en"]
    with qtbot.waitSignal(tab.runner.finished, timeout=120_000):
        tab.open_evaluation(str(trained), str(DATA / "topics.csv"), "classification")
    qtbot.waitUntil(lambda: tab.evaluation is not None and not tab.runner.busy, timeout=10_000)
    assert tab.evaluation.model == str(trained)
    assert tab.model_info is not None and tab.model_info.request.source == str(trained)
    assert tab.model_bar.source.currentText() == str(trained)  # the field names the scored model
    assert not tab.stale_banner.isVisibleTo(tab) and tab.read_state().stale_reason() == ""


def test_training_status_line_is_never_squeezed_at_900_by_600(qtbot, window) -> None:  # noqa: ANN001
    """Issue 29 #14: the bar's fill covered its text ("st|ep 12/45") and the labels were cut to
    "Trainin…", "ETA 0:…": the bar and the rate keep room for their whole text in a small window."""
    tab = tab_of(window, TrainTab)
    window.tabs.setCurrentWidget(tab)
    window.resize(900, 600)
    qtbot.waitUntil(lambda: not tab._replan.isActive(), timeout=10_000)  # the form's own plan read is done
    tab.live.on_progress(ProgressEvent("", payload=TrainingEvent("plan", max_steps=4500)))
    tab.live.on_progress(ProgressEvent("", payload=TrainingEvent("step", step=1200, max_steps=4500, loss=0.5,
                                                             learning_rate=1e-5, samples_per_second=123.4,
                                                             eta_seconds=4321.0)))
    qtbot.wait(1)
    bar = tab.progress
    assert bar.isTextVisible() and bar.text() == "step 1200 / 4500"
    assert bar.width() >= bar.fontMetrics().horizontalAdvance(bar.text()) + 20, bar.width()
    assert tab.rate_label.text() == "123.4 samples/s  ETA 1:12:01"  # a run over an hour: the longest ETA
    assert not tab.rate_label.is_elided(), tab.rate_label.width()


def test_the_last_workspace_comes_back_before_the_background_import_ends(  # noqa: ANN001
        qtbot, tmp_path: Path, monkeypatch) -> None:
    """Issue 29 #8 (second half): the first seconds after start showed an empty Fill-mask tab before the
    inputs and the last tab came back. The restore must not wait for torch/transformers: with the
    warm-up held, the saved tab is current and its inputs are back (a guard: it passes before the fix too)."""
    import threading

    from PySide6.QtCore import QSettings

    from bertstudio.ui import main_window
    from bertstudio.ui.settings import AppSettings
    from bertstudio.ui.tabs.classification_tab import ClassificationTab
    from bertstudio.ui.tabs.fill_mask_tab import FillMaskTab

    def new_window() -> main_window.MainWindow:
        settings = AppSettings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
        win = main_window.MainWindow(settings, confirm_close=False)
        qtbot.addWidget(win)
        return win

    first = new_window()
    with qtbot.waitSignal(first.ready, timeout=60_000):
        first.show()
    tab_of(first, FillMaskTab).text.setPlainText("kept [MASK] text .")
    first.tabs.setCurrentWidget(tab_of(first, ClassificationTab))
    first.close()

    held, original = threading.Event(), main_window.warm_up
    monkeypatch.setattr(main_window, "warm_up", lambda control: (held.wait(60), original(control))[1])
    second = new_window()
    warmed: list[bool] = []
    second.ready.connect(lambda: warmed.append(True))
    try:
        with qtbot.waitSignal(second.workspace.restored, timeout=20_000):
            second.show()
        assert warmed == []  # the warm-up is still held: the restore did not wait for it
        assert isinstance(second.tabs.currentWidget(), ClassificationTab)
        assert tab_of(second, FillMaskTab).text.toPlainText() == "kept [MASK] text ."
    finally:
        with qtbot.waitSignal(second.ready, timeout=60_000):
            held.set()
        second.close()
