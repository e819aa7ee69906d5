"""Tests tab (issue 31): a suite on a tiny classifier and a second model in the worker, the results
table per test equal to the core's figures, a failing case opened in its task tab, "Fine-tune on
failures" handing a new file beside the data to Train, a malformed suite's message, Cancel, and a
usable 900x600 window."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt

from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from bertstudio.core.suites.runner import run_suite
from bertstudio.core.suites.suite import read_suite
from bertstudio.core.tasks.classification import ClassificationInput
from bertstudio.ui.tabs.tests_tab import TestsTab
from tests.ui.conftest import only_tabs, tab_of

window_tabs = only_tabs("tests_tab", "classification_tab", "train_tab", "fill_mask_tab")
SUITE = {"task": "classify", "tests": [
    {"name": "mft positive", "type": "MFT", "template": "the {a} sat on the {b}",
     "fill": {"a": ["cat", "dog", "man", "woman"], "b": ["mat", "house", "tree"]}, "expect": "positive"},
    {"name": "mft negative", "type": "MFT", "template": "the {a} sat on the {b}",
     "fill": {"a": ["cat", "dog", "man", "woman"], "b": ["mat", "house", "tree"]}, "expect": "negative"},
    {"name": "inv", "type": "INV", "template": "{who} lives in {where}", "fill": {"who": ["John", "Mary", "Anna"],
                                                                                  "where": ["Paris", "Rome"]},
     "perturb": "names", "seed": 0, "samples": 2},
    {"name": "dir", "type": "DIR", "label": "positive", "direction": "up",
     "pairs": [["the cat", "the good cat"], ["a day", "a good day"], ["music", "good music"]]},
]}


def _suite(tmp_path: Path, data: dict = SUITE) -> Path:
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _run(qtbot, tab: TestsTab) -> None:  # noqa: ANN001
    with qtbot.waitSignal(tab.runner.finished, timeout=120_000):
        tab.run_button.click()


def test_runs_a_suite_compares_opens_a_failure_and_hands_failures_to_train(
        qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    a = str(checkpoint_factory("bert", "SequenceClassification"))
    b = str(checkpoint_factory("distilbert", "SequenceClassification"))
    window.resize(900, 600)
    tab = tab_of(window, TestsTab)
    window.tabs.setCurrentWidget(tab)
    tab.picker.set_path(str(_suite(tmp_path)))
    assert tab.model_bar.task == "classification" and "4 tests" in tab.suite_info.text()
    tab.model_bar.source.setEditText(a)
    tab.compare_source.set_source(b)
    said: list[str] = []
    tab.status.connect(said.append)
    _run(qtbot, tab)
    assert tab.result is not None and tab.result.b is not None
    r = tab.result  # issue 40: the Log said model A's count alone after a comparison
    assert said[-1] == (f"Tests: A (bert-SequenceClassification) {r.a.failures} of {r.a.cases} cases failed "
                        f"({r.a.failures / r.a.cases:.1%}); B (distilbert-SequenceClassification) {r.b.failures} "
                        f"of {r.b.cases} cases failed ({r.b.failures / r.b.cases:.1%})")
    expected = run_suite(load_model(LoadRequest(a, "classification")), read_suite(_suite(tmp_path)), TaskControl())
    other = run_suite(load_model(LoadRequest(b, "classification")), read_suite(_suite(tmp_path)), TaskControl())
    shown = tab.results.tests.source_model.records
    assert [(r[0], r[2], r[3], r[4], r[5]) for r in shown] == [
        (x.name, x.cases, x.failures, x.failure_rate, y.failure_rate)
        for x, y in zip(expected.tests, other.tests, strict=True)]

    # a test's failing cases (on A or B) are listed; a double-clicked one opens in Classification
    row = next(i for i, t in enumerate(expected.tests) if t.failures)  # an MFT: one of the two fails
    tab.results.tests.selectRow(row)
    failing = [x for x, y in zip(expected.tests[row].outcomes, other.tests[row].outcomes, strict=True)
               if not x.passed or not y.passed]
    assert tab.results.cases.visible_rows() == len(failing) > 0
    classification = window.task_tabs["classification"]
    case = tab.results.cases.payload_at(0)
    with qtbot.waitSignal(classification.model_bar.loaded, timeout=60_000):
        tab.results.cases.doubleClicked.emit(tab.results.cases.model().index(0, 1))
    assert window.tabs.currentWidget() is classification
    assert classification.inputs() == ClassificationInput(case.original[0], None)
    qtbot.waitUntil(lambda: not classification.runner.busy and classification.result is not None, timeout=30_000)

    # Fix it: a new file beside the data (the data untouched), Train shown with it, B = the model to come
    data = tmp_path / "train.csv"
    data.write_text("text,label\nthe cat,positive\nthe dog,negative\n", encoding="utf-8")
    before = data.read_bytes()
    tab.data_file.setText(str(data))
    assert tab.fix_button.isEnabled()
    tab.fix_button.click()
    train = window.task_tabs["pretraining"]
    assert window.tabs.currentWidget() is train
    written = Path(train.train_file.text())
    assert written.parent == tmp_path and written != data and written.is_file() and data.read_bytes() == before
    assert train.base_model.text() == a and train.task.currentData() == "text-classification"
    assert tab.compare_source.source() == train.output_dir.text() and tab.held_apart.isChecked()
    shown_cases = sum(r[2] for r in tab.results.tests.source_model.records)
    assert 0 < shown_cases < expected.cases  # the held-apart halves only

    # the run ends (faked: B's weights saved where Train was told to write): suite + held-out re-run on both
    import shutil
    from types import SimpleNamespace

    from bertstudio.core.evaluate.evaluation import EvalRequest, evaluate_job
    from bertstudio.core.suites.fix import measured

    held_out = tmp_path / "held_out.csv"
    held_out.write_text("text,label\nthe cat sat,positive\na dog ran,negative\ngood music,positive\n", "utf-8")
    tab.held_out_file.setText(str(held_out))
    train.result = SimpleNamespace(output_dir=str(tmp_path))  # another run's folder: not this fix
    train.run_ended.emit()
    assert not tab.runner.busy and tab.pending_fix is not None
    shutil.copytree(b, train.output_dir.text())
    train.result = SimpleNamespace(output_dir=train.output_dir.text())
    with qtbot.waitSignal(tab.runner.finished, timeout=120_000):
        train.run_ended.emit()
    assert tab.result.b is not None and tab.result.b.model == train.output_dir.text()
    assert window.tabs.currentWidget() is tab
    after = run_suite(load_model(LoadRequest(train.output_dir.text(), "classification")), read_suite(
        _suite(tmp_path)), TaskControl())
    shown = tab.results.tests.source_model.records
    assert [(r[0], r[2], r[3], r[5]) for r in shown] == [
        (x.name, x.cases, x.failures, y.failure_rate)
        for x, y in zip(measured(expected), measured(after), strict=True)]
    evaluated = evaluate_job(LoadRequest(a, "classification"), EvalRequest(str(held_out)), TaskControl(),
                             train.output_dir.text())
    summary = tab.fix_summary.text()
    assert "never saw" in summary and "held_out.csv" in summary
    assert f"{evaluated.a.metrics['accuracy']:.3f} → {evaluated.b.metrics['accuracy']:.3f}" in summary
    assert tab.pending_fix is None  # once: a later run elsewhere does not re-run it


def test_a_malformed_suite_says_which_test_and_field(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    tab = tab_of(window, TestsTab)
    bad = {"task": "classify", "tests": [{"name": "negation", "type": "DIR", "pairs": [["a", "b"]], "label": "x",
                                          "direction": "sideways"}]}
    tab.picker.set_path(str(_suite(tmp_path, bad)))
    assert "test 'negation', field 'direction'" in tab.notes.text()
    tab.run_button.click()
    assert not tab.runner.busy


def test_cancel_ends_the_run(qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    tab = tab_of(window, TestsTab)
    big = {"task": "classify", "tests": [{"name": "many", "type": "MFT", "template": "the cat {a} sat {b}",
                                          "fill": {"a": [str(i) for i in range(100)], "b": [str(i) for i in range(50)]},
                                          "expect": "positive"}]}
    tab.picker.set_path(str(_suite(tmp_path, big)))
    tab.model_bar.source.setEditText(str(checkpoint_factory("bert", "SequenceClassification")))
    with qtbot.waitSignal(tab.runner.cancelled, timeout=120_000):
        tab.run_button.click()
        tab.lifecycle.cancel()
    assert "Cancelled." in tab.notes.text() and tab.result is None


def test_mask_words_are_suggested_shown_and_can_be_unticked(
        qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    from bertstudio.core.models import LoadRequest as Request
    from bertstudio.core.suites.masks import mask_request, model_predictor, suggest

    mlm = str(checkpoint_factory("bert"))
    masked = {"task": "classify", "mask_model": mlm, "mask_top_k": 3, "tests": [
        {"name": "masked", "type": "MFT", "template": "the {a} was {mask}", "fill": {"a": ["cat", "dog"]},
         "expect": "positive"}]}
    tab = tab_of(window, TestsTab)
    tab.picker.set_path(str(_suite(tmp_path, masked)))
    assert tab.mask_panel.isVisibleTo(tab) and tab.suite is None and "{mask}" in tab.suite_info.text()
    assert tab.mask_panel.source.text() == mlm
    with qtbot.waitSignal(tab.runner.finished, timeout=60_000):
        tab.mask_panel.suggest_button.click()
    loaded = load_model(mask_request(mlm, Request(mlm, "classification")))
    predictor, token = model_predictor(loaded, 3)
    words = suggest(["the {a} was {mask}"], {"a": ["cat", "dog"]}, predictor, token, 3)
    shown = [tab.mask_panel.list.item(i).text() for i in range(tab.mask_panel.list.count())]
    assert shown == [f"masked: {w}" for w in words]
    assert tab.suite is not None and len(tab.suite.tests[0].cases) == 2 * len(words)
    tab.mask_panel.list.item(0).setCheckState(Qt.CheckState.Unchecked)
    assert [c.original[0] for c in tab.suite.tests[0].cases] == [
        f"the {a} was {w}" for a in ("cat", "dog") for w in words[1:]]


def test_a_head_not_trained_for_the_suite_or_for_mask_is_said(
        qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 38 #3: a classifier filling `{mask}`, and a masked LM scored on a classification suite, are
    still run, but the notes say the head was never trained for it (as a task tab's model bar does)."""
    classifier, mlm = str(checkpoint_factory("bert", "SequenceClassification")), str(checkpoint_factory("bert"))
    masked = {"task": "classify", "mask_model": classifier, "mask_top_k": 2, "tests": [
        {"name": "masked", "type": "MFT", "template": "the cat was {mask}", "expect": "LABEL_1"}]}  # an MLM's labels
    tab = tab_of(window, TestsTab)
    tab.picker.set_path(str(_suite(tmp_path, masked)))
    with qtbot.waitSignal(tab.runner.finished, timeout=60_000):
        tab.mask_panel.suggest_button.click()
    assert "no trained fill-mask head" in tab.notes.text()  # with its words, or why there are none
    plain = {"task": "classify", "tests": [{"name": "plain", "type": "MFT", "inputs": ["the cat"],
                                            "expect": "LABEL_1"}]}
    path = tmp_path / "plain" / "suite.json"
    path.parent.mkdir()
    path.write_text(json.dumps(plain), encoding="utf-8")
    tab.picker.set_path(str(path))
    tab.model_bar.source.setEditText(mlm)
    _run(qtbot, tab)
    assert tab.result is not None and "no trained classification head" in tab.notes.text()


