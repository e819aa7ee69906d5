"""Drive the QA tab as a user would: load, ask, read the highlight, the table and the plot."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from bertstudio.ui.tabs.qa_tab import QATab
from tests.fixtures.trained_qa import trained_qa  # noqa: F401 - the session fixture
from tests.ui.conftest import load_model_in, only_tabs, tab_of

window_tabs = only_tabs("qa_tab")  # these tests drive the qa tab only

LONG = "the cat sat on the mat and the dog ran fast in the house . " * 30 + "john was born in paris ."


def _answer(qtbot, tab: QATab) -> None:
    with qtbot.waitSignal(tab.runner.result, timeout=60_000):
        qtbot.keyClick(tab.question, Qt.Key.Key_Return)


def test_rows_highlights_and_plot(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, QATab)
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
    tab = tab_of(window, QATab)
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
    tab = tab_of(window, QATab)
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
    assert tab.result is not None and tab.model_bar.warning_label.isVisibleTo(tab)
    assert "no trained qa head" not in tab.message.text()  # said once, in the model bar (not twice)


def test_examples_fill_both_fields(qtbot, window) -> None:
    tab = tab_of(window, QATab)
    assert tab.examples_combo.count() > 3
    tab.examples_combo.activated.emit(1)
    assert tab.question.text().endswith("?") and len(tab.context.toPlainText()) > 40


@pytest.mark.slow
def test_trained_minilm_highlights_the_answer(qtbot, window, trained_qa) -> None:  # noqa: F811
    tab = tab_of(window, QATab)
    load_model_in(qtbot, tab, trained_qa)
    assert not tab.model_bar.warning_label.isVisibleTo(tab)
    tab.question.setText("Where was Kenji born?")
    tab.context.setPlainText("Kenji works as a pilot. Kenji was born in Osaka in 1972.")
    _answer(qtbot, tab)
    assert tab.context.highlighted_text()[0] == "Osaka"
    assert tab.table.item(0, 0).text() == "Osaka"


def test_compare_two_models(qtbot, window, checkpoint_factory, tmp_path) -> None:
    """Both models run in one job; B's best span is drawn in the context, its n-best sits beside A's
    with each span's rank and score change against A, and the summary says what changed."""
    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.tasks.qa import QAOptions, answer
    from tests.fixtures.checkpoints import build_checkpoint

    tab = tab_of(window, QATab)
    first = checkpoint_factory("bert", "QuestionAnswering")
    second = build_checkpoint(tmp_path / "bert-qa-seed1", "bert", "QuestionAnswering", seed=1)
    load_model_in(qtbot, tab, first)
    question = "where was john born ?"
    context = "john was born in paris . mary lives in berlin and works at the school ."
    tab.question.setText(question)
    tab.context.setPlainText(context)
    tab.top_k.setValue(5)
    tab.compare_source.enabled.setChecked(True)  # ticked but empty: asks for the second model, runs nothing
    tab.run_button.click()
    assert "second model" in tab.message.text() and tab.outcome is None
    tab.compare_source.set_source(str(second))
    _answer(qtbot, tab)
    outcome = tab.outcome
    a, b = outcome.result, outcome.second
    expected = answer(load_model(LoadRequest(str(second), "qa")), question, context, QAOptions(top_k=5))
    assert [(x.start, x.end) for x in b.answers] == [(x.start, x.end) for x in expected.answers]
    assert [x.score for x in b.answers] == pytest.approx([x.score for x in expected.answers], abs=1e-6)
    assert [(x.start, x.end) for x in a.answers] != [(x.start, x.end) for x in b.answers]
    # The context: A's best highlighted as before, B's best drawn too.
    assert tab.context.highlights == [(a.best.start, a.best.end)]
    assert tab.b_highlight() == (b.best.start, b.best.end)
    # B's table beside A's: its answers, and against A the rank and score change of the same span.
    assert tab.side_b.isVisibleTo(tab) and tab.table_b.rowCount() == len(b.answers)
    spans_a = {(x.start, x.end): (rank, x.score) for rank, x in enumerate(a.answers, start=1)}
    for row, item in enumerate(b.answers):
        cells = [tab.table_b.item(row, c).text() for c in range(5)]
        assert cells[:4] == [item.answer, f"{item.score:.4f}", str(item.start), str(item.end)]
        if (item.start, item.end) in spans_a:
            rank, score = spans_a[(item.start, item.end)]
            assert cells[4] == f"A #{rank}, {item.score - score:+.4f}"
        else:
            assert cells[4] == "not in A's list"
    # The summary: changed span yes/no, overlap and score delta, as core.compare computes them.
    diff = outcome.diff
    summary = tab.compare_summary.text()
    assert tab.compare_summary.isVisibleTo(tab)
    changed = (a.best.start, a.best.end) != (b.best.start, b.best.end)
    assert ("Best span changed" in summary) == diff.changed == changed
    assert f"overlap {diff.overlap:.0%}" in summary
    assert f"score B − A {b.best.score - a.best.score:+.4f}" in summary
    # Choosing another row of B's table moves B's mark; A's highlight stays.
    tab.table_b.selectRow(2)
    assert tab.b_highlight() == (b.answers[2].start, b.answers[2].end)
    assert tab.context.highlights == [(a.best.start, a.best.end)]
    # Unticking goes back to one model.
    tab.compare_source.set_source(None)
    _answer(qtbot, tab)
    assert tab.outcome.second is None and not tab.side_b.isVisibleTo(tab)
    assert not tab.compare_summary.isVisibleTo(tab) and tab.b_highlight() is None
    assert tab.context.highlights == [(a.best.start, a.best.end)]
    # Editing the context drops both marks: their offsets would point at the wrong words.
    tab.compare_source.set_source(str(second))
    _answer(qtbot, tab)
    assert tab.b_highlight() is not None
    tab.context.setPlainText(context + " anna lives in rome .")
    assert tab.b_highlight() is None and tab.context.highlights == []


def test_state_restore_and_set_inputs(qtbot, window) -> None:
    from bertstudio.core.tasks.qa import QAInput, QAOptions

    tab = tab_of(window, QATab)
    wanted = QAInput("who?", "klaus lives here .", QAOptions(top_k=3, max_answer_len=9, doc_stride=64,
                                                              allow_no_answer=True, null_threshold=0.25))
    tab.set_inputs(wanted)
    assert tab.inputs() == wanted and tab.threshold.isEnabled()
    state = tab.state()
    tab.set_inputs(QAInput("", ""))
    tab.restore(state)
    assert tab.inputs() == wanted and tab.state() == state
