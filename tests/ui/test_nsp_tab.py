"""Drive the NSP tab: pair bars, swap, examples, rank mode; models without an NSP head are refused."""

from __future__ import annotations

import pytest

from bertstudio.ui.tabs.nsp_tab import NspTab
from tests.ui.conftest import load_model_in, only_tabs, tab_of

window_tabs = only_tabs("nsp_tab")  # these tests drive the nsp tab only


def test_label_meaning_is_shown(window) -> None:
    tab = tab_of(window, NspTab)
    assert "label 0 = IsNext" in tab.label_note.text() and "label 1 = NotNext" in tab.label_note.text()


def test_pair_swap_examples(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, NspTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "PreTraining"))
    tab.examples_combo.activated.emit(1)
    a, b = tab.sentence_a.toPlainText(), tab.sentence_b.toPlainText()
    assert a and b and tab.examples_combo.currentIndex() == 0
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

    tab = tab_of(window, NspTab)
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
    tab = tab_of(window, NspTab)
    load_model_in(qtbot, tab, real_models["all-minilm-l6-v2"])
    assert "no trained next-sentence-prediction head" in tab.message.text()
    assert tab.notes.levels() == ("error",) and not tab.model_bar.warning_label.isVisibleTo(tab)  # red, once
    tab.sentence_a.setPlainText("A man is eating food.")
    tab.sentence_b.setPlainText("He likes bread.")
    with qtbot.waitSignal(tab.runner.error, timeout=30_000):
        tab.run()
    assert "random numbers" in tab.message.text()
    assert tab.bars.labels == []


def test_compare_two_models_on_a_pair(qtbot, window, checkpoint_factory, tmp_path) -> None:
    """Both models run in one job; B's bars carry the probability change, the summary the top label."""
    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.tasks.nsp import predict
    from tests.fixtures.checkpoints import build_checkpoint

    tab = tab_of(window, NspTab)
    first = checkpoint_factory("bert", "PreTraining")
    second = build_checkpoint(tmp_path / "bert-pt-seed1", "bert", "PreTraining", seed=1)
    load_model_in(qtbot, tab, first)
    tab.sentence_a.setPlainText("the cat sat on the mat .")
    tab.sentence_b.setPlainText("the dog ran fast .")
    tab.compare_source.enabled.setChecked(True)  # ticked but empty: asks for the second model, runs nothing
    tab.run_button.click()
    assert "second model" in tab.message.text() and tab.outcome is None
    tab.compare_source.set_source(str(second))
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run_button.click()
    outcome = tab.outcome
    expected = predict(load_model(LoadRequest(str(second), "nsp")), "the cat sat on the mat .", "the dog ran fast .")
    assert outcome.second.logits == pytest.approx(expected.logits, abs=1e-6)
    assert outcome.result.logits != pytest.approx(outcome.second.logits, abs=1e-7)
    bars_b = tab.compare_bars.bars_b
    assert tab.compare_bars.side_b.isVisibleTo(tab) and tab.compare_bars.summary.isVisibleTo(tab)
    assert {label.split(" (")[0] for label in tab.bars.labels} == {"IsNext", "NotNext"}
    assert bars_b.values.sum() == pytest.approx(1.0)
    delta = outcome.second.is_next - outcome.result.is_next
    is_next_label = next(label for label in bars_b.labels if label.startswith("IsNext"))
    assert f"{delta:+.1%}" in is_next_label
    summary = tab.compare_bars.summary.text()
    assert ("Top-1 changed" in summary) == outcome.diff.top_changed
    assert outcome.diff.top_a in summary
    # unticking goes back to one model
    tab.compare_source.set_source(None)
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run_button.click()
    assert tab.outcome.second is None and not tab.compare_bars.side_b.isVisibleTo(tab)
    assert tab.bars.labels == ["IsNext (label 0)", "NotNext (label 1)"]


@pytest.mark.slow
def test_compare_rank_mode_marks_rank_changes(qtbot, window, real_models, checkpoint_factory) -> None:
    """Trained MiniLM NSP head (A) against a random BERT (B): each candidate's rank move is shown."""
    from tests.fixtures.trained_nsp_ner import NSP_HELD_OUT, trained_nsp

    tab = tab_of(window, NspTab)
    load_model_in(qtbot, tab, trained_nsp(real_models["all-minilm-l6-v2"]))
    a, continuation, unrelated = NSP_HELD_OUT[1]
    tab.rank_mode.setChecked(True)
    tab.sentence_a.setPlainText(a)
    tab.sentence_b.setPlainText("\n".join([*unrelated, continuation]))
    tab.compare_source.set_source(str(checkpoint_factory("bert", "PreTraining")))
    with qtbot.waitSignal(tab.runner.result, timeout=60_000):
        tab.run_button.click()
    outcome = tab.outcome
    diff = outcome.diff
    assert tab.bars.labels[0].startswith(continuation[:30]) and diff.top_a == continuation  # A: the trained head
    labels_b = tab.compare_bars.bars_b.labels
    assert len(labels_b) == 3
    for label, r in zip(labels_b, outcome.second.results, strict=True):
        d = diff.delta_of(r.sentence_b)
        move = d.rank_a - d.rank_b
        assert label.startswith(r.sentence_b[:30]) and f"{d.delta:+.1%}" in label
        assert (f"▲{move}" if move > 0 else f"▼{-move}" if move < 0 else "=") in label
    summary = tab.compare_bars.summary.text()
    moved = [d for d in diff.deltas if d.rank_a != d.rank_b]
    assert ("Rank changes" in summary) == bool(moved)
    for d in moved:
        assert f"{d.rank_a}→{d.rank_b}" in summary


def test_state_restore_and_set_inputs(qtbot, window) -> None:
    from bertstudio.core.tasks.nsp import NspInput

    tab = tab_of(window, NspTab)
    tab.set_inputs(NspInput("a cat .", ("one .", "two .")))
    assert tab.rank_mode.isChecked() and tab.inputs() == NspInput("a cat .", ("one .", "two ."))
    state = tab.state()
    tab.set_inputs(NspInput("x", ("y",)))
    assert not tab.rank_mode.isChecked() and tab.inputs() == NspInput("x", ("y",))
    tab.restore(state)
    assert tab.state() == state and tab.run_button.text() == "Rank"
