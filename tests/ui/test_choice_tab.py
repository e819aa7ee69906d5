"""Drive the multiple-choice tab: score endings, head warning, compare, bad input, cancel."""

from __future__ import annotations

import pytest

from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.tasks.multiple_choice import predict
from bertstudio.ui.tabs.choice_tab import ChoiceTab, example_blocks
from tests.ui.conftest import load_model_in, only_tabs, run_tab, tab_of

window_tabs = only_tabs("choice_tab")  # these tests drive the choice tab only


def test_score_endings_and_compare(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, ChoiceTab)
    folder = checkpoint_factory("bert", "MultipleChoice")
    load_model_in(qtbot, tab, folder)
    assert not tab.model_bar.warning_label.isVisibleTo(tab)
    tab.examples_combo.activated.emit(1)
    prompt, endings = example_blocks()[0]
    assert tab.prompt.toPlainText() == prompt and tab.endings.toPlainText().splitlines() == endings
    run_tab(qtbot, tab)
    expected = predict(load_model(LoadRequest(str(folder), "multiple-choice")), prompt, endings)
    assert tab.bars.bars_a.labels == [c.choice for c in expected.choices]
    assert tab.bars.bars_a.values.tolist() == pytest.approx([c.score for c in expected.choices], abs=1e-6)

    tab.compare_source.set_source(str(checkpoint_factory("roberta", "MultipleChoice")))
    run_tab(qtbot, tab)
    assert tab.outcome.second is not None and tab.bars.side_b.isVisibleTo(tab)
    assert ("Top-1 changed" in tab.bars.summary.text()) == tab.outcome.diff.top_changed

    tab.endings.setPlainText("only one ending")
    run_tab(qtbot, tab, "error")
    assert "at least two" in tab.message.text()


def test_head_warning_without_trained_head(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, ChoiceTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "MaskedLM"))
    assert tab.model_bar.warning_label.isVisibleTo(tab)
    assert "no trained multiple-choice head" in tab.model_bar.warning_label.text()
    tab.prompt.setPlainText("the man sat on the")
    tab.endings.setPlainText("mat\nriver")
    run_tab(qtbot, tab)
    assert tab.result is not None and tab.model_bar.warning_label.isVisibleTo(tab)
    assert "no trained multiple-choice head" not in tab.message.text()  # said once, in the model bar


def test_cancel_mid_run(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, ChoiceTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "MultipleChoice"))
    tab.prompt.setPlainText("the man sat on the")
    tab.endings.setPlainText("mat\nriver")
    with qtbot.waitSignal(tab.runner.cancelled, timeout=10_000):
        tab.run_button.click()
        tab.cancel_button.click()
    assert "Cancelled" in tab.message.text()


def test_state_restore_and_set_inputs(window) -> None:
    from bertstudio.core.tasks.multiple_choice import ChoiceInput

    tab = tab_of(window, ChoiceTab)
    tab.set_inputs(ChoiceInput("the man sat on the", ("mat", "river")))
    assert tab.inputs() == ChoiceInput("the man sat on the", ("mat", "river"))
    state = tab.state()
    tab.restore({})
    assert tab.inputs() == ChoiceInput("", ())
    tab.restore(state)
    assert tab.state() == state
