"""Explain… hands over the result's own inputs and answer (issue 28 item 4): nothing round-trips
through the Explain tab's text box, where lines were read as parts (a two-line text became a pair)."""

from __future__ import annotations

import pytest

from bertstudio.core.tasks.classification import ClassificationInput
from tests.ui.conftest import load_model_in, only_tabs

window_tabs = only_tabs("classification_tab", "explain_tab")


def _explained(qtbot, window, folder, inputs: ClassificationInput):  # noqa: ANN001, ANN202
    """Run `inputs` in the Classification tab, press Explain…; the tab, its result and the explanation."""
    tab = window.task_tabs["classification"]
    if tab.model_info is None:
        load_model_in(qtbot, tab, folder)
    tab.set_inputs(inputs)
    with qtbot.waitSignal(tab.runner.result, timeout=60_000):
        tab.run()
    explain_tab = window.task_tabs["explain"]
    with qtbot.waitSignal(explain_tab.runner.result, timeout=120_000):
        tab.explain_button.click()
    qtbot.waitUntil(lambda: not explain_tab.runner.busy, timeout=10_000)
    return explain_tab, tab.result, explain_tab.attributions.explanation


def _tokens(folder, *texts: str) -> tuple[str, ...]:  # noqa: ANN001
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    return tuple(tokenizer.convert_ids_to_tokens(tokenizer(*texts)["input_ids"]))


def test_a_two_line_text_is_explained_as_one_text(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    folder = checkpoint_factory("bert", "SequenceClassification")
    text = "a good film .\nthe big dog ."
    explain_tab, result, explanation = _explained(qtbot, window, folder, ClassificationInput(text))
    assert explanation.tokens == _tokens(folder, text)  # one sequence: [CLS] both lines [SEP]
    assert explanation.tokens.count("[SEP]") == 1 and "dog" in explanation.tokens
    assert explanation.target == result.first.top.label  # the result's own answer
    assert explain_tab.input.toPlainText() == text  # shown, not re-read
    assert explain_tab.task_inputs() == ClassificationInput(text)


def test_a_pair_with_a_multi_line_first_text_keeps_both_parts(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    folder = checkpoint_factory("bert", "SequenceClassification")
    inputs = ClassificationInput("a good film .\nthe big dog .", "a big cat")
    explain_tab, result, explanation = _explained(qtbot, window, folder, inputs)
    assert explanation.tokens == _tokens(folder, inputs.text, inputs.pair)  # nothing dropped
    assert explanation.tokens.count("[SEP]") == 2 and explanation.tokens[-2] == "cat"
    assert explain_tab.task_inputs() == inputs

    # an edit of the box ends the hand-off: the typed lines are read as parts again
    explain_tab.input.setPlainText("a good film .\na big cat")
    assert explain_tab.handed() is None and explain_tab.texts() == ("a good film .", "a big cat")
    with qtbot.waitSignal(explain_tab.runner.result, timeout=120_000):
        explain_tab.run_button.click()
    assert explain_tab.attributions.explanation.tokens == _tokens(folder, "a good film .", "a big cat")


def test_the_handed_target_is_the_results_answer(qtbot, window, checkpoint_factory, monkeypatch) -> None:  # noqa: ANN001
    """Explain runs the label the result gave (no forward pass to find it again), unless one is chosen."""
    from bertstudio.core.explain import jobs

    folder = checkpoint_factory("bert", "SequenceClassification")
    asked = []
    real = jobs.explain_job

    def spy(request, task, texts, method, target, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        asked.append((texts, target))
        return real(request, task, texts, method, target, *args, **kwargs)

    monkeypatch.setattr("bertstudio.ui.tabs.explain_tab.explain_job", spy)
    explain_tab, result, _ = _explained(qtbot, window, folder, ClassificationInput("one\ntwo"))
    assert asked == [(("one\ntwo",), result.first.top.label)]
    other = next(label.label for label in result.first.scores[1:])
    explain_tab.target.setCurrentIndex(explain_tab.target.findData(other))
    with qtbot.waitSignal(explain_tab.runner.result, timeout=120_000):
        explain_tab.run_button.click()
    assert asked[-1] == (("one\ntwo",), other) and explain_tab.attributions.explanation.target == other


@pytest.fixture(autouse=True)
def _fast_steps(monkeypatch) -> None:  # noqa: ANN001
    """Few IG steps: these tests are about which input and target run, not about IG."""
    from bertstudio.ui.widgets.explain_options import MethodOptions

    original = MethodOptions.__init__

    def few(self, *args, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        original(self, *args, **kwargs)
        self.steps.setValue(4)

    monkeypatch.setattr(MethodOptions, "__init__", few)


def test_a_file_batch_says_how_to_explain_its_rows(window) -> None:  # noqa: ANN001
    """Explain… after classifying a file: its rows are not in the input (AttributeError before)."""
    from bertstudio.core.models import LoadRequest
    from bertstudio.core.tasks.classification import ClassificationBatchInput

    explain_tab = window.task_tabs["explain"]
    explain_tab.explain("classification", LoadRequest("some/model", "classification"),
                        ClassificationBatchInput(path="rows.csv"), None)
    assert "explained one at a time" in explain_tab.notes.text() and not explain_tab.runner.busy
