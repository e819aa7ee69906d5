"""One state object per tab (issue 29): every tab's model, inputs, compare and heads off come back
through TabState after two restarts; the Out-of-date mark, Export and Explain… read the result's own
origin from it, never the boxes as they are now."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings

from bertstudio.core.models import LoadRequest
from bertstudio.core.tasks.classification import ClassificationInput
from bertstudio.core.tasks.fill_mask import FillMaskInput
from bertstudio.ui import workspace
from bertstudio.ui.export import export_tab
from bertstudio.ui.settings import AppSettings
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.tabs.tab_state import RunState, TabState
from tests.ui.conftest import load_model_in, run_tab, with_tabs


def _new_window(qtbot, folder: Path):  # noqa: ANN001, ANN202
    from bertstudio.ui.main_window import MainWindow

    folder.mkdir(parents=True, exist_ok=True)
    settings = AppSettings(QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat))
    win = MainWindow(settings, confirm_close=False)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=60_000):
        win.show()
    return win


def _bound(tab: Any) -> dict[str, Any]:
    """What the widgets hold, read through the tab's state object (splitter sizes follow the window)."""
    data = tab.read_state().to_json()
    data.pop("splitter", None)
    return data


def test_state_json_round_trips_and_ignores_wrong_kinds() -> None:
    state = TabState("ner", model="/m/a", compare="/m/b", heads_off="0:1", view={"text": "x", "top_k": 3},
                     splitter=[100, 300], pins={"pins": [{"label": "p", "view": {"text": "y"}}], "pin": 0},
                     has_compare=True, has_run_options=True)
    data = json.loads(json.dumps(state.to_json()))
    assert TabState.from_json("ner", data).to_json() == data
    wrong = TabState.from_json("ner", {"model": 3, "heads_off": ["x"], "view": "text", "splitter": [1]})
    assert (wrong.model, wrong.heads_off, wrong.view, wrong.splitter) == ("", "", {}, [])


def test_staleness_and_export_frame_come_from_the_result_origin() -> None:
    a, b = LoadRequest("/m/a", "fill-mask"), LoadRequest("/m/b", "fill-mask")
    shown = RunState(a, FillMaskInput("a [MASK] .", 5), (), None)
    state = TabState("fill-mask", loaded="/m/b", result=shown, now=shown._replace(model=b))
    assert state.stale_reason() == "model"
    state.now = shown._replace(inputs=FillMaskInput("b [MASK] .", 5))
    assert state.stale_reason() == "input"
    state.now = shown
    assert state.stale_reason() == ""
    frame = state.result_json()
    assert (frame["task"], frame["model"], frame["inputs"]["text"]) == ("fill-mask", "/m/a", "a [MASK] .")


