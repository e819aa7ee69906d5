"""The plot conventions, the theme, export, Copy as Python and the shortcuts, asserted on the widgets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QGuiApplication, QImage

from bertstudio.ui import menus, plot_style, theme
from tests.ui.conftest import load_model_in


class _Diff:
    """The two members of core.compare.RankingDiff that CompareBars reads."""

    top_changed, top_a, top_b, deltas = False, "x", "x", ()

    def delta_of(self, label: str) -> None:
        return None


def _x_range(plot) -> tuple[float, float]:  # noqa: ANN001
    low, high = plot.getPlotItem().getViewBox().viewRange()[0]
    return float(low), float(high)


@pytest.fixture(autouse=True)
def _light_again(qapp):  # noqa: ANN001, ANN202
    yield
    theme.manager().set_mode("light", remember=False)


def test_probabilities_on_fixed_0_1_axes(qtbot) -> None:
    from bertstudio.ui.widgets.compare_panel import CompareBars
    from bertstudio.ui.widgets.qa_scores_plot import QAScoresPlot
    from bertstudio.ui.widgets.ranked_bars import RankedBars

    bars = RankedBars()
    qtbot.addWidget(bars)
    bars.set_items(["IsNext", "NotNext"], [0.579, 0.421])  # NSP: 57.9 % must not fill the width
    assert _x_range(bars) == (0.0, 1.0)
    bars.set_items(["a", "b", "c"], [0.336, 0.334, 0.331])  # multiple choice: not "decisive"
    assert _x_range(bars) == (0.0, 1.0)
    compare = CompareBars()
    qtbot.addWidget(compare)
    compare.show_one(["cat", "dog"], [0.043, 0.003])
    assert _x_range(compare.bars_a) == (0.0, 1.0)
    qa = QAScoresPlot()
    qtbot.addWidget(qa)
    qa.set_scores(list("abcdef"), np.array([0.0, 0.0002, 0.0003, 0.0001, 0, 0]), np.full(6, 1 / 6))
    low, high = qa.getPlotItem().getViewBox().viewRange()[1]
    assert (low, high) == (0.0, 1.0)  # 0.0003 is drawn as what it is: nearly nothing


def test_compared_models_share_one_scale(qtbot) -> None:
    from bertstudio.ui.widgets.compare_panel import CompareBars

    compare = CompareBars()
    qtbot.addWidget(compare)
    compare.show_two("A", "B", (["cat", "dog"], [0.043, 0.01]), (["cat", "dog"], [0.003, 0.001]), _Diff())
    assert _x_range(compare.bars_a) == _x_range(compare.bars_b) == (0.0, 1.0)
    compare.set_value_format("{:.4g}", "value")  # a regression head: a value axis, shared
    compare.show_two("A", "B", (["score"], [4.3]), (["score"], [0.3]), _Diff())
    low, high = _x_range(compare.bars_a)
    assert (low, high) == _x_range(compare.bars_b)
    assert low <= 0.0 and high >= 4.3 and high < 10  # 4.3 and 0.3 keep their proportions
    compare.bars_b.set_items(["score"], [-2.0])  # the NSP tab sets each side itself
    assert _x_range(compare.bars_a) == _x_range(compare.bars_b) and _x_range(compare.bars_a)[0] < -2.0


def test_compared_titles_on_one_line(qtbot) -> None:
    """Model B's title sat 9 px below A's (B's column is a widget, whose layout had margins)."""
    from PySide6.QtCore import QPoint

    from bertstudio.ui.widgets.compare_panel import CompareBars

    compare = CompareBars()
    qtbot.addWidget(compare)
    compare.resize(900, 400)
    compare.show()
    compare.show_two("model-a", "model-b", (["cat", "dog"], [0.6, 0.3]), (["cat", "dog"], [0.5, 0.4]), _Diff())
    qtbot.waitUntil(lambda: compare.side_b.isVisible() and compare.title_b.height() > 0)
    a, b = (title.mapTo(compare, QPoint(0, 0)) for title in (compare.title_a, compare.title_b))
    assert a.y() == b.y()
    bars_a, bars_b = (bars.mapTo(compare, QPoint(0, 0)) for bars in (compare.bars_a, compare.bars_b))
    assert bars_a.y() == bars_b.y()


def test_no_si_prefix_on_any_axis(qtbot, window) -> None:
    import pyqtgraph as pg

    from bertstudio.ui.widgets.qa_scores_plot import QAScoresPlot

    qa = QAScoresPlot()
    qtbot.addWidget(qa)
    qa.set_scores(list("abc"), np.array([0.0001, 0.0003, 0.0002]), np.array([0.0003, 0.0001, 0.0]))
    plots = window.findChildren(pg.PlotWidget) + [qa]
    assert len(plots) > 1
    for plot in plots:
        for name in ("left", "bottom"):
            axis = plot.getPlotItem().getAxis(name)
            if plot in plot_style._STYLED:
                assert not axis.autoSIPrefix, (type(plot).__name__, name)
            assert "x0.001" not in axis.labelString() and "(m" not in axis.labelString()


def test_value_labels_never_say_zero_for_a_real_probability(qtbot) -> None:
    from bertstudio.ui.widgets.ranked_bars import RankedBars

    bars = RankedBars()
    qtbot.addWidget(bars)
    bars.set_items(["big", "mid", "tiny"], [0.9997, 0.579, 0.0003])
    assert [t.toPlainText() for t in bars._texts] == [">99.9 %", "57.9 %", "<0.1 %"]
    assert plot_style.format_probability(0.0) == "0 %" and plot_style.format_probability(1.0) == "100 %"
    assert plot_style.format_probability(0.0005) == "0.1 %"


def test_theme_switch_restyles_plots_and_is_remembered(qtbot, tmp_path: Path) -> None:
    from bertstudio.ui.widgets.compare_panel import CompareBars

    compare = CompareBars()
    qtbot.addWidget(compare)
    compare.show_one(["a"], [0.5])
    store = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    manager = theme.manager()
    manager.restore(store)
    manager.set_mode("light")
    light = compare.bars_a.backgroundBrush().color().name()
    light_bar = compare.bars_a._bars.opts["brush"]
    manager.set_mode("dark")
    assert compare.bars_a.backgroundBrush().color().name() == theme.DARK.background != light
    assert compare.bars_a._bars.opts["brush"] != light_bar
    assert QGuiApplication.palette().window().color().lightness() < 128  # the widgets too
    assert compare.bars_a._texts[0].color.name() == theme.DARK.foreground  # value labels readable
    assert store.value(theme.SETTINGS_KEY) == "dark"
    manager.set_mode("light", remember=False)
    manager.restore(store)  # the next start
    assert manager.mode == "dark" and manager.scheme() == "dark"


def test_view_menu_forces_the_theme(window) -> None:
    window.menus.theme_actions["dark"].trigger()
    assert theme.manager().scheme() == "dark"
    window.menus.theme_actions["system"].trigger()
    assert theme.manager().mode == "system"


def test_next_previous_tab_and_the_shortcut_list(window) -> None:
    start = window.tabs.currentIndex()
    menus.step_tab(window, 1)
    assert window.tabs.currentIndex() == (start + 1) % window.tabs.count()
    menus.step_tab(window, -1)
    assert window.tabs.currentIndex() == start
    rows = dict(menus.shortcut_rows(window))
    assert any("Next tab" in what for what in rows.values())
    assert any("Run the current tab" in what for what in rows.values())
    assert any("Copy as Python" in what for what in rows.values())
    if "attention" in window.task_tabs:  # the attention tab's head keys are listed too
        assert rows.get("]") == "Next head (Attention)"
    dialog = menus.show_shortcuts(window)
    from PySide6.QtWidgets import QTextBrowser

    listed = dialog.findChild(QTextBrowser).toPlainText()
    assert "Ctrl+Shift+C" in listed and "Next tab" in listed
    dialog.close()


@pytest.mark.parametrize("window_tabs", [()], ids=["fill-mask tab only"])
def test_copy_as_python_and_export_after_a_run(qtbot, window, checkpoint_factory, tmp_path: Path) -> None:
    folder = str(checkpoint_factory("bert"))
    tab = window.task_tabs["fill-mask"]
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, folder)
    with pytest.raises(Exception, match="no result"):
        from bertstudio.ui.export import export_tab

        export_tab(tab, tmp_path / "none.png")
    tab.text.setPlainText("the cat [MASK] on the mat .")
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run()
    script = menus.copy_as_python(window)
    assert script == QGuiApplication.clipboard().text()
    assert repr(folder) in script and "'the cat [MASK] on the mat .'" in script and "top_k=5" in script

    with qtbot.waitSignal(window.menus.export_runner.result, timeout=30_000):  # PNG encoding runs in a worker
        menus.export_result(window, str(tmp_path / "result"))  # no suffix: PNG
    tab.text.setPlainText("an edit made after the run [MASK] .")  # the export keeps the run's own input
    for name in ("result.svg", "result.json"):
        menus.export_result(window, str(tmp_path / name))
    image = QImage(str(tmp_path / "result.png"))
    assert not image.isNull() and image.width() > 100 and image.height() > 50
    assert "<svg" in (tmp_path / "result.svg").read_text(encoding="utf-8")
    exported = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))
    assert exported["result"] == tab.result.to_json()  # the CLI's --json form (tests/ui/test_export_json.py)
    # ...with the input it was computed from, not the text box as it is now (issue 29 #20)
    assert exported["inputs"]["text"] == "the cat [MASK] on the mat ." and exported["model"] == str(folder)
    assert exported["task"] == "fill-mask" and set(exported["settings"]) == {"heads_off", "compare"}


