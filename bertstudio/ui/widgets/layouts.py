"""The few layouts the result views repeat: a bar of controls over a body, and a splitter.

One way to build them keeps every view flush with its tab (no margins of its own) and lets a
view say what it shows rather than how Qt stacks it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLayout, QSplitter, QVBoxLayout, QWidget


def tool_bar(*widgets: QWidget, status: QWidget) -> QHBoxLayout:
    """The widgets side by side, then `status` taking the rest of the row (a readout or a note)."""
    bar = QHBoxLayout()
    for widget in widgets:
        bar.addWidget(widget)
    bar.addWidget(status, 1)
    return bar


def bar_above(owner: QWidget, bar: QLayout, *body: QWidget, top: int = 0) -> QVBoxLayout:
    """`owner`'s layout, flush with its edges (`top`: a gap above the bar): the bar, then the body's
    widgets, the last one taking all the room left."""
    layout = QVBoxLayout(owner)
    layout.setContentsMargins(0, top, 0, 0)
    layout.addLayout(bar)
    for widget in body[:-1]:
        layout.addWidget(widget)
    layout.addWidget(body[-1], 1)
    return layout


def splitter(orientation: Qt.Orientation, *widgets: QWidget, sizes: tuple[int, ...] = ()) -> QSplitter:
    """The widgets in a splitter the user can drag, starting at `sizes` (pixels) where given."""
    split = QSplitter(orientation)
    for widget in widgets:
        split.addWidget(widget)
    if sizes:
        split.setSizes(list(sizes))
    return split
