"""Every tab works in a 900x600 window (issue 29 #4): nothing asks for more room than that, and each
tab's main action is on screen (a tab taller than the window scrolls to it; nothing is cut off)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QPushButton, QScrollArea, QWidget

SMALL = (900, 600)


def _main_action(tab: QWidget) -> QPushButton:
    for name in ("run_button", "start_button"):
        button = getattr(tab, name, None)
        if isinstance(button, QPushButton):
            return button
    buttons = [b for b in tab.findChildren(QPushButton) if b.isVisibleTo(tab)]
    assert buttons, f"{type(tab).__name__} shows no button"
    return buttons[0]


def test_every_tab_fits_900_by_600_and_keeps_its_main_action_reachable(qtbot, window) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: window.tabs.count() == len(window.task_tabs) and window.tabs.count() > 5)
    window.resize(*SMALL)
    problems = []
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        tab = window.tabs.widget(index)
        qtbot.wait(1)
        hint = window.minimumSizeHint()
        if hint.width() > SMALL[0] or hint.height() > SMALL[1]:
            problems.append(f"{window.tabs.tabText(index)} asks for {hint.width()}x{hint.height()}")
            continue
        # A taller page scrolls down to what is below; a wider one would hide the right side (sideways
        # scrolling is no way to reach Run), so the page itself must fit the width.
        if tab.page.minimumSizeHint().width() > tab.page.parentWidget().width():
            problems.append(f"{window.tabs.tabText(index)}: its page needs {tab.page.minimumSizeHint().width()} px "
                            f"of {tab.page.parentWidget().width()}")
        button = _main_action(tab)
        scroll = next(s for s in tab.findChildren(QScrollArea) if s.widget() is tab.page)
        scroll.ensureWidgetVisible(button)
        qtbot.wait(1)
        corner = button.mapTo(window, QPoint(0, 0))
        if not QRect(QPoint(0, 0), window.size()).contains(QRect(corner, button.size())):
            problems.append(f"{window.tabs.tabText(index)}: '{button.text()}' at {corner.x()},{corner.y()} is cut off")
    assert window.size().width() == SMALL[0] and window.size().height() == SMALL[1]
    assert not problems, "\n".join(problems)



def test_explains_attribution_table_keeps_five_rows_at_900_by_600(qtbot, window) -> None:  # noqa: ANN001
    """Issue 29 #18: the table shrank to one cut-off row; the page scrolls instead."""
    from bertstudio.ui.tabs.explain_tab import ExplainTab

    qtbot.waitUntil(lambda: any(isinstance(t, ExplainTab) for t in window.task_tabs.values()))
    tab = next(t for t in window.task_tabs.values() if isinstance(t, ExplainTab))
    window.tabs.setCurrentWidget(tab)
    window.resize(*SMALL)
    qtbot.wait(1)
    table = tab.attributions.table
    assert table.height() >= table.horizontalHeader().height() + 5 * table.verticalHeader().defaultSectionSize()