def test_system_scheme_is_followed_unless_forced(qtbot, monkeypatch) -> None:
    from bertstudio.ui.widgets.ranked_bars import RankedBars

    bars = RankedBars()
    qtbot.addWidget(bars)
    manager = theme.manager()
    manager.set_mode("system", remember=False)
    system = {"scheme": "light"}
    monkeypatch.setattr(manager, "system_scheme", lambda: system["scheme"])  # offscreen has no scheme
    manager._system_changed()
    assert bars.backgroundBrush().color().name() == theme.LIGHT.background
    system["scheme"] = "dark"  # what QStyleHints.colorSchemeChanged reports
    manager._system_changed()
    assert bars.backgroundBrush().color().name() == theme.DARK.background
    manager.set_mode("light", remember=False)  # forced: a system change is ignored
    system["scheme"] = "dark"
    manager._system_changed()
    assert bars.backgroundBrush().color().name() == theme.LIGHT.background


def test_json_export_of_tabs_without_an_outcome(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from bertstudio.core.errors import InputError
    from bertstudio.ui.export import export_tab, result_json

    class Evaluation:
        def to_json(self) -> dict[str, object]:
            return {"metrics": {"accuracy": 0.95}, "output": Path("/runs/x")}

    evaluate = SimpleNamespace(TASK="evaluate", model_info=None, comparison=None, evaluation=Evaluation())
    assert result_json(evaluate)["result"]["metrics"] == {"accuracy": 0.95}
    written = export_tab(evaluate, tmp_path / "evaluation.json")
    assert json.loads(written.read_text(encoding="utf-8"))["result"]["output"] == "/runs/x"
    with pytest.raises(InputError, match="no result"):
        result_json(SimpleNamespace(TASK="pretraining", model_info=None, result=None))


@pytest.mark.parametrize("window_tabs", [()], ids=["fill-mask tab only"])
def test_fill_mask_panels_line_up_their_probability_axes(qtbot, window, checkpoint_factory) -> None:
    tab = window.task_tabs["fill-mask"]
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, str(checkpoint_factory("bert")))
    tab.text.setPlainText("a [MASK] b supercalifragilistic [MASK] .")  # tokens of different widths per mask
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run()
    assert len(tab.bars) == 2
    widths = {bars.bars_a.getPlotItem().getAxis("left").fixedWidth for bars in tab.bars}
    assert len(widths) == 1 and None not in widths, widths  # one label width: the 0-1 axes start at one x


