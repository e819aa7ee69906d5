"""The few layouts the result views repeat: a bar of controls over a body, and a splitter.

One way to build them keeps every view flush with its tab (no margins of its own) and lets a
view say what it shows rather than how Qt stacks it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLayout, QSplitter, QVBoxLayout, QWidget


def row(*items: QWidget | str, stretch: int | QWidget | None = -1) -> QHBoxLayout:
    """The items side by side (a str is a label). What takes the room left: the widget `stretch`, or the
    one at that index (the last by default: a readout or a note after the controls); None: an empty end."""
    bar = QHBoxLayout()
    widgets = [QLabel(item) if isinstance(item, str) else item for item in items]
    wide = widgets[stretch % len(widgets)] if isinstance(stretch, int) else stretch
    for widget in widgets:
        bar.addWidget(widget, 1 if widget is wide else 0)
    if stretch is None:
        bar.addStretch(1)
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


def column(*widgets: QWidget, owner: QWidget | None = None, stretch: int = -1) -> QWidget:
    """`owner` (a new widget when None) holding the widgets top to bottom, flush with its edges; the
    one at index `stretch` (the last by default) takes the room left (a title over its table, say)."""
    owner = owner if owner is not None else QWidget()
    layout = QVBoxLayout(owner)
    layout.setContentsMargins(0, 0, 0, 0)
    for index, widget in enumerate(widgets):
        layout.addWidget(widget, 1 if index == stretch % len(widgets) else 0)
    return owner


def splitter(orientation: Qt.Orientation, *widgets: QWidget, sizes: tuple[int, ...] = ()) -> QSplitter:
    """The widgets in a splitter the user can drag, starting at `sizes` (pixels) where given."""
    split = QSplitter(orientation)
    for widget in widgets:
        split.addWidget(widget)
    if sizes:
        split.setSizes(list(sizes))
    return split
