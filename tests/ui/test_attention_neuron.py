"""The neuron view and the weights | value-weighted norms toggle: every view follows the one state,
exports carry the norms, compare compares norms; drawn from the worker's captures only."""

from __future__ import annotations

import os

import numpy as np
from PySide6.QtCore import QPointF, Qt

from bertstudio.core.tasks.attention.qk import query_breakdown
from bertstudio.ui.tabs.attention_tab import AttentionTab
from tests.ui.conftest import load_model_in, only_tabs, run_tab, tab_of

window_tabs = only_tabs("attention_tab")  # these tests drive the attention tab only

SHOTS = os.environ.get("BERTSTUDIO_SHOTS")  # a folder: save what the test drew, to look at


def _grab(widget, name: str) -> None:  # noqa: ANN001
    if SHOTS:
        widget.grab().save(os.path.join(SHOTS, name))


def _run(qtbot, tab, text: str, pair: str = "") -> None:  # noqa: ANN001
    tab.text.setPlainText(text)
    tab.pair.setText(pair)
    run_tab(qtbot, tab)


def test_neuron_view_steps_queries_and_explains_a_key(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, AttentionTab)
    window.resize(1280, 800)
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, checkpoint_factory("albert", "Model"))
    _run(qtbot, tab, "the cat sat on the mat .")
    result = tab.result
    assert result.vectors is not None and result.value_gram is not None  # captured by the worker's run
    tab.open_head(1, 0)
    tab.views.setCurrentWidget(tab.neuron_page)
    page = tab.neuron_page
    assert page.query == 1
    parts = query_breakdown(result.vectors, 1, 0, 1)
    np.testing.assert_array_equal(page.plots.images[page.plots.products].image, parts.products)
    np.testing.assert_allclose(page.parts.weights, result.attentions[1, 0, 1], atol=1e-6)
    # Down steps the query token; the plots show its row of the head
    qtbot.keyClick(page.plots, Qt.Key.Key_Down)
    assert page.query == 2
    np.testing.assert_allclose(page.parts.weights, result.attentions[1, 0, 2], atol=1e-6)
    # Right: the next head (the state's, shared with every view)
    qtbot.keyClick(page.plots, Qt.Key.Key_Right)
    assert (tab.view_state.layer, tab.view_state.head, tab.head.value()) == (1, 1, 1)
    np.testing.assert_allclose(page.parts.weights, result.attentions[1, 1, 2], atol=1e-6)
    # hovering a key highlights its row and names its score, weight and top dimensions
    plot = page.plots.scores
    key = 3
    qtbot.waitUntil(lambda: (qtbot.mouseMove(page.plots.viewport(), page.plots.mapFromScene(
        plot.vb.mapViewToScene(QPointF(0.0, key)))), page.plots.hovered_key == key)[1], timeout=5_000)
    text = page.readout.text()
    assert f"key {result.tokens[key]!r}" in text and f"{page.parts.scores[key]:.3f}" in text and "dim " in text
    assert page.plots.bands[0].isVisible() and page.plots.bands[0].getRegion() == (key - 0.5, key + 0.5)
    _grab(window, "neuron.png")


def test_value_weighted_norms_in_every_view_export_and_compare(qtbot, window, checkpoint_factory, tmp_path) -> None:
    tab = tab_of(window, AttentionTab)
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    tab.compare_source.set_source(str(checkpoint_factory("bert", "MaskedLM")))
    _run(qtbot, tab, "the cat sat", "a dog ran")
    result, comparison = tab.result, tab.bundle.comparison
    assert tab.grid.column_labels[-1] == "mean"
    tab.weighting.setCurrentText("value-weighted norms")
    assert tab.view_state.norms and tab.grid.column_labels[-1] == "sum"
    np.testing.assert_array_equal(tab.bundle.norm_thumbnails[:, :-1], result.norms)  # no pooling at this length
    np.testing.assert_array_equal(tab.bundle.norm_thumbnails[:, -1], result.summed_norms)
    tab.open_head(1, 0)
    np.testing.assert_array_equal(tab.heatmap.image.image, result.norms[1, 0])
    assert tab.heatmap.bar.levels()[1] == np.float32(result.norms[1, 0].max())  # its own scale, not 0-1
    tab.source.setCurrentText("layer mean")
    np.testing.assert_array_equal(tab.heatmap.image.image, result.summed_norms[1])
    tab.source.setCurrentText("head")
    tab.hide_special.setChecked(True)  # a norm is a size: hidden tokens leave, rows are not rescaled
    keep = [i for i, s in enumerate(result.special) if not s]
    np.testing.assert_array_equal(tab.heatmap.image.image, result.norms[1, 0][np.ix_(keep, keep)])
    tab.hide_special.setChecked(False)
    # the head view draws the norms (relative to the largest shown)
    tab.views.setCurrentWidget(tab.head_page)
    drawn = tab.head_view.matrices[0][1]
    np.testing.assert_allclose(drawn, result.norms[1, 0] / result.norms[1, 0].max(), rtol=1e-6)
    # compare: mean |B - A| of the norms, and B - A of one head's norms
    tab.views.setCurrentWidget(tab.compare_page)
    expected = np.abs(comparison.result.norms - result.norms).mean(axis=(-2, -1))
    np.testing.assert_allclose(tab.compare_summary.image.image, expected, rtol=1e-6)
    tab.compare_page.open_difference(1, 1)
    np.testing.assert_allclose(tab.compare_diff.image.image, comparison.result.norms[1, 1] - result.norms[1, 1],
                               atol=1e-6)
    # exports: the head's CSV is the matrix shown, the .npz and long CSV carry the norms
    tab.views.setCurrentWidget(tab.detail_page)
    from bertstudio.core.tasks.attention.export import load_matrix_csv

    tab.export(tmp_path / "head.csv", "csv-head")
    np.testing.assert_allclose(load_matrix_csv(tmp_path / "head.csv")[0], result.norms[1, 0], rtol=1e-6)
    with qtbot.waitSignal(tab.export_bar.runner.result, timeout=30_000):
        tab.export(tmp_path / "all.npz", "npz-all")
    with np.load(tmp_path / "all.npz") as saved:
        np.testing.assert_array_equal(saved["norms"], result.norms)
    with qtbot.waitSignal(tab.export_bar.runner.result, timeout=30_000):
        tab.export(tmp_path / "all.csv", "csv-all")
    lines = (tmp_path / "all.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0].endswith(",weight,norm") and len(lines) == 1 + result.attentions.size
    # the state is saved with the workspace and comes back
    saved_state = tab.state()
    tab.weighting.setCurrentText("weights")
    tab.restore(saved_state)
    assert tab.weighting.currentText() == "value-weighted norms" and tab.view_state.norms
    tab.views.setCurrentWidget(tab.grid_page)
    _grab(window, "value-weighted.png")


def test_export_bar_does_not_import_the_tab() -> None:
    """The tab <-> export bar import circle (issue 18) is gone."""
    import ast
    from pathlib import Path

    import bertstudio.ui.widgets.attention_export_bar as bar

    tree = ast.parse(Path(bar.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not any(name and name.startswith("bertstudio.ui.tabs") for name in imported)
