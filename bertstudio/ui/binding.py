"""Widgets bound to a tab's state by name (glue's autoconnect, Orange's `Setting()`).

A tab lists `BOUND = {json key: attribute}` once; `read_bound` reads those attributes into the
JSON dict a workspace keeps and `write_bound` puts one back, so no tab writes a state()/restore()
pair by hand. A bound attribute is one of:
- a widget (text, number, tick, choice): `read_widget` / `write_widget`;
- a part with its own state (`state()` or `to_json()`, and `restore()`): a form, a view's settings;
- a plain value property of the tab (a value with logic: the chosen mode, the opened file).
A dotted key ("options.top_k") nests the value; the key `MERGED` puts a part's fields at the top
level (the shape older workspace files have). The attribute may be dotted too ("mask_panel.source").
`watch_inputs` connects each kind of widget's change signal (a result may be out of date now).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QTabWidget,
    QTextEdit,
    QWidget,
)

MERGED = "*"  # the key of a part whose fields sit at the top level of the tab's JSON
_MISSING = object()


def read_widget(widget: QWidget) -> Any:
    """A bound widget's value as JSON: text, number, tick, page, or a combo's item data (its text without)."""
    if isinstance(widget, QPlainTextEdit | QTextEdit):
        return widget.toPlainText()
    if isinstance(widget, QLineEdit):
        return widget.text()
    if isinstance(widget, QSpinBox | QDoubleSpinBox):
        return widget.value()
    if isinstance(widget, QAbstractButton):
        return widget.isChecked()
    if isinstance(widget, QComboBox):
        data = widget.currentData()
        return data if isinstance(data, str | int | float | bool) else widget.currentText()
    if isinstance(widget, QTabWidget):
        return widget.currentIndex()
    raise TypeError(f"cannot bind a {type(widget).__name__}")


def write_widget(widget: QWidget, value: Any) -> bool:
    """Put a value read by `read_widget` back. A value of the wrong kind (a hand-edited workspace)
    leaves the widget as it is and returns False; a list of lines fills a text box one per line."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(widget, QPlainTextEdit | QTextEdit | QLineEdit):
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = "\n".join(value)
        if not isinstance(value, str):
            return False
        if isinstance(widget, QLineEdit):
            widget.setText(value)
        else:
            widget.setPlainText(value)
    elif isinstance(widget, QSpinBox) and number and float(value).is_integer():
        widget.setValue(int(value))
    elif isinstance(widget, QDoubleSpinBox) and number:
        widget.setValue(float(value))
    elif isinstance(widget, QAbstractButton) and isinstance(value, bool):
        widget.setChecked(value)
    elif isinstance(widget, QComboBox) and isinstance(value, str | int | float | bool):
        index = widget.findData(value)
        index = index if index >= 0 else widget.findText(str(value))
        if index < 0:
            return False
        widget.setCurrentIndex(index)
    elif isinstance(widget, QTabWidget) and isinstance(value, int) and 0 <= value < widget.count():
        widget.setCurrentIndex(value)
    else:
        return False
    return True


def watch_inputs(top: QWidget, callback: Callable[..., None], skip: Iterable[QWidget] = ()) -> None:
    """Call `callback` whenever an input widget under `top` changes (text, choice, number, tick, page):
    the signal that says a bound value may differ now. Generic, so a view's new widget is watched
    without the view doing anything (what changed is then read through the tab's state object)."""
    skipped = set(skip)
    for widget in top.findChildren(QWidget):
        signal = change_signal(widget) if widget not in skipped else None
        if signal is not None:
            signal.connect(callback)


def change_signal(widget: QWidget) -> Any:
    """The signal a bound widget emits when its value changes (None: not an input, or a line edit
    inside a combo or spin box, which has its own)."""
    if isinstance(widget, QLineEdit | QPlainTextEdit | QTextEdit):
        return None if isinstance(widget.parent(), QComboBox | QSpinBox | QDoubleSpinBox) else widget.textChanged
    if isinstance(widget, QComboBox):
        return widget.currentTextChanged
    if isinstance(widget, QSpinBox | QDoubleSpinBox):
        return widget.valueChanged
    if isinstance(widget, QAbstractButton) and widget.isCheckable():
        return widget.toggled
    if isinstance(widget, QTabWidget):  # a mode page (Classification's Text / Batch) is an input too
        return widget.currentChanged
    return None


def _is_part(target: Any) -> bool:
    return callable(getattr(target, "restore", None)) and (
        callable(getattr(target, "state", None)) or callable(getattr(target, "to_json", None)))


def _owner_and_name(owner: Any, path: str) -> tuple[Any, str]:
    *parents, name = path.split(".")
    for parent in parents:
        owner = getattr(owner, parent)
    return owner, name


def read_value(owner: Any, path: str) -> Any:
    """The JSON value of one bound attribute."""
    parent, name = _owner_and_name(owner, path)
    target = getattr(parent, name)
    if _is_part(target):
        return dict(target.to_json() if callable(getattr(target, "to_json", None)) else target.state())
    if isinstance(target, QWidget):
        return read_widget(target)
    return target


def write_value(owner: Any, path: str, value: Any) -> bool:
    """Put one bound attribute's JSON value back (a part gets a dict, even from a damaged file);
    False when a widget cannot take it (a wrong kind, a choice it does not offer)."""
    parent, name = _owner_and_name(owner, path)
    target = getattr(parent, name)
    if _is_part(target):
        target.restore(dict(value) if isinstance(value, Mapping) else {})
    elif isinstance(target, QWidget):
        return write_widget(target, value)
    else:
        setattr(parent, name, value)
    return True


def _nested_get(data: Mapping[str, Any], key: str) -> Any:
    value: Any = data
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def _nested_put(data: dict[str, Any], key: str, value: Any) -> None:
    *parents, last = key.split(".")
    for part in parents:
        data = data.setdefault(part, {})
    data[last] = value


def read_bound(owner: Any, bound: Mapping[str, str]) -> dict[str, Any]:
    """The tab's bound attributes as one JSON dict (what the workspace keeps of its inputs)."""
    data: dict[str, Any] = {}
    for key, path in bound.items():
        value = read_value(owner, path)
        if key == MERGED:
            data.update(value)
        else:
            _nested_put(data, key, value)
    return data


def write_bound(owner: Any, bound: Mapping[str, str], data: Mapping[str, Any],
                defaults: Mapping[str, Any]) -> None:
    """Put back what `read_bound` returned, in `bound`'s order; a missing key or a value the widget
    cannot take gets `defaults`' value (what the tab showed when it was built), so a restore never
    keeps a previous state's leftovers."""
    for key, path in bound.items():
        if key == MERGED:
            write_value(owner, path, {**defaults, **data})
            continue
        value, default = _nested_get(data, key), _nested_get(defaults, key)
        if (value is _MISSING or not write_value(owner, path, value)) and default is not _MISSING:
            write_value(owner, path, default)
