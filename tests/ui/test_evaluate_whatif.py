"""Evaluate's dataset-level what if (issues 20, 21): the Curves page (PR and ROC, threshold tuner
with its 2 x 2 confusion matrix, keyboard), explaining the selected rows together, and nearest rows,
on the trained MiniLM sentiment head; the tuner at 100,000 rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QItemSelectionModel, Qt

from bertstudio.ui.tabs.evaluate_tab import EvaluateTab
from tests.ui.conftest import evaluate_tab

DATA = Path(__file__).resolve().parents[1] / "data" / "evaluate"


@pytest.fixture
def tab(qtbot, settings) -> EvaluateTab:  # noqa: ANN001
    return evaluate_tab(qtbot, settings)


def _select(view, rows: list[int]) -> None:  # noqa: ANN001
    model, selection = view.model(), view.selectionModel()
    selection.clearSelection()
    for row in rows:
        selection.select(model.index(row, 0), QItemSelectionModel.SelectionFlag.Select
                         | QItemSelectionModel.SelectionFlag.Rows)


def test_curves_tuner_and_row_tools_on_the_sentiment_head(qtbot, tab: EvaluateTab, real_models) -> None:  # noqa: ANN001
    from sklearn.metrics import confusion_matrix, f1_score, roc_auc_score

    from tests.fixtures.trained_sentiment import trained_sentiment

    model = trained_sentiment(real_models["all-minilm-l6-v2"])
    page = tab.curves_page
    with qtbot.waitSignals([tab.runner.finished, page.runner.finished], timeout=120_000):
        tab.open_evaluation(str(model), str(DATA / "sentiment_heldout.csv"), "classification")
    result = tab.evaluation
    assert tab.pages.isTabEnabled(tab.pages.indexOf(page)) and result.classes == ("negative", "positive")
    assert page.class_combo.currentText() == "positive" and not page.micro.isEnabled()
    truth = np.array([g == "positive" for g in result.golds])
    scores = result.probabilities[:, 1]
    assert page.view.curves.roc_auc == roc_auc_score(truth, scores)
    # the tuner: spin box, slider and keyboard agree; counts and F1 equal scikit-learn's
    page.spin.setValue(0.3)
    assert page.slider.value() == 300
    expected = confusion_matrix(truth, scores >= 0.3, labels=[False, True]).tolist()
    assert page.matrix.labels == ("negative", "positive") and page.matrix.counts.tolist() == expected
    records = dict(page.metrics.source_model.records)
    assert records["F1"] == pytest.approx(f1_score(truth, scores >= 0.3))
    page.slider.setFocus()
    qtbot.keyClick(page.slider, Qt.Key.Key_PageUp)
    assert page.spin.value() == pytest.approx(0.35) and page.at.threshold == pytest.approx(0.35)
    marker = page.markers[1].data
    assert (marker["x"][0], marker["y"][0]) == pytest.approx((page.at.fpr, page.at.recall))
    # explain the selected rows together
    rows = tab.errors_page
    rows.errors_only.setChecked(False)
    _select(rows.table, [0, 1, 2])
    assert rows.selected_rows() == [0, 1, 2]
    with qtbot.waitSignal(rows.explain_runner.finished, timeout=120_000):
        rows.explain_panel.explain_button.click()
    table = rows.explain_panel.table.source_model.records
    assert table and rows.explain_panel.bars.labels == [r[0] for r in table[:len(rows.explain_panel.bars.labels)]]
    assert "3 rows" in rows.explain_panel.status.text()
    # nearest rows of row 1: mean-pooled cosine, double-click opens one
    _select(rows.table, [1])
    rows.neighbours_panel.count.setValue(4)
    with qtbot.waitSignal(rows.neighbours_runner.finished, timeout=120_000):
        rows.neighbours_panel.find_button.click()
    found = rows.neighbours_panel.table
    assert found.visible_rows() == 4 and 1 not in [found.payload_at(i) for i in range(4)]
    assert rows.vectors is not None and rows.vectors.shape[0] == result.n
    with qtbot.waitSignal(tab.open_row) as opened:
        found.doubleClicked.emit(found.model().index(0, 0))
    assert opened.args[2].text == result.rows[found.payload_at(0)].text
    # Esc (the tab's cancel) stops a long explanation too
    _select(rows.table, list(range(result.n)))
    rows.explain_panel.method.setCurrentIndex(rows.explain_panel.method.findData("integrated-gradients"))
    with qtbot.waitSignal(rows.explain_runner.cancelled, timeout=60_000):
        rows.explain_panel.explain_button.click()
        tab.cancel()
    assert rows.explain_panel.status.text() == "Cancelled."


def test_tuner_at_a_hundred_thousand_rows(qtbot) -> None:  # noqa: ANN001
    """The tuner's work per threshold is a binary search on scores sorted once (a class pick, in a
    worker): moving it through 100,000 rows shows the same counts a full comparison gives."""
    from bertstudio.core.evaluate.curves import class_view
    from bertstudio.ui.widgets.eval_curves import CurvesPage

    rng = np.random.default_rng(0)
    rows = 100_000
    golds = np.where(rng.random(rows) < 0.3, "yes", "no").tolist()
    scores = np.clip(rng.normal(0.5, 0.2, rows) + 0.2 * (np.array(golds) == "yes"), 0, 1).astype(np.float32)
    probabilities = np.stack([1 - scores, scores], axis=1)
    page = CurvesPage()
    qtbot.addWidget(page)
    page.show_view(class_view(probabilities, ("no", "yes"), golds, "yes"))
    for position in (0, 137, 500, 999, 1000):
        page.slider.setValue(position)
        predicted = scores >= position / 1000
        truth = np.array(golds) == "yes"
        assert page.at.tp == int((predicted & truth).sum()) and page.at.fp == int((predicted & ~truth).sum())
        assert page.matrix.counts.sum() == rows


def test_the_threshold_box_takes_a_typed_value(qtbot) -> None:  # noqa: ANN001
    """Select all, type 0.515, Enter: the threshold is 0.515 (it became 0.000 while typing)."""
    from PySide6.QtCore import Qt

    from bertstudio.core.evaluate.curves import class_view
    from bertstudio.ui.widgets.eval_curves import CurvesPage

    scores = np.linspace(0.0, 1.0, 201, dtype=np.float32)
    golds = ["yes" if s > 0.5 else "no" for s in scores]
    page = CurvesPage()
    qtbot.addWidget(page)
    page.show_view(class_view(np.stack([1 - scores, scores], axis=1), ("no", "yes"), golds, "yes"))
    page.spin.setFocus()
    page.spin.selectAll()
    qtbot.keyClicks(page.spin, "0.515")
    assert page.spin.lineEdit().text() == "0.515"  # not "0.000" or "0.5|00" while typing
    qtbot.keyClick(page.spin, Qt.Key.Key_Return)
    assert page.spin.value() == pytest.approx(0.515) and page.at.threshold == pytest.approx(0.515)
    assert page.slider.value() == 515
