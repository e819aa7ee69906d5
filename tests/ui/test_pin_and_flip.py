"""Edit and pin in the template tab, and the "What would flip this?" panel (open in editor)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from bertstudio.core.workspace_file import validate
from bertstudio.ui.tabs.classification_tab import ClassificationTab
from bertstudio.ui.tabs.fill_mask_tab import FillMaskTab
from tests.ui.conftest import load_model_in, only_tabs, run_tab, tab_of

window_tabs = only_tabs("classification_tab")  # the one tab these drive; the last test asks for every tab


@pytest.fixture(scope="module")
def sensitive_classifier(checkpoint_factory, tmp_path_factory):  # noqa: ANN001, ANN201
    """A tiny random classifier drawn wide enough that an edit can change its label (see test_counterfactual)."""
    import torch
    import transformers

    source = checkpoint_factory("bert", "SequenceClassification")
    config = transformers.AutoConfig.from_pretrained(source)
    config.initializer_range = 0.6
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("sensitive-classifier")
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    transformers.AutoTokenizer.from_pretrained(source).save_pretrained(folder)
    return folder


def test_pin_edit_step_and_workspace(qtbot, window, sensitive_classifier) -> None:  # noqa: ANN001
    tab = tab_of(window, ClassificationTab)
    load_model_in(qtbot, tab, sensitive_classifier)
    assert not tab.pin_bar.pin_button.isEnabled()  # nothing to pin before a result
    tab.text.setPlainText("a good film about the old city and the river .")
    run_tab(qtbot, tab, idle=True)
    pinned_scores = [s.score for s in tab.result.first.scores]
    tab.pin_bar.pin_button.click()
    assert tab.pins.active and tab.pin_bar.entries.count() == 1 and tab.pin_bar.unpin_button.isVisibleTo(tab)

    tab.text.setPlainText("tree good film about the old city and the river .")
    run_tab(qtbot, tab, idle=True)
    assert tab.outcome.second is not None and tab.outcome.second_source.startswith("edit 1")
    assert [s.score for s in tab.outcome.result.first.scores] == pinned_scores  # A: the pinned result
    assert tab.result is tab.outcome.second  # this input's own result (what Explain… reads)
    assert tab.bars.side_b.isVisibleTo(tab)  # the tab's own compare rendering shows both
    assert tab.bars.title_a.text().endswith("pinned") and "edit 1" in tab.bars.title_b.text()  # A is the pin
    assert "A: pinned, B: edit 1" in window.statusBar().currentMessage()  # not A's (the pin's) top label
    assert "A: pinned, B: edit 1" in tab.pin_bar.summary.text() and "positive" in tab.pin_bar.summary.text()
    tab.text.setPlainText("a good film about the new city .")
    run_tab(qtbot, tab, idle=True)
    assert tab.pin_bar.entries.count() == 3 and tab.pin_bar.entries.currentIndex() == 2

    window.tabs.setCurrentWidget(tab)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
    tab.text.setFocus()
    qtbot.keyClick(tab.text, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)  # step back to edit 1
    assert tab.pin_bar.entries.currentIndex() == 1
    assert tab.text.toPlainText() == "tree good film about the old city and the river ."
    assert tab.stale_reason() == "" and tab.outcome.second_source.startswith("edit 1")
    assert "A: pinned, B: edit 1" in window.statusBar().currentMessage()  # stepping speaks of the edit too
    tab.pin_bar.step_by(-1)  # the pinned input alone
    assert tab.outcome.second is None and tab.text.toPlainText().startswith("a good film about the old")
    assert "A: pinned" not in window.statusBar().currentMessage()

    state = tab.workspace_state()
    assert [p["label"] for p in state["pins"]] == ["pinned", "edit 1", "edit 2"] and state["pin"] == 0
    checked = validate({"format": "bertstudio-workspace", "version": 1, "tabs": {tab.TASK: state}},
                       {tab.TASK: tab.state()})
    assert not checked.problems and checked.data["tabs"][tab.TASK]["pins"] == state["pins"]
    tab.pin_bar.unpin_button.click()
    assert not tab.pins.active and not tab.pin_bar.entries.isVisibleTo(tab)
    tab.restore_workspace(state)  # pins come back as inputs; their results with the next run
    assert tab.pin_bar.entries.count() == 3 and tab.pins.entries[2].inputs.text == "a good film about the new city ."
    tab.pin_bar.step_by(2)
    assert tab.text.toPlainText() == "a good film about the new city ."
    run_tab(qtbot, tab, idle=True)  # the pinned input is run in the same job
    assert tab.outcome.second is not None and [s.score for s in tab.outcome.result.first.scores] == pinned_scores


def test_explain_a_and_b_side_by_side_follows_the_edit(qtbot, window, sensitive_classifier) -> None:  # noqa: ANN001
    tab = tab_of(window, ClassificationTab)
    load_model_in(qtbot, tab, sensitive_classifier)
    tab.text.setPlainText("a good film about the old city and the river .")
    run_tab(qtbot, tab, idle=True)
    tab.pin_bar.pin_button.click()
    assert tab.pin_bar.pair_button.isVisibleTo(tab) and not tab.pin_bar.pair_button.isEnabled()  # no edit yet
    tab.text.setPlainText("a bad film about the old city .")
    run_tab(qtbot, tab, idle=True)
    assert tab.pin_bar.pair_button.isEnabled()
    tab.pin_bar.pair_button.click()
    panel = tab.pair_panel
    qtbot.waitUntil(lambda: panel.pair is not None and not panel.runner.busy, timeout=60_000)
    pair = panel.pair
    assert pair.edit.target == pair.pinned.target and "B: edit 1" in panel.title_b.text()
    assert "removed: good, and, the, river" in panel.title_diff.text() and "added: bad" in panel.title_diff.text()
    assert "good" in panel.tokens_a.toPlainText() and "bad" in panel.tokens_b.toPlainText()
    assert "<s>" in panel.tokens_diff.toHtml() or "line-through" in panel.tokens_diff.toHtml()
    tab.text.setPlainText("a good film about the new city .")  # open: the next edit is explained at once
    with qtbot.waitSignal(panel.runner.result, timeout=60_000):
        run_tab(qtbot, tab, idle=True)
    qtbot.waitUntil(lambda: not panel.runner.busy, timeout=10_000)
    assert "B: edit 2" in panel.title_b.text() and "new" in panel.tokens_b.toPlainText()
    panel.close()
    tab.pin_bar.unpin_button.click()
    assert not tab.pin_bar.pair_button.isVisibleTo(tab)


def test_what_would_flip_this_opens_in_the_editor(qtbot, window, sensitive_classifier) -> None:  # noqa: ANN001
    tab = tab_of(window, ClassificationTab)
    assert tab.pin_bar.flip_button.isVisibleTo(tab)
    load_model_in(qtbot, tab, sensitive_classifier)
    tab.text.setPlainText("a good film about the old city and the river .")
    tab.pin_bar.flip_button.click()
    panel = tab.flip_panel
    assert panel.method.currentData() == "hotflip" and "no masked-LM head" in panel.method.toolTip()  # issue 29 #10
    panel.max_edits.setValue(3)
    with qtbot.waitSignal(panel.runner.result, timeout=60_000):
        panel.find_button.click()
    qtbot.waitUntil(lambda: not panel.runner.busy, timeout=10_000)
    assert panel.table.rowCount() > 0
    edits = [int(panel.table.item(r, 0).text().count("→") + panel.table.item(r, 0).text().count("−"))
             for r in range(panel.table.rowCount())]
    assert edits == sorted(edits)
    scores = [(edits[r], -float(panel.table.item(r, 2).text())) for r in range(panel.table.rowCount())]
    assert scores == sorted(scores)  # within the same number of edits, the most confident flip first
    assert all("#" in panel.table.item(r, 0).text() for r in range(panel.table.rowCount()))  # word places
    assert "What would flip this?" in window.log.text() and panel.table.item(0, 0).text() in window.log.text()
    claimed = panel.table.item(0, 1).text()
    with qtbot.waitSignal(tab.runner.result, timeout=60_000):
        panel.table.cellWidget(0, 4).click()  # Open in editor: the tab takes the text and runs it
    qtbot.waitUntil(lambda: not tab.runner.busy, timeout=10_000)
    assert tab.text.toPlainText() == panel.results[0].texts[0]
    assert tab.result.first.top.label == claimed

    panel.max_edits.setValue(5)  # Esc cancels a running search
    panel.method.setCurrentIndex(panel.method.findData("ablation"))
    tab.text.setPlainText(" ".join(["the good old city and the river in the night"] * 6))
    with qtbot.waitSignal(panel.runner.finished, timeout=30_000):
        panel.find_button.click()
        qtbot.waitUntil(lambda: panel.runner.busy, timeout=5_000)
        qtbot.keyClick(panel, Qt.Key.Key_Escape)
    assert "Cancelled" in panel.notes.text()
    panel.close()


@pytest.mark.parametrize("window_tabs", [None], ids=["every tab"])
def test_task_tabs_without_a_search_hide_the_button(qtbot, window) -> None:  # noqa: ANN001
    for tab in window.task_tabs.values():
        if hasattr(tab, "pin_bar"):
            searchable = tab.spec.counterfactual is not None
            assert tab.pin_bar.flip_button.isVisibleTo(tab) == searchable, tab.TASK
    assert tab_of(window, FillMaskTab).pin_bar.flip_button.isVisibleTo(tab_of(window, FillMaskTab))
