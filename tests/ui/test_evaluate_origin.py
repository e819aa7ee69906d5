"""Evaluate's shown result and what Run would compute now are RunStates (issue 29): the Out-of-date
mark is tab_state.changed of the two, and a checkpoint of another task loads once, as its own task."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QScrollArea

from bertstudio.ui.tabs.evaluate_tab import EvaluateTab
from bertstudio.ui.tabs.tab_state import RunState, changed
from tests.ui.conftest import evaluate_tab, with_tabs

SMALL = (900, 600)
DATA = Path(__file__).resolve().parents[1] / "data" / "evaluate"


@pytest.fixture
def tab(qtbot, settings) -> EvaluateTab:  # noqa: ANN001
    return evaluate_tab(qtbot, settings)


def _loads(tab: EvaluateTab) -> list[object]:
    seen: list[object] = []
    tab.model_bar.loaded.connect(seen.append)
    return seen


def test_the_shown_origin_is_a_run_state_and_the_mark_is_what_changed(qtbot, tab: EvaluateTab,  # noqa: ANN001
                                                                       real_models) -> None:
    topics = real_models["categorium-bert-tiny-topics-en"]
    with qtbot.waitSignal(tab.runner.finished, timeout=120_000):
        tab.open_evaluation(str(topics), str(DATA / "topics.csv"), "classification")
    shown = tab.result_origin()
    assert isinstance(shown, RunState) and shown == tab.origin_now() and tab.read_state().result is shown
    assert shown.model == tab.model_info.request and shown.inputs == str(DATA / "topics.csv")
    assert shown.compare is None and not tab.stale_banner.isVisibleTo(tab)
    # the number format is part of the model a Run would score (an int8 copy is another model)
    tab.model_bar.dtype.setCurrentIndex(1)
    now = tab.origin_now()
    assert now is not None and now.model.quantize == "int8"
    assert tab.stale_banner.reason == changed(shown, now) == "model" == tab.read_state().stale_reason()
    tab.model_bar.dtype.setCurrentIndex(0)
    assert not tab.stale_banner.isVisibleTo(tab)
    tab.data_file.setText(str(DATA / "sentiment_heldout.csv"))
    assert tab.stale_banner.reason == "input"


def test_a_classifier_picked_while_the_task_is_masked_lm_loads_once(qtbot, tab: EvaluateTab,  # noqa: ANN001
                                                                    checkpoint_factory) -> None:
    """The checkpoint's config decides the task before the load (it loaded as a masked LM, then again)."""
    tab.task_combo.setCurrentIndex(tab.task_combo.findData("fill-mask"))
    classifier = checkpoint_factory("bert", "SequenceClassification")
    loads = _loads(tab)
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.model_bar.load(str(classifier))
    qtbot.waitUntil(lambda: not tab.model_bar.busy, timeout=60_000)
    assert len(loads) == 1 and tab.task_key == "classification"
    assert tab.model_info.request.task == "classification" and not tab.model_info.head_warning
    assert "trained for it" in tab.message.text()


def test_a_multiple_choice_model_handed_over_loads_once(qtbot, tab: EvaluateTab, checkpoint_factory) -> None:  # noqa: ANN001
    """Train's Evaluate… with a multiple-choice model while another task is set: one load, then the run."""
    tab.task_combo.setCurrentIndex(tab.task_combo.findData("fill-mask"))
    choice = checkpoint_factory("bert", "MultipleChoice")
    loads = _loads(tab)
    with qtbot.waitSignal(tab.runner.finished, timeout=120_000):
        tab.open_evaluation(str(choice), str(DATA / "choice.csv"), "multiple-choice")
    assert len(loads) == 1 and tab.evaluation is not None and tab.evaluation.task == "multiple-choice"


@with_tabs("evaluate_tab")
def test_no_sideways_scrolling_at_900_by_600_whatever_the_columns(qtbot, window, tmp_path: Path,  # noqa: ANN001
                                                                  real_models) -> None:
    """The Columns row (one combo per column role, sized to the file's header names) and the result
    pages fit 900x600: the page never scrolls sideways (it did, hiding Evaluate's right side)."""
    long = tmp_path / "long_header.csv"
    long.write_text("the_question_text_column_with_a_long_name,the_context_paragraph_column_name,"
                    "the_answer_text_column_name\nq,c,a\n", encoding="utf-8")
    tab = window.task_tabs["evaluate"]
    window.tabs.setCurrentWidget(tab)
    window.resize(*SMALL)
    scroll = next(s for s in tab.findChildren(QScrollArea) if s.widget() is tab.page)
    problems = []
    topics = str(real_models["categorium-bert-tiny-topics-en"])
    for task, data in (("multiple-choice", DATA / "choice.csv"), ("qa", DATA / "qa.csv"), ("qa", long),
                       ("nsp", DATA / "nsp_pairs.csv"), ("classification", DATA / "topics.csv"), ("result", None)):
        if data is None:  # every result page filled: metrics, confusion, curves, rows, a comparison
            tab.compare_source.enabled.setChecked(True)
            tab.compare_source.combo.setEditText(topics)
            with qtbot.waitSignal(tab.runner.finished, timeout=120_000):
                tab.open_evaluation(topics, str(DATA / "topics.csv"), "classification")
            data = DATA / "topics.csv"
        else:
            tab.task_combo.setCurrentIndex(tab.task_combo.findData(task))
            tab.data_file.setText(str(data))
            tab.data_file.editingFinished.emit()
        for index in range(tab.pages.count()):
            tab.pages.setCurrentIndex(index)
            qtbot.wait(1)
            if scroll.horizontalScrollBar().isVisible():
                problems.append(f"{task} {data.name} {tab.pages.tabText(index)}: the page needs "
                                f"{tab.page.minimumSizeHint().width()} px of {scroll.viewport().width()}")
    assert window.width() == SMALL[0] and not problems, "\n".join(problems)


def test_the_task_to_load_keeps_a_task_whose_head_the_checkpoint_carries(checkpoint_factory) -> None:  # noqa: ANN001
    """A pre-training checkpoint carries both the masked-LM and the next-sentence heads: picked while
    the task is NSP it stays NSP; a classifier picked as a masked LM loads as a classifier."""
    from bertstudio.core.evaluate.adapters import load_task

    pretrained = str(checkpoint_factory("bert", "PreTraining"))
    assert load_task(pretrained, "nsp") == "nsp" and load_task(pretrained, "fill-mask") == "fill-mask"
    assert load_task(pretrained, "ner") == "fill-mask"
    assert load_task(str(checkpoint_factory("bert", "SequenceClassification")), "fill-mask") == "classification"
    assert load_task("bert-base-uncased", "qa") == "qa"  # a Hub id: nothing to read before the load
