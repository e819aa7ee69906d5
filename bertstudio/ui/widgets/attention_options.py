"""The Attention tab's view options: weights or value-weighted norms, one head, the layer mean or
rollout, special tokens hidden (rows renormalised or not), a pair's quadrant, the colour map. Each
writes its field of the one view state and follows the state back (a restore, a click in a view)
without echo."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import QCheckBox, QComboBox

from bertstudio.core.tasks.attention.state import SOURCES, VIEW_FIELDS, WEIGHTINGS, AttentionViewState
from bertstudio.core.tasks.attention.view import QUADRANTS
from bertstudio.ui.widgets.attention_heatmap import COLORMAPS


def _combo(items: Sequence[str], tip: str = "") -> QComboBox:
    combo = QComboBox()
    combo.addItems(list(items))
    combo.setToolTip(tip)
    return combo


class ViewOptions:
    """The option widgets (the tab places them), bound both ways to `state`."""

    def __init__(self, state: AttentionViewState) -> None:
        self.state = state
        self.weighting = _combo(WEIGHTINGS, "weights: the attention probabilities α. value-weighted norms: ||α f(x)||, "
                                "how much each key really sends (Kobayashi et al. 2020); per head, and the norm of "
                                "the heads' sum where the weights show the mean. Grid, detail, head view and compare "
                                "follow.")
        self.source = _combo(SOURCES, "head: one head; layer mean: average of the layer's heads; rollout: attention "
                             "rollout up to the layer (Abnar & Zuidema, 2020)")
        self.hide_special = QCheckBox("Hide [CLS]/[SEP]")
        self.renormalise = QCheckBox("renormalise rows")
        self.renormalise.setChecked(True)
        self.renormalise.setToolTip("After hiding special tokens, scale each row to sum to 1 over the tokens left")
        self.quadrant = _combo(QUADRANTS, "For pairs: queries from one sentence, keys from the other "
                               "(not renormalised)")
        self.colours = _combo(COLORMAPS)
        self.combos = {"weighting": self.weighting, "source": self.source, "quadrant": self.quadrant,
                       "colours": self.colours}
        self.boxes = {"hide_special": self.hide_special, "renormalise": self.renormalise}
        for field, combo in self.combos.items():
            combo.currentTextChanged.connect(functools.partial(self._write, field))
        for field, box in self.boxes.items():
            box.toggled.connect(functools.partial(self._write, field))
        state.subscribe(self._follow, only=VIEW_FIELDS | {"source", "colours"})

    def _write(self, field: str, value: Any) -> None:
        self.state.update(**{field: value})

    def _follow(self, _changed: frozenset[str]) -> None:
        settings = self.state.settings
        for field, combo in self.combos.items():
            with QSignalBlocker(combo):
                combo.setCurrentText(getattr(settings, field))
        for field, check in self.boxes.items():
            with QSignalBlocker(check):
                check.setChecked(getattr(settings, field))
