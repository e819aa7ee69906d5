"""Drive the Explain tab: on its own, from a task tab's result, head importance + pruning, per layer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bertstudio.core.explain.attribution import explain
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.ui.local_models import LocalModelsIndex
from bertstudio.ui.tabs.explain_tab import ExplainTab
from tests.ui.conftest import load_model_in


@pytest.fixture
def tab(qtbot, settings) -> ExplainTab:  # noqa: ANN001
    widget = ExplainTab(settings, LocalModelsIndex(settings))
    widget.resize(1280, 800)
    qtbot.addWidget(widget)
    widget.show()
    return widget


def _classifier_typed_in(qtbot, tab, checkpoint_factory, method: str = "") -> Path:  # noqa: ANN001
    """The tab on a tiny classifier (loaded for classification) with the usual sentence typed in,
    and `method` chosen when given; the classifier's folder."""
    folder = checkpoint_factory("bert", "SequenceClassification")
    tab.set_task("classification")
    load_model_in(qtbot, tab, folder)
    tab.input.setPlainText("a good film about a big dog .")
    if method:
        tab.method.setCurrentIndex(tab.method.findData(method))
    return folder


def _wait(qtbot, tab, action, signal: str = "result") -> None:  # noqa: ANN001
    with qtbot.waitSignal(getattr(tab.runner, signal), timeout=120_000):
        action()


def test_on_its_own_colours_tokens_and_exports(qtbot, tab, checkpoint_factory, tmp_path) -> None:  # noqa: ANN001
    folder = _classifier_typed_in(qtbot, tab, checkpoint_factory)
    tab.steps.setValue(12)
    _wait(qtbot, tab, tab.run_button.click)
    shown = tab.attributions.explanation
    expected = explain(load_model(LoadRequest(str(folder), "classification")), "classification",
                       ("a good film about a big dog .",), steps=12)
    assert shown.attributions == pytest.approx(expected.attributions, abs=1e-6)
    assert tab.attributions.table.rowCount() == len(expected.tokens)
    assert "delta" in tab.attributions.summary.text() and "−" in tab.attributions.legend.text()
    assert {tab.target.itemData(i) for i in range(1, tab.target.count())} == {"negative", "positive"}
    html = tab.attributions.tokens.toHtml()
    assert "good" in html and "background" in html
    tab.attributions.hide_special.setChecked(True)
    assert tab.attributions.table.rowCount() == len(expected.tokens) - 2
    tab.attributions.save_csv(tmp_path / "a.csv")
    tab.attributions.save_json(tmp_path / "a.json")
    assert json.loads((tmp_path / "a.json").read_text())["attributions"] == pytest.approx(expected.attributions)
    assert (tmp_path / "a.csv").read_text().count("\n") == len(expected.tokens) + 1

    tab.target.setCurrentIndex(tab.target.findData("negative"))
    tab.method.setCurrentIndex(tab.method.findData("gradient"))
    _wait(qtbot, tab, tab.run_button.click)
    assert tab.attributions.explanation.target == "negative"
    assert min(tab.attributions.explanation.attributions) >= 0 and "−" not in tab.attributions.legend.text()

    tab.input.setPlainText("")
    tab.run_button.click()
    assert "Type the input" in tab.notes.text()


