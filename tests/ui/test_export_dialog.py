"""The Export to ONNX dialog (issue 33): runs in a worker, shows the largest difference and the
speeds; Cancel writes nothing; the File menu opens it on the current tab's model and task."""

from __future__ import annotations

from pathlib import Path

from bertstudio.core.tasks.spec import all_specs
from bertstudio.ui.widgets.export_dialog import ExportDialog
from tests.ui.conftest import load_model_in, only_tabs, with_tabs

TASK = next(s.key for s in all_specs().values() if s.model_class == "AutoModelForTokenClassification")
window_tabs = only_tabs("ner_tab")


def test_export_shows_difference_and_speeds(qtbot, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    dialog = ExportDialog(str(checkpoint_factory("bert", "TokenClassification")), TASK)
    qtbot.addWidget(dialog)
    dialog.output.setText(str(tmp_path / "ner.onnx"))
    with qtbot.waitSignal(dialog.runner.finished, timeout=120_000):
        dialog.start()
        assert not dialog.export_button.isEnabled() and dialog.cancel_button.text() == "Cancel"
    assert dialog.exported is not None and dialog.exported.max_difference <= 1e-4
    assert "Largest difference" in dialog.status.text()
    assert "onnxruntime" in dialog.report.toPlainText() and "pytorch int8" in dialog.report.toPlainText()
    assert (tmp_path / "ner.onnx").is_file() and dialog.export_button.isEnabled()


def test_cancel_writes_nothing(qtbot, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    dialog = ExportDialog(str(checkpoint_factory("bert", "TokenClassification")), TASK)
    qtbot.addWidget(dialog)
    dialog.output.setText(str(tmp_path / "ner.onnx"))
    dialog.runner.progress.connect(lambda _event: dialog.cancel_button.click())  # Cancel at the first step
    with qtbot.waitSignal(dialog.runner.finished, timeout=120_000):
        dialog.start()
    assert dialog.exported is None and "Cancel" in dialog.status.text()
    assert list(tmp_path.iterdir()) == []


def test_a_bad_target_is_said_in_the_dialog(qtbot, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    dialog = ExportDialog(str(checkpoint_factory("bert", "TokenClassification")), TASK)
    qtbot.addWidget(dialog)
    dialog.output.setText(str(tmp_path / "ner.txt"))
    with qtbot.waitSignal(dialog.runner.finished, timeout=60_000):
        dialog.start()
    assert "does not end in .onnx" in dialog.status.text()


def test_file_menu_opens_it_on_the_current_model(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    folder = str(checkpoint_factory("bert", "TokenClassification"))
    tab = window.task_tabs[TASK]
    load_model_in(qtbot, tab, folder)
    window.tabs.setCurrentWidget(tab)
    file_menu = window.menuBar().actions()[0].menu()
    action = next(a for a in file_menu.actions() if a.text() == "Export model to ONNX…")
    action.trigger()
    dialog = window.findChild(ExportDialog)
    assert dialog is not None and dialog.isVisible()
    assert dialog.source.text() == folder and dialog.task.currentData() == TASK
    action.trigger()  # one dialog per window
    assert len(window.findChildren(ExportDialog)) == 1
    hint = dialog.sizeHint()
    assert hint.width() <= 900 and hint.height() <= 600  # fits the smallest supported window
    dialog.close()


@with_tabs("ner_tab", "train_tab")
def test_from_a_tab_without_a_model_bar_it_opens_on_the_loaded_model_and_its_task(  # noqa: ANN001
        qtbot, window, checkpoint_factory) -> None:
    """Issue 40: opened from Train (no model bar) it had no model, and the first task (Fill-mask)."""
    from bertstudio.ui import menus

    folder = str(checkpoint_factory("bert", "TokenClassification"))
    load_model_in(qtbot, window.task_tabs[TASK], folder)
    window.tabs.setCurrentWidget(window.task_tabs["pretraining"])
    dialog = menus.export_model(window)
    assert isinstance(dialog, ExportDialog)
    assert dialog.source.text() == folder and dialog.task.currentData() == TASK
    dialog.close()


def test_an_existing_file_is_replaced_only_when_the_user_says_so(qtbot, checkpoint_factory, tmp_path: Path,
                                                                  monkeypatch) -> None:  # noqa: ANN001
    """The output policy refuses an existing .onnx unasked: the dialog asks, and says so if the answer is No."""
    dialog = ExportDialog(str(checkpoint_factory("bert", "TokenClassification")), TASK)
    qtbot.addWidget(dialog)
    target = tmp_path / "ner.onnx"
    target.write_bytes(b"the user's earlier file")
    dialog.output.setText(str(target))
    monkeypatch.setattr(dialog, "confirm_replace", lambda _output: False)
    dialog.start()
    assert not dialog.runner.busy and "Nothing was written" in dialog.status.text()
    assert target.read_bytes() == b"the user's earlier file"
    monkeypatch.setattr(dialog, "confirm_replace", lambda _output: True)
    with qtbot.waitSignal(dialog.runner.finished, timeout=120_000):
        dialog.start()
    assert dialog.exported is not None and target.read_bytes()[:4] != b"the "
