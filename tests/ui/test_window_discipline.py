"""Issue 40, the window discipline: every window fits its screen, the wheel scrolls the page (a field
changes only while edited, a plot zooms only with Ctrl)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, QRect, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QComboBox, QDialog, QLabel, QScrollArea, QVBoxLayout, QWidget

from bertstudio.ui import screen_fit, wheel_guard, workspace
from tests.ui.conftest import with_tabs

SMALL = QRect(0, 0, 900, 600)


def _small_screen(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(screen_fit, "available_geometry", lambda _window: QRect(SMALL))


def test_trace_why_fits_a_900x600_screen_and_scrolls_no_sideways(qtbot, monkeypatch) -> None:  # noqa: ANN001
    """It was fixed at 1134x720: its colour bar, last column and Copy as Python off-screen."""
    from bertstudio.ui.widgets.patching_view import PatchingPanel

    screen_fit.install()
    _small_screen(monkeypatch)
    panel = PatchingPanel(lambda: (None, "", (), (), ""))
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    assert panel.width() <= SMALL.width() and panel.height() <= SMALL.height()
    assert panel.minimumSizeHint().width() <= SMALL.width()
    body = panel.findChild(QScrollArea).widget()
    assert body.minimumSizeHint().width() <= SMALL.width() - 40  # its rows fit: no sideways scrolling
    assert panel.python_button.mapTo(panel, QPoint(panel.python_button.width(), 0)).x() <= panel.width()


def test_every_dialog_is_clamped_to_its_screen_when_shown(qtbot, monkeypatch) -> None:  # noqa: ANN001
    screen_fit.install()
    _small_screen(monkeypatch)
    dialog = QDialog()
    QVBoxLayout(dialog).addWidget(QLabel("a dialog"))
    dialog.resize(1400, 900)
    dialog.move(600, 400)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    frame = dialog.frameGeometry()
    assert SMALL.contains(frame), frame


@with_tabs()
def test_a_restart_on_a_smaller_screen_keeps_the_window_on_it(qtbot, window, monkeypatch) -> None:  # noqa: ANN001
    """After a session at 1280x800, a restart on a 900x600 screen opened 1180x780: tabs, Log and
    status bar off-screen."""
    window.resize(1180, 780)
    saved = workspace.capture(window)["window"]
    _small_screen(monkeypatch)
    window.workspace._restore_window(saved)
    assert SMALL.contains(window.frameGeometry()), window.frameGeometry()
    assert window.statusBar().isVisible() and window.log.isVisible()


def _wheel(widget: QWidget, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> QWheelEvent:
    centre = QPointF(widget.rect().center())
    return QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, -360),
                       Qt.MouseButton.NoButton, modifiers, Qt.ScrollPhase.NoScrollPhase, False)


def test_a_combo_picked_with_the_mouse_ignores_a_later_wheel(qtbot) -> None:  # noqa: ANN001
    """The Train form's Precision combo turned bf16: a click to pick it left it focused, and the next
    scroll of the page over it changed it."""
    guard = wheel_guard.install()
    combo = QComboBox()
    combo.addItems(["no", "fp16", "bf16"])
    qtbot.addWidget(combo)
    combo.show()
    qtbot.waitExposed(combo)
    combo.activateWindow()
    qtbot.waitUntil(combo.isActiveWindow)
    for reason in (Qt.FocusReason.MouseFocusReason, Qt.FocusReason.PopupFocusReason):
        combo.clearFocus()
        combo.setFocus(reason)
        qtbot.waitUntil(combo.hasFocus)
        QApplication.sendEvent(combo, _wheel(combo))
        assert combo.currentText() == "no" and not guard.editing(combo)
    combo.clearFocus()
    combo.setFocus(Qt.FocusReason.TabFocusReason)  # reached with the keyboard: being edited
    qtbot.waitUntil(combo.hasFocus)
    QApplication.sendEvent(combo, _wheel(combo))
    assert combo.currentText() != "no"


def test_a_plot_zooms_only_with_ctrl_otherwise_the_wheel_passes_on(qtbot) -> None:  # noqa: ANN001
    wheel_guard.install()
    plot = pg.PlotWidget()
    plot.plot(np.arange(10.0), np.arange(10.0))
    plot.resize(300, 200)
    qtbot.addWidget(plot)
    plot.show()
    qtbot.waitExposed(plot)
    box = plot.getPlotItem().getViewBox()
    before = [list(r) for r in box.viewRange()]
    for target in (plot.viewport(), plot):
        event = _wheel(target)
        QApplication.sendEvent(target, event)
        assert not event.isAccepted()  # Qt offers it to the page around the plot
    assert [list(r) for r in box.viewRange()] == before
    QApplication.sendEvent(plot.viewport(), _wheel(plot.viewport(), Qt.KeyboardModifier.ControlModifier))
    assert [list(r) for r in box.viewRange()] != before


def test_one_staleness_rule_in_the_base_tab() -> None:
    """Five tabs had their own `_update_stale`; the banner and the state object could disagree (Train's
    banner said "validation file and output folder" while its state said "input")."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "bertstudio" / "ui"
    defined = [str(path.relative_to(root)) for path in root.rglob("*.py")
               if re.search(r"^\s+def _update_stale\(", path.read_text(encoding="utf-8"), re.MULTILINE)]
    assert defined == ["tabs/frame.py"]


def test_trace_why_scrolls_only_on_a_screen_smaller_than_it(qtbot, monkeypatch) -> None:  # noqa: ANN001
    """At 1000x720 its wrapped title made the body as tall as the heatmaps' preferred height: it scrolled."""
    from bertstudio.ui.widgets.patching_view import PatchingPanel

    screen_fit.install()
    monkeypatch.setattr(screen_fit, "available_geometry", lambda _window: QRect(0, 0, 1280, 800))
    panel = PatchingPanel(lambda: (None, "", (), (), ""))
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    area = panel.findChild(QScrollArea)
    assert not area.verticalScrollBar().isVisible() and not area.horizontalScrollBar().isVisible()
