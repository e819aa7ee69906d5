"""Drive the Similarity tab: ranked cosines on a fixed -1..1 axis, the matrix for several sentences,
compare two models, heads off, examples and the workspace state."""

from __future__ import annotations

import pytest

from bertstudio.ui.tabs.similarity_tab import SimilarityTab
from tests.ui.conftest import load_model_in, only_tabs, tab_of

window_tabs = only_tabs("similarity_tab", "explain_tab", "evaluate_tab")  # the tab and the two it hands results to

A = "the cat sat on the mat ."
BS = ("the dog ran fast .", "paris is the capital city of france .", "the cat sat .")


def _fill(tab: SimilarityTab, a: str, bs: tuple[str, ...]) -> None:
    tab.sentence_a.setPlainText(a)
    tab.sentences_b.setPlainText("\n".join([*bs[:1], "", *bs[1:]]))  # a blank line is no sentence


@pytest.mark.slow
def test_minilm_ranks_the_paraphrase_first_on_a_fixed_axis(qtbot, window, real_models) -> None:
    tab = tab_of(window, SimilarityTab)
    assert tab.TITLE == "Similarity"
    load_model_in(qtbot, tab, real_models["all-minilm-l6-v2"])
    assert not tab.model_bar.warning_label.isVisibleTo(tab)  # a plain encoder: no "untrained head" warning
    tab.examples_combo.activated.emit(1)  # paraphrase vs unrelated
    assert tab.sentence_a.toPlainText() and tab.examples_combo.currentIndex() == 0
    with qtbot.waitSignal(tab.runner.result, timeout=60_000):
        tab.run_button.click()
    result = tab.result
    assert tab.bars.labels[-1] == "The stock market fell sharply today."  # least similar last
    assert list(tab.bars.values) == sorted(tab.bars.values, reverse=True)
    assert list(tab.bars.values) == pytest.approx([s.score for s in result.ranked])
    assert tab.bars.x_range() == (-1.0, 1.0)
    low, high = tab.bars.getPlotItem().vb.viewRange()[0]
    assert (low, high) == pytest.approx((-1.0, 1.0))  # the axis, not the values, sets the scale
    assert tab.matrix.isVisibleTo(tab) and tab.matrix.labels == ("A", "B1", "B2", "B3")
    assert tab.matrix.image.image.shape == (4, 4)


