"""The Train settings form, generated from the config dataclasses' field metadata.

Each field's `Option` (core/training/options.py) gives its label, widget kind, range,
choices and tooltip, exactly as it gives the `train` CLI its options: the two cannot drift.
"""

from __future__ import annotations

from typing import Any, TypeVar

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from bertstudio.core.training.options import Option, options
from bertstudio.core.training.trainable import TRAINABLE
from bertstudio.ui.binding import change_signal, read_widget, write_widget


def choice_label(choice: str) -> str:
    """What a choice reads as: a trainable task's own title, any other choice itself."""
    trainable = TRAINABLE.get(choice)
    return trainable.title if trainable is not None else choice


def make_widget(option: Option, default: Any) -> QWidget:
    """The widget for one field, with its range, choices, default and tooltip."""
    widget: Any
    if option.widget == "int":
        widget = QSpinBox()
        low = int(option.low if option.low is not None else 0) + (1 if option.low_open else 0)
        high = int(option.high if option.high is not None else 2**31 - 1) - (1 if option.high_open else 0)
        widget.setRange(low, min(high, 2**31 - 1))
        widget.setValue(int(default))
    elif option.widget == "float":
        widget = QDoubleSpinBox()
        widget.setDecimals(option.decimals)
        tick = 10.0 ** -option.decimals
        bottom = (option.low or 0.0) + (tick if option.low_open else 0.0)
        top = (option.high if option.high is not None else 1e9) - (tick if option.high_open else 0.0)
        widget.setRange(bottom, top)
        widget.setSingleStep(option.step)
        widget.setValue(float(default))
    elif option.widget in ("choice", "device"):
        widget = QComboBox()
        for choice in option.choices:
            widget.addItem(choice_label(choice), choice)
        if default is not None and option.choices:
            widget.setCurrentIndex(max(0, widget.findData(default)))
    elif option.widget == "check":
        widget = QCheckBox(option.help[:1].upper() + option.help[1:])
        widget.setChecked(bool(default))
    else:
        widget = QLineEdit()
        widget.setText(default or "")
        widget.setPlaceholderText(option.help)
    widget.setToolTip(option.help + (f" ({option.flag})" if option.flag else ""))
    return widget


W = TypeVar("W", bound=QWidget)
# Choices for the next Start only: never kept, so a later run never resumes or overwrites silently
# (issue 29 #5: a Resume ticked once stayed ticked and failed a run into a new folder).
ONE_SHOT = frozenset({"overwrite", "resume"})


class ConfigForm(QWidget):
    """Group boxes of generated rows; `values(cls)` reads a dataclass's fields back."""

    changed = Signal()

    def __init__(self, classes: tuple[type, ...], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.widgets: dict[str, QWidget] = {}
        self.rows: dict[str, QWidget] = {}  # the row holder of each field (line edits get buttons)
        self.groups: dict[str, QGroupBox] = {}
        self.layouts: dict[str, QFormLayout] = {}
        self.options: dict[str, Option] = {}
        self.outer = outer = QVBoxLayout(self)
        for cls in classes:
            for name, option, default in options(cls):
                if name in self.widgets:
                    continue
                widget = make_widget(option, default)
                self.widgets[name] = widget
                self.options[name] = option
                holder = QWidget()
                row = QHBoxLayout(holder)
                row.setContentsMargins(0, 0, 0, 0)
                row.addWidget(widget, 1)
                self.rows[name] = holder
                if option.group not in self.groups:
                    box = QGroupBox(option.group)
                    self.groups[option.group] = box
                    self.layouts[option.group] = QFormLayout(box)
                    outer.addWidget(box)
                label = "" if option.widget == "check" else option.label
                self.layouts[option.group].addRow(label, holder)
                self._connect(widget)
        outer.addStretch(1)

    def _connect(self, widget: QWidget) -> None:
        signal = change_signal(widget)
        if signal is not None:
            signal.connect(self.changed)

    def add_button(self, name: str, text: str, tip: str = "") -> QPushButton:
        """A button at the end of a field's row (browse, demo data)."""
        button = QPushButton(text)
        button.setToolTip(tip)
        layout = self.rows[name].layout()
        assert layout is not None
        layout.addWidget(button)
        return button

    def field(self, name: str, kind: type[W]) -> W:
        """A field's widget by name, as the kind its option makes."""
        widget = self.widgets[name]
        assert isinstance(widget, kind), name
        return widget

    def value(self, name: str) -> Any:
        value = read_widget(self.widgets[name])
        return value.strip() if isinstance(value, str) and isinstance(self.widgets[name], QLineEdit) else value

    def values(self, cls: type) -> dict[str, Any]:
        return {name: self.value(name) for name, _option, _default in options(cls) if name in self.widgets}

    def state(self) -> dict[str, Any]:
        """Every field's value but the one-shot choices, for the workspace."""
        return {name: self.value(name) for name in self.widgets if name not in ONE_SHOT}

    def restore(self, state: dict[str, Any]) -> None:
        """Put saved values back; unknown names and values of the wrong type are skipped."""
        for name, value in state.items():
            widget = self.widgets.get(name)
            if widget is not None and name not in ONE_SHOT:
                write_widget(widget, value)
