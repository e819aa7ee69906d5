"""Issue 41: the Tests tab's failures go to Train's labelling table, each proposed with its expected label."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QComboBox

from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from bertstudio.core.suites.fix import failure_rows
from bertstudio.core.suites.runner import run_suite
from bertstudio.core.suites.suite import read_suite
from bertstudio.ui.tabs.tests_tab import TestsTab
from bertstudio.ui.tabs.train_tab import TrainTab
from tests.ui.conftest import only_tabs, tab_of
from tests.ui.test_tests_tab import _run, _suite

window_tabs = only_tabs("tests_tab", "classification_tab", "train_tab", "fill_mask_tab")


def test_failures_fill_the_labelling_table(qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    model = str(checkpoint_factory("bert", "SequenceClassification"))
    tab = tab_of(window, TestsTab)
    window.tabs.setCurrentWidget(tab)
    tab.picker.set_path(str(_suite(tmp_path)))
    tab.model_bar.source.setEditText(model)
    assert not tab.label_button.isEnabled()
    _run(qtbot, tab)
    assert tab.result is not None and tab.label_button.isEnabled()
    expected = [row for row in failure_rows(run_suite(load_model(LoadRequest(model, "classification")),
                                                      read_suite(_suite(tmp_path)), TaskControl()))
                if not row.pair]
    tab.label_button.click()
    train = tab_of(window, TrainTab)
    panel = train.label_panel
    assert window.tabs.currentWidget() is train and not panel.body.isHidden()
    assert panel.table.rowCount() == len(expected) > 0
    for line, row in enumerate(expected):
        combo = panel.table.cellWidget(line, 3)
        assert panel.table.item(line, 0).text() == row.text and isinstance(combo, QComboBox)
        assert combo.currentText() == row.label and panel.table.item(line, 2).text() == f"test: {row.test}"