def test_empty_plots_show_0_1_not_pyqtgraphs_default(qtbot) -> None:
    from bertstudio.ui.widgets.confusion_matrix import ConfusionMatrixView
    from bertstudio.ui.widgets.head_importance_view import HeadImportanceView
    from bertstudio.ui.widgets.patching_view import PatchHeatmap
    from bertstudio.ui.widgets.qa_scores_plot import QAScoresPlot
    from bertstudio.ui.widgets.ranked_bars import RankedBars

    bars, qa, matrix, heads = RankedBars(), QAScoresPlot(), ConfusionMatrixView(), HeadImportanceView()
    trace = PatchHeatmap("restored share or P", ("layer", "head"))
    for widget in (bars, qa, matrix, heads, trace):
        qtbot.addWidget(widget)
    for plot in (bars, qa, matrix.plot, heads.plot_widget, trace.plot):
        (x0, x1), (y0, y1) = plot.getPlotItem().getViewBox().viewRange()
        assert (round(x0, 6), round(x1, 6), round(y0, 6), round(y1, 6)) == (0, 1, 0, 1), type(plot).__name__
    assert bars.getPlotItem().getAxis("left")._tickLevels == [[]]  # no "-0.4 … 0.4" labels
    assert heads.plot.getAxis("left")._tickLevels == [[]]  # no "layer 0.2" either
    assert [trace.plot.getPlotItem().getAxis(side)._tickLevels for side in ("left", "bottom")] == [[[]], [[]]]
    assert heads.hint.isVisible() and not heads.colorbar.isVisible()  # a sentence says what Compute does


