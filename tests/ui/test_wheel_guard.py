"""The mouse wheel scrolls the page; it changes a spin box, combo box or slider only while that field
has focus (issue 7: scrolling over the Train form rewrote Weight decay 0.01 -> 0 mid-run)."""

from __future__ import annotations

from types import SimpleNamespace

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDoubleSpinBox,
    QScrollArea,
    QScrollBar,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from bertstudio.ui import wheel_guard


def _wheel(widget: QWidget, notches: int = -1) -> QWheelEvent:
    centre = QPointF(widget.rect().center())
    return QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0),
                       QPoint(0, 120 * notches), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                       Qt.ScrollPhase.NoScrollPhase, False)


def _scroll(widget: QWidget, notches: int = -1) -> None:
    QApplication.sendEvent(widget, _wheel(widget, notches))


def _form(qtbot):  # noqa: ANN001, ANN202
    wheel_guard.install()
    page = QWidget()
    layout = QVBoxLayout(page)
    spin, combo, slider = QDoubleSpinBox(), QComboBox(), QSlider(Qt.Orientation.Horizontal)
    spin.setDecimals(2)
    spin.setSingleStep(0.01)
    spin.setValue(0.01)
    combo.addItems(["linear", "cosine", "constant"])
    slider.setRange(0, 10)
    slider.setValue(5)
    for widget in (spin, combo, slider):
        layout.addWidget(widget)
    layout.addSpacing(2000)  # taller than the view: the page scrolls
    scroll = QScrollArea()
    scroll.setWidget(page)
    scroll.resize(300, 200)
    qtbot.addWidget(scroll)
    scroll.show()
    qtbot.waitExposed(scroll)
    return SimpleNamespace(scroll=scroll, spin=spin, combo=combo, slider=slider)


def test_wheel_over_an_unfocused_field_changes_nothing(qtbot) -> None:  # noqa: ANN001
    form = _form(qtbot)
    for _ in range(3):
        _scroll(form.spin)
        _scroll(form.combo)
        _scroll(form.slider)
    assert (form.spin.value(), form.combo.currentText(), form.slider.value()) == (0.01, "linear", 5)
    for widget in (form.spin, form.combo, form.slider):  # a passing wheel cannot take focus
        assert widget.focusPolicy() == Qt.FocusPolicy.StrongFocus


def test_the_wheel_goes_on_to_the_scroll_area(qtbot) -> None:  # noqa: ANN001
    form = _form(qtbot)
    event = _wheel(form.spin)
    guard = wheel_guard.install()
    # the field never sees it (True), and left unaccepted Qt offers it to the parents: the page scrolls
    assert guard.eventFilter(form.spin, event) is True and not event.isAccepted()
    bar = form.scroll.verticalScrollBar()
    assert guard.eventFilter(bar, _wheel(bar)) is False  # scroll bars keep the wheel
    assert isinstance(bar, QScrollBar)


def test_a_focused_field_still_takes_the_wheel(qtbot) -> None:  # noqa: ANN001
    form = _form(qtbot)
    form.scroll.activateWindow()
    qtbot.waitUntil(form.scroll.isActiveWindow)
    form.spin.clearFocus()  # the window's activation may have focused it already (not to edit it)
    form.spin.setFocus(Qt.FocusReason.MouseFocusReason)  # a click into its text
    qtbot.waitUntil(form.spin.hasFocus)
    _scroll(form.spin, notches=-1)
    assert form.spin.value() == 0.0


def test_train_form_in_the_window_ignores_a_passing_wheel(qtbot, window) -> None:  # noqa: ANN001
    tab = window.task_tabs["pretraining"]
    window.tabs.setCurrentWidget(tab)
    tab.weight_decay.setValue(0.01)
    _scroll(tab.weight_decay, notches=-3)
    _scroll(tab.scheduler, notches=-3)
    assert tab.weight_decay.value() == 0.01 and tab.weight_decay.focusPolicy() == Qt.FocusPolicy.StrongFocus
    assert tab.scheduler.currentIndex() == 0
