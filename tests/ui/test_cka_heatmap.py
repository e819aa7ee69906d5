"""The Evaluate tab's Compression page (issue 33): the linear CKA heatmap (an ImageItem with axes "layer
of A" / "layer of B" and a 0-1 colour bar), salience agreement, size and speed; Measure runs in a
worker on the shown comparison."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bertstudio.ui.widgets.cka_heatmap import CkaHeatmap, CompressionPage
from tests.ui.conftest import evaluate_tab

DATA = Path(__file__).resolve().parents[1] / "data" / "evaluate" / "sentiment_heldout.csv"


def test_heatmap_draws_a_rectangular_matrix_with_labelled_axes(qtbot) -> None:  # noqa: ANN001
    view = CkaHeatmap()
    qtbot.addWidget(view)
    item = view.plot.getPlotItem()
    # before a measurement: a sentence, no axes or colour bar over nothing (issue 29 #21)
    assert view.empty.isVisible() and not item.getAxis("left").isVisible() and not view.colour_bar.isVisible()
    matrix = np.array([[1.0, 0.2, 0.1, 0.0], [0.3, 0.9, 0.4, 0.2], [0.1, 0.5, 0.8, 0.95]])
    view.set_matrix(matrix)
    assert item.getAxis("left").labelText == "layer of A" and item.getAxis("bottom").labelText == "layer of B"
    assert view.image.image.shape == (3, 4) and view.colour_bar.levels() == (0.0, 1.0)
    written = [t.textItem.toPlainText() for t in view.texts]
    assert len(written) == 12 and written[0] == "1.00*" and written[11] == "0.95*" and written[1] == "0.20"
    assert not view.empty.isVisible() and item.getAxis("left").isVisible() and view.colour_bar.isVisible()
    view.clear()
    assert view.texts == [] and view.matrix is None
    assert view.empty.isVisible() and not item.getAxis("bottom").isVisible()


def test_compression_page_after_a_real_comparison(qtbot, settings, checkpoint_factory) -> None:  # noqa: ANN001
    tab = evaluate_tab(qtbot, settings)
    teacher = checkpoint_factory("bert", "SequenceClassification")
    student = checkpoint_factory("distilbert", "SequenceClassification")
    page: CompressionPage = tab.compression_page
    assert not page.measure.isEnabled()  # nothing compared yet
    tab.compare_source.enabled.setChecked(True)
    tab.compare_source.combo.setEditText(str(student))
    tab.limit.setValue(6)
    with qtbot.waitSignal(tab.runner.finished, timeout=120_000):
        tab.open_evaluation(str(teacher), str(DATA), "classification")
    assert tab.comparison is not None and page.measure.isEnabled()
    with qtbot.waitSignal(tab.compression_runner.result, timeout=120_000):
        page.measure.click()
    report = page.report
    assert report is not None and report.cka.shape == (3, 3) and page.heatmap.image.image.shape == (3, 3)
    records = page.table.source_model.records
    assert [r[0] for r in records] == ["parameters", "size on disk", "size in memory", "rows/s (evaluate)",
                                       "rows/s (forward)"]
    assert "salience agreement (grad-x-input" in page.summary.text() and "Linear CKA on 6 rows" in page.status.text()
    tab.compare_source.enabled.setChecked(False)
    with qtbot.waitSignal(tab.runner.finished, timeout=120_000):
        tab.run()
    assert page.report is None and not page.measure.isEnabled() and page.heatmap.matrix is None
