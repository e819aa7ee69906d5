"""The head view at 512 tokens: thinned labels that never overlap, scroll and zoom, a kept focus,
a colour legend, and a bounded number of lines drawn."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QImage, QPainter

from bertstudio.core.tasks.attention.bundle import LINE_BUDGET
from bertstudio.ui.widgets.attention_head_view import VISIBLE_TOKENS, HeadView, head_colour
from tests.ui.conftest import only_tabs

window_tabs = only_tabs("attention_tab")  # these tests drive the attention tab only

T = 512


def _peaked(heads: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(heads, T, T)).astype(np.float32) * 4
    att = np.exp(logits - logits.max(-1, keepdims=True))
    return att / att.sum(-1, keepdims=True)


def _label_rects(axis) -> list:  # noqa: ANN001
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    specs = axis.generateDrawSpecs(painter)
    painter.end()
    return sorted((rect for rect, _flags, _text in specs[2]), key=lambda r: r.top())


def _no_overlap(rects: list) -> bool:
    return all(a.bottom() <= b.top() + 0.5 for a, b in zip(rects, rects[1:], strict=False))


def test_head_view_at_512_tokens(qtbot) -> None:
    view = HeadView()
    qtbot.addWidget(view)
    view.resize(900, 650)
    view.show()
    qtbot.waitExposed(view)
    tokens = [f"w{i}" for i in range(T)]
    att = _peaked(12)
    view.set_heads(tokens, tokens, [(h, att[h]) for h in range(12)])
    qtbot.waitUntil(lambda: view.complete, timeout=5_000)  # lines found a few heads per event-loop turn
    # at first ~40 tokens are in view, every label shown, none overlapping
    low, high = view.visible_rows()
    assert high - low == VISIBLE_TOKENS
    for axis in (view.left_axis, view.right_axis):
        rects = _label_rects(axis)
        assert len(rects) == VISIBLE_TOKENS and _no_overlap(rects)
    drawn, total = view.drawn
    assert 0 < drawn <= LINE_BUDGET and total >= drawn
    # zoomed out to every token: labels thinned (every k-th), still none overlapping, lines within budget
    view.zoom(T)
    qtbot.waitUntil(lambda: view.visible_rows()[1] - view.visible_rows()[0] > T - 2, timeout=5_000)
    qtbot.waitUntil(lambda: 10 < len(_label_rects(view.left_axis)) < T / 4, timeout=20_000)  # axes follow the view
    assert _no_overlap(_label_rects(view.left_axis))
    view._draw_lines()
    drawn, total = view.drawn
    assert drawn <= LINE_BUDGET < total
    # scroll: rows 300.. in view; a kept focus on token 450 scrolls it into view and shows only its lines
    view.zoom(VISIBLE_TOKENS)
    view.scroll_to(300)
    assert abs(view.visible_rows()[0] - 300) < 1
    texts = []
    view.hovered.connect(texts.append)
    view.pin((0, 450))
    low, high = view.visible_rows()
    assert low <= 450 <= high and "w450 as query" in texts[-1]
    xs, ys = view._highlight.getData()
    expected = np.flatnonzero(att[0, 450] >= 0.02).size + sum(
        np.flatnonzero(att[h, 450] >= 0.02).size for h in range(1, 12))
    assert len(xs) == 2 * expected and set(ys[0::2]) == {450.0}


def test_head_list_is_a_colour_legend(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.ui.tabs.attention_tab import AttentionTab
    from tests.ui.conftest import load_model_in, run_tab, tab_of

    tab = tab_of(window, AttentionTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    tab.text.setPlainText("the cat sat on the mat")
    run_tab(qtbot, tab)
    tab.views.setCurrentWidget(tab.head_page)
    for head in range(tab.result.heads):
        item = tab.head_list.item(head)
        colour = item.icon().pixmap(14, 14).toImage().pixelColor(7, 7).name()
        assert colour == head_colour(head) and item.text() == f"head {head}"
    # ticking a head in the legend writes the state; the head view draws both heads
    from PySide6.QtCore import Qt

    tab.head_list.item(1).setCheckState(Qt.CheckState.Checked)
    assert tab.view_state.heads_shown == (0, 1)
    assert [head for head, _m in tab.head_view.matrices] == [0, 1]
    # a click on a token keeps its lines (the state's focus, in positions of the full input)
    tab.head_page._focus_clicked((1, 2))
    assert tab.view_state.focus == (1, 2) and tab.head_view.pinned == (1, 2)
    tab.head_page._focus_clicked(None)
    assert tab.view_state.focus is None and tab.head_view.pinned is None


def test_head_view_and_detail_show_one_head(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    """The issue: the Head view opened on head 0 while the Detail spin box said head 1 (or 2)."""
    from PySide6.QtCore import Qt

    from bertstudio.ui.tabs.attention_tab import AttentionTab
    from tests.ui.conftest import load_model_in, run_tab, tab_of

    tab = tab_of(window, AttentionTab)
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    tab.text.setPlainText("the cat sat on the mat")
    run_tab(qtbot, tab)
    tab.views.setCurrentWidget(tab.detail_page)
    tab.head.setValue(1)  # the Detail spin box
    tab.views.setCurrentWidget(tab.head_page)
    assert tab.view_state.heads_shown == (1,)
    assert [head for head, _m in tab.head_view.matrices] == [1]
    assert tab.head_list.item(1).checkState() == Qt.CheckState.Checked
    assert tab.head_list.item(0).checkState() == Qt.CheckState.Unchecked
    # ticking a second head keeps both; unticking the detail's head moves the detail to the one left
    tab.head_list.item(0).setCheckState(Qt.CheckState.Checked)
    assert tab.view_state.heads_shown == (0, 1) and tab.head.value() == 1
    tab.head_list.item(1).setCheckState(Qt.CheckState.Unchecked)
    assert tab.view_state.heads_shown == (0,) and tab.head.value() == 0
