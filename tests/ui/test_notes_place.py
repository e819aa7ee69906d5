"""A task tab's notes never move its result: they share the controls' row with the progress line,
one line long (elided, the whole of them behind the tooltip and Details)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QApplication

from bertstudio.core.notes import Note
from bertstudio.ui import theme
from bertstudio.ui.local_models import LocalModelsIndex
from bertstudio.ui.tabs.fill_mask_tab import FillMaskTab
from bertstudio.ui.tabs.qa_tab import QATab
from bertstudio.ui.widgets.notes_area import colours

LONG = "The context was cut to the model's 512 tokens, so the last 200 words were never read. " * 3


def _settle() -> None:
    for _ in range(3):
        QApplication.sendPostedEvents()
        QApplication.processEvents()


def _place(widget) -> QRect:  # noqa: ANN001
    return QRect(widget.mapTo(widget.window(), QPoint(0, 0)), widget.size())


@pytest.fixture(autouse=True)
def _light_again(qapp):  # noqa: ANN001, ANN202
    yield
    theme.manager().set_mode("light", remember=False)


@pytest.mark.parametrize("kind", [FillMaskTab, QATab])
def test_a_note_does_not_move_the_result(qtbot, settings, kind) -> None:  # noqa: ANN001
    """The notes sat above the results: each note that came (a run's warning) or went (the next
    Run clears them) moved the whole result under the cursor."""
    tab = kind(settings, LocalModelsIndex(settings))
    qtbot.addWidget(tab)
    tab.resize(1280, 800)
    tab.show()
    _settle()
    results, controls = _place(tab.results_widget), _place(tab.controls)
    tab.notes.set_notes([Note("warning", LONG), Note("info", "Top-k was lowered to 5.")])
    _settle()
    assert tab.notes.isVisible()
    assert (_place(tab.results_widget), _place(tab.controls)) == (results, controls)
    assert tab.notes.label.is_elided() and tab.notes.details_button.isVisible()  # the rest one click away
    assert LONG.strip() in tab.notes.details.toPlainText() and tab.notes.text().startswith(LONG)
    tab.notes.clear()
    _settle()
    assert not tab.notes.isVisible() and _place(tab.results_widget) == results


def test_one_line_notes_take_the_worst_level_colour_and_follow_the_theme(qtbot, settings) -> None:
    tab = FillMaskTab(settings, LocalModelsIndex(settings))
    qtbot.addWidget(tab)
    tab.notes.set_notes([Note("info", "Cancelled."), Note("warning", "Cut to 512 tokens.")])
    assert colours("warning")[0] in tab.notes.label.styleSheet()
    theme.manager().set_mode("dark", remember=False)
    assert colours("warning")[0] in tab.notes.label.styleSheet()  # the dark theme's warning colour
    tab.notes.set_notes([Note("error", "Failed.")])
    assert tab.notes.levels() == ("error",) and colours("error")[0] in tab.notes.label.styleSheet()
