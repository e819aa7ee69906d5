"""Drive the attention tab: run, click a grid cell, hover, arrow keys, statistics, export."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt

from bertstudio.core.tasks.attention.export import load_matrix_csv, load_npz
from bertstudio.ui.tabs.attention_tab import AttentionTab
from tests.ui.conftest import load_model_in, only_tabs, run_tab, tab_of

window_tabs = only_tabs("attention_tab")  # these tests drive the attention tab only


def _viewport_pos(widget, plot, point: QPointF) -> QPoint:  # noqa: ANN001
    """Where a point in a plot's view coordinates is on the widget's viewport."""
    return widget.mapFromScene(plot.vb.mapViewToScene(point))


def _hover(qtbot, widget, point: QPointF, label, expected: str) -> None:  # noqa: ANN001
    """Move the mouse onto a cell until the readout says `expected`; the pointer is placed again
    on each try because the layout may still settle (the progress row hides after a run)."""
    def shown() -> bool:
        qtbot.mouseMove(widget.viewport(), _viewport_pos(widget, widget.plot, point))
        return label.text() == expected

    qtbot.waitUntil(shown, timeout=5_000)


def _run_text(qtbot, tab, text: str, pair: str = "") -> None:  # noqa: ANN001
    tab.text.setPlainText(text)
    tab.pair.setText(pair)
    run_tab(qtbot, tab)


def test_run_click_hover_keys_export(qtbot, window, real_models, tmp_path) -> None:
    tab = tab_of(window, AttentionTab)
    assert tab.ATTN_IMPLEMENTATION == "eager"
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, real_models["all-minilm-l6-v2"])
    _run_text(qtbot, tab, "The cat sat on the mat.", "It purred.")
    result = tab.result
    assert result.attentions.shape[:2] == (6, 12) and result.b_start is not None
    assert (tab.grid.layers, tab.grid.columns) == (6, 13)  # 12 heads + the mean column

    # click the cell of layer 3, head 7: the detail view shows that head
    qtbot.mouseClick(tab.grid.viewport(), Qt.MouseButton.LeftButton,
                     pos=_viewport_pos(tab.grid, tab.grid.plot, tab.grid.cell_center(3, 7)))
    assert tab.views.currentWidget() is tab.detail_page
    assert (tab.layer.value(), tab.head.value(), tab.source.currentText()) == (3, 7, "head")
    np.testing.assert_array_equal(tab.heatmap.image.image, result.attentions[3, 7])

    # hover: "query -> key: weight"
    q, k = 2, 4
    expected = f"{result.tokens[q]} -> {result.tokens[k]}: {result.attentions[3, 7, q, k]:.4f}"
    _hover(qtbot, tab.heatmap, QPointF(k, q), tab.readout, expected)

    # arrow keys move between heads, wrapping into the next layer
    qtbot.keyClick(tab.heatmap, Qt.Key.Key_Right)
    assert (tab.layer.value(), tab.head.value()) == (3, 8)
    qtbot.keyClick(tab.heatmap, Qt.Key.Key_Down)
    assert (tab.layer.value(), tab.head.value()) == (4, 8)
    np.testing.assert_array_equal(tab.heatmap.image.image, result.attentions[4, 8])

    # export: files that load back equal
    tab.export(tmp_path / "head.csv", "csv-head")
    matrix, queries, keys = load_matrix_csv(tmp_path / "head.csv")
    np.testing.assert_array_equal(matrix, result.attentions[4, 8])
    assert queries == keys == list(result.tokens)
    with qtbot.waitSignal(tab.export_bar.runner.result, timeout=30_000):
        tab.export(tmp_path / "all.npz", "npz-all")
    attentions, tokens = load_npz(tmp_path / "all.npz")
    np.testing.assert_array_equal(attentions, result.attentions)
    assert tokens == list(result.tokens)
    tab.export(tmp_path / "view.png", "png")
    assert (tmp_path / "view.png").stat().st_size > 1000


def test_options_statistics_and_head_view(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, AttentionTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    _run_text(qtbot, tab, "the cat sat", "a dog ran")
    result = tab.result
    b = result.b_start
    # quadrant A->B: queries of A, keys of B
    tab.quadrant.setCurrentText("A->B")
    tab.open_head(1, 0)
    np.testing.assert_array_equal(tab.heatmap.image.image, result.attentions[1, 0, :b, b:])
    assert "quadrant A->B" in tab.note.text()
    # hide specials, renormalised: rows sum to 1
    tab.quadrant.setCurrentText("all")
    tab.hide_special.setChecked(True)
    assert "[CLS]" not in tab.heatmap.query_tokens
    np.testing.assert_allclose(tab.heatmap.image.image.sum(-1), 1.0, atol=1e-5)
    tab.hide_special.setChecked(False)
    # rollout and layer mean in the detail view
    tab.source.setCurrentText("rollout")
    np.testing.assert_allclose(tab.heatmap.image.image, tab.bundle.rollout[1])
    # statistics: sortable, clicking a row opens its head
    tab.stats.sortItems(2, Qt.SortOrder.DescendingOrder)
    values = [float(tab.stats.item(r, 2).text()) for r in range(tab.stats.rowCount())]
    assert values == sorted(values, reverse=True) and len(values) == result.layers * result.heads
    layer, head = int(tab.stats.item(0, 0).text()), int(tab.stats.item(0, 1).text())
    tab.stats.cellClicked.emit(0, 3)
    assert (tab.layer.value(), tab.head.value(), tab.source.currentText()) == (layer, head, "head")
    # head view draws lines, hovering a token highlights its lines
    tab.views.setCurrentWidget(tab.head_page)
    assert tab.head_view.tokens == list(result.tokens) and tab.head_view.drawn[0] > 0
    with qtbot.waitSignal(tab.head_view.hovered, timeout=5_000):
        tab.head_view.focus(0, 1)
    assert result.tokens[1] in tab.head_readout.text()
    tab.colours.setCurrentText("magma")


def test_error_shown(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, AttentionTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    tab.text.setPlainText("   ")
    with qtbot.waitSignal(tab.runner.error, timeout=30_000):
        tab.run()
    assert "empty" in tab.message.text()


def test_grid_drawn_before_statistics(qtbot, window, checkpoint_factory) -> None:
    """The grid stage arrives as a progress payload and is drawn before the job returns."""
    from bertstudio.ui.tabs.attention_tab import GridStage

    tab = tab_of(window, AttentionTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    stages = []
    tab.runner.progress.connect(lambda event: stages.append(event.payload)
                                if isinstance(event.payload, GridStage) else None)
    _run_text(qtbot, tab, "the cat sat on the mat")
    assert len(stages) == 1 and stages[0].result is tab.result
    assert tab.bundle.statistics is not None and tab.bundle.rollout is not None
    assert (tab.grid.layers, tab.grid.columns) == (tab.result.layers, tab.result.heads + 1)
    # no pooling at this length: the mean column is exactly the layer mean
    np.testing.assert_allclose(tab.bundle.thumbnails[:, -1], tab.bundle.mean, atol=1e-6)


def test_compare_two_models(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, AttentionTab)
    window.tabs.setCurrentWidget(tab)
    folder_a, folder_b = checkpoint_factory("bert", "Model"), checkpoint_factory("bert", "MaskedLM")
    load_model_in(qtbot, tab, folder_a)
    tab.compare_source.set_source(str(folder_b))
    _run_text(qtbot, tab, "the cat sat", "a dog ran")
    comparison = tab.bundle.comparison
    result = tab.result
    assert comparison is not None and comparison.diff is not None and comparison.message == ""
    assert comparison.result.tokens == result.tokens
    np.testing.assert_allclose(comparison.diff.difference, comparison.result.attentions - result.attentions, atol=1e-7)
    # the layers x heads summary is the mean |B - A| per head
    np.testing.assert_allclose(tab.compare_summary.image.image, comparison.diff.mean_abs)
    assert tab.compare_summary.matrix.shape == (result.layers, result.heads)
    # its colour scale is 0 .. the largest mean |B - A| (not pyqtgraph's default 0 .. 1)
    np.testing.assert_allclose(tab.compare_summary.image.levels, (0.0, comparison.diff.mean_abs.max()), rtol=1e-6)

    # click the summary cell of layer 1, head 0: the difference matrix of that head, diverging around 0
    tab.views.setCurrentWidget(tab.compare_page)
    qtbot.waitUntil(lambda: tab.compare_summary.isVisible(), timeout=5_000)
    summary = tab.compare_summary
    qtbot.mouseClick(summary.viewport(), Qt.MouseButton.LeftButton,
                     pos=_viewport_pos(summary, summary.plot, QPointF(0, 1)))
    assert tab.compare_head == (1, 0)
    expected = comparison.result.attentions[1, 0] - result.attentions[1, 0]
    np.testing.assert_allclose(tab.compare_diff.image.image, expected, atol=1e-7)
    low, high = tab.compare_diff.image.levels
    assert low == pytest.approx(-high) and high == pytest.approx(np.abs(expected).max())

    # hover on the difference: "query -> key: B − A = ..." with both values
    q, k = 1, 2
    text = (f"{result.tokens[q]} -> {result.tokens[k]}: B − A = {expected[q, k]:+.4f} "
            f"(A {result.attentions[1, 0, q, k]:.4f}, B {comparison.result.attentions[1, 0, q, k]:.4f})")
    _hover(qtbot, tab.compare_diff, QPointF(k, q), tab.compare_readout, text)

    # the view options apply to the difference too
    tab.quadrant.setCurrentText("A->B")
    b = result.b_start
    np.testing.assert_allclose(tab.compare_diff.image.image, expected[:b, b:], atol=1e-7)


def test_compare_different_tokenizers_explained(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, AttentionTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    tab.compare_source.set_source(str(checkpoint_factory("roberta", "Model")))
    _run_text(qtbot, tab, "the cat sat")
    assert tab.bundle.comparison.diff is None
    assert "split the input differently" in tab.message.text()
    assert "split the input differently" in tab.compare_info.text()
    assert tab.grid.layers == tab.result.layers  # model A is still shown
    # comparing on, no second model chosen: a clear message, nothing run
    tab.compare_source.set_source(None)
    tab.compare_source.enabled.setChecked(True)
    tab.run()
    assert "second model" in tab.message.text()


# -- view state, navigation, selection, export off the GUI thread ----------------------------------
def test_state_drives_every_view_and_comes_back(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, AttentionTab)
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    _run_text(qtbot, tab, "the cat sat on the mat", "a dog ran")
    result = tab.result
    # the statistics table starts at the first layer, first head
    assert (tab.stats.item(0, 0).text(), tab.stats.item(0, 1).text()) == ("0", "0")
    assert tab.stats.item(tab.stats.rowCount() - 1, 0).text() == str(result.layers - 1)
    tab.view_state.update(layer=1, head=1)  # the table follows the state: that head's row is selected
    selected = tab.stats.selectionModel().selectedRows()
    assert [tab.stats.head_at(index.row()) for index in selected] == [(1, 1)]
    # one write to the state: the option widgets, the detail view and the grid follow, once each
    grid_draws = []
    tab.grid.image.sigImageChanged.connect(lambda: grid_draws.append(1))
    tab.view_state.update(layer=1, head=1, hide_special=True, colours="magma")
    assert (tab.layer.value(), tab.head.value(), tab.hide_special.isChecked()) == (1, 1, True)
    assert tab.colours.currentText() == "magma" and "[CLS]" not in tab.heatmap.query_tokens
    assert len(grid_draws) == 1
    # the controls write the state
    tab.quadrant.setCurrentText("A->B")
    assert tab.view_state.quadrant == "A->B"
    # next/previous head shortcuts: ] and [, Alt+Right and Alt+Left, wrapping into the next layer
    tab.views.setCurrentWidget(tab.detail_page)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)  # shortcuts reach the active window only
    tab.stats.setFocus()
    tab.view_state.update(layer=0, head=result.heads - 1)
    qtbot.keyClick(tab.stats, Qt.Key.Key_BracketRight)
    assert (tab.layer.value(), tab.head.value()) == (1, 0)
    qtbot.keyClick(tab.stats, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    assert (tab.layer.value(), tab.head.value()) == (0, result.heads - 1)
    qtbot.keyClick(tab.stats, Qt.Key.Key_BracketLeft)
    assert (tab.layer.value(), tab.head.value()) == (0, result.heads - 2)
    # a workspace: state() and restore() bring the inputs and every view choice back
    saved = tab.state()
    tab.view_state.update(layer=0, head=0, quadrant="all", hide_special=False, colours="viridis")
    tab.text.setPlainText("")
    tab.restore(saved)
    assert tab.text.toPlainText() == "the cat sat on the mat" and tab.pair.text() == "a dog ran"
    assert (tab.layer.value(), tab.head.value(), tab.quadrant.currentText()) == (0, result.heads - 2, "A->B")
    assert tab.hide_special.isChecked() and tab.colours.currentText() == "magma"


def test_grid_selects_heads_to_switch_off(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, AttentionTab)
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    _run_text(qtbot, tab, "the cat sat on the mat")
    seen = []
    tab.heads_selected.connect(seen.append)
    grid = tab.grid
    sent = []
    tab.heads_off_requested.connect(sent.append)
    qtbot.mouseClick(grid.viewport(), Qt.MouseButton.LeftButton,
                     pos=_viewport_pos(grid, grid.plot, grid.cell_center(1, 1)))
    # a plain click opens the head and selects nothing (issue: it switched the head off everywhere)
    assert (tab.layer.value(), tab.head.value()) == (1, 1) and tab.views.currentWidget() is tab.detail_page
    assert seen == [] and tab.view_state.selected == () and not tab.send_heads.isEnabled()
    tab.views.setCurrentWidget(tab.grid_page)
    qtbot.mouseClick(grid.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier,
                     pos=_viewport_pos(grid, grid.plot, grid.cell_center(0, 0)))
    qtbot.mouseClick(grid.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier,
                     pos=_viewport_pos(grid, grid.plot, grid.cell_center(1, 1)))
    assert seen[-1] == ((0, 0), (1, 1)) and tab.views.currentWidget() is tab.grid_page
    assert sent == []  # selecting sends nothing: only the explicit button does
    tab.send_heads.click()
    assert sent == [((0, 0), (1, 1))]
    assert "L0 H0, L1 H1" in tab.selection.text()
    xs, ys = grid.outline.getData()
    assert np.isnan(xs).sum() == 2  # two outlined cells
    qtbot.mouseClick(grid.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier,
                     pos=_viewport_pos(grid, grid.plot, grid.cell_center(1, 1)))
    assert seen[-1] == ((0, 0),)
    tab.clear_selection.click()
    assert seen[-1] == () and len(grid.outline.getData()[0]) == 0


def test_all_heads_export_runs_in_a_worker(qtbot, window, checkpoint_factory, tmp_path, monkeypatch) -> None:
    import threading

    from bertstudio.core.tasks.attention import export as attention_export

    tab = tab_of(window, AttentionTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    _run_text(qtbot, tab, "the cat sat on the mat")
    threads = []
    real_save = attention_export.save

    def recording_save(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        threads.append(threading.current_thread())
        return real_save(*args, **kwargs)

    monkeypatch.setattr(attention_export, "save", recording_save)
    progress = []
    tab.export_bar.runner.progress.connect(progress.append)
    for what, name in (("csv-all", "all.csv"), ("json", "all.json")):
        with qtbot.waitSignal(tab.export_bar.runner.result, timeout=30_000):
            tab.export(tmp_path / name, what)
        assert (tmp_path / name).stat().st_size > 0
    assert len(threads) == 2 and all(t is not threading.main_thread() for t in threads)
    assert progress and progress[-1].fraction == 1.0
    assert len((tmp_path / "all.csv").read_text().splitlines()) == 1 + tab.result.attentions.size


def test_detail_shows_every_query_label_at_20_tokens(qtbot, window, real_models) -> None:
    """At the default window size (1280x800) a 20-token input gets all its query labels."""
    from PySide6.QtGui import QImage, QPainter

    tab = tab_of(window, AttentionTab)
    window.resize(1280, 800)
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, real_models["all-minilm-l6-v2"])
    _run_text(qtbot, tab, "one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                     "fifteen sixteen seventeen eighteen")
    assert tab.result.length == 20
    tab.views.setCurrentWidget(tab.detail_page)
    axis = tab.heatmap.left

    def labels() -> list[str]:
        image = QImage(8, 8, QImage.Format.Format_ARGB32)
        painter = QPainter(image)
        texts = [text for _rect, _flags, text in axis.generateDrawSpecs(painter)[2]]
        painter.end()
        return texts

    qtbot.waitUntil(lambda: labels() == list(tab.result.tokens), timeout=20_000)  # once the layout settled


def test_heads_off_compares_intact_and_ablated(qtbot, window, checkpoint_factory) -> None:
    """The template's "heads off": B is model A with those heads switched off. A head's output is
    zeroed after its attention is computed, so its own layer's attention is unchanged; later
    layers read a changed input and attend differently."""
    tab = tab_of(window, AttentionTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    tab.heads_off.setText("0:0")
    _run_text(qtbot, tab, "the cat sat on the mat")
    comparison = tab.bundle.comparison
    assert comparison is not None and comparison.source == "heads off: 0:0" and comparison.diff is not None
    assert float(comparison.diff.mean_abs[0].max()) == 0.0
    assert float(comparison.diff.mean_abs[1:].max()) > 0.0
    assert "heads off: 0:0" in tab.compare_info.text()


def test_model_view_follows_the_dark_theme(qtbot, window, checkpoint_factory) -> None:
    """The all-layers grid (and the detail and head views) took a white background in the dark theme."""
    from bertstudio.core.tasks.attention.bundle import GAP_INDEX
    from bertstudio.ui import theme

    tab = tab_of(window, AttentionTab)
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    _run_text(qtbot, tab, "the cat sat on the mat")
    manager = theme.manager()
    try:
        manager.set_mode("dark", remember=False)
        for view in (tab.grid, tab.heatmap, tab.head_view):
            assert view.backgroundBrush().color().name() == theme.DARK.background, type(view).__name__
        assert tab.grid.plot.getAxis("left").textPen().color().name() == theme.DARK.foreground
        gap = tuple(int(v) for v in tab.grid.image.lut[GAP_INDEX][:3])
        assert "#{:02x}{:02x}{:02x}".format(*gap) == theme.DARK.background  # the gaps between cells too
        assert not tab.heatmap.plot.getAxis("bottom").label.isVisible()  # the hidden "key" caption stays hidden
        manager.set_mode("light", remember=False)
        assert tab.grid.backgroundBrush().color().name() == theme.LIGHT.background
    finally:
        manager.set_mode("system", remember=False)
