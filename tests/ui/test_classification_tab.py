"""Drive the classification tab: single text, pair, batch (lines and CSV), sort, export, compare, errors."""

from __future__ import annotations

import csv

import pytest
from PySide6.QtCore import Qt

from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.tasks.classification import classify
from bertstudio.ui.tabs.classification_tab import ClassificationTab
from tests.ui.conftest import load_model_in, only_tabs, run_tab, tab_of

window_tabs = only_tabs("classification_tab")  # these tests drive the classification tab only


def test_real_topic_classifier_in_the_tab(qtbot, window, real_models) -> None:
    tab = tab_of(window, ClassificationTab)
    assert window.tabs.indexOf(tab) >= 0
    load_model_in(qtbot, tab, real_models["categorium-bert-tiny-topics-en"])
    assert "food" in tab.kind_label.text() or "adult" in tab.kind_label.text()
    tab.text.setPlainText("This pasta recipe with tomato sauce, garlic and basil is ready in twenty minutes.")
    run_tab(qtbot, tab)
    assert tab.bars.bars_a.labels[0] == "food" and len(tab.bars.bars_a.labels) == 27
    assert list(tab.bars.bars_a.values) == sorted(tab.bars.bars_a.values, reverse=True)
    assert "softmax" in tab.kind_label.text()
    assert not tab.bars.side_b.isVisibleTo(tab)


def test_pair_batch_sort_export_and_errors(qtbot, window, checkpoint_factory, tmp_path) -> None:
    tab = tab_of(window, ClassificationTab)
    folder = checkpoint_factory("bert", "SequenceClassification")
    load_model_in(qtbot, tab, folder)
    tab.text.setPlainText("the cat sat")
    tab.pair.setPlainText("a dog ran")
    run_tab(qtbot, tab)
    expected = classify(load_model(LoadRequest(str(folder), "classification")), "the cat sat", "a dog ran")
    assert tab.bars.bars_a.labels == [s.label for s in expected.first.scores]
    assert tab.bars.bars_a.values.tolist() == pytest.approx([s.score for s in expected.first.scores], abs=1e-6)

    tab.text.setPlainText("  ")
    run_tab(qtbot, tab, "error")
    assert "empty" in tab.message.text()

    tab.modes.setCurrentIndex(1)
    tab.lines.setPlainText("the cat sat\na big old house with a tree\nmusic\n")
    run_tab(qtbot, tab)
    assert tab.table.rowCount() == 3 and tab.export_button.isEnabled()
    texts = ["the cat sat", "a big old house with a tree", "music"]
    assert [tab.table.item(r, 1).text() for r in range(3)] == texts  # input order, not sorted by text
    tab.table.sortItems(3, Qt.SortOrder.DescendingOrder)
    scores = [float(tab.table.item(r, 3).text()) for r in range(3)]
    assert scores == sorted(scores, reverse=True)
    tab.table.setCurrentCell(2, 1)  # the bars follow the chosen row, whatever the sort order
    row = tab.outcome.result.rows[tab.table.result_index(2)]
    assert tab.bars.bars_a.labels == [s.label for s in row.scores]
    out = tmp_path / "out.csv"
    tab.export_to(str(out))
    with out.open(encoding="utf-8") as handle:
        assert [r["text"] for r in csv.DictReader(handle)] == ["the cat sat", "a big old house with a tree", "music"]

    table = tmp_path / "reviews.csv"
    table.write_text("id,review\n1,the cat\n2,a dog\n", encoding="utf-8")
    with qtbot.waitSignal(tab.file_runner.result, timeout=10_000):
        tab.open_table_file(str(table))  # the file is read in a worker: nothing listed yet
        assert tab.column.count() == 0
    assert [tab.column.itemText(i) for i in range(tab.column.count())] == ["id", "review"]
    tab.column.setCurrentText("review")
    run_tab(qtbot, tab)
    assert [tab.table.item(r, 1).text() for r in range(2)] == ["the cat", "a dog"]
    table.write_text("id,other\n1,the cat\n", encoding="utf-8")  # the chosen column is gone
    run_tab(qtbot, tab, "error")
    assert "no column 'review'" in tab.message.text() and "'id', 'other'" in tab.message.text()


