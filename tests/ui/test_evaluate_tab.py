"""Evaluate tab: a real model on a labelled file in a worker, every result page, a clicked confusion
cell, double-click to open a row, compare, the projector, cancel, bad input, and 10,000 rows."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from bertstudio.core.evaluate.evaluation import Evaluation, RowResult, Slice
from bertstudio.core.evaluate.metrics import ClassScores, Confusion
from bertstudio.ui.tabs.evaluate_tab import EvaluateTab
from tests.ui.conftest import evaluate_tab, with_tabs

DATA = Path(__file__).resolve().parents[1] / "data" / "evaluate"


@pytest.fixture
def tab(qtbot, settings) -> EvaluateTab:  # noqa: ANN001
    return evaluate_tab(qtbot, settings)


def _evaluate(qtbot, tab: EvaluateTab, model: Path, data: Path, task: str = "classification") -> None:  # noqa: ANN001
    with qtbot.waitSignal(tab.runner.finished, timeout=120_000):
        tab.open_evaluation(str(model), str(data), task)


def test_registered_as_a_tab_with_its_own_key() -> None:
    from bertstudio.ui.tabs import tab_classes

    classes = tab_classes(["evaluate_tab"])
    assert classes == [EvaluateTab] and EvaluateTab.TASK == "evaluate"


def test_picker_lists_exactly_the_specs_with_an_evaluate_adapter(tab: EvaluateTab) -> None:
    """Issue 18: the picker is derived from the specs (a task with an adapter is offered, no other)."""
    from bertstudio.core.tasks.spec import all_specs

    combo = tab.task_combo
    listed = [(combo.itemData(i), combo.itemText(i)) for i in range(combo.count())]
    assert listed == [(key, spec.evaluate.picker) for key, spec in all_specs().items() if spec.evaluate is not None]
    assert len(listed) >= 6 and tab.model_bar.task == tab.task_key == listed[0][0]


def test_evaluates_a_real_model_and_renders_every_page(qtbot, tab: EvaluateTab, real_models) -> None:  # noqa: ANN001
    topics = real_models["categorium-bert-tiny-topics-en"]
    tab.compare_source.enabled.setChecked(True)
    tab.compare_source.combo.setEditText(str(topics))
    _evaluate(qtbot, tab, topics, DATA / "topics.csv")
    result = tab.evaluation
    assert result is not None and result.n == 16 and tab.comparison is not None
    metrics = tab.metrics_page.metrics.source_model.records
    assert ("accuracy", result.metrics["accuracy"]) in metrics
    assert {s.by for s in result.slices} >= {"label", "length", "column:source"}
    assert tab.metrics_page.slices.visible_rows() == len(result.slices)
    tab.metrics_page.slice_filter.setText("column:source")
    assert tab.metrics_page.slices.visible_rows() == 3  # ads, blog, news
    # a confusion cell lists its rows
    labels = list(result.confusion.labels)
    row, column = labels.index("autos"), labels.index("sensitive subject")
    tab.confusion_page.matrix.click_cell(row, column)
    count = result.confusion.matrix[row][column]
    assert count > 0 and tab.confusion_page.cell_rows.visible_rows() == count
    # the error browser: errors only, filter, double-click opens the row as the task's input
    errors = tab.errors_page
    assert errors.table.visible_rows() == len(result.errors)
    errors.filter.setText("striker")
    assert errors.table.visible_rows() == 1
    with qtbot.waitSignal(tab.open_row) as opened:
        errors.table.doubleClicked.emit(errors.table.model().index(0, 0))
    key, source, inputs = opened.args
    assert key == "classification" and source == str(topics)
    assert inputs.text == "the striker scored twice as the team won the championship final"
    errors.errors_only.setChecked(False)
    errors.filter.setText("")
    assert errors.table.visible_rows() == 16
    # the same model twice: nothing differs, and the page says why that is no evidence
    assert "McNemar p = 1" in tab.compare_page.summary.text()
    assert tab.compare_page.disagreements.visible_rows() == 0
    # the projector
    with qtbot.waitSignal(tab.projector_runner.finished, timeout=60_000):
        tab.projector_page.compute.click()
    plot = tab.projector_page.plot
    assert plot.points.shape == (16, 2) and len(set(plot.categories)) == 8  # coloured by gold
    tab.projector_page.colour.setCurrentText("correct")
    assert set(plot.categories) == {"right", "wrong"}
    plot.select([0, 3])
    assert tab.projector_page.chosen.visible_rows() == 2
    assert "2 rows" not in tab.projector_page.status.text() and "16 rows" in tab.projector_page.status.text()


def test_ner_on_conll_and_pretraining_opens_fill_mask(qtbot, tab: EvaluateTab, real_models) -> None:  # noqa: ANN001
    from tests.fixtures.trained_nsp_ner import trained_ner

    _evaluate(qtbot, tab, trained_ner(real_models["all-minilm-l6-v2"]), DATA / "ner_heldout.conll", "ner")
    assert tab.task_key == "ner" and tab.evaluation.task == "ner"
    assert {r[0] for r in tab.metrics_page.per_label.source_model.records} == {"LOC", "PER"}
    assert not tab.pages.isTabEnabled(tab.pages.indexOf(tab.confusion_page))
    _evaluate(qtbot, tab, real_models["rxnmapper-albert-smiles-mlm"], DATA / "smiles.txt", "pretraining")
    assert tab.task_key == "fill-mask" and "pseudo_perplexity" in tab.evaluation.metrics


def test_bad_input_is_one_note_naming_the_line(qtbot, tab: EvaluateTab, tmp_path: Path, real_models) -> None:  # noqa: ANN001
    tab.model_bar.source.setEditText(str(real_models["categorium-bert-tiny-topics-en"]))
    tab.run()
    assert "Choose a labelled file" in tab.notes.text()
    bad = tmp_path / "bad.csv"
    bad.write_text("text,label\nfine,food\n,food\n", encoding="utf-8")
    with qtbot.waitSignal(tab.runner.finished, timeout=60_000):
        tab.open_evaluation(str(real_models["categorium-bert-tiny-topics-en"]), str(bad), "classification")
    assert "line 3: empty text" in tab.notes.text() and tab.evaluation is None


def test_cancel_stops_the_run(qtbot, tab: EvaluateTab, tmp_path: Path, real_models) -> None:  # noqa: ANN001
    big = tmp_path / "big.csv"
    with big.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        writer.writerows([(f"a cheap flight and hotel for a holiday number {i}", "travel") for i in range(3000)])
    tab.task_combo.setCurrentIndex(tab.task_combo.findData("classification"))
    tab.model_bar.source.setEditText(str(real_models["categorium-bert-tiny-topics-en"]))
    tab.data_file.setText(str(big))
    fractions: list[float] = []

    def first_batch(event) -> None:  # noqa: ANN001 - the first scored batch, not the model's "Loaded" (1.0)
        if event.fraction and event.message.startswith("Classified") and not fractions:
            fractions.append(event.fraction)
            tab.cancel()

    tab.runner.progress.connect(first_batch)
    with qtbot.waitSignal(tab.runner.cancelled, timeout=120_000):
        tab.run()
    qtbot.waitUntil(lambda: tab.run_button.isEnabled(), timeout=30_000)
    assert fractions and fractions[0] < 0.5 and tab.evaluation is None


def _synthetic(rows: int) -> Evaluation:
    rng = np.random.default_rng(0)
    labels = ("negative", "neutral", "positive")
    gold = rng.integers(0, 3, rows)
    predicted = np.where(rng.random(rows) < 0.8, gold, rng.integers(0, 3, rows))
    results = tuple(RowResult(i, i + 2, f"row {i} says something rather long about item {i % 97}", labels[g],
                              labels[p], float(rng.random()), bool(g == p), 9)
                    for i, (g, p) in enumerate(zip(gold, predicted, strict=True)))
    matrix = tuple(tuple(int(((gold == a) & (predicted == b)).sum()) for b in range(3)) for a in range(3))
    return Evaluation("classification", "model", "file.csv", {"accuracy": float((gold == predicted).mean())},
                      results, {k: ClassScores(0.8, 0.8, 0.8, rows // 3) for k in labels}, Confusion(labels, matrix),
                      (Slice("label", "neutral", rows // 3, {"accuracy": 0.8}),))


def test_ten_thousand_rows_stay_responsive(qtbot, tab: EvaluateTab) -> None:  # noqa: ANN001
    evaluation = _synthetic(10_000)
    from PySide6.QtWidgets import QTableView, QTableWidget, QWidget

    tab.show()
    tab.show_evaluation(evaluation)
    browser = tab.errors_page
    browser.errors_only.setChecked(False)
    table = browser.table
    assert table.visible_rows() == 10_000
    # what keeps it responsive (timings: bench/, on demand): a view over a model of plain tuples, no
    # widget per cell, and a sort the model does itself (one sorted(), not the proxy's lessThan per pair)
    assert isinstance(table, QTableView) and not isinstance(table, QTableWidget)
    assert len(table.findChildren(QWidget)) < 100  # a widget per cell would be 10,000s
    table.sortByColumn(4, table.horizontalHeader().sortIndicatorOrder())
    browser.filter.setText("item 42")
    assert 0 < table.visible_rows() < 10_000
    column = [record[4] for record in table.source_model.records]  # the model's own rows, not the proxy's view
    assert column in (sorted(column), sorted(column, reverse=True)) and column != [
        record[4] for record in sorted(table.source_model.records, key=lambda r: r[0])]
    gold, predicted = "positive", "negative"
    tab.confusion_page.show_cell(gold, predicted)
    assert tab.confusion_page.cell_rows.visible_rows() == evaluation.confusion.matrix[2][0]


def _top(widget) -> int:  # noqa: ANN001
    from PySide6.QtCore import QPoint

    return widget.mapTo(widget.window(), QPoint(0, 0)).y()


def _settle() -> None:
    from PySide6.QtWidgets import QApplication

    for _ in range(3):
        QApplication.sendPostedEvents()
        QApplication.processEvents()


def test_columns_row_keeps_its_place(qtbot, tab: EvaluateTab) -> None:  # noqa: ANN001
    """Issue 10: the Columns row appeared after a path was typed and everything below jumped."""
    tab.show()
    qtbot.waitExposed(tab)
    _settle()
    before = (_top(tab.run_button), _top(tab.progress_line), _top(tab.pages))
    tab.task_combo.setCurrentIndex(tab.task_combo.findData("classification"))
    tab.data_file.setText(str(DATA / "topics.csv"))
    tab.data_file.editingFinished.emit()
    _settle()
    assert set(tab.columns_row.combos) == {"text", "pair", "label"} and tab.columns_row.combos["text"].isVisible()
    assert (_top(tab.run_button), _top(tab.progress_line), _top(tab.pages)) == before
    tab.task_combo.setCurrentIndex(tab.task_combo.findData("ner"))  # no columns for CoNLL: the row stays
    _settle()
    assert not tab.columns_row.combos and (_top(tab.run_button), _top(tab.progress_line), _top(tab.pages)) == before


@with_tabs("evaluate_tab")
def test_compare_model_comes_back_with_the_workspace(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 11: after a restart Evaluate's compare model was not restored."""
    from bertstudio.ui import menus
    from tests.ui.test_workspace import _new_window

    evaluate = window.task_tabs["evaluate"]
    evaluate.model_bar.source.setEditText("/models/model-a")
    evaluate.compare_source.set_source("/models/model-b")
    path = tmp_path / "mine.bertstudio.json"
    menus.save_workspace(window, str(path))
    other = _new_window(qtbot, tmp_path / "other")
    try:
        with qtbot.waitSignal(other.workspace.restored, timeout=30_000):
            menus.open_workspace(other, str(path))
        restored = other.task_tabs["evaluate"]
        assert restored.compare_source.enabled.isChecked()
        assert restored.compare_source.source() == "/models/model-b"
        assert restored.model_bar.source_text() == "/models/model-a"
    finally:
        other.close()


