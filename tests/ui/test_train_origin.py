"""Issue 29: the Train tab's shown run knows where it came from; Evaluate…/Open in… hand over that
run's folder, task and data, and a form that now differs marks the run Out of date (never hides it)."""

from __future__ import annotations

import sys
from pathlib import Path

from bertstudio.ui.tabs.train_tab import TrainTab
from tests.ui.conftest import only_tabs, set_up_toy_classification, tab_of

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import walkthrough  # noqa: E402

window_tabs = only_tabs("train_tab", "classification_tab")


def test_a_finished_run_keeps_its_origin_when_the_form_changes(qtbot, window, checkpoint_factory,  # noqa: ANN001
                                                               tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    base = checkpoint_factory("bert", "Model")
    set_up_toy_classification(tab, base, tmp_path, eval_share=0.25, max_steps=2)
    run_folder, train_file = str(tmp_path / "model"), tab.train_file.text()
    assert tab.result_origin() is None  # nothing shown yet
    with qtbot.waitSignal(tab.runner.result, timeout=120_000):
        tab.start()
    qtbot.waitUntil(lambda: not tab.runner.busy, timeout=30_000)
    shown = tab.result_origin()
    assert shown is not None and shown.model is not None
    assert (shown.model.source, shown.model.task) == (str(base), "classification")
    assert (shown.inputs.task, shown.inputs.output_dir, shown.inputs.train_file) == (
        "text-classification", run_folder, train_file)
    assert shown == tab.origin_now() and not tab.stale_banner.reason
    assert tab.read_state().stale_reason() == "" and walkthrough.origin_problems(window) == []
    assert "Run of" in tab.results.origin_label.text() and run_folder in tab.results.origin_label.text()

    tab.output_dir.setText(str(tmp_path / "another"))
    tab.eval_file.setText(str(tmp_path / "other-validation.csv"))
    assert tab.stale_banner.reason == "validation file and output folder"
    # the state object and the banner say the same (issue 40: the state said "input")
    assert tab.stale_banner.isVisibleTo(tab) and tab.read_state().stale_reason() == "validation file and output folder"
    assert tab.result_origin() == shown and tab.metrics_label.text()  # the record stays, marked
    assert walkthrough.origin_problems(window) == []  # differs, and says so
    handed: list[tuple[str, str, str]] = []
    monkeypatch.setattr(window, "open_evaluation", lambda *args: handed.append(args))
    tab.evaluate_result()
    assert handed == [(run_folder, train_file, "classification")]  # the run's folder and data, not the form's
    opened: list[tuple[str, str]] = []
    tab.open_model_requested.connect(lambda task, folder: opened.append((task, folder)))
    tab.open_result_in("classification")
    assert opened == [("classification", run_folder)]

    tab.base_model.setText(str(tmp_path / "elsewhere"))
    assert "base model" in tab.stale_banner.reason
    tab.base_model.setText(str(base))
    tab.output_dir.setText(run_folder)
    tab.eval_file.setText("")
    assert tab.stale_banner.reason == "" and not tab.stale_banner.isVisibleTo(tab)  # the same run again
    tab.max_steps.setValue(3)
    assert tab.stale_banner.reason == "settings"
    tab.task.setCurrentIndex(tab.task.findData("token-classification"))  # item 13: a task switch forgets it
    assert tab.result_origin() is None and tab.stale_banner.reason == ""


def test_a_long_result_never_squeezes_the_plots_axes_at_900x600(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 29 #12: a long result text squeezed the plots until their tick labels piled up; the
    page scrolls instead and every plot keeps room for its title, axis label and ticks."""
    from types import SimpleNamespace

    from bertstudio.ui.train.live import PLOT_MIN_HEIGHTS

    tab = tab_of(window, TrainTab)
    window.resize(900, 600)
    window.tabs.setCurrentWidget(tab)
    tab.task.setCurrentIndex(tab.task.findData("text-classification"))
    metrics = {f"metric_{i}": i / 20 for i in range(16)}  # a result text of several wrapped lines
    tab._on_result(SimpleNamespace(stopped=True, step=9, max_steps=20, output_dir=str(tmp_path / "run"),
                                   metrics=metrics, checkpoints_dir=None, open_in=("classification",)))
    qtbot.waitUntil(lambda: tab.metrics_label.isVisible() and tab.metrics_label.height() > 40, timeout=5_000)
    heights = [p.height() for p in (tab.plots.loss_plot, tab.plots.lr_plot, tab.plots.metric_plot)]
    assert all(h >= least for h, least in zip(heights, PLOT_MIN_HEIGHTS, strict=True)), heights
    assert "Run of no base model on" in tab.results.origin_label.text()
