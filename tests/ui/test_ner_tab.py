"""Drive the NER tab: load the trained MiniLM head, tag, read highlights, table rows, wordpieces, strategies."""

from __future__ import annotations

import pytest

from bertstudio.ui.tabs.ner_tab import NerTab
from tests.ui.conftest import load_model_in, only_tabs, tab_of

window_tabs = only_tabs("ner_tab")  # these tests drive the ner tab only


@pytest.mark.slow
def test_tag_highlight_table_and_click(qtbot, window, real_models) -> None:
    from tests.fixtures.trained_nsp_ner import trained_ner

    tab = tab_of(window, NerTab)
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
    tab = tab_of(window, NerTab)
    load_model_in(qtbot, tab, real_models["all-minilm-l6-v2"])
    assert "LABEL_0" in tab.labels_note.text() and "model card" in tab.labels_note.text()
    assert "no trained ner head" in tab.model_bar.warning_label.text()
    tab.text.setPlainText("   ")
    with qtbot.waitSignal(tab.runner.error, timeout=30_000):
        tab.run()
    assert "empty" in tab.message.text()


def _changes(tab) -> list[tuple[str, ...]]:
    return [tuple(tab.changes.item(r, c).text() for c in range(tab.changes.columnCount()))
            for r in range(tab.changes.rowCount())]


@pytest.mark.slow
def test_compare_two_models(qtbot, window, real_models, checkpoint_factory) -> None:
    """Trained MiniLM NER (A) against itself (nothing changed), then against a random BERT head."""
    from bertstudio.core.tasks.ner.entities import compare_entities
    from tests.fixtures.trained_nsp_ner import trained_ner

    tab = tab_of(window, NerTab)
    trained = trained_ner(real_models["all-minilm-l6-v2"])
    load_model_in(qtbot, tab, trained)
    text = "My name is Klaus and I live in Vienna."
    tab.text.setPlainText(text)
    tab.compare_source.set_source(str(trained))
    with qtbot.waitSignal(tab.runner.result, timeout=60_000):
        tab.run_button.click()
    assert tab.side_b.isVisibleTo(tab) and tab.title_a.isVisibleTo(tab)
    assert [(s.start, s.end, s.kind) for s in tab.highlight_b.spans] == [(11, 16, "PER"), (31, 37, "LOC")]
    assert tab.highlight_b.background_at(12) == tab.highlight.background_at(12)  # same colour per type
    assert _changes(tab) == [("same", "Klaus", "PER", "PER", "11", "16"), ("same", "Vienna", "LOC", "LOC", "31", "37")]
    assert "Same entities" in tab.changes_summary.text()

    random_bert = checkpoint_factory("bert", "TokenClassification")
    tab.compare_source.set_source(str(random_bert))
    with qtbot.waitSignal(tab.runner.result, timeout=60_000):
        tab.run_button.click()
    outcome = tab.outcome
    assert [(s.start, s.end, s.kind) for s in tab.highlight.spans] == [(11, 16, "PER"), (31, 37, "LOC")]  # A
    spans_b = [(e.start, e.end, e.entity_type) for e in outcome.second.entities]
    assert [(s.start, s.end, s.kind) for s in tab.highlight_b.spans] == spans_b
    diff = compare_entities([{"start": e.start, "end": e.end, "label": e.label} for e in outcome.result.entities],
                            [{"start": e.start, "end": e.end, "label": e.label} for e in outcome.second.entities])
    assert diff.changed
    rows = _changes(tab)
    expected = ([("relabelled", a.start, a.end) for a, _ in diff.relabelled]
                + [("removed", e.start, e.end) for e in diff.removed]
                + [("added", e.start, e.end) for e in diff.added] + [("same", a.start, a.end) for a, _ in diff.same])
    assert [(row[0], int(row[4]), int(row[5])) for row in rows] == expected
    assert "Entities changed" in tab.changes_summary.text()
    window.resize(1280, 800)  # NER compare gets the room: A's and B's tables side by side, several rows each
    window.tabs.setCurrentWidget(tab)
    qtbot.wait(50)
    row = tab.changes.verticalHeader().defaultSectionSize()
    assert tab.changes.viewport().height() >= 6 * row and tab.entities.viewport().height() >= 6 * row
    assert f"{len(diff.added)} added" in tab.changes_summary.text()
    for e in diff.added:  # B's highlight says which entities are new
        assert "added" in next(s.tooltip for s in tab.highlight_b.spans if (s.start, s.end) == (e.start, e.end))
    # clicking a change selects its characters in both texts
    tab.changes.selectRow(0)
    start, end = int(rows[0][4]), int(rows[0][5])
    assert tab.highlight.selection() == (start, end) and tab.highlight_b.selection() == (start, end)
    # switching strategy re-diffs the stored results of both models without a rerun
    tab.strategy.setCurrentText("none")
    assert tab.outcome is outcome
    assert [(s.start, s.end) for s in tab.highlight_b.spans] == [
        (e.start, e.end) for e in outcome.second.comparison["none"]]
    assert all(row[2] in ("", "B-PER", "B-LOC", "I-PER", "I-LOC") for row in _changes(tab))


def test_state_restore_and_table_layout(qtbot, window) -> None:
    from PySide6.QtWidgets import QHeaderView

    from bertstudio.core.tasks.ner import NerInput

    tab = tab_of(window, NerTab)
    tab.set_inputs(NerInput("Klaus lives in Vienna.", "first"))
    assert tab.inputs() == NerInput("Klaus lives in Vienna.", "first")
    state = tab.state()
    tab.restore({"text": "", "aggregation": "simple"})
    tab.restore(state)
    assert tab.state() == state == {"text": "Klaus lives in Vienna.", "aggregation": "first"}
    header = tab.entities.horizontalHeader()  # the entity's text gets the room, not its "end"
    assert header.sectionResizeMode(0) == QHeaderView.ResizeMode.Stretch and not header.stretchLastSection()
    assert tab.changes.horizontalHeader().sectionResizeMode(1) == QHeaderView.ResizeMode.Stretch


def test_the_tab_starts_on_whole_words(window) -> None:
    """'first' (a word takes its first wordpiece's label), not 'simple' (wordpieces as entities)."""
    tab = tab_of(window, NerTab)
    assert tab.current_strategy() == "first" and tab.inputs().aggregation == "first"
    tab.restore({"text": "x"})  # a workspace without an aggregation: the default
    assert tab.current_strategy() == "first"
    assert [tab.strategy.itemText(i) for i in range(tab.strategy.count())] == ["none", "simple", "first", "average",
                                                                               "max"]  # all still selectable
