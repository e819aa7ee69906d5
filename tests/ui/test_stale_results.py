"""A shown result is never silently passed off as the result of a newer input, model or heads:
after any of them changes it is marked out of date (a banner, the result dimmed) until Run."""

from __future__ import annotations

import pytest

from bertstudio.core.tasks.classification import ClassificationInput
from bertstudio.core.tasks.ner import NerInput
from tests.ui.conftest import load_model_in, only_tabs, run_tab

window_tabs = only_tabs("classification_tab", "ner_tab")  # the two tabs these tests drive


def _stale(qtbot, tab, reason: str) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: tab.stale_banner.isVisible(), timeout=2_000)
    assert tab.stale_reason() == reason and f"previous {reason}" in tab.stale_banner.text()
    veil = tab.stale_banner.veil
    assert veil.isVisible() and veil.geometry() == tab.results_widget.rect()  # the result is faded


def _fresh(qtbot, tab) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: not tab.stale_banner.isVisible(), timeout=2_000)
    assert tab.stale_reason() == "" and not tab.stale_banner.veil.isVisible()


@pytest.fixture
def classification(qtbot, window, checkpoint_factory):  # noqa: ANN001, ANN201
    tab = window.task_tabs["classification"]
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"))
    tab.set_inputs(ClassificationInput("the cat sat on the mat", None))
    run_tab(qtbot, tab, timeout=30_000, idle=True)
    return tab


def test_a_new_text_marks_the_result_out_of_date(qtbot, classification) -> None:
    tab = classification
    _fresh(qtbot, tab)
    tab.text.setPlainText("a different text")
    _stale(qtbot, tab, "input")
    tab.text.setPlainText("the cat sat on the mat")  # back to what was run: current again
    _fresh(qtbot, tab)
    tab.text.setPlainText("a different text")
    _stale(qtbot, tab, "input")
    run_tab(qtbot, tab, timeout=30_000, idle=True)
    _fresh(qtbot, tab)


def test_heads_off_and_compare_changes_mark_it(qtbot, classification) -> None:
    tab = classification
    tab.set_ablated_heads(((0, 1),), "from Attention, 1 head")
    _stale(qtbot, tab, "heads off")
    tab.controls.heads_clear.click()
    _fresh(qtbot, tab)
    tab.compare_source.set_source("some/other-model")
    _stale(qtbot, tab, "model compared with")


def test_loading_another_model_marks_then_clears_it(qtbot, classification, checkpoint_factory) -> None:
    tab = classification
    other = str(checkpoint_factory("distilbert", "SequenceClassification"))
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.model_bar.load(other)
        _stale(qtbot, tab, "model")  # while the new model loads, the old model's result is marked
    assert tab.result is None and not tab.stale_banner.isVisible()  # then it goes


def test_ner_strategy_drawn_from_the_same_run_is_not_stale(qtbot, window, checkpoint_factory) -> None:
    tab = window.task_tabs["ner"]
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "TokenClassification"))
    tab.set_inputs(NerInput("klaus lives in vienna", "first"))
    run_tab(qtbot, tab, timeout=30_000, idle=True)
    tab.strategy.setCurrentText("max")  # every strategy came with the run: redrawn, not out of date
    _fresh(qtbot, tab)
    assert tab.last_run()[1].aggregation == "max"
    tab.text.setPlainText("anna lives in graz")
    _stale(qtbot, tab, "input")
    tab.strategy.setCurrentText("simple")  # redrawn for a strategy, but the text is still not the run's
    _stale(qtbot, tab, "input")