def test_from_a_task_tab_with_per_layer_and_head_importance(qtbot, tab, checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.jobs import run_spec
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.tasks.fill_mask import FillMaskInput
    from bertstudio.core.tasks.spec import spec_for

    folder = checkpoint_factory("bert", "MaskedLM")
    request = LoadRequest(str(folder), "fill-mask")
    inputs = FillMaskInput("the cat sat on the [MASK] .", 5)
    result = run_spec(spec_for("fill-mask"), request, inputs, TaskControl()).result
    _wait(qtbot, tab, lambda: tab.explain("fill-mask", request, inputs, result))
    top = result.masks[0].candidates
    assert tab.task_key == "fill-mask" and tab.attributions.explanation.target == top[0].token
    assert tab.target.count() > 1
    layers = tab.layers.predictions
    assert [c.token_id for c in layers.layers[-1][0]] == [c.token_id for c in top]
    assert tab.layers.table.rowCount() == 3 and top[0].token in tab.layers.cell(2, 0)

    _wait(qtbot, tab, lambda: tab.importance.compute_button.click())
    assert tab.importance.image.image.shape == (2, 2)  # heads x layers
    tab.importance.k.setValue(2)
    _wait(qtbot, tab, tab.importance.prune_button.click)
    assert tab.importance.intact.toPlainText().strip() and tab.importance.pruned.toPlainText().strip()
    assert top[0].token in tab.importance.intact.toPlainText()
    assert tab.importance.pruned_label.text().startswith("switching off")


def test_cancel_mid_explanation(qtbot, tab, checkpoint_factory) -> None:  # noqa: ANN001
    _classifier_typed_in(qtbot, tab, checkpoint_factory)
    tab.steps.setValue(5000)
    with qtbot.waitSignal(tab.runner.cancelled, timeout=60_000):
        tab.run_button.click()
        assert tab.runner.busy
        tab.cancel()  # what Cancel (or Esc) does; the job stops at its next check
    assert "Cancelled" in tab.notes.text()
    assert tab.run_button.isEnabled()


def _settle() -> None:
    """Let the layouts apply their pending geometry (no sleep: posted events only)."""
    from PySide6.QtWidgets import QApplication

    for _ in range(3):
        QApplication.sendPostedEvents()
        QApplication.processEvents()


def _top(widget) -> int:  # noqa: ANN001
    from PySide6.QtCore import QPoint

    return widget.mapTo(widget.window(), QPoint(0, 0)).y()


def test_switching_the_task_reloads_the_model_for_it(qtbot, tab, checkpoint_factory) -> None:  # noqa: ANN001
    """Issue 9: the bar kept the old task's class and head warning, and Explain said "Load a model
    for Fill-mask first". Issue 10: the rows below the warning stay where they are."""
    tab.set_task("classification")
    load_model_in(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"))
    _settle()
    assert not tab.model_bar.warning_label.isVisible() and tab.head_warning.text() == ""
    run_top, pages_top = _top(tab.run_button), _top(tab.pages)
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.set_task("fill-mask")  # the same checkpoint has no masked-LM head
    info = tab.model_info
    assert info.request.task == "fill-mask" and info.architecture == "BertForMaskedLM" and info.head_warning
    _settle()
    assert "no trained fill-mask head" in tab.head_warning.text() and tab.head_warning.isVisible()
    assert not tab.model_bar.warning_label.isVisible()  # said once, on the summary's line
    assert (_top(tab.run_button), _top(tab.pages)) == (run_top, pages_top)  # the warning took reserved room
    tab.input.setPlainText("the cat [MASK] on the mat .")
    tab.steps.setValue(4)
    _wait(qtbot, tab, tab.run_button.click)
    assert "Load a model" not in tab.notes.text() and tab.attributions.explanation is not None
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.set_task("classification")
    _settle()
    assert tab.head_warning.text() == "" and tab.model_info.request.task == "classification"
    assert (_top(tab.run_button), _top(tab.pages)) == (run_top, pages_top)  # and vanished without a jump


def test_no_empty_row_waits_for_a_head_warning(qtbot, tab) -> None:  # noqa: ANN001
    """The walkthrough: ~40 px of nothing between the model's line and "Task:", reserved for a warning
    that was not there. The warning now shares the model's line (elided, whole in the tooltip)."""
    info = tab.model_bar.info_label
    _settle()
    gap = _top(tab.task_combo) - (_top(info) + info.height())
    assert gap <= 12, gap  # the layouts' spacing, no reserved row
    task_top = _top(tab.task_combo)
    long = "⚠ " + "the model has no trained head for this task, so its outputs are random; " * 4
    tab.head_warning.setText(long)
    _settle()
    assert _top(tab.task_combo) == task_top and _top(tab.head_warning) == _top(info)
    assert tab.head_warning.is_elided() and tab.head_warning.toolTip() == long
    assert tab.window().width() <= 1280  # never widens the window


def test_escape_cancels_and_steps_are_bounded(qtbot, tab, checkpoint_factory) -> None:  # noqa: ANN001
    from PySide6.QtCore import Qt

    from bertstudio.core.limits import MAX_IG_STEPS

    tab.steps.setValue(10 ** 6)
    assert tab.steps.value() == MAX_IG_STEPS  # the core's bound, not more
    tab.set_task("classification")
    load_model_in(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"))
    tab.input.setPlainText("a good film about a big dog .")
    tab.activateWindow()
    tab.input.setFocus()
    with qtbot.waitSignal(tab.runner.cancelled, timeout=60_000):
        tab.run_button.click()
        assert tab.runner.busy
        qtbot.keyClick(tab.input, Qt.Key.Key_Escape)
    assert "Cancelled" in tab.notes.text() and tab.run_button.isEnabled()


def test_the_task_list_is_the_specs_with_an_explain_adapter(qtbot, settings, monkeypatch) -> None:  # noqa: ANN001
    import dataclasses

    from bertstudio.core.tasks.spec import all_specs

    def listed() -> list[str]:
        widget = ExplainTab(settings, LocalModelsIndex(settings))
        qtbot.addWidget(widget)
        return [widget.task_combo.itemData(i) for i in range(widget.task_combo.count())]

    assert listed() == [key for key, spec in all_specs().items() if spec.explain is not None]
    assert "attention" not in listed()
    monkeypatch.setitem(all_specs(), "ner", dataclasses.replace(all_specs()["ner"], explain=None))
    assert "ner" not in listed()  # no table of its own: a spec without the adapter is not offered


def test_a_spec_without_explain_gets_no_explain_button(qtbot, settings, monkeypatch, checkpoint_factory) -> None:  # noqa: ANN001
    """The template's Explain… is the spec's: without an adapter it is hidden and clicking it does nothing."""
    import dataclasses

    from bertstudio.core.tasks.classification import ClassificationInput
    from bertstudio.core.tasks.spec import all_specs
    from bertstudio.ui.tabs.attention_tab import AttentionTab
    from bertstudio.ui.tabs.classification_tab import ClassificationTab

    def made(kind: type) -> object:
        widget = kind(settings, LocalModelsIndex(settings))
        qtbot.addWidget(widget)
        widget.show()
        return widget

    assert not made(ClassificationTab).explain_button.isHidden()
    assert made(AttentionTab).explain_button.isHidden()
    monkeypatch.setitem(all_specs(), "classification",
                        dataclasses.replace(all_specs()["classification"], explain=None))
    tab = made(ClassificationTab)
    assert tab.explain_button.isHidden()
    load_model_in(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"))
    tab.set_inputs(ClassificationInput("the cat sat on the mat", None))
    with qtbot.waitSignal(tab.runner.result, timeout=30_000):
        tab.run()
    assert tab.explain_button.isHidden()  # a result does not bring it back
    with qtbot.assertNotEmitted(tab.explain_requested):
        tab._explain()


def test_method_settings_show_only_where_they_apply(qtbot, tab) -> None:  # noqa: ANN001
    """IG: steps, Converge, baseline; LIME / SHAP: samples and seed; All: steps, samples, seed. Explain stays put."""
    options = tab.options
    _settle()
    run_top, run_left = _top(tab.run_button), tab.run_button.x()
    expected = {
        "integrated-gradients": {options.steps, options.converge, options.baseline},
        "grad-x-input": set(), "gradient": set(), "occlusion": set(),
        "lime": {options.samples, options.seed}, "kernel-shap": {options.samples, options.seed},
        "all": {options.steps, options.samples, options.seed},
    }
    for method, shown in expected.items():
        tab.method.setCurrentIndex(tab.method.findData(method))
        _settle()
        fields = {options.steps, options.converge, options.baseline, options.samples, options.seed}
        assert {w for w in fields if w.isVisible()} == shown, method
        assert options.faithfulness.isVisible()
        assert (_top(tab.run_button), tab.run_button.x()) == (run_top, run_left), method
    options.samples.setValue(10 ** 6)
    assert options.samples.value() == 4096  # core.limits.MAX_PERTURBATION_SAMPLES
    options.samples.setValue(1)
    assert options.samples.value() == 8
    tab.method.setCurrentIndex(tab.method.findData("lime"))
    options.seed.setValue(5)
    state = tab.state()
    assert state["method"] == "lime" and state["seed"] == 5 and state["faithfulness"] is True
    tab.method.setCurrentIndex(0)
    tab.restore({**state, "samples": "many"})  # a wrong field is left as it is
    assert tab.method.currentData() == "lime" and options.seed.value() == 5 and options.samples.value() == 256


def test_lime_with_faithfulness_shows_samples_and_the_bins(qtbot, tab, checkpoint_factory) -> None:  # noqa: ANN001
    folder = _classifier_typed_in(qtbot, tab, checkpoint_factory, "lime")
    tab.options.samples.setValue(24)
    tab.options.seed.setValue(2)
    _wait(qtbot, tab, tab.run_button.click)
    shown = tab.attributions.explanation
    expected = explain(load_model(LoadRequest(str(folder), "classification")), "classification",
                       ("a good film about a big dog .",), "lime", samples=24, seed=2, faithfulness=True)
    assert shown.attributions == pytest.approx(expected.attributions, abs=1e-9)
    assert "24 samples · seed 2" in tab.attributions.summary.text()
    table = tab.faithfulness.table
    assert table.rowCount() == 1 and table.item(0, 0).text() == "LIME"
    assert float(table.item(0, 1).text()) == pytest.approx(expected.faithfulness.aopc_comprehensiveness, abs=1e-3)
    assert [float(table.item(0, c).text()) for c in range(8, 13)] == pytest.approx(
        list(expected.faithfulness.sufficiency), abs=1e-3)


def test_all_methods_side_by_side_with_agreement_and_faithfulness(qtbot, tab, checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.explain.compare import ALL, spearman

    folder = _classifier_typed_in(qtbot, tab, checkpoint_factory, "all")
    tab.steps.setValue(6)
    tab.options.samples.setValue(16)
    events = []
    tab.runner.progress.connect(events.append)
    _wait(qtbot, tab, tab.run_button.click)
    view = tab.methods
    assert tab.pages.currentWidget() is view
    explanations = view.methods.explanations
    assert [(e.method, e.baseline or "pad") for e in explanations] == list(ALL)
    assert view.image.image.shape == (len(ALL), sum(not s for s in explanations[0].special))  # methods x tokens
    occlusion = explanations[4]
    reference = explain(load_model(LoadRequest(str(folder), "classification")), "classification",
                        ("a good film about a big dog .",), "occlusion")
    assert occlusion.attributions == pytest.approx(reference.attributions, abs=1e-9)
    assert view.agreement.rowCount() == view.agreement.columnCount() == len(ALL)
    value = spearman(explanations[2], explanations[3])  # IG [PAD] vs IG zero
    assert view.agreement.item(2, 3).text() == ("–" if value is None else f"{value:+.2f}")
    assert view.faithfulness.table.rowCount() == len(ALL)
    assert all(e.faithfulness is not None for e in explanations)
    assert "16 samples, seed 0" in view.summary.text() and "IG: 6 steps" in view.summary.text()
    fractions = [e.fraction for e in events if getattr(e, "fraction", None) is not None]
    assert fractions and fractions == sorted(fractions) and fractions[-1] == 1.0  # one bar over the whole set
    assert any("(7 of 7)" in e.message for e in events)

    tab.options.samples.setValue(4096)
    with qtbot.waitSignal(tab.runner.cancelled, timeout=60_000):
        tab.run_button.click()
        tab.cancel()
    assert "Cancelled" in tab.notes.text() and tab.run_button.isEnabled()


def test_the_chosen_tuned_lens_comes_back_with_the_workspace(qtbot, tab) -> None:  # noqa: ANN001
    tab.layers.lens.setText("/models/lens-albert")
    saved = tab.state()
    assert saved["tuned_lens"] == "/models/lens-albert"
    tab.layers.lens.setText("")
    tab.restore(saved)
    assert tab.layers.lens_path() == "/models/lens-albert"