def test_the_bar_shows_the_scored_model_and_a_later_model_marks_the_result_stale(  # noqa: ANN001
        qtbot, tab: EvaluateTab, real_models, checkpoint_factory) -> None:
    """Issue 29 #1 and #3: Train's Evaluate… scored one model while the bar showed another; a model
    loaded after an evaluation kept its metrics with no Out-of-date mark."""
    topics = real_models["categorium-bert-tiny-topics-en"]
    _evaluate(qtbot, tab, topics, DATA / "topics.csv")
    assert tab.model_info is not None and tab.model_info.request.source == str(topics) == tab.evaluation.model
    assert not tab.model_info.head_warning and not tab.stale_banner.isVisibleTo(tab)
    shown = tab.read_state().result  # the tab's state object knows what the figures came from
    assert shown is not None and (shown.model.source, shown.model.task) == (str(topics), "classification")
    assert shown.inputs == str(DATA / "topics.csv") and tab.read_state().stale_reason() == ""
    other = checkpoint_factory("bert", "SequenceClassification")
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.model_bar.load(str(other))
    assert tab.stale_banner.isVisibleTo(tab) and tab.stale_banner.reason == "model"
    assert tab.read_state().stale_reason() == "model"
    tab.model_bar.source.setEditText(str(topics))
    assert not tab.stale_banner.isVisibleTo(tab)  # Run would score the shown result's model again
    tab.data_file.setText(str(DATA / "sentiment_heldout.csv"))
    assert tab.stale_banner.reason == "input"  # the file: tab_state.changed names it as the input


