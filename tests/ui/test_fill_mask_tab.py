"""Drive the fill-mask tab as a user would: load, type, run, read; supersede; cancel; close mid-run."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from bertstudio.ui.local_models import LocalModelsIndex
from bertstudio.ui.tabs.fill_mask_tab import FillMaskTab
from tests.ui.conftest import load_model_in, only_tabs, tab_of

window_tabs = only_tabs()  # the Fill-mask tab, the first one, only; the last test asks for every tab


def test_window_shows_before_torch_work() -> None:
    """In a fresh process (here torch is long imported by other tests): torch is not imported when
    the window is first shown, and the background import then fills the fill-mask tab's devices."""
    from tests.test_startup import window_in_fresh_process

    out = window_in_fresh_process()
    shown = next(line for line in out.splitlines() if line.startswith("SHOWN"))
    devices = next(line for line in out.splitlines() if line.startswith("DEVICES"))
    assert "torch" not in shown and "transformers" not in shown, out
    assert "'cpu'" in devices, out


def test_load_type_run_read(qtbot, window, real_models) -> None:
    tab = tab_of(window, FillMaskTab)
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
    tab = tab_of(window, FillMaskTab)
    load_model_in(qtbot, tab, real_models["all-minilm-l6-v2"])
    assert tab.model_bar.warning_label.isVisibleTo(tab)
    assert "no trained fill-mask head" in tab.model_bar.warning_label.text()


def test_errors_are_shown_not_raised(qtbot, window, checkpoint_factory, tmp_path) -> None:
    tab = tab_of(window, FillMaskTab)
    with qtbot.waitSignal(tab.model_bar.failed, timeout=30_000):
        tab.model_bar.load(str(tmp_path))  # a folder that is not a model
    assert "not a model folder" in tab.model_bar.error_label.text()  # said in the bar since 808cb9b
    assert "not a model folder" in window.log.text()
    load_model_in(qtbot, tab, checkpoint_factory("bert"))
    tab.text.setPlainText("no mask here")
    with qtbot.waitSignal(tab.runner.error, timeout=30_000):
        tab.run()
    assert "no mask token" in tab.message.text() and "[MASK]" in tab.message.text()


