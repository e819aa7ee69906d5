"""Evaluate on a multi-label model (issue 41): the multi-label metrics and per-label scores on the Metrics
page, and the Curves page's threshold view keeping one threshold per label."""

from __future__ import annotations

import pytest

from bertstudio.ui.tabs.evaluate_tab import EvaluateTab
from tests.core.test_multilabel import trained  # noqa: F401 - the module-scoped trained model
from tests.ui.conftest import evaluate_tab


@pytest.fixture
def tab(qtbot, settings) -> EvaluateTab:  # noqa: ANN001
    return evaluate_tab(qtbot, settings)


def test_multi_label_metrics_and_per_label_thresholds(qtbot, tab: EvaluateTab, trained) -> None:  # noqa: ANN001, F811
    from bertstudio.core.tasks.classification.evaluate_multilabel import at_thresholds

    folder, data = trained
    with qtbot.waitSignal(tab.runner.finished, timeout=120_000):
        tab.open_evaluation(str(folder), str(data), "classification")
    result = tab.evaluation
    assert result is not None and result.confusion is None
    records = dict(tab.metrics_page.metrics.source_model.records)
    assert records["micro_f1"] == result.metrics["micro_f1"] and "hamming_loss" in records
    assert not tab.pages.isTabEnabled(tab.pages.indexOf(tab.confusion_page))
    page = tab.curves_page
    assert page.per_label is not None and tab.pages.isTabEnabled(tab.pages.indexOf(page))
    assert [page.class_combo.itemText(i) for i in range(page.class_combo.count())] == ["animal", "neg", "pos"]
    qtbot.waitUntil(lambda: page.view is not None and page.view.curves.label == "animal", timeout=30_000)
    page.set_threshold(0.2)  # animal's own threshold
    with qtbot.waitSignal(page.runner.result, timeout=30_000):
        page.class_combo.setCurrentText("pos")
    assert page.spin.value() == 0.5  # pos kept its own
    page.set_threshold(0.7)
    with qtbot.waitSignal(page.runner.result, timeout=30_000):
        page.class_combo.setCurrentText("animal")
    assert page.spin.value() == pytest.approx(0.2)
    shown = dict(page.metrics.source_model.records)
    expected = at_thresholds(result.probabilities, result.classes, result.golds, [0.2, 0.5, 0.7])
    assert shown["all labels: micro_f1"] == pytest.approx(expected["micro_f1"])
    assert shown["all labels: hamming_loss"] == pytest.approx(expected["hamming_loss"])
    assert "own threshold" in page.rule.text()
