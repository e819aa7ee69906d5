"""Issue 29, items 9, 11, 16 and 21: the log of a pinned edit, each compared side on its own scale and
in A's order, the Corpus page following a new run, empty views without meaningless axes, the Explain
A and B legend and the F1 help text."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QImage, QPainter

from bertstudio.ui.tabs.classification_tab import ClassificationTab
from tests.ui.conftest import load_model_in, only_tabs, run_tab, tab_of

window_tabs = only_tabs("classification_tab")


class _Diff:
    """The members of core.compare.RankingDiff that CompareBars reads."""

    top_changed, top_a, top_b, deltas, labels_note = False, "x", "x", (), ""

    def delta_of(self, label: str) -> None:
        return None


def tick_texts(plot, side: str = "bottom") -> list[str]:  # noqa: ANN001
    """The tick labels an axis draws (pyqtgraph leaves out the ones it hides)."""
    axis = plot.getPlotItem().getAxis(side)
    image = QImage(400, 60, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _rect, _flags, text in specs[2]] if specs else []


@pytest.fixture(scope="module")
def regression_model(checkpoint_factory, tmp_path_factory):  # noqa: ANN001, ANN201
    """A tiny random regression head (one output, problem_type regression)."""
    import torch
    import transformers

    source = checkpoint_factory("bert", "SequenceClassification")
    config = transformers.AutoConfig.from_pretrained(source)
    config.num_labels, config.problem_type = 1, "regression"
    config.id2label, config.label2id = {0: "score"}, {"score": 0}
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("regression")
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    transformers.AutoTokenizer.from_pretrained(source).save_pretrained(folder)
    return folder


def test_log_of_a_pinned_edit_speaks_of_the_edit(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    """Item 9: the log said 'first: negative 0.801' (the pin's result) after the edit ran."""
    tab = tab_of(window, ClassificationTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"))
    tab.text.setPlainText("a good film about the old city .")
    run_tab(qtbot, tab, idle=True)
    tab.pin_bar.pin_button.click()
    before = window.log.text().count("first:")
    tab.text.setPlainText("a bad film about the new city .")
    run_tab(qtbot, tab, idle=True)
    edit = tab.result.first.top
    assert window.log.text().count("first:") == before  # nothing about A (the pin) alone
    last = window.log.text().splitlines()[-1]
    assert "A: pinned, B: edit 1" in last and f"({edit.label} {edit.score:.3f}; A: " in last
    assert last.split("  ", 1)[1] == window.statusBar().currentMessage()


def test_regression_beside_a_classifier_each_on_its_own_scale(qtbot, window, regression_model,  # noqa: ANN001
                                                              checkpoint_factory) -> None:  # noqa: ANN001
    """Item 16: the classifier's probabilities were drawn on the regression's 'value' axis, no 0 tick."""
    tab = tab_of(window, ClassificationTab)
    load_model_in(qtbot, tab, regression_model)
    tab.compare_source.set_source(str(checkpoint_factory("bert", "SequenceClassification")))
    tab.text.setPlainText("a good film about the old city .")
    run_tab(qtbot, tab, idle=True)
    assert tab.outcome.result.kind == "regression" and tab.outcome.second.kind != "regression"
    a, b = tab.bars.bars_a, tab.bars.bars_b
    assert not a.probability and b.probability  # never a probability on a value axis
    assert a.getPlotItem().getAxis("bottom").labelText.startswith("regression score")
    assert b.getPlotItem().getAxis("bottom").labelText.startswith("probability (0 to 1)")
    assert b.getPlotItem().getViewBox().viewRange()[0] == [0.0, 1.0]
    low, high = a.x_range()
    score = float(a.values[0])
    assert low <= min(score, 0.0) and high >= max(score, 0.0)  # its own range, 0 inside
    assert high - low < 2 * abs(score) + 1e-9 or low < 0 < high  # not stretched to B's probabilities
    assert a.getPlotItem().getAxis("bottom").isVisible()
    qtbot.waitUntil(lambda: "0" in tick_texts(a), timeout=5_000)  # once laid out, the "0" is drawn
    assert "Different scales" in tab.bars.summary.text()


def test_value_axis_from_zero_keeps_its_zero_tick(qtbot) -> None:
    from bertstudio.ui.widgets.compare_panel import CompareBars

    compare = CompareBars()
    qtbot.addWidget(compare)
    compare.resize(600, 300)
    compare.set_regression(True)
    compare.show_two("A", "B", (["score"], [4.3]), (["score"], [0.3]), _Diff())
    assert compare.bars_a.x_range() == compare.bars_b.x_range()  # two regression scores: one scale
    low, high = compare.bars_a.x_range()
    assert -0.05 * high < low <= 0.0
    compare.show()
    qtbot.waitUntil(lambda: "0" in tick_texts(compare.bars_a), timeout=5_000)


def test_compared_sides_share_a_s_order(qtbot) -> None:
    """Item 21: B's bars were in B's own ranking, so a label sat on another row on each side."""
    from bertstudio.ui.widgets.compare_panel import CompareBars

    compare = CompareBars()
    qtbot.addWidget(compare)
    compare.show_two("pinned", "edit 1", (["cat", "dog", "eel"], [0.6, 0.3, 0.1]),
                     (["dog", "fox", "cat"], [0.5, 0.3, 0.2]), _Diff())
    assert [label.split(" (")[0] for label in compare.bars_b.labels] == ["cat", "dog", "fox"]
    assert list(compare.bars_b.values) == [0.2, 0.5, 0.3]  # each value stays with its label
    compare.show_two("model-a", "model-b", (["cat", "dog", "eel"], [0.6, 0.3, 0.1]),
                     (["dog", "fox", "cat"], [0.5, 0.3, 0.2]), _Diff())
    assert [label.split(" (")[0] for label in compare.bars_b.labels] == ["dog", "fox", "cat"]  # its own top-1 first


def test_empty_bars_say_what_comes_instead_of_an_axis(qtbot) -> None:
    """Item 21: Evaluate's explained rows showed a 0.1..1.1 axis of nothing before Explain."""
    from bertstudio.ui.widgets.eval_rows import ExplainRowsPanel

    panel = ExplainRowsPanel()
    qtbot.addWidget(panel)
    panel.show()
    item = panel.bars.getPlotItem()
    assert not any(item.getAxis(side).isVisible() for side in ("left", "bottom", "top"))
    assert panel.bars.placeholder.isVisible() and "Explain" in panel.bars.placeholder.textItem.toPlainText()
    panel.bars.set_items(["good", "film"], [0.4, 0.1])
    assert item.getAxis("left").isVisible() and item.getAxis("bottom").isVisible()
    assert not panel.bars.placeholder.isVisible()
    panel.clear()
    assert not item.getAxis("bottom").isVisible() and panel.bars.placeholder.isVisible()


def test_f1_help_names_each_tab_not_its_mnemonic(window) -> None:  # noqa: ANN001
    """Item 21: F1 listed 'Alt+- → a Evaluate' (the Go to tab menu's mnemonic before the title)."""
    from PySide6.QtGui import QKeySequence

    from bertstudio.ui import menus

    rows = menus.shortcut_rows(window)
    for index in range(window.tabs.count()):
        keys = QKeySequence(menus.TAB_KEYS[index]).toString(QKeySequence.SequenceFormat.NativeText)
        assert (keys, f"Go to tab → {window.tabs.tabText(index)}") in rows, rows


def test_explain_a_and_b_says_what_red_and_blue_mean(qtbot) -> None:
    """Item 21: Explain A and B coloured tokens red and blue with no legend."""
    from bertstudio.core.errors import InputError
    from bertstudio.ui.widgets.attribution_view import PinnedPairPanel, colour_of

    def no_edit():  # noqa: ANN202
        raise InputError("Pin an input, edit it and run.")

    panel = PinnedPairPanel(no_edit)
    qtbot.addWidget(panel)
    panel.show()
    legend = panel.legend.text()
    assert panel.legend.isVisible() and "red" in legend and "blue" in legend and "Difference B − A" in legend
    assert colour_of(1.0, 1.0) in legend and colour_of(-1.0, 1.0) in legend  # the tokens' own colours