def test_newer_request_supersedes_older(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, FillMaskTab)
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
    tab = tab_of(window, FillMaskTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert"))
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        qtbot.keyClicks(tab.text, "the cat [MASK]")
    assert len(tab.result.masks) == 1


def test_cancel_and_close_mid_run(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, FillMaskTab)
    load_model_in(qtbot, tab, checkpoint_factory("roberta"))
    tab.text.setPlainText("the cat <mask> on the mat")
    with qtbot.waitSignal(tab.runner.cancelled, timeout=10_000):
        tab.run()
        tab.cancel_button.click()
    tab.run()
    window.close()  # closes while the job may still run: waits, no crash, no dangling thread
    assert tab.runner.stop_requested or not tab.runner.busy  # closing stopped the job...
    assert tab.runner.wait(5_000)  # ...and the runner reports idle as soon as its thread returned


def test_compare_two_models_side_by_side(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, FillMaskTab)
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


# -- the template tab (ui/tabs/base.py), driven through fill-mask ------------------------------

@pytest.fixture
def tab(qtbot, settings) -> FillMaskTab:
    """A fill-mask tab on its own (no window): the template's behaviour in isolation."""
    index = LocalModelsIndex(settings)
    widget = FillMaskTab(settings, index)
    widget.resize(1280, 760)
    qtbot.addWidget(widget)
    widget.show()
    return widget


def test_splitter_sizes_are_remembered(qtbot, settings, tab) -> None:
    assert tab.splitter.orientation() == Qt.Orientation.Vertical
    total = sum(tab.splitter.sizes())
    tab.splitter.setSizes([total - 200, 200])
    tab.splitter.splitterMoved.emit(total - 200, 1)
    saved = settings.splitter_sizes("fill-mask")
    assert saved == tab.splitter.sizes()
    again = FillMaskTab(settings, LocalModelsIndex(settings))
    qtbot.addWidget(again)
    again.resize(tab.size())
    again.show()
    assert again.splitter.sizes() == saved


def test_results_get_the_room_by_default(tab) -> None:
    top, bottom = tab.splitter.sizes()
    assert bottom > top


def test_ctrl_enter_runs_and_escape_cancels(qtbot, tab, checkpoint_factory) -> None:
    load_model_in(qtbot, tab, checkpoint_factory("bert"))
    tab.text.setPlainText("the cat [MASK] on the mat")
    tab.text.setFocus()
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        qtbot.keyClick(tab.text, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert tab.result is not None and tab.run_button.isEnabled()
    with qtbot.waitSignal(tab.runner.cancelled, timeout=10_000):
        tab.run()
        assert not tab.run_button.isEnabled() and tab.cancel_button.isEnabled()
        qtbot.keyClick(tab.text, Qt.Key.Key_Escape)
    assert tab.run_button.isEnabled() and not tab.cancel_button.isEnabled()
    assert "Cancelled" in tab.message.text()


def test_input_error_clears_the_old_result(qtbot, tab, checkpoint_factory) -> None:
    load_model_in(qtbot, tab, checkpoint_factory("bert"))
    tab.text.setPlainText("the cat [MASK] on the mat")
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run()
    assert tab.bars and tab.explain_button.isEnabled()
    tab.heads_off.setText("zero:one")  # caught before any work starts
    tab.run()
    assert tab.result is None and not tab.bars and tab.filled.text() == ""
    assert "LAYER:HEAD" in tab.message.text() and tab.notes.levels() == ("error",)
    assert not tab.explain_button.isEnabled()
    tab.heads_off.setText("")
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run()
    tab.text.setPlainText("no mask here")  # caught by the task in the worker
    with qtbot.waitSignal(tab.runner.error, timeout=30_000):
        tab.run()
    assert tab.result is None and not tab.bars and "no mask token" in tab.message.text()


def test_model_switch_cancels_the_running_job(qtbot, tab, checkpoint_factory) -> None:
    load_model_in(qtbot, tab, checkpoint_factory("bert"))
    results = []
    tab.runner.result.connect(results.append)
    tab.text.setPlainText("the cat [MASK] on the mat")
    tab.run()
    assert tab.runner.busy
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.model_bar.load(str(checkpoint_factory("roberta")))
        assert tab.runner.stop_requested  # cancelled the moment the other model started loading
    assert tab.runner.wait(30_000)
    qtbot.wait(100)
    assert results == [] and tab.result is None and not tab.bars
    assert tab.run_button.isEnabled()


def test_state_restore_round_trip(qtbot, settings, tab) -> None:
    tab.text.setPlainText("a [MASK] b")
    tab.top_k.setValue(7)
    tab.set_ablated_heads(((0, 1), (1, 0)))
    state = tab.workspace_state()
    other = FillMaskTab(settings, LocalModelsIndex(settings))
    qtbot.addWidget(other)
    other.restore_workspace(state)
    assert other.text.toPlainText() == "a [MASK] b" and other.top_k.value() == 7
    assert other.ablated_heads() == ((0, 1), (1, 0))
    assert other.workspace_state()["view"] == state["view"] == {"text": "a [MASK] b", "top_k": 7}


def test_examples_fill_the_inputs(tab) -> None:
    assert tab.examples_combo.count() > 1
    tab.examples_combo.activated.emit(1)
    assert "[MASK]" in tab.text.toPlainText() and "{mask}" not in tab.text.toPlainText()


def test_explain_hands_over_the_shown_result(qtbot, tab, checkpoint_factory) -> None:
    load_model_in(qtbot, tab, checkpoint_factory("bert"))
    tab.text.setPlainText("the cat [MASK] on the mat")
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run()
    with qtbot.waitSignal(tab.explain_requested) as blocker:
        tab.explain_button.click()
    request = blocker.args[0]
    assert request.spec_key == "fill-mask" and request.inputs.text == "the cat [MASK] on the mat"
    assert request.result is tab.result and request.request.source == tab.model_info.request.source


def test_heads_off_shows_intact_and_ablated_side_by_side(qtbot, tab, checkpoint_factory) -> None:
    """No skip: heads off failing in any way (a NotImplementedError included) fails this test."""
    load_model_in(qtbot, tab, checkpoint_factory("bert"))
    tab.text.setPlainText("the cat [MASK] on the mat")
    tab.set_ablated_heads(((0, 0), (1, 1)))
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run()
    outcome = tab.outcome
    assert outcome.second is not None and outcome.second_source == "heads off: 0:0, 1:1"
    assert not tab.bars[0].side_b.isHidden() and "heads off" in tab.bars[0].title_b.text()
    assert "<b>B</b>" in tab.filled.text()


def test_notes_area_once_each_details_one_click_away(qtbot) -> None:
    from bertstudio.core.notes import Note
    from bertstudio.ui.widgets.notes_area import NotesArea

    area = NotesArea()
    qtbot.addWidget(area)
    area.show()
    area.set_notes([Note("warning", "cut", "the last 40 tokens"), Note("info", "read in 2 windows"),
                    Note("warning", "cut")])
    assert area.text() == "cut\nread in 2 windows" and area.levels() == ("warning", "info")
    assert area.details_button.isVisible() and not area.details.isVisible()
    area.details_button.click()
    assert area.details.isVisible() and "the last 40 tokens" in area.details.toPlainText()
    # an error about the same cause replaces the warnings: never yellow and red together
    area.set_notes([Note("warning", "this head is meaningless"), Note("error", "this head cannot be used")])
    assert area.levels() == ("error",) and not area.details_button.isVisible()
    area.clear()
    assert not area.isVisible() and area.text() == ""


@pytest.mark.parametrize("window_tabs", [None], ids=["every tab"])
def test_every_template_tab_fits_the_default_window(window) -> None:
    """1280 x 800 is the default size: no task tab's row of options may push the window wider."""
    from bertstudio.ui.tabs.base import TaskTab

    template = [tab for tab in window.task_tabs.values() if isinstance(tab, TaskTab) and tab.SPEC_KEY]
    assert len(template) >= 6
    for tab in template:
        assert tab.minimumSizeHint().width() <= 1280 - 40, tab.TITLE
