"""Drive the NER tab: load the trained MiniLM head, tag, read highlights, table rows, wordpieces, strategies."""

from __future__ import annotations

import pytest

from bertstudio.ui.tabs.ner_tab import NerTab
from tests.ui.conftest import load_model_in


def _tab(window) -> NerTab:  # noqa: ANN001
    return window.task_tabs["ner"]


@pytest.mark.slow
def test_tag_highlight_table_and_click(qtbot, window, real_models) -> None:
    from tests.fixtures.trained_nsp_ner import trained_ner

    tab = _tab(window)
    load_model_in(qtbot, tab, trained_ner(real_models["all-minilm-l6-v2"]))
    assert "B-PER" in tab.labels_note.text()
    text = "My name is Klaus and I live in Vienna."
    tab.text.setPlainText(text)
    with qtbot.waitSignal(tab.runner.result, timeout=60_000):
        tab.run_button.click()
    assert [(s.start, s.end, s.kind) for s in tab.highlight.spans] == [(11, 16, "PER"), (31, 37, "LOC")]
    assert tab.highlight.kind_at(12) == "PER" and tab.highlight.kind_at(32) == "LOC"
    assert tab.highlight.kind_at(3) is None
    assert tab.highlight.background_at(12) != tab.highlight.background_at(32)  # one colour per type
    assert "PER" in tab.highlight.legend.text() and "LOC" in tab.highlight.legend.text()
    assert tab.entities.rowCount() == 2
    assert [tab.entities.item(0, c).text() for c in (0, 1, 3, 4)] == ["Klaus", "PER", "11", "16"]
    tab.entities.selectRow(1)  # clicking a row selects its span in the text
    assert tab.highlight.selection() == (31, 37)
    assert tab.highlight.view.textCursor().selectedText() == "Vienna"
    pieces = [tab.wordpieces.item(r, 0).text() for r in range(tab.wordpieces.rowCount())]
    assert pieces[:3] == ["my", "name", "is"] and "vienna" in pieces
    labels = {tab.wordpieces.item(r, 0).text(): tab.wordpieces.item(r, 1).text() for r in range(len(pieces))}
    assert labels["klaus"] == "B-PER" and labels["my"] == "O"
    # compare strategies: one column per strategy, all found Klaus
    for column in range(1, 5):
        assert "klaus" in tab.compare.item(0, column).text()
    # switching strategy reuses the result (no model call) and shows that strategy's entities
    tab.strategy.setCurrentText("none")
    assert [tab.entities.item(r, 1).text() for r in range(tab.entities.rowCount())] == ["B-PER", "B-LOC"]


def test_generic_labels_and_errors(qtbot, window, real_models) -> None:
    tab = _tab(window)
    load_model_in(qtbot, tab, real_models["all-minilm-l6-v2"])
    assert "LABEL_0" in tab.labels_note.text() and "model card" in tab.labels_note.text()
    assert "no trained ner head" in tab.model_bar.warning_label.text()
    tab.text.setPlainText("   ")
    with qtbot.waitSignal(tab.runner.error, timeout=30_000):
        tab.run()
    assert "empty" in tab.message.text()
