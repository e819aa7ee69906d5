"""Issue 41's Train-tab pieces put in place: the form's "Find LR" button and its panel, the
cross-validation / label-issues panel and the labelling table, below the search. Kept apart from
train_tab.py so the tab only calls `add_to(tab, layout)` and asks `running(tab)`."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QVBoxLayout

from bertstudio.ui.binding import write_widget
from bertstudio.ui.train.curation_panel import CurationPanel
from bertstudio.ui.train.find_lr_panel import FindLrPanel
from bertstudio.ui.train.label_panel import LabelPanel


def add_to(tab: Any, layout: QVBoxLayout) -> None:
    """Make the panels (tab.find_lr_panel, tab.curation_panel, tab.label_panel) and the form's button."""
    tab.find_lr_panel = FindLrPanel(tab.config, tab.learning_rate.setValue, tab.show_message, tab)
    tab.find_lr_button = tab.form.add_button("learning_rate", "Find LR",
                                             "Sweep the learning rate on this run's data and suggest one")
    tab.find_lr_button.clicked.connect(tab.find_lr_panel.start)
    tab.curation_panel = CurationPanel(tab.config, tab.show_message, tab)
    tab.label_panel = LabelPanel(tab.config, lambda: trained_model(tab), lambda path: retrain_on(tab, path),
                                 tab.show_message, tab)
    for panel in (tab.find_lr_panel, tab.curation_panel, tab.label_panel):
        layout.addWidget(panel)
        panel.runner.started.connect(lambda: tab.start_button.setEnabled(False))
        panel.runner.finished.connect(lambda: tab.start_button.setEnabled(not running(tab) and not tab.runner.busy))


def running(tab: Any) -> bool:
    """Whether one of these panels has work under way (Start waits for it)."""
    return any(panel.is_running() for panel in (tab.find_lr_panel, tab.curation_panel, tab.label_panel))


def trained_model(tab: Any) -> str:
    """The model that scores the pool: the shown run's folder, else the form's output folder if it holds one."""
    from pathlib import Path

    if tab.result is not None:
        return str(tab.result.output_dir)
    output = tab.config().output_dir
    return output if output and (Path(output) / "config.json").is_file() else ""


def retrain_on(tab: Any, path: str) -> None:
    """Point the form's training file at the new copy and start a run (into a new or our own folder)."""
    write_widget(tab.form.widgets["train_file"], path)
    tab.start()
