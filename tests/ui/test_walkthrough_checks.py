"""scripts/walkthrough.py's checks find what a person would see: a window wider than the screen,
a clipped button, a dialog, a crash log (each planted here, each must be reported); a result whose
origin disagrees with its tab, and a Train -> Evaluate hand-off naming another model or task."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

from PySide6.QtWidgets import QMessageBox, QPushButton

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import walk_chains  # noqa: E402
import walkthrough  # noqa: E402


def test_a_clean_window_has_no_problems(window, tmp_path: Path) -> None:
    inspector = walkthrough.Inspector(window, tmp_path / "crashes")
    inspector.check()
    assert inspector.problems == []


def test_planted_problems_are_all_reported(qtbot, window, tmp_path: Path) -> None:
    inspector = walkthrough.Inspector(window, tmp_path / "crashes")
    tab = window.task_tabs["fill-mask"]
    window.tabs.setCurrentWidget(tab)
    window.resize(1327, 780)  # what a long status line once did
    qtbot.wait(1)
    inspector.check()
    assert any("px wide" in p for p in inspector.problems), inspector.problems
    window.resize(1180, 780)
    button = QPushButton("Details of the last error…", tab.run_button.parentWidget())
    button.setGeometry(tab.run_button.parentWidget().width() - 30, 0, 200, 30)  # mostly past its parent's edge
    button.show()
    (tmp_path / "crashes").mkdir()
    (tmp_path / "crashes" / "crash-1.log").write_text("Traceback", encoding="utf-8")
    box = QMessageBox(QMessageBox.Icon.Critical, "Internal error", "Something broke", parent=window)
    box.show()
    qtbot.wait(1)
    inspector.check()
    found = "\n".join(inspector.problems)
    assert "'Details of the last error…' is clipped" in found or "lies outside the window" in found, found
    assert "a dialog popped up: 'Internal error'" in found and not box.isVisible()
    assert "crash log" in found


# -- the generic origin check and the Train -> Evaluate hand-off check, on stand-ins (no window) --------

def _tab(result, now, *, loaded: str = "", bar_task: str | None = None, marked: bool = False, key: str = "train"):
    """A tab stand-in: read_state() gives the state object, an Out-of-date banner shown or not."""
    from bertstudio.ui.tabs.tab_state import TabState

    state = TabState(task=key, loaded=loaded, result=result, now=now, has_model_bar=bar_task is not None)
    tab = SimpleNamespace(TASK=key, read_state=lambda: state,
                          stale_banner=SimpleNamespace(isHidden=lambda: not marked))
    if bar_task is not None:
        tab.model_bar = SimpleNamespace(task=bar_task)
    return tab


def _origin(source: str, task: str, inputs: object = "in"):
    from bertstudio.core.models import LoadRequest
    from bertstudio.ui.tabs.tab_state import RunState

    return RunState(LoadRequest(source, task), inputs, (), None)


def test_origin_problems_reads_tabs_without_a_model_bar_through_their_state() -> None:
    """Train, Tests, Explain report result_origin()/origin_now(): the task compared is the state's `now`,
    not the tab's key (Train's key is no model task), and no model bar means no loaded model to match."""
    same = _tab(_origin("/runs/a", "multiple-choice"), _origin("/runs/a", "multiple-choice"))
    window = SimpleNamespace(task_tabs={"train": same})
    assert walkthrough.origin_problems(window) == []
    other_task = _tab(_origin("/runs/a", "multiple-choice"), _origin("/runs/a", "classification"))
    other_input = _tab(_origin("/runs/a", "ner", "x"), _origin("/runs/a", "ner", "y"), key="tests")
    found = walkthrough.origin_problems(SimpleNamespace(task_tabs={"train": other_task, "tests": other_input}))
    assert any(p.startswith("train: the result was computed for task 'multiple-choice'") for p in found), found
    assert any(p.startswith("tests: the result's input differs") for p in found), found
    marked = _tab(_origin("/runs/a", "ner", "x"), _origin("/runs/a", "ner", "y"), marked=True)
    assert walkthrough.origin_problems(SimpleNamespace(task_tabs={"explain": marked})) == []


def test_origin_problems_still_checks_a_model_bars_loaded_model() -> None:
    tab = _tab(_origin("/m/old", "ner"), _origin("/m/new", "ner"), loaded="/m/new", bar_task="ner")
    found = walkthrough.origin_problems(SimpleNamespace(task_tabs={"ner": tab}))
    assert found == ["ner: shows a result of /m/old under /m/new with no Out-of-date mark"]


def _handoff(folder: str, *, field: str, loaded: str, shown: tuple[str, str] | None, metrics: dict,
             evaluated: tuple[str, str], train_dir: str, rows: int | None = None,
             train_origin: tuple[str, str] | None = None):
    from bertstudio.ui.tabs.tab_state import TabState

    state = TabState(task="evaluate", model=field, loaded=loaded,
                     result=_origin(*shown) if shown is not None else None)
    table = SimpleNamespace(source_model=SimpleNamespace(rowCount=lambda: len(metrics) if rows is None else rows))
    evaluate = SimpleNamespace(read_state=lambda: state, metrics_page=SimpleNamespace(metrics=table),
                               evaluation=SimpleNamespace(model=evaluated[0], task=evaluated[1], metrics=metrics))
    origin = None  # Train's origin: the base model and task; its inputs hold the folder written
    if train_origin is not None:
        origin = _origin("/models/base", train_origin[1], SimpleNamespace(output_dir=train_origin[0]))
    train_state = TabState(task="train", has_model_bar=False, result=origin)
    train = SimpleNamespace(read_state=lambda: train_state, result=SimpleNamespace(output_dir=train_dir))
    return train, evaluate


def test_a_faithful_train_to_evaluate_handoff_has_no_problems(tmp_path: Path) -> None:
    folder = str(tmp_path / "trained")
    train, evaluate = _handoff(folder, field=folder + "/", loaded=folder, shown=(folder, "multiple-choice"),
                               metrics={"accuracy": 0.5}, evaluated=(folder, "multiple-choice"), train_dir=folder,
                               train_origin=(folder, "multiple-choice"))
    assert walk_chains.handoff_problems(train, evaluate, folder, "multiple-choice") == []


def test_every_view_of_the_handoff_that_names_another_model_or_task_is_reported(tmp_path: Path) -> None:
    folder, old = str(tmp_path / "trained"), str(tmp_path / "restored-sentiment")
    train, evaluate = _handoff(folder, field=old, loaded=old, shown=(folder, "classification"),
                               metrics={"accuracy": 0.5, "f1": 0.4}, evaluated=(old, "classification"),
                               train_dir=str(tmp_path / "elsewhere"), rows=0, train_origin=(old, "classification"))
    found = "\n".join(walk_chains.handoff_problems(train, evaluate, folder, "multiple-choice"))
    for part in ("the model field says", "the loaded model is", "computed for task 'classification'",
                 "the metrics shown are of", "the metrics table has 0 rows", "train: the result shown is of",
                 "train: the result's origin names the folder", "train: the result's origin names task"):
        assert part in found, (part, found)
    train, evaluate = _handoff(folder, field=folder, loaded=folder, shown=None, metrics={},
                               evaluated=(folder, "multiple-choice"), train_dir=folder)
    found = "\n".join(walk_chains.handoff_problems(train, evaluate, folder, "multiple-choice"))
    assert "no evaluation is shown" in found and "no metrics are shown" in found


def test_a_shot_that_loads_then_runs_waits_for_both(qtbot, tmp_path: Path) -> None:
    """Evaluate's shot loads a model and runs on load (a run longer than take()'s 0.8 s settle): the
    picture was taken mid-run, an empty table under "Reading reviews_eval.csv…" (issue 29 walkthrough)."""
    import screenshot
    from PySide6.QtCore import QObject, QTimer, Signal

    class Busy(QObject):
        loaded = Signal(object)
        finished = Signal()
        busy = False

    bar, runner, events = Busy(), Busy(), []

    def load_then_run(_tab: object) -> None:
        bar.busy = True
        QTimer.singleShot(50, lambda: (setattr(bar, "busy", False), setattr(runner, "busy", True), bar.loaded.emit(1)))
        QTimer.singleShot(1500, lambda: (setattr(runner, "busy", False), events.append("ran"), runner.finished.emit()))

    tab = SimpleNamespace(model_bar=bar, runner=runner)
    window = SimpleNamespace(task_tabs={"evaluate": tab}, tabs=SimpleNamespace(setCurrentWidget=lambda _t: None),
                             grab=lambda: SimpleNamespace(save=lambda _p: events.append("shot")))
    shot = screenshot.Shot("evaluate.png", "evaluate", None, load_then_run, run=False)
    assert screenshot.take(window, shot, tmp_path)
    assert events == ["ran", "shot"]


def test_a_plot_squeezed_to_a_few_pixels_is_reported(qtbot, tmp_path: Path) -> None:
    """At 900x600 a result's bars were left an axis high (Classification's splitter): reported."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    host = QWidget()
    qtbot.addWidget(host)
    layout = QVBoxLayout(host)
    plot = pg.PlotWidget()
    layout.addWidget(plot)
    host.resize(400, 300)
    host.show()
    qtbot.wait(1)
    inspector = walkthrough.Inspector(host, tmp_path / "crashes")
    inspector.check_plots()
    assert not any("squeezed" in p for p in inspector.problems), inspector.problems
    plot.setFixedHeight(20)  # what a splitter or a crowded page leaves it
    qtbot.wait(1)
    inspector.check_plots()
    assert any("squeezed to" in p for p in inspector.problems), inspector.problems
