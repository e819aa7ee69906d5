"""Drive the NSP tab: pair bars, swap, examples, rank mode; models without an NSP head are refused."""

from __future__ import annotations

import pytest

from bertstudio.ui.tabs.nsp_tab import NspTab
from tests.ui.conftest import load_model_in


def _tab(window) -> NspTab:  # noqa: ANN001
    return window.task_tabs["nsp"]


def test_label_meaning_is_shown(window) -> None:
    tab = _tab(window)
    assert "label 0 = IsNext" in tab.label_note.text() and "label 1 = NotNext" in tab.label_note.text()


def test_pair_swap_examples(qtbot, window, checkpoint_factory) -> None:
    tab = _tab(window)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "PreTraining"))
    tab.examples.activated.emit(1)
    a, b = tab.sentence_a.toPlainText(), tab.sentence_b.toPlainText()
    assert a and b and tab.examples.currentIndex() == 0
    tab.swap_button.click()
    assert (tab.sentence_a.toPlainText(), tab.sentence_b.toPlainText()) == (b, a)
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run_button.click()
    assert tab.bars.labels == ["IsNext (label 0)", "NotNext (label 1)"]
    assert tab.bars.values.sum() == pytest.approx(1.0)
    assert tab.bars.values[0] == pytest.approx(tab.result.is_next)
    assert "logits" in tab.bars.toolTip()


@pytest.mark.slow
def test_rank_mode_with_trained_head(qtbot, window, real_models) -> None:
    from tests.fixtures.trained_nsp_ner import NSP_HELD_OUT, trained_nsp

    tab = _tab(window)
    load_model_in(qtbot, tab, trained_nsp(real_models["all-minilm-l6-v2"]))
    a, continuation, unrelated = NSP_HELD_OUT[0]
    tab.rank_mode.setChecked(True)
    assert tab.run_button.text() == "Rank" and not tab.swap_button.isEnabled()
    tab.sentence_a.setPlainText(a)
    tab.sentence_b.setPlainText("\n".join([*unrelated, "", continuation]))
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run_button.click()
    assert len(tab.bars.labels) == 3 and tab.bars.labels[0] == continuation  # the true continuation first
    assert list(tab.bars.values) == sorted(tab.bars.values, reverse=True)


def test_model_without_nsp_head_is_refused(qtbot, window, real_models) -> None:
    tab = _tab(window)
    load_model_in(qtbot, tab, real_models["all-minilm-l6-v2"])
    assert "no trained next-sentence-prediction head" in tab.message.text()
    tab.sentence_a.setPlainText("A man is eating food.")
    tab.sentence_b.setPlainText("He likes bread.")
    with qtbot.waitSignal(tab.runner.error, timeout=30_000):
        tab.run()
    assert "random numbers" in tab.message.text()
    assert tab.bars.labels == []