def test_mask_words_default_to_the_fill_mask_tabs_model(qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    mlm = str(checkpoint_factory("bert"))
    masked = {"task": "classify", "tests": [{"name": "masked", "type": "MFT", "template": "a {mask} day",
                                             "expect": "positive"}]}
    tab = tab_of(window, TestsTab)
    tab.picker.set_path(str(_suite(tmp_path, masked)))
    tab.mask_panel.suggest_button.click()  # no masked LM anywhere: a message, nothing runs
    assert "masked LM" in tab.notes.text() and not tab.runner.busy
    fill_mask = window.task_tabs["fill-mask"]
    with qtbot.waitSignal(fill_mask.model_bar.loaded, timeout=60_000):
        fill_mask.open_model(mlm)
    with qtbot.waitSignal(tab.runner.finished, timeout=60_000):
        tab.mask_panel.suggest_button.click()
    assert tab.mask_panel.source.text() == mlm and tab.mask_panel.list.count() > 0 and tab.suite is not None


def test_a_real_fix_run_reruns_the_suite_when_training_ends(qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    """The hook on the Train tab's own end of run: a 3-step fine-tune started by Fine-tune on failures."""
    a = str(checkpoint_factory("bert", "SequenceClassification"))
    tab = tab_of(window, TestsTab)
    tab.picker.set_path(str(_suite(tmp_path)))
    tab.model_bar.source.setEditText(a)
    _run(qtbot, tab)
    data = tmp_path / "train.csv"
    data.write_text("text,label\n" + "".join(f"the cat {i},positive\nthe dog {i},negative\n" for i in range(10)),
                    encoding="utf-8")
    tab.data_file.setText(str(data))
    tab.fix_button.click()
    train = window.task_tabs["pretraining"]
    train.max_steps.setValue(3)
    train.batch_size.setValue(4)
    train.max_length.setValue(16)
    train.eval_steps.setValue(0)
    with qtbot.waitSignal(train.run_ended, timeout=120_000):
        train.start()
    assert train.result is not None and Path(train.result.output_dir).is_dir()
    qtbot.waitUntil(lambda: tab.result is not None and tab.result.b is not None and not tab.runner.busy,
                    timeout=120_000)
    assert tab.result.b.model == train.result.output_dir and window.tabs.currentWidget() is tab
    assert "never saw" in tab.fix_summary.text()


def test_fixing_on_a_demo_file_asks_for_a_folder_and_never_writes_into_bertstudio(
        qtbot, window, checkpoint_factory, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Issue 40: Fine-tune on failures wrote a copy of a demo dataset into the app's own resources/."""
    from bertstudio.resources import resource_path

    tab = tab_of(window, TestsTab)
    tab.picker.set_path(str(_suite(tmp_path)))
    tab.model_bar.source.setEditText(str(checkpoint_factory("bert", "SequenceClassification")))
    _run(qtbot, tab)
    demo = resource_path("datasets", "reviews_train.csv")
    before = sorted(p.name for p in demo.parent.iterdir())
    tab.data_file.setText(str(demo))
    monkeypatch.setattr(tab, "choose_fix_folder", lambda: "")  # the folder dialog cancelled
    tab.fix_button.click()
    assert "choose a folder" in tab.notes.text().lower()
    assert window.tabs.currentWidget() is not window.task_tabs["pretraining"]  # Train not opened
    chosen = tmp_path / "fixes"
    chosen.mkdir()
    monkeypatch.setattr(tab, "choose_fix_folder", lambda: str(chosen))
    tab.fix_button.click()
    written = Path(window.task_tabs["pretraining"].train_file.text())
    assert written.parent == chosen and written.is_file()
    assert sorted(p.name for p in demo.parent.iterdir()) == before


def test_choosing_a_suite_reads_it_once(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    """set_path says `changed` once, whether the suite is listed (a new index says it itself), typed, or the
    one already shown: the tab reads and parses the file on each."""
    from bertstudio.ui.widgets.suite_controls import SuitePicker

    picker = SuitePicker()
    qtbot.addWidget(picker)
    said: list[None] = []
    picker.changed.connect(lambda: said.append(None))
    listed = [picker.combo.itemData(i) for i in range(picker.combo.count())]
    for path in (listed[-1], listed[-1], str(tmp_path / "mine.json")):
        said.clear()
        picker.set_path(path)
        assert len(said) == 1, path
    assert picker.path() == str(tmp_path / "mine.json")