def test_compare_two_models_side_by_side(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, ClassificationTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"))
    second = checkpoint_factory("roberta", "SequenceClassification")
    tab.compare_source.set_source(str(second))
    tab.text.setPlainText("the cat sat on the mat")
    run_tab(qtbot, tab)
    outcome = tab.outcome
    assert outcome.second is not None and outcome.second_source == str(second)
    assert tab.bars.side_b.isVisibleTo(tab) and tab.bars.summary.isVisibleTo(tab)
    diff = outcome.diff[0]
    assert ("Top-1 changed" in tab.bars.summary.text()) == diff.top_changed
    top_b = outcome.second.first.top
    change = diff.delta_of(top_b.label).delta
    assert tab.bars.bars_b.labels[0].startswith(top_b.label)
    assert abs(change) < 0.0005 or f"{change:+.1%}" in tab.bars.bars_b.labels[0]
    # batch mode with comparison: B's columns in the table
    tab.modes.setCurrentIndex(1)
    tab.lines.setPlainText("the cat\nthe dog ran")
    run_tab(qtbot, tab)
    headers = [tab.table.horizontalHeaderItem(c).text() for c in range(tab.table.columnCount())]
    assert headers == ["#", "text", "label", "score", "label B", "score B", "changed"]
    tab.compare_source.set_source(None)
    run_tab(qtbot, tab)
    assert tab.table.columnCount() == 4 and not tab.bars.side_b.isVisibleTo(tab)


def test_batch_table_shows_ten_rows_at_the_default_size(qtbot, window, checkpoint_factory, tmp_path) -> None:
    """At 1280x800 the batch table shows at least 10 rows, in input order; a binary file is one message."""
    tab = tab_of(window, ClassificationTab)
    window.resize(1280, 800)
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"))
    tab.modes.setCurrentIndex(1)
    texts = [f"row {i} about {word}" for i, word in enumerate("zebra apple mango kiwi fig lime pear plum date yam "
                                                             "oat rye".split())]
    tab.lines.setPlainText("\n".join(texts))
    run_tab(qtbot, tab)
    qtbot.wait(50)
    assert tab.table.visible_rows() >= 10, tab.table.viewport().height()
    assert [tab.table.item(r, 1).text() for r in range(len(texts))] == texts
    assert [tab.table.item(r, 0).text() for r in range(3)] == ["1", "2", "3"]
    binary = tmp_path / "rows.csv"
    binary.write_bytes(bytes(range(256)) * 8)
    with qtbot.waitSignal(tab.file_runner.error, timeout=10_000):
        tab.open_table_file(str(binary))
    assert "rows.csv" in tab.message.text() and tab.notes.levels() == ("error",)


def test_state_restore_and_set_inputs(qtbot, window, tmp_path) -> None:
    from bertstudio.core.tasks.classification import ClassificationBatchInput, ClassificationInput

    tab = tab_of(window, ClassificationTab)
    tab.set_inputs(ClassificationInput("a", "b"))
    assert tab.inputs() == ClassificationInput("a", "b")
    single = tab.state()
    tab.set_inputs(ClassificationBatchInput(("x", "y")))
    assert tab.inputs() == ClassificationBatchInput(("x", "y"))
    batch = tab.state()
    tab.restore(single)
    assert tab.inputs() == ClassificationInput("a", "b")
    tab.restore(batch)
    assert tab.inputs() == ClassificationBatchInput(("x", "y")) and tab.state() == batch
    path = str(tmp_path / "t.csv")
    tab.set_inputs(ClassificationBatchInput(path=path, column="review"))
    assert tab.inputs() == ClassificationBatchInput(path=path, column="review")
    tab.restore(tab.state())
    assert tab.inputs() == ClassificationBatchInput(path=path, column="review")


def test_compare_classifiers_with_different_labels(qtbot, window, checkpoint_factory, real_models) -> None:
    """27 topics beside a 2-label head: B keeps its own labels and its 0-1 scale in sight (not two bars
    stretched to the height of 27), and the summary says the labels differ instead of "Top-1 changed"."""
    tab = tab_of(window, ClassificationTab)
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, real_models["categorium-bert-tiny-topics-en"])
    second = checkpoint_factory("bert", "SequenceClassification")
    tab.compare_source.set_source(str(second))
    tab.text.setPlainText("This pasta recipe with tomato sauce is ready in twenty minutes.")
    run_tab(qtbot, tab)
    bars_b = tab.bars.bars_b
    labels_b = [s.label for s in tab.outcome.second.first.scores]
    assert bars_b.labels == labels_b  # its own labels, none of them marked "(new)"
    assert bars_b.getPlotItem().getAxis("left")._tickLevels == [[(float(i), label) for i, label in enumerate(labels_b)]]
    assert bars_b.x_range() == (0.0, 1.0)
    assert bars_b.height() < tab.bars.bars_a.height() / 2  # sized to its 2 labels, scale visible
    summary = tab.bars.summary.text()
    assert "Top-1 changed" not in summary and "different labels" in summary
    assert not tab.outcome.diff[0].top_changed


def test_heads_off_side_by_side_like_a_compared_pair(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, ClassificationTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"))
    tab.modes.setCurrentIndex(0)
    tab.text.setPlainText("the cat sat on the mat")
    tab.set_ablated_heads(((0, 0), (1, 1)))
    run_tab(qtbot, tab)
    outcome = tab.outcome
    assert outcome.second is not None and outcome.second_source == "heads off: 0:0, 1:1"
    assert outcome.result.first.scores != outcome.second.first.scores  # the heads really were off
    assert tab.bars.side_b.isVisibleTo(tab) and "heads off" in tab.bars.title_b.text()
    tab.compare_source.set_source(str(checkpoint_factory("roberta", "SequenceClassification")))
    tab.run_button.click()  # both at once is refused before any work starts
    assert "not both" in tab.message.text() and tab.outcome is None
