"""Issue 29, items 11 and 21 in the Attention tab: the Corpus page follows a new run at once, and the
model and detail views say what comes there instead of drawing empty axes before a run."""

from __future__ import annotations

from bertstudio.ui.tabs.attention_tab import AttentionTab
from bertstudio.ui.widgets.attention_corpus import CorpusPage
from tests.ui.conftest import load_model_in, only_tabs, run_tab, tab_of

window_tabs = only_tabs("attention_tab")


def _corpus_page(tab: AttentionTab) -> CorpusPage:
    return next(p for p in (tab.views.widget(i) for i in range(tab.views.count())) if isinstance(p, CorpusPage))


def test_empty_views_have_no_axes_until_a_run(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    tab = tab_of(window, AttentionTab)
    window.tabs.setCurrentWidget(tab)
    grid = tab.grid
    assert not grid.plot.getAxis("top").isVisible() and not grid.plot.getAxis("left").isVisible()  # no -0.4..0.4
    assert grid.empty.isVisible() and "Show attention" in grid.empty.textItem.toPlainText()
    tab.views.setCurrentWidget(tab.compare_page)  # no comparison yet: its hint, not two heatmaps' empty axes
    assert tab.compare_page.info.isVisible() and not tab.compare_page.maps.isVisible()
    tab.views.setCurrentWidget(tab.detail_page)
    assert tab.detail_page.empty.isVisible() and not tab.heatmap.isVisible()

    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    tab.text.setPlainText("the cat sat")
    run_tab(qtbot, tab, idle=True)
    assert not tab.detail_page.empty.isVisible() and tab.heatmap.isVisible()
    tab.views.setCurrentIndex(0)
    assert grid.plot.getAxis("top").isVisible() and grid.plot.getAxis("left").isVisible()
    assert not grid.empty.isVisible() and grid.layers == tab.result.layers


def test_corpus_page_follows_a_new_run_at_once(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    """Item 11: the Corpus page kept the previous sentence's tokens until the page was switched."""
    tab = tab_of(window, AttentionTab)
    window.tabs.setCurrentWidget(tab)
    page = _corpus_page(tab)
    tab.views.setCurrentWidget(page)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    tab.text.setPlainText("the river bank")
    run_tab(qtbot, tab, idle=True)
    qtbot.waitUntil(lambda: page.query_text == "the river bank", timeout=5_000)
    tab.text.setPlainText("play the old music")
    run_tab(qtbot, tab, idle=True)  # the page stays the one shown: no showEvent
    assert tab.views.currentWidget() is page
    qtbot.waitUntil(lambda: page.query_text == "play the old music", timeout=5_000)
    assert [t for _, t in page.query_tokens] == list(tab.result.tokens[1:-1])
    assert [page.token.itemText(i).split(": ", 1)[1] for i in range(page.token.count())] == \
        list(tab.result.tokens[1:-1])


def test_a_cleared_result_leaves_no_cells_of_the_old_model(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    """The model view kept the last run's cells after its result was cleared (another model loaded,
    an input error): a grid of numbers that no longer belonged to anything shown."""
    tab = tab_of(window, AttentionTab)
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    tab.text.setPlainText("the cat sat")
    run_tab(qtbot, tab, idle=True)
    assert tab.grid.layers == tab.result.layers and not tab.grid.empty.isVisible()
    load_model_in(qtbot, tab, checkpoint_factory("distilbert", "Model"))  # another model clears the result
    assert tab.result is None
    assert tab.grid.layers == 0 and tab.grid.empty.isVisible()
    assert not tab.grid.plot.getAxis("top").isVisible()


def test_the_model_view_keeps_room_for_each_layer_in_a_small_window(qtbot, window, real_models) -> None:  # noqa: ANN001
    """At 900x600 the 6-layer grid was squeezed to ~70 px and its L0..L5 labels ran together: each
    layer keeps ROW_MIN_PIXELS and the page scrolls instead."""
    from bertstudio.ui.widgets.attention_grid import ROW_MIN_PIXELS

    tab = tab_of(window, AttentionTab)
    window.tabs.setCurrentWidget(tab)
    window.resize(900, 600)
    load_model_in(qtbot, tab, real_models["all-minilm-l6-v2"])  # 6 layers x 12 heads, as the user saw it
    tab.text.setPlainText("The cat sat on the mat because it was tired.")
    run_tab(qtbot, tab, idle=True)
    tab.views.setCurrentIndex(0)
    qtbot.wait(1)
    assert tab.grid.height() >= ROW_MIN_PIXELS * tab.result.layers + 40
    # the wrapped options rows keep their height, so the views below are not pushed under their least
    # height (the hint under the grid was drawn over its last row)
    qtbot.waitUntil(lambda: tab.views.height() >= tab.views.minimumSizeHint().height(), timeout=3_000)
