"""Drive the Features tab (issue 42): open an SAE, encode a text, open a feature's card with its corpus
contexts, histogram and promoted tokens, ablate it and see the task's answer beside the intact one,
and train an SAE and a tuned lens from the window, with Cancel."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bertstudio.core.features import sae, sae_train
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from bertstudio.ui.tabs.features_tab import FeaturesTab
from tests.fixtures.checkpoints import WORDS
from tests.ui.conftest import only_tabs, tab_of

window_tabs = only_tabs("features_tab")


def _corpus(path: Path) -> Path:
    rng = random.Random(0)
    path.write_text("\n".join(" ".join(rng.choice(WORDS[:60]) for _ in range(7)) for _ in range(30)) + "\n",
                    encoding="utf-8")
    return path


@pytest.fixture
def sae_folder(checkpoint_factory, tmp_path: Path) -> Path:  # noqa: ANN001
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "MaskedLM")), "fill-mask"))
    return sae_train.train_features(loaded, _corpus(tmp_path / "corpus.txt"), 1, tmp_path / "sae",
                                    sae.TrainOptions(epochs=2), TaskControl()).path


def test_open_encode_card_and_ablate(qtbot, window, sae_folder: Path) -> None:  # noqa: ANN001
    tab = tab_of(window, FeaturesTab)
    window.tabs.setCurrentWidget(tab)
    tab.sae_path.setText(str(sae_folder))
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.open_sae()
    assert tab.found is not None and tab.task_key == "fill-mask"  # the checkpoint's own task
    assert "64 features" in tab.sae_info.text() and tab.train_page.layer.maximum() == 2
    tab.text.setPlainText("the cat sat on the [MASK] .")
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run_button.click()
    table = tab.tokens
    assert table.item(0, 0).text() == "[CLS]" and table.item(table.rowCount() - 1, 0).text() == "[SEP]"
    feature = table.feature_at(2, 1)
    assert feature is not None
    histogram = tab.card.histogram  # before a card: a sentence, no empty axes (issue 29 #21's class)
    assert histogram.empty.isVisible() and not histogram.getPlotItem().getAxis("left").isVisible()
    with qtbot.waitSignal(tab.card_runner.result, timeout=30_000):
        table.cellClicked.emit(2, 1)
    card = tab.card.card
    assert card.feature == feature and tab.pages.currentWidget() is tab.card
    assert tab.card.table.rowCount() == len(card.contexts) > 0 and sum(tab.card.histogram.counts) > 0
    assert not histogram.empty.isVisible() and histogram.getPlotItem().getAxis("left").isVisible()
    assert len(card.promoted) == 10 and tab.card.promoted.labels  # a masked LM: its head promotes tokens
    tab.card.scale.setValue(0.0)
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.card.intervene_button.click()
    assert tab.outcome is not None and tab.outcome.second_source == f"feature {feature} ablated"
    assert "mask" in tab.card.intact.toPlainText().lower() or tab.card.intact.toPlainText()
    assert tab.card.edited.toPlainText().startswith(f"feature {feature} ablated")
    saved = tab.state()
    assert saved["sae"] == str(sae_folder) and saved["task"] == "fill-mask"


def test_bad_folders_and_missing_inputs_say_one_thing(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    tab = tab_of(window, FeaturesTab)
    tab.run_button.click()
    assert "Open an SAE folder first" in tab.message.text() or "Load a model" in tab.message.text()
    tab.sae_path.setText(str(tmp_path))
    with qtbot.waitSignal(tab.open_runner.error, timeout=10_000):
        tab.open_sae()
    assert "is not a SAE folder" in tab.message.text() and tab.found is None


def test_train_an_sae_and_a_lens_in_the_window(qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    from tests.ui.conftest import load_model_in

    tab = tab_of(window, FeaturesTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "MaskedLM"))
    page = tab.train_page
    page.corpus.setText(str(_corpus(tmp_path / "corpus.txt")))
    page.output.setText(str(tmp_path / "sae"))
    page.epochs.setValue(2)
    with qtbot.waitSignal(tab.train_runner.result, timeout=60_000):
        page.train_button.click()
    assert (tmp_path / "sae" / "sae.json").is_file() and tab.found is not None
    assert "Saved in" in page.result.text()
    page.output.setText(str(tmp_path / "lens"))
    with qtbot.waitSignal(tab.train_runner.result, timeout=60_000):
        page.lens_button.click()
    assert (tmp_path / "lens" / "lens.safetensors").is_file() and "Tuned lens saved" in page.result.text()
    page.output.setText(str(tmp_path / "cancelled"))
    page.epochs.setValue(10_000)
    with qtbot.waitSignal(tab.train_runner.cancelled, timeout=60_000):
        page.train_button.click()
        qtbot.waitUntil(lambda: page.progress.label.text().startswith("Step"), timeout=30_000)
        page.cancel_button.click()
    assert not (tmp_path / "cancelled").exists() and not (tmp_path / "cancelled.partial").exists()


def _concepts(path: Path, rows: int = 40) -> Path:
    rng = random.Random(1)
    lines = ["text,concept"]
    for n in range(rows):
        label, words = (("positive", ("good", "new", "big")) if n % 2 else ("negative", ("bad", "old", "small")))
        lines.append(f"the {rng.choice(WORDS[40:70])} was {rng.choice(words)} and {rng.choice(words)},{label}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_evaluate_erases_a_concept_and_shows_what_the_task_loses(qtbot, settings, checkpoint_factory,  # noqa: ANN001
                                                                 tmp_path: Path) -> None:
    from tests.ui.conftest import evaluate_tab, load_model_in

    tab = evaluate_tab(qtbot, settings)
    tab.task_combo.setCurrentIndex(tab.task_combo.findData("classification"))
    load_model_in(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"))
    concepts = _concepts(tmp_path / "concepts.csv")
    data = tmp_path / "data.csv"
    data.write_text(concepts.read_text(encoding="utf-8").replace("text,concept", "text,label"), encoding="utf-8")
    page = tab.erase_page
    assert page.layer.maximum() == 2 and tab.pages.indexOf(page) >= 0
    page.erase_button.click()
    assert "Choose a concept file" in tab.message.text()
    tab.data_file.setText(str(data))
    page.layer.setValue(2)
    page.concept.setText(str(concepts))
    with qtbot.waitSignal(tab.erase_runner.result, timeout=60_000):
        page.erase_button.click()
    erasure = page.erasure
    assert erasure.comparison is not None and page.table.rowCount() == 2 + len(erasure.comparison.a.metrics)
    assert page.table.item(0, 1).text() == f"{erasure.probe_accuracy_before:.4f}"
    assert abs(erasure.probe_accuracy_after - erasure.majority) <= 0.02
    assert "concept erased at layer 2" in tab.compare_page.summary.text()


def test_explain_reads_the_layers_through_a_tuned_lens(qtbot, settings, checkpoint_factory,  # noqa: ANN001
                                                       tmp_path: Path) -> None:
    from bertstudio.core.features.tuned_lens import train_lens
    from bertstudio.ui.local_models import LocalModelsIndex
    from bertstudio.ui.tabs.explain_tab import ExplainTab
    from tests.ui.conftest import load_model_in

    source = checkpoint_factory("bert", "MaskedLM")
    lens = train_lens(load_model(LoadRequest(str(source), "fill-mask")), _corpus(tmp_path / "corpus.txt"),
                      tmp_path / "lens", TaskControl(), epochs=2)
    tab = ExplainTab(settings, LocalModelsIndex(settings))
    qtbot.addWidget(tab)
    tab.resize(1280, 800)
    tab.set_task("fill-mask")
    load_model_in(qtbot, tab, source)
    tab.input.setPlainText("the cat [MASK] on the mat .")
    tab.steps.setValue(4)
    with qtbot.waitSignal(tab.runner.result, timeout=60_000):
        tab.run_button.click()
    view = tab.layers
    assert not view.tuned_side.isVisibleTo(tab) and view.table.horizontalHeaderItem(view.table.columnCount() - 1
                                                                                   ).text() == "KL"
    with qtbot.waitSignal(tab.runner.result, timeout=60_000):
        view.set_lens(str(lens.path))  # chosen after an explanation: read again with it
    assert view.predictions.tuned and view.tuned_cell(0, 0)
    assert view.tuned_cell(2, 0) == view.cell(2, 0)  # the last layer is the answer itself


def test_an_sae_loads_its_model_for_the_task_its_head_was_trained_for(checkpoint_factory) -> None:  # noqa: ANN001
    """A bare encoder loads for the task that reads the encoder alone (no random head, no warning)."""
    from bertstudio.ui.tabs.features_tab import task_for

    assert task_for(str(checkpoint_factory("bert", "Model")), "fill-mask") == "similarity"
    assert task_for(str(checkpoint_factory("bert", "MaskedLM")), "similarity") == "fill-mask"
    assert task_for(str(checkpoint_factory("bert", "SequenceClassification")), "fill-mask") == "classification"
