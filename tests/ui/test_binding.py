"""Tabs bind their inputs by name (issue 29): one reader/writer per kind of widget, parts and value
properties, nested and merged keys, and no tab writes its own state()/restore() mapping by hand."""

from __future__ import annotations

import inspect
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QTabWidget,
    QWidget,
)

from bertstudio.ui.binding import MERGED, read_bound, write_bound
from bertstudio.ui.tabs import tab_classes
from bertstudio.ui.tabs.frame import StudioTab


class _Part:
    """A part with its own state (as a form or the attention view's settings)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {"steps": 50, "method": "ig"}

    def state(self) -> dict[str, Any]:
        return dict(self.values)

    def restore(self, state: dict[str, Any]) -> None:
        self.values = {k: state[k] for k in ("steps", "method") if k in state}


class _Owner:
    def __init__(self) -> None:
        self.text, self.line = QPlainTextEdit("hello"), QLineEdit("q")
        self.count, self.share, self.tick = QSpinBox(), QDoubleSpinBox(), QCheckBox()
        self.count.setValue(5)
        self.choice = QComboBox()
        for key in ("mean", "cls"):
            self.choice.addItem(key.upper(), key)
        self.pages = QTabWidget()
        for name in ("one", "two"):
            self.pages.addTab(QWidget(), name)
        self.part = _Part()
        self.mode = "single"  # a plain value property


BOUND = {"text": "text", "options.line": "line", "options.count": "count", "share": "share", "tick": "tick",
         "choice": "choice", "page": "pages", "mode": "mode", MERGED: "part"}


def test_read_and_write_every_kind_of_binding(qtbot) -> None:  # noqa: ANN001
    owner = _Owner()
    defaults = read_bound(owner, BOUND)
    assert defaults == {"text": "hello", "options": {"line": "q", "count": 5}, "share": 0.0, "tick": False,
                        "choice": "mean", "page": 0, "mode": "single", "steps": 50, "method": "ig"}
    saved = {"text": ["a", "b"], "options": {"line": "r", "count": 7}, "share": 0.5, "tick": True,
             "choice": "cls", "page": 1, "mode": "batch", "steps": 9, "method": "lime"}
    write_bound(owner, BOUND, saved, defaults)
    assert read_bound(owner, BOUND) == {**saved, "text": "a\nb"}  # a list of lines fills the box one per line
    # a value of the wrong kind, a choice that is not offered, a missing key: the built default, never a leftover
    write_bound(owner, BOUND, {"text": 3, "options": {"count": "7"}, "choice": "nonsense", "tick": "yes"}, defaults)
    assert read_bound(owner, BOUND) == defaults


def test_no_tab_maps_its_widgets_to_the_workspace_by_hand() -> None:
    """Every tab's workspace state is its BOUND names: a hand-written state() drifts from restore()."""
    classes = tab_classes()
    assert len(classes) >= 12
    for cls in classes:
        assert cls.state is StudioTab.state, f"{cls.__name__} writes its own state(): bind its inputs in BOUND"
        restore = inspect.getsource(cls.restore) if cls.restore is not StudioTab.restore else ""
        assert not restore or "super().restore(state)" in restore, f"{cls.__name__}.restore bypasses the binding"
