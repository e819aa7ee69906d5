"""Heads off is an explicit, visible choice per tab: where it came from, one click to clear, and
heads the loaded model does not have named at once (not only when Run fails)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from bertstudio.core.tasks.fill_mask import FillMaskInput
from tests.ui.conftest import load_model_in, only_tabs

window_tabs = only_tabs("nsp_tab", "classification_tab")  # with the first tab, Fill-mask: the tabs used here


def test_sent_heads_say_where_they_came_from_and_clear_in_one_click(qtbot, window) -> None:
    tab = window.task_tabs["fill-mask"]
    window.tabs.setCurrentWidget(tab)
    tab.set_ablated_heads(((0, 1), (1, 0), (2, 2)), "from Attention, 3 heads")
    controls = tab.controls
    assert controls.heads_origin.isVisible() and controls.heads_origin.text() == "from Attention, 3 heads"
    assert controls.heads_clear.isVisible()
    qtbot.mouseClick(controls.heads_clear, Qt.MouseButton.LeftButton)
    assert tab.heads_off.text() == "" and tab.ablated_heads() == ()
    assert not controls.heads_origin.isVisible() and not controls.heads_clear.isVisible()


def test_typing_replaces_the_origin(qtbot, window) -> None:
    tab = window.task_tabs["nsp"]
    window.tabs.setCurrentWidget(tab)
    tab.set_ablated_heads(((0, 1),), "from Attention, 1 head")
    tab.heads_off.setFocus()
    tab.heads_off.end(False)
    qtbot.keyClicks(tab.heads_off, ", 1:1")
    assert tab.heads_origin == "" and not tab.controls.heads_origin.isVisible()
    assert tab.controls.heads_clear.isVisible()  # still one click to clear


def test_heads_the_model_lacks_are_flagged_at_once(qtbot, window, checkpoint_factory) -> None:
    """The 2-head test model: "0:2" is named as wrong as soon as it is there, before any Run."""
    tab = window.task_tabs["fill-mask"]
    window.tabs.setCurrentWidget(tab)
    tab.set_ablated_heads(((0, 2),), "from Attention, 1 head")
    assert not tab.controls.heads_problem.isVisible()  # no model yet: the range is not known
    load_model_in(qtbot, tab, checkpoint_factory("bert"))
    problem = tab.controls.heads_problem
    assert problem.isVisible() and "Head 2 does not exist" in problem.text()
    assert tab.heads_off.styleSheet()  # the field is outlined
    tab.heads_off.setText("0:1")
    assert not problem.isVisible() and not tab.heads_off.styleSheet()
    tab.heads_off.setText("5:0")
    assert problem.isVisible() and "Layer 5 does not exist" in problem.text()
    tab.set_inputs(FillMaskInput("the cat [MASK] on the mat", 5))
    tab.run()  # and Run still refuses, with the same words
    assert "Layer 5 does not exist" in tab.message.text()


def test_a_workspace_brings_heads_back_saying_so(window) -> None:
    tab = window.task_tabs["classification"]
    state = tab.workspace_state()
    state["heads_off"] = "0:1, 1:0"
    tab.restore_workspace(state)
    assert tab.heads_off.text() == "0:1, 1:0"
    assert tab.controls.heads_origin.text() == "from the saved workspace"
