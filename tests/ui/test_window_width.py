"""No text widens the window (issue 6): a long status, progress or plan line is elided, with the
whole text in its tooltip, and the buttons beside it stay on screen."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QWidget

from bertstudio.core.progress import ProgressEvent
from bertstudio.ui.widgets.elided_label import ElidedLabel

SCREEN_WIDTH = 1280
SENTENCE = ("Training plan: 2,000 rows read from a very long file name, 3 epochs, learning rate 2e-5, "
            "warm-up 10 % … ") * 20  # about 2,000 characters with spaces, as a real status line is
PATH = "/home/someone/" + "very-long-folder-name/" * 90  # 2,000 characters without a space


def _status_lines(tab: QWidget) -> list[QLabel]:
    """Every line in a tab that shows what is happening: progress, plan, status."""
    labels: list[QLabel] = list(tab.findChildren(ElidedLabel))
    for name in ("plan_label", "rate_label", "input_label", "note"):
        label = getattr(tab, name, None)
        if isinstance(label, QLabel):
            labels.append(label)
    for holder in (getattr(tab, "progress", None), getattr(tab, "progress_line", None)):
        if holder is not None and isinstance(getattr(holder, "label", None), QLabel):
            labels.append(holder.label)
    page = getattr(tab, "projector_page", None)
    if page is not None and isinstance(getattr(page, "status", None), QLabel):
        labels.append(page.status)
    return list(dict.fromkeys(labels))


def test_elided_label_never_asks_for_the_width_of_its_text(qtbot) -> None:
    label = ElidedLabel("short")
    qtbot.addWidget(label)
    label.show()
    before = label.minimumSizeHint().width(), label.sizeHint().width()
    label.setText(SENTENCE)
    assert label.minimumSizeHint().width() == before[0]
    assert label.sizeHint().width() <= label.fontMetrics().averageCharWidth() * 40
    label.resize(200, 20)
    assert label.text() == SENTENCE  # the whole text is kept...
    assert label.is_elided() and label.shown_text().endswith("…")  # ...and drawn elided
    assert label.toolTip() == SENTENCE  # ...and readable in full in the tooltip
    label.resize(label.fontMetrics().horizontalAdvance(SENTENCE) + 20, 20)
    assert not label.is_elided() and label.toolTip() == ""


def _name(tab: QWidget, label: QLabel) -> str:
    for name, value in vars(tab).items():
        if value is label:
            return name
    return f"{type(label.parent()).__name__}.label"


def test_no_status_line_widens_the_window(qtbot, window) -> None:
    window.resize(1180, 780)
    qtbot.waitUntil(lambda: window.tabs.count() == len(window.task_tabs) and window.tabs.count() > 5)
    start = window.width()
    problems = []
    for index in range(window.tabs.count()):
        tab = window.tabs.widget(index)
        title = window.tabs.tabText(index)
        window.tabs.setCurrentIndex(index)
        for holder in (getattr(tab, "progress", None), getattr(tab, "progress_line", None)):
            if holder is not None and hasattr(holder, "show_event"):
                holder.setVisible(True)
                holder.show_event(ProgressEvent(message=SENTENCE, fraction=0.5))
        for label in _status_lines(tab):
            for text in (SENTENCE, PATH):
                label.setText(text)
                qtbot.wait(1)  # let the layouts settle (one event-loop turn)
                # the tab's page scrolls in a smaller window, so the page's own width is what must not grow
                wanted = max(window.minimumSizeHint().width(), tab.page.minimumSizeHint().width())
                if wanted > SCREEN_WIDTH:
                    problems.append(f"{title}: {_name(tab, label)} = {text[:12]}… asks for {wanted} px")
                label.setText("")
        for text in (SENTENCE, PATH):
            tab.status.emit(text)  # the status bar and the log
            qtbot.wait(1)
            if window.minimumSizeHint().width() > SCREEN_WIDTH:
                problems.append(f"{title}: its status {text[:12]}… asks for {window.minimumSizeHint().width()} px")
    assert not problems, "\n".join(problems)
    assert window.width() <= start
