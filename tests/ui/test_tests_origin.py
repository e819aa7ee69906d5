"""Issue 29: the Tests tab's shown suite results know the model, suite, data, held-apart/held-out
settings and compared model they were computed from; a change marks them Out of date (never hides
them) and the mark goes when the tab matches again."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bertstudio.ui.tabs.tests_tab import TestsTab
from tests.ui.conftest import only_tabs, tab_of
from tests.ui.test_tests_tab import SUITE, _run, _suite

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import walkthrough  # noqa: E402

window_tabs = only_tabs("tests_tab")


def test_shown_suite_results_keep_their_origin_and_are_marked_when_it_changes(
        qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    a = str(checkpoint_factory("bert", "SequenceClassification"))
    tab = tab_of(window, TestsTab)
    first = str(_suite(tmp_path))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**SUITE, "tests": SUITE["tests"][:1]}), encoding="utf-8")
    tab.picker.set_path(first)
    tab.model_bar.source.setEditText(a)
    tab.data_file.setText(str(tmp_path / "train.csv"))
    assert tab.result_origin() is None
    _run(qtbot, tab)
    shown = tab.result_origin()
    assert shown is not None and shown.model is not None and shown.model.source == a and shown.compare is None
    assert (shown.inputs.suite, shown.inputs.data, shown.inputs.held_out) == (first, str(tmp_path / "train.csv"), "")
    assert shown == tab.origin_now() and tab.read_state().stale_reason() == "" and not tab.stale_banner.reason
    assert walkthrough.origin_problems(window) == []  # the run loaded its model itself: still current

    tab.picker.set_path(str(other))
    assert tab.stale_banner.reason == "suite" and tab.stale_banner.isVisibleTo(tab)
    assert tab.read_state().stale_reason() == "suite" and tab.result_origin() == shown  # as the banner (issue 40)
    assert walkthrough.origin_problems(window) == []  # differs, and says so
    assert tab.results.tests.model().rowCount() == len(SUITE["tests"])  # the record stays, marked
    tab.picker.set_path(first)
    assert tab.stale_banner.reason == "" and not tab.stale_banner.isVisibleTo(tab)

    tab.model_bar.source.setEditText(str(tmp_path / "another-model"))
    assert tab.stale_banner.reason == "model" and tab.read_state().stale_reason() == "model"
    tab.model_bar.source.setEditText(a)
    tab.compare_source.set_source(a)
    assert tab.stale_banner.reason == "compared model"
    tab.compare_source.enabled.setChecked(False)
    tab.held_out_file.setText(str(tmp_path / "held-out.csv"))
    assert tab.stale_banner.reason == "held-out file"
    tab.held_out_file.setText("")
    tab.held_apart.setChecked(not tab.held_apart.isChecked())  # a view of the same run: redrawn, not stale
    assert tab.stale_banner.reason == "" and tab.result_origin().inputs.held_apart == tab.held_apart.isChecked()
