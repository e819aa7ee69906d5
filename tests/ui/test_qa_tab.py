"""Drive the QA tab as a user would: load, ask, read the highlight, the table and the plot."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from bertstudio.ui.tabs.qa_tab import QATab
from tests.fixtures.trained_qa import trained_qa  # noqa: F401 - the session fixture
from tests.ui.conftest import load_model_in

LONG = "the cat sat on the mat and the dog ran fast in the house . " * 30 + "john was born in paris ."


def _tab(window) -> QATab:  # noqa: ANN001
    return window.task_tabs["qa"]


def _answer(qtbot, tab: QATab) -> None:  # noqa: ANN001
    with qtbot.waitSignal(tab.runner.result, timeout=60_000):
        qtbot.keyClick(tab.question, Qt.Key.Key_Return)


def test_rows_highlights_and_plot(qtbot, window, checkpoint_factory) -> None:
    tab = _tab(window)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "QuestionAnswering"))
    tab.question.setText("where was john born ?")
    tab.context.setPlainText(LONG)
    tab.top_k.setValue(4)
    tab.max_answer_len.setValue(5)
    tab.doc_stride.setValue(16)
    _answer(qtbot, tab)
    result = tab.result
    assert result is not None and len(result.answers) == 4 and len(result.windows) > 5
    assert tab.table.rowCount() == 4
    rows = [tuple(tab.table.item(r, c).text() for c in range(4)) for r in range(4)]
    assert rows == [(a.answer, f"{a.score:.4f}", str(a.start), str(a.end)) for a in result.answers]
    best = result.answers[0]
    assert tab.context.highlights == [(best.start, best.end)]
    assert tab.context.highlighted_text() == [best.answer]
    assert tab.context.window_span == result.windows[best.window]
    # Clicking another row highlights that span.
    third = result.answers[2]
    qtbot.mouseClick(tab.table.viewport(), Qt.MouseButton.LeftButton,
                     pos=tab.table.visualItemRect(tab.table.item(2, 0)).center())
    assert tab.context.highlights == [(third.start, third.end)]
    # The plot holds one start and one end score per context token, and shades the chosen span.
    x, y = tab.plot.start_curve.xData, tab.plot.start_curve.yData  # all of it, not the clipped view
    assert len(x) == len(result.tokens.tokens) and y.max() == pytest.approx(result.tokens.start_scores.max())
    assert tab.plot.region.isVisible()
    first, last = tab.plot.region.getRegion()
    covered = [i for i, (s, e) in enumerate(result.tokens.spans) if s < third.end and e > third.start]
    assert (first, last) == (covered[0] - 0.5, covered[-1] + 0.5)
    assert "overlapping windows" in tab.message.text()


def test_no_answer_option(qtbot, window, checkpoint_factory) -> None:
    tab = _tab(window)
    load_model_in(qtbot, tab, checkpoint_factory("distilbert", "QuestionAnswering"))
    tab.question.setText("where was john born ?")
    tab.context.setPlainText("john was born in paris .")
    assert not tab.threshold.isEnabled()
    tab.allow_null.setChecked(True)
    assert tab.threshold.isEnabled()
    tab.threshold.setValue(-1.0)  # the empty answer always wins
    _answer(qtbot, tab)
    assert tab.result.best.is_null and tab.table.item(0, 0).text() == "(no answer)"
    assert tab.context.highlights == []


def test_bad_input_and_head_warning(qtbot, window, checkpoint_factory) -> None:
    tab = _tab(window)
    load_model_in(qtbot, tab, checkpoint_factory("roberta", "MaskedLM"))
    assert "no trained qa head" in tab.model_bar.warning_label.text()
    tab.context.setPlainText("john was born in paris .")
    with qtbot.waitSignal(tab.runner.error, timeout=30_000):
        tab.run()
    assert "question is empty" in tab.message.text()
    tab.question.setText("where was john born ?")
    tab.context.setPlainText("   ")
    with qtbot.waitSignal(tab.runner.error, timeout=30_000):
        tab.run()
    assert "context is empty" in tab.message.text()
    tab.context.setPlainText("john was born in paris .")
    _answer(qtbot, tab)
    assert "no trained qa head" in tab.message.text()


def test_examples_fill_both_fields(qtbot, window) -> None:
    tab = _tab(window)
    assert tab.examples.count() > 3
    tab.examples.activated.emit(1)
    assert tab.question.text().endswith("?") and len(tab.context.toPlainText()) > 40


@pytest.mark.slow
def test_trained_minilm_highlights_the_answer(qtbot, window, trained_qa) -> None:  # noqa: F811
    tab = _tab(window)
    load_model_in(qtbot, tab, trained_qa)
    assert not tab.model_bar.warning_label.isVisibleTo(tab)
    tab.question.setText("Where was Kenji born?")
    tab.context.setPlainText("Kenji works as a pilot. Kenji was born in Osaka in 1972.")
    _answer(qtbot, tab)
    assert tab.context.highlighted_text()[0] == "Osaka"
    assert tab.table.item(0, 0).text() == "Osaka"
