"""The walkthrough's window items (issue 40), at each size and after a restart on a smaller screen.

- a dialog (Trace why, the largest) opens inside the screen, its Copy as Python in reach;
- the wheel over an unfocused (or mouse-picked) combo changes nothing, over a plot it does not zoom;
- a refused Start shows beside Start and in the Log, and moves neither the plots nor Start;
- after a session on a larger screen, a restart on a smaller one opens inside it, with the tabs,
  the Log and the status bar in sight.

The smaller screen is the one `screen_fit` is told it has (Xvfb has one screen size per run).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def screen_of(size: tuple[int, int]) -> Iterator[Any]:
    """`screen_fit` sees a screen of `size` meanwhile."""
    from PySide6.QtCore import QRect

    from bertstudio.ui import screen_fit

    area = QRect(0, 0, *size)
    real = screen_fit.available_geometry
    screen_fit.available_geometry = lambda _window: QRect(area)  # type: ignore[assignment]
    try:
        yield area
    finally:
        screen_fit.available_geometry = real  # type: ignore[assignment]


def window_items(window: Any, inspector: Any, out: Path, mode: str, size: tuple[int, int]) -> None:
    """The window items with the window at `size` (and the dialog on a screen of that size)."""
    import screenshot

    where, shown = inspector.where, window.size()
    inspector.where = f"{mode}/{size[0]}x{size[1]}/window items"
    window.resize(*size)
    screenshot.settle(150)
    try:
        _dialog_fits(window, inspector, out, mode, size)
        _wheel_passes(window, inspector)
        _refusal_in_place(window, inspector)
        window.grab().save(str(out / f"{mode}-{size[0]}x{size[1]}-train-refused.png"))
    finally:
        window.resize(shown)
        inspector.where = where


def _dialog_fits(window: Any, inspector: Any, out: Path, mode: str, size: tuple[int, int]) -> None:
    import screenshot
    from PySide6.QtCore import QPoint, QRect

    from bertstudio.ui.widgets.patching_view import PatchingPanel

    inspector._timer.stop()  # this dialog is opened on purpose: not one that "popped up"
    with screen_of(size) as area:
        panel = PatchingPanel(lambda: (None, "", (), (), ""), window)
        panel.show()
        screenshot.settle(150)
        frame = panel.frameGeometry()
        if frame.width() > area.width() or frame.height() > area.height():
            inspector.problem(f"Trace why opens {frame.width()}x{frame.height()} on a {size[0]}x{size[1]} screen")
        button = panel.python_button
        corner = button.mapTo(panel, QPoint(button.width(), button.height()))
        if not QRect(0, 0, panel.width(), panel.height()).contains(corner):
            inspector.problem("Trace why's Copy as Python lies outside the dialog")
        panel.grab().save(str(out / f"{mode}-{size[0]}x{size[1]}-trace-why.png"))
        panel.close()
        panel.deleteLater()
    inspector._timer.start()


def _wheel_passes(window: Any, inspector: Any) -> None:
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    def wheel(widget: Any) -> QWheelEvent:
        centre = QPointF(widget.rect().center())
        return QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, -360),
                           Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase,
                           False)

    tab = window.task_tabs.get("pretraining")
    if tab is None:
        return
    window.tabs.setCurrentWidget(tab)
    combo = tab.precision
    before = combo.currentIndex()
    combo.setFocus(Qt.FocusReason.MouseFocusReason)  # picked with the mouse earlier
    QApplication.sendEvent(combo, wheel(combo))
    if combo.currentIndex() != before:
        inspector.problem(f"the wheel over Train's Precision changed it to {combo.currentText()}")
        combo.setCurrentIndex(before)
    combo.clearFocus()
    plot = tab.plots.loss_plot
    box = plot.getPlotItem().getViewBox()
    shown = [list(r) for r in box.viewRange()]
    event = wheel(plot.viewport())
    QApplication.sendEvent(plot.viewport(), event)
    if [list(r) for r in box.viewRange()] != shown or event.isAccepted():
        inspector.problem("the wheel over Train's loss plot zoomed it instead of scrolling the page")


def _refusal_in_place(window: Any, inspector: Any) -> None:
    import screenshot
    from PySide6.QtCore import QPoint

    tab = window.task_tabs.get("pretraining")
    if tab is None or tab.runner.busy:
        return
    top = lambda widget: widget.mapTo(tab, QPoint(0, 0)).y()  # noqa: E731
    kept = tab.output_dir.text()
    tab.output_dir.setText("")
    screenshot.settle(400)  # the plan read again
    before = (top(tab.start_button), tab.plots.height())
    tab.start(resume=True)  # refused: no folder to resume
    screenshot.settle(400)  # the scroll area sizes the page a moment later
    note = tab.notes.text()
    if not note:
        inspector.problem("a Start without data was not refused in the notes")
    elif not 0 < top(tab.notes) - top(tab.start_button) < 120:
        inspector.problem(f"the refusal shows {top(tab.notes) - top(tab.start_button)} px from Start")
    if note and note.split()[0] not in window.log.text():
        inspector.problem("the refusal is not in the Log")
    if (top(tab.start_button), tab.plots.height()) != before:
        inspector.problem(f"a refusal re-laid out the Train page: Start and plots {before} -> "
                          f"{(top(tab.start_button), tab.plots.height())}")
    tab.output_dir.setText(kept)
    tab.clear_message()


def restart_on_smaller_screen(window: Any, inspector: Any, scratch: Path, out: Path,
                              size: tuple[int, int] = (900, 600)) -> None:
    """A session at 1280x800 (1180x780), then a new window restoring it on a `size` screen."""
    import screenshot
    import walk_chains
    from PySide6.QtCore import QSettings

    from bertstudio.ui import workspace
    from bertstudio.ui.main_window import MainWindow
    from bertstudio.ui.settings import AppSettings

    inspector.where = f"restart on a {size[0]}x{size[1]} screen"
    before = window.size()
    window.resize(1180, 780)
    data = workspace.capture(window)
    window.resize(before)
    with screen_of(size) as area:
        store = QSettings(str(scratch / "smaller.ini"), QSettings.Format.IniFormat)
        other = MainWindow(AppSettings(store, models_dir_override=str(screenshot.MODELS)), confirm_close=False)
        other.show()
        screenshot.wait(other.ready)
        other.workspace.apply(data)
        screenshot.wait(other.workspace.restored)
        walk_chains.wait_idle()
        frame = other.frameGeometry()
        if frame.width() > area.width() or frame.height() > area.height():
            inspector.problem(f"the restored window is {frame.width()}x{frame.height()}, the screen {size[0]}x"
                              f"{size[1]}: tabs, Log or status bar out of reach")
        for part, name in ((other.statusBar(), "status bar"), (other.log, "Log"), (other.tabs.tabBar(), "tabs")):
            if not part.isVisible():
                inspector.problem(f"the restored window hides its {name}")
        other.grab().save(str(out / f"restart-{size[0]}x{size[1]}.png"))
        other.close()
        screenshot.settle(200)
