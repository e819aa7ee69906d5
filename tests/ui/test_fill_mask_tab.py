"""Drive the fill-mask tab as a user would: load, type, run, read; supersede; cancel; close mid-run."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from bertstudio.ui.tabs.fill_mask_tab import FillMaskTab
from tests.ui.conftest import load_model_in


def _tab(window) -> FillMaskTab:  # noqa: ANN001
    return window.task_tabs["fill-mask"]


def test_window_shows_before_torch_work(window) -> None:
    assert window.isVisible()
    assert window.tabs.count() >= 1
    assert "cpu" in [_tab(window).model_bar.device.itemText(i) for i in range(_tab(window).model_bar.device.count())]


def test_load_type_run_read(qtbot, window, real_models) -> None:
    tab = _tab(window)
    load_model_in(qtbot, tab, real_models["rxnmapper-albert-smiles-mlm"])
    assert "AlbertForMaskedLM" in tab.model_bar.info_label.text()
    assert not tab.model_bar.warning_label.isVisibleTo(tab)
    tab.text.setPlainText("C C ( = ")
    tab.text.moveCursor(QTextCursor.MoveOperation.End)
    tab.insert_mask.click()  # the model's own mask token
    tab.text.insertPlainText(" ) O")
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        qtbot.keyClick(tab.text, Qt.Key.Key_Return)
    assert tab.result is not None and tab.result.masks[0].candidates[0].token == "O"
    assert tab.bars[0].bars_a.labels[0] == "O"
    assert "<b" in tab.filled.text() and ">O</b>" in tab.filled.text()


def test_head_warning_shown_for_minilm(qtbot, window, real_models) -> None:
    tab = _tab(window)
    load_model_in(qtbot, tab, real_models["all-minilm-l6-v2"])
    assert tab.model_bar.warning_label.isVisibleTo(tab)
    assert "no trained fill-mask head" in tab.model_bar.warning_label.text()


def test_errors_are_shown_not_raised(qtbot, window, checkpoint_factory, tmp_path) -> None:
    tab = _tab(window)
    with qtbot.waitSignal(tab.model_bar.failed, timeout=30_000):
        tab.model_bar.load(str(tmp_path))  # a folder that is not a model
    assert "not a model folder" in tab.model_bar.info_label.text()
    assert "not a model folder" in window.log.text()
    load_model_in(qtbot, tab, checkpoint_factory("bert"))
    tab.text.setPlainText("no mask here")
    with qtbot.waitSignal(tab.runner.error, timeout=30_000):
        tab.run()
    assert "no mask token" in tab.message.text() and "[MASK]" in tab.message.text()


def test_newer_request_supersedes_older(qtbot, window, checkpoint_factory) -> None:
    tab = _tab(window)
    load_model_in(qtbot, tab, checkpoint_factory("bert"))
    results = []
    tab.runner.result.connect(results.append)
    tab.text.setPlainText("the [MASK] sat on the mat")
    tab.run()
    tab.text.setPlainText("the cat [MASK] on the [MASK]")
    with qtbot.waitSignal(tab.runner.finished, timeout=30_000):
        tab.run()
    qtbot.wait(200)  # let any stale signal arrive, to prove it is dropped
    assert len(results) == 1 and len(results[0].result.masks) == 2


def test_live_prediction_while_typing(qtbot, window, checkpoint_factory) -> None:
    tab = _tab(window)
    load_model_in(qtbot, tab, checkpoint_factory("bert"))
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        qtbot.keyClicks(tab.text, "the cat [MASK]")
    assert len(tab.result.masks) == 1


def test_cancel_and_close_mid_run(qtbot, window, checkpoint_factory) -> None:
    tab = _tab(window)
    load_model_in(qtbot, tab, checkpoint_factory("roberta"))
    tab.text.setPlainText("the cat <mask> on the mat")
    with qtbot.waitSignal(tab.runner.cancelled, timeout=10_000):
        tab.run()
        tab.cancel_button.click()
    tab.run()
    window.close()  # closes while the job may still run: waits, no crash, no dangling thread
    assert not tab.runner.busy


def test_compare_two_models_side_by_side(qtbot, window, checkpoint_factory) -> None:
    tab = _tab(window)
    load_model_in(qtbot, tab, checkpoint_factory("bert"))
    tab.compare_source.set_source(str(checkpoint_factory("roberta")))  # another mask token: <mask>
    tab.text.setPlainText("the cat [MASK] on the mat")
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run()
    outcome = tab.outcome
    assert outcome.second is not None and len(outcome.diff) == 1
    assert outcome.second.text == "the cat <mask> on the mat"
    assert not tab.bars[0].side_b.isHidden()
    assert "Top-1" in tab.bars[0].summary.text()
    assert "<b>B</b>" in tab.filled.text()