def test_pooling_matrix_state_and_errors(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, SimilarityTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    _fill(tab, A, BS[:1])
    tab.pooling.setCurrentIndex(tab.pooling.findData("cls"))
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run_button.click()
    assert tab.result.pooling == "cls" and len(tab.bars.labels) == 1
    assert not tab.matrix.isVisibleTo(tab)  # one pair: nothing a matrix would add
    _fill(tab, A, BS)
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run_button.click()
    assert [s.text for s in tab.result.scores] == list(BS) and tab.matrix.isVisibleTo(tab)
    saved = tab.state()
    assert saved == {"a": A, "bs": "\n".join([BS[0], "", *BS[1:]]), "pooling": "cls"}
    tab.restore({"a": "x", "bs": ["y", "z"], "pooling": "nonsense"})
    assert tab.inputs().bs == ("y", "z") and tab.inputs().pooling == "mean"  # an unknown pooling: the default
    tab.restore(saved)
    assert tab.inputs().pooling == "cls"
    tab.sentences_b.setPlainText("  \n")
    tab.run_button.click()  # refused in the window, nothing started
    assert "no sentences B" in tab.message.text() and tab.result is None and not tab.runner.busy


def test_compare_two_models_and_heads_off(qtbot, window, checkpoint_factory) -> None:
    tab = tab_of(window, SimilarityTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    _fill(tab, A, BS)
    tab.compare_source.enabled.setChecked(True)
    tab.compare_source.set_source(str(checkpoint_factory("roberta", "MaskedLM")))
    with qtbot.waitSignal(tab.runner.result, timeout=60_000):
        tab.run_button.click()
    outcome = tab.outcome
    assert outcome.second is not None and tab.compare_bars.side_b.isVisibleTo(tab)
    bars_b = tab.compare_bars.bars_b
    assert bars_b.x_range() == (-1.0, 1.0) and len(bars_b.labels) == 3
    delta = outcome.diff.delta_of(outcome.second.ranked[0].text).delta
    assert f"{delta:+.3f}" in bars_b.labels[0]  # a cosine change, not a percentage
    assert "Most similar" in tab.compare_bars.summary.text()
    tab.compare_source.enabled.setChecked(False)
    tab.heads_off.setText("0:0")
    with qtbot.waitSignal(tab.runner.result, timeout=60_000):
        tab.run_button.click()
    assert tab.outcome.second is not None and "heads off" in tab.outcome.second_source
    assert [s.score for s in tab.outcome.result.scores] != [s.score for s in tab.outcome.second.scores]


def test_explain_from_the_tab_then_heads_pruned(qtbot, window, checkpoint_factory) -> None:
    """Explain… hands A and the first B to the Explain tab: attributions over A's tokens, head
    importance (1 − cosine) and pruning that re-runs Similarity itself."""
    from bertstudio.ui.tabs.explain_tab import ExplainTab

    tab = tab_of(window, SimilarityTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "Model"))
    _fill(tab, A, BS[:2])
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run_button.click()
    assert tab.explain_button.isVisibleTo(tab) and tab.explain_button.isEnabled()
    explain_tab = tab_of(window, ExplainTab)
    with qtbot.waitSignal(explain_tab.runner.result, timeout=120_000):
        tab.explain_button.click()
    explanation = explain_tab.attributions.explanation
    assert explain_tab.task_key == "similarity" and explanation.target == "mean"
    assert explanation.tokens[1:4] == ("the", "cat", "sat")  # sentence A's tokens, not B's
    assert explanation.score == pytest.approx(tab.result.scores[0].score, abs=1e-5)
    with qtbot.waitSignal(explain_tab.runner.result, timeout=120_000):
        explain_tab.importance.compute_button.click()
    explain_tab.importance.k.setValue(2)
    with qtbot.waitSignal(explain_tab.runner.result, timeout=120_000):
        explain_tab.importance.prune_button.click()
    assert BS[0] in explain_tab.importance.intact.toPlainText()
    assert BS[0] in explain_tab.importance.pruned.toPlainText()


@pytest.mark.slow
def test_evaluate_tab_scores_an_sts_file_and_opens_a_row(qtbot, window, real_models, tmp_path) -> None:
    """Evaluate offers Similarity (its spec has the adapter): correlations on the metrics page, the
    worst-ranked pair first among the errors, and a double-clicked row opens in this tab."""
    from bertstudio.ui.tabs.evaluate_tab import EvaluateTab

    data = tmp_path / "sts.tsv"
    data.write_text("sentence1\tsentence2\tscore\n"
                    "A man is playing a guitar.\tA person plays an instrument.\t4.2\n"
                    "A man is playing a guitar.\tThe stock market fell sharply today.\t0.1\n"
                    "The cat sleeps on the sofa.\tA cat is napping on a couch.\t4.8\n"
                    "The cat sleeps on the sofa.\tStocks rallied after the report.\t0.0\n"
                    "Two kids play football.\tA chef cooks pasta.\t4.9\n", encoding="utf-8")
    tab = tab_of(window, EvaluateTab)
    assert tab.task_combo.findData("similarity") >= 0
    with qtbot.waitSignal(tab.runner.finished, timeout=120_000):
        tab.open_evaluation(str(real_models["all-minilm-l6-v2"]), str(data), "similarity")
    result = tab.evaluation
    assert result is not None and result.n == 5, tab.message.text()
    names = [name for name, _ in tab.metrics_page.metrics.source_model.records]
    assert "spearman" in names and "pearson" in names
    errors = tab.errors_page
    assert errors.table.visible_rows() == len(result.errors) > 0
    assert result.errors[0].row == 4  # the pair the model ranks furthest from its (wrong) gold score
    with qtbot.waitSignal(tab.open_row) as opened:
        errors.table.doubleClicked.emit(errors.table.model().index(0, 0))
    key, _source, inputs = opened.args
    first = min(result.errors, key=lambda r: r.row)  # the table lists the rows in file order
    assert key == "similarity" and f"{inputs.a} ||| {inputs.bs[0]}" == first.text and len(inputs.bs) == 1
