"""The Explain tab's one-line notices, placed so that their coming moves no row a click may be
aimed at (issue 10): the head warning beside the model's summary, and the Out-of-date mark in
the corner of the result pages' tab bar.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QBoxLayout, QHBoxLayout, QTabWidget

from bertstudio.ui import theme
from bertstudio.ui.model_bar import ModelBar
from bertstudio.ui.widgets.elided_label import ElidedLabel
from bertstudio.ui.widgets.run_controls import StaleBanner


def warning_beside_summary(bar: ModelBar) -> ElidedLabel:
    """A one-line head warning on the same line as the model's summary, in the bar's place for it.
    The bar's own warning row pushed the rows below down when it appeared (a click meant for them
    landed elsewhere), and keeping its room left an empty gap while there was no warning."""
    label = ElidedLabel()
    theme.follow(label, lambda c: f"QLabel {{ color: {c.warning}; }}")
    layout = bar.layout()
    assert isinstance(layout, QBoxLayout)  # the bar's rows
    index = layout.indexOf(bar.info_label)
    layout.removeWidget(bar.info_label)
    row = QHBoxLayout()
    row.addWidget(bar.info_label)
    row.addSpacing(12)
    row.addWidget(label, 1)
    layout.insertLayout(index, row)
    return label


class CornerStaleBanner(StaleBanner):
    """The Out-of-date mark on one line in the pages' top-right corner (the whole sentence in its
    tooltip): above the pages it pushed them down when a model's load ended, at any moment."""

    def __init__(self, pages: QTabWidget) -> None:
        super().__init__(pages, action="Press Explain (Ctrl+Enter) to update it.")
        self.setWordWrap(False)
        self.setMinimumWidth(120)  # never widens the page
        pages.setCornerWidget(self, Qt.Corner.TopRightCorner)

    def show_for(self, reason: str) -> None:
        super().show_for(reason)
        if reason:
            self.setToolTip(self.text())
            self.setText(f"<b>Out of date:</b> for the previous {reason}")
            self.raise_()  # above the veil that fades the pages, itself one of their children