def test_a_checkpoint_loads_as_the_task_it_was_trained_for(qtbot, tab: EvaluateTab, real_models) -> None:  # noqa: ANN001
    """Issue 29 #2: a classifier loaded while the task is Masked LM is scored as a classifier."""
    tab.task_combo.setCurrentIndex(tab.task_combo.findData("fill-mask"))
    topics = real_models["categorium-bert-tiny-topics-en"]
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.model_bar.load(str(topics))
    qtbot.waitUntil(lambda: tab.task_key == "classification" and tab.model_info is not None
                    and tab.model_info.request.task == "classification", timeout=60_000)
    assert not tab.model_info.head_warning and not tab.model_bar.warning_label.isVisibleTo(tab)
    assert "trained for it" in tab.message.text()


def test_the_erase_page_comes_back_with_the_workspace(qtbot, tab: EvaluateTab) -> None:  # noqa: ANN001
    """The layer, concept file and positions of the Erase page are the tab's state, not lost at a restart."""
    page = tab.erase_page
    page.layer.setMaximum(12)
    page.layer.setValue(5)
    page.concept.setText("/data/sentiment_concept.csv")
    page.positions.setCurrentIndex(page.positions.count() - 1)
    saved = tab.state()
    assert saved["erase"] == {"layer": 5, "concept": "/data/sentiment_concept.csv",
                              "positions": page.positions.currentData()}
    page.layer.setValue(0)
    page.concept.setText("")
    page.positions.setCurrentIndex(0)
    tab.restore(saved)
    assert (page.layer.value(), page.concept.text()) == (5, "/data/sentiment_concept.csv")
    assert page.positions.currentIndex() == page.positions.count() - 1