def test_every_tab_comes_back_through_its_state_object_after_two_restarts(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    for key, tab in window.task_tabs.items():
        if hasattr(tab, "model_bar"):
            tab.model_bar.source.setEditText(f"/models/{key}-model")
        if isinstance(tab, TaskTab):
            tab.heads_off.setText("0:1")
            tab.compare_source.set_source(f"/models/{key}-other")
            found = tab.examples()
            if found:
                tab.use_example(found[-1][1])
    before = {key: _bound(tab) for key, tab in window.task_tabs.items()}
    assert before["classification"]["heads_off"] == "0:1"
    assert before["classification"]["view"] != TabState("classification").view  # an example's text is in
    data = workspace.capture(window)
    for restart in range(2):
        other = _new_window(qtbot, tmp_path / f"restart{restart}")
        try:
            with qtbot.waitSignal(other.workspace.restored, timeout=30_000):
                other.workspace.apply(data)
            for key, tab in other.task_tabs.items():  # read back from the widgets, not the file
                assert _bound(tab) == before[key], key
            data = workspace.capture(other)
        finally:
            other.close()


@with_tabs()
def test_a_new_model_marks_the_result_out_of_date_and_export_keeps_its_inputs(
        qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    tab = window.task_tabs["fill-mask"]
    first = str(checkpoint_factory("bert"))
    load_model_in(qtbot, tab, first)
    tab.set_inputs(FillMaskInput("the cat [MASK] on the mat .", 5))
    run_tab(qtbot, tab, idle=True)
    assert tab.read_state().result is not None and tab.stale_reason() == ""
    tab.text.setPlainText("a dog [MASK] here .")
    assert tab.read_state().stale_reason() == "input" and tab.stale_reason() == "input"
    written = json.loads(export_tab(tab, tmp_path / "r.json").read_text(encoding="utf-8"))
    assert (written["model"], written["inputs"]["text"]) == (first, "the cat [MASK] on the mat .")
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.model_bar.load(str(checkpoint_factory("bert", "SequenceClassification")))
        qtbot.waitUntil(lambda: tab.model_bar.busy, timeout=10_000)
        assert tab.stale_reason() == "model"  # while the other model loads
    assert tab.read_state().result is None  # its result went with the model it came from


@with_tabs("classification_tab")
def test_explain_gets_the_result_own_inputs_not_the_box(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    tab = window.task_tabs["classification"]
    folder = str(checkpoint_factory("bert", "SequenceClassification"))
    load_model_in(qtbot, tab, folder)
    tab.set_inputs(ClassificationInput("a good film ."))
    run_tab(qtbot, tab, idle=True)
    tab.set_inputs(ClassificationInput("typed after the run ."))  # the box changed; the result did not
    with qtbot.waitSignal(tab.explain_requested, timeout=5_000) as handed:
        tab.explain_button.click()
    request = handed.args[0]
    assert request.inputs == ClassificationInput("a good film .") == tab.read_state().result.inputs
    assert request.request.source == folder


def test_the_walkthrough_reports_a_result_that_disagrees_with_its_state(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    import walkthrough

    tab = window.task_tabs["fill-mask"]
    window.tabs.setCurrentWidget(tab)
    load_model_in(qtbot, tab, checkpoint_factory("bert"))
    tab.set_inputs(FillMaskInput("the cat [MASK] on the mat .", 5))
    run_tab(qtbot, tab, idle=True)
    assert walkthrough.origin_problems(window) == []
    tab.text.setPlainText("another [MASK] .")
    qtbot.waitUntil(lambda: not tab.stale_banner.isHidden(), timeout=5_000)
    assert walkthrough.origin_problems(window) == []  # out of date, and it says so
    tab.stale_banner.setVisible(False)  # a view that forgets the mark
    assert walkthrough.origin_problems(window) == [
        "fill-mask: the result's input differs from the tab's, with no Out-of-date mark"]


@with_tabs("classification_tab")
def test_switching_an_input_page_is_watched(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    """Found by the walkthrough's origin check: Classification's Batch page changes what Run would
    classify (the state object's input), yet the single text's result stayed unmarked."""
    from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

    from bertstudio.ui.binding import watch_inputs

    top = QWidget()
    qtbot.addWidget(top)
    pages = QTabWidget()
    pages.addTab(QWidget(), "Text")
    pages.addTab(QWidget(), "Batch")
    QVBoxLayout(top).addWidget(pages)
    calls: list[object] = []
    watch_inputs(top, lambda *args: calls.append(args))
    pages.setCurrentIndex(1)
    assert calls == [(1,)]
    tab = window.task_tabs["classification"]  # and the tab's state object calls it a new input
    load_model_in(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"))
    tab.lines.setPlainText("one\ntwo")
    tab.set_inputs(ClassificationInput("a good film ."))
    run_tab(qtbot, tab, idle=True)
    tab.modes.setCurrentIndex(1)
    assert tab.read_state().stale_reason() == "input"
    qtbot.waitUntil(lambda: not tab.stale_banner.isHidden(), timeout=5_000)


def test_the_origins_name_every_field_they_compare() -> None:
    """Train's and Tests' Out-of-date marks list the differing fields by name: a field left out of the
    names would change silently, never marking the result out of date."""
    from dataclasses import fields

    from bertstudio.ui.train import origin as train_origin
    from bertstudio.ui.widgets import suite_origin

    for names, kind in ((train_origin.NAMES, train_origin.TrainInputs), (suite_origin.NAMES, suite_origin.SuiteInputs)):
        assert list(names) == [f.name for f in fields(kind)]
