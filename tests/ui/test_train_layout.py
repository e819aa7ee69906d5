"""Issue 40: the Train page never re-lays out on a state change, and a refusal shows beside the
control refused and in the Log (a refused search once grew the page from 956 to 2136 px: plots
stretched to the form's height, Start and the search controls below the fold, the refusal far
from its button and nowhere in the Log)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QWidget

from bertstudio.ui.tabs.train_tab import TrainTab
from tests.ui.conftest import only_tabs, tab_of

window_tabs = only_tabs("train_tab")


def _top(tab: QWidget, widget: QWidget) -> int:
    return widget.mapTo(tab, QPoint(0, 0)).y()


def _layout(tab: TrainTab) -> tuple[int, int, int, int]:
    return (_top(tab, tab.start_button), tab.plots.height(), _top(tab, tab.search_panel.start_button),
            tab.page.height())


def _held_run(config, stop_event, control):  # noqa: ANN001, ANN202
    while not stop_event.wait(0.02):
        control.check()
    return SimpleNamespace(stopped=True, step=0, max_steps=config.max_steps, output_dir=config.output_dir,
                           metrics={}, checkpoints_dir=None, open_in=("classification",))


@pytest.mark.parametrize("size", [(1280, 800), (900, 600)])
def test_stop_and_a_refused_search_leave_the_page_as_it_was(qtbot, window, monkeypatch, tmp_path: Path,  # noqa: ANN001
                                                            size: tuple[int, int]) -> None:
    from bertstudio.ui.tabs import train_tab

    monkeypatch.setattr(train_tab, "train_job", _held_run)
    window.resize(*size)
    tab = tab_of(window, TrainTab)
    window.tabs.setCurrentWidget(tab)
    tab.search_panel.toggle.setChecked(True)
    qtbot.wait(50)
    start, plots, search, page = _layout(tab)
    tab.base_model.setText("some-model")
    tab.use_demo_data()
    tab.output_dir.setText(str(tmp_path / "run"))
    with qtbot.waitSignal(tab.runner.started, timeout=10_000):
        tab.start()
    with qtbot.waitSignal(tab.run_ended, timeout=10_000):
        tab.stop()
    settled = (start, plots, search)  # once the scroll area has sized the page (a busy CPU: a moment)
    qtbot.waitUntil(lambda: _layout(tab)[:3] == settled, timeout=3000)
    tab.search_panel.space.setPlainText("{not json")
    with qtbot.waitSignal(tab.search_panel.runner.finished, timeout=30_000):  # refused by its worker
        tab.search_panel.start()
    qtbot.waitUntil(lambda: _layout(tab)[:3] == settled, timeout=3000)
    after = _layout(tab)
    assert after[3] < page + 200  # the notes and the result below, not the form's whole height
    # the refusal beside Start search, and in the Log
    notes = tab.search_panel.notes
    assert "not valid JSON" in notes.text() and notes.isVisible()
    assert 0 < _top(tab, notes) - search < 120
    assert "not valid JSON" in window.log.text()


def test_a_refused_start_shows_under_start_and_in_the_log(qtbot, window) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    window.resize(1280, 800)  # the page as tall as the window: nothing to absorb a note but the plots
    window.tabs.setCurrentWidget(tab)
    tab.base_model.setText("")
    tab.train_file.setText("")
    qtbot.wait(50)
    before = (_top(tab, tab.start_button), tab.plots.height())
    tab.start()
    qtbot.waitUntil(lambda: (_top(tab, tab.start_button), tab.plots.height()) == before, timeout=3000)
    assert tab.notes.text() and not tab.runner.busy
    assert 0 < _top(tab, tab.notes) - _top(tab, tab.start_button) < 120
    assert tab.notes.text().split()[0] in window.log.text()