def test_head_importance_hint_gives_way_to_the_heatmap(qtbot) -> None:
    from types import SimpleNamespace

    import numpy as np

    from bertstudio.ui.widgets.head_importance_view import HeadImportanceView

    heads = HeadImportanceView()
    qtbot.addWidget(heads)
    heads.show_importance(SimpleNamespace(importance=np.arange(6.0).reshape(2, 3), normalization="L2 per layer",
                                          loss="cross-entropy", examples=1))
    assert not heads.hint.isVisible() and heads.colorbar.isVisible()
    heads.clear()
    assert heads.hint.isVisible() and not heads.colorbar.isVisible()


def test_confusion_matrix_shows_every_cell_and_the_colour_bar_end(qtbot) -> None:
    from bertstudio.ui.widgets.confusion_matrix import ConfusionMatrixView

    view = ConfusionMatrixView()
    qtbot.addWidget(view)
    view.resize(500, 400)
    view.show()
    view.set_matrix(["negative", "positive", "neutral"], [[50, 3, 2], [4, 40, 1], [0, 2, 9]])
    (x0, x1), (y0, y1) = view.plot.getPlotItem().getViewBox().viewRange()
    assert x0 < 0 and x1 > 3 and y0 < 0 and y1 > 3  # every cell, edges included
    from PySide6.QtGui import QFontMetrics

    qtbot.waitUntil(lambda: view.plot.getPlotItem().vb.sceneBoundingRect().height() > 100)
    label_half = QFontMetrics(view.colour_bar.axis.style.get("tickFont") or view.font()).height() / 2
    top = view.plot.getPlotItem().vb.sceneBoundingRect().top()
    assert top >= label_half, (top, label_half)  # the colour bar's "1.0", centred on its top, is not cut off


@pytest.mark.parametrize("window_tabs", [()], ids=["fill-mask tab only"])
def test_results_do_not_jump_when_a_run_starts_or_ends(qtbot, window) -> None:
    """The progress line keeps its room while hidden: a click aimed at a result lands on it."""
    from PySide6.QtCore import QPoint

    tab = window.task_tabs["fill-mask"]
    window.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(tab.results_widget.isVisible)

    def top() -> int:
        return tab.results_widget.mapTo(tab, QPoint(0, 0)).y()

    before = top()
    tab.progress.start()
    qtbot.waitUntil(lambda: tab.progress.isVisible())
    qtbot.wait(1)
    assert top() == before
    tab.progress.stop()
    qtbot.wait(1)
    assert top() == before


def test_per_layer_predictions_never_print_a_false_zero(qtbot) -> None:  # noqa: ANN001
    from bertstudio.core.tasks.fill_mask import Candidate
    from bertstudio.core.tasks.fill_mask.layers import LayerPredictions
    from bertstudio.ui.widgets.layer_predictions import LayerPredictionsView

    view = LayerPredictionsView()
    qtbot.addWidget(view)
    top = (Candidate("paris", 1, 0.9996), Candidate("rome", 2, 0.0003))
    view.show_predictions(LayerPredictions(((top,), (top,)), ("[CLS]", "[MASK]", "[SEP]"), (1,), ()))
    assert view.cell(1, 0).endswith(">99.9 %") and view.cell(1, 1).endswith("<0.1 %")
