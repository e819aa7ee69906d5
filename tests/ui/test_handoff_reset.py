"""Issue 40: a hand-off resets the receiving tab's options that would make it use a model other than
the one handed over (Train -> Evaluate… with a Compare box ticked earlier failed, blaming "the model";
the fix hand-off carried the form's old max steps and LoRA rank silently)."""

from __future__ import annotations

from pathlib import Path

from bertstudio.ui.model_bar import INT8_CHOICE
from bertstudio.ui.tabs.classification_tab import ClassificationTab
from bertstudio.ui.tabs.evaluate_tab import EvaluateTab
from bertstudio.ui.tabs.train_tab import TrainTab
from tests.ui.conftest import only_tabs, tab_of, with_tabs

window_tabs = only_tabs("train_tab", "classification_tab")
DATA = Path(__file__).resolve().parents[1] / "data" / "evaluate"


@with_tabs("evaluate_tab")
def test_evaluate_from_train_unticks_an_old_compare_and_scores_the_handed_model(  # noqa: ANN001
        qtbot, window, real_models, checkpoint_factory) -> None:
    tab = tab_of(window, EvaluateTab)
    said: list[str] = []
    tab.status.connect(said.append)
    tab.compare_source.set_source(str(checkpoint_factory("bert", "TokenClassification")))  # an NER model, earlier
    assert tab.compare_source.enabled.isChecked()
    trained = real_models["categorium-bert-tiny-topics-en"]
    with qtbot.waitSignal(tab.runner.finished, timeout=120_000):
        window.open_evaluation(str(trained), str(DATA / "topics.csv"), "classification")  # Train's Evaluate…
    qtbot.waitUntil(lambda: tab.evaluation is not None and not tab.runner.busy, timeout=10_000)
    assert not tab.compare_source.enabled.isChecked()
    assert tab.evaluation.model == str(trained) and tab.comparison is None
    assert not [note for note in tab.notes.notes if note.level == "error"]
    assert any("Compare unticked" in line and str(trained) in line for line in said)


def test_open_in_switches_heads_back_on_and_unticks_int8(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    tab = tab_of(window, ClassificationTab)
    tab.heads_off.setText("0:1")
    tab.model_bar.dtype.setCurrentText(INT8_CHOICE)
    folder = str(checkpoint_factory("bert", "SequenceClassification"))
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.open_model(folder)
    assert tab.heads_off.text() == "" and tab.model_bar.dtype.currentText() == "float32"
    assert "every head switched on" in window.log.text()


def test_fine_tune_hand_off_resets_the_old_runs_steps_and_adapter_and_says_so(window, tmp_path: Path) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    tab.max_steps.setValue(7)
    tab.lora_rank.setValue(8)
    tab.eval_file.setText(str(tmp_path / "old-validation.csv"))
    tab.batch_size.setValue(4)  # the machine's setting: kept
    tab.set_training_data("text-classification", "some/model", str(tmp_path / "fix.csv"), str(tmp_path / "out"))
    assert (tab.max_steps.value(), tab.lora_rank.value(), tab.eval_file.text()) == (0, 0, "")
    assert tab.batch_size.value() == 4 and tab.base_model.text() == "some/model"
    shown = tab.notes.text()
    assert "Max steps" in shown and "LoRA rank" in shown and "Validation file" in shown
