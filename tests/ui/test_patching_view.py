"""Trace why from the pinned compare: the heatmaps, the words, export, Copy as Python, Cancel."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from bertstudio.ui.tabs.classification_tab import ClassificationTab
from bertstudio.ui.widgets.patching_view import PROBABILITY, RESTORED
from tests.ui.conftest import load_model_in, only_tabs, run_tab, tab_of

window_tabs = only_tabs("classification_tab")


def _pinned_and_edited(qtbot, window, checkpoint_factory):  # noqa: ANN001, ANN202
    tab = tab_of(window, ClassificationTab)
    load_model_in(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"))
    tab.text.setPlainText("a good film about the old city .")
    run_tab(qtbot, tab, idle=True)
    tab.pin_bar.pin_button.click()
    assert tab.pin_bar.trace_button.isVisibleTo(tab) and not tab.pin_bar.trace_button.isEnabled()  # no edit yet
    tab.text.setPlainText("a bad film about the old city .")
    run_tab(qtbot, tab, idle=True)
    assert tab.pin_bar.trace_button.isEnabled()
    return tab


def test_trace_why_draws_both_heatmaps_and_says_each_cell(qtbot, window, checkpoint_factory, tmp_path) -> None:  # noqa: ANN001
    tab = _pinned_and_edited(qtbot, window, checkpoint_factory)
    tab.pin_bar.trace_button.click()
    panel = tab.trace_panel
    qtbot.waitUntil(lambda: panel.result is not None and not panel.runner.busy, timeout=60_000)
    result = panel.result
    assert result.clean_tokens[2] == "good" and result.corrupted_tokens[2] == "bad" and result.differing == (2,)
    assert panel.states.isVisibleTo(panel) and panel.states.rows == ("0", "1", "2")
    assert panel.states.columns[2] == "*good→bad" and panel.states.columns[1] == "a"
    assert panel.heads.columns == ("0", "1", "all") and panel.heads.rows == ("0", "1")
    shown = panel.states.image.image
    assert shown.shape == (3, len(result.clean_tokens))
    assert shown[0, 2] == pytest.approx(1.0, abs=1e-4)  # the edited token's clean embedding restores it all
    assert "restores 100% of the clean answer" in panel.states.words(0, 2) and "'good'" in panel.states.words(0, 2)
    assert "head 1:0" in panel.heads.words(1, 0) and "every head of layer 0" in panel.heads.words(0, 2)
    assert result.target_label in panel.title.text()
    panel.shown.setCurrentIndex(panel.shown.findData(PROBABILITY))
    assert panel.states.image.image[0, 2] == pytest.approx(result.clean_score, abs=1e-5)
    panel.shown.setCurrentIndex(panel.shown.findData(RESTORED))

    panel.export(str(tmp_path / "trace.json"))
    assert json.loads((tmp_path / "trace.json").read_text())["states"] == [list(row) for row in result.states]
    panel.export(str(tmp_path / "trace.png"))
    panel.export(str(tmp_path / "trace.svg"))
    assert (tmp_path / "trace.png").stat().st_size > 1000 and "<svg" in (tmp_path / "trace.svg").read_text()

    panel.chosen = ("state", 1, 2)
    panel.copy_python()
    from PySide6.QtWidgets import QApplication

    script = QApplication.clipboard().text()
    assert script.startswith("# BERT Studio: Trace why")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    patched = float(done.stdout.split("patched")[1])
    assert patched == pytest.approx(result.states[1][2], abs=1e-4)  # the script reproduces the cell
    panel.close()


def test_trace_why_cancels(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    tab = _pinned_and_edited(qtbot, window, checkpoint_factory)
    tab.pin_bar.trace_button.click()
    panel = tab.trace_panel
    with qtbot.waitSignal(panel.runner.finished, timeout=60_000):
        panel.cancel()
    assert panel.trace_button.isEnabled() and not panel.cancel_button.isEnabled()
    panel.refresh()  # and runs again
    qtbot.waitUntil(lambda: panel.result is not None and not panel.runner.busy, timeout=60_000)
    panel.close()


def test_trace_why_with_noise_instead_of_an_edit(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    """The corruption for someone without a counterfactual: seeded noise on chosen tokens of the pin,
    the same numbers `bertstudio patch --noise` gives."""
    from bertstudio.core.models import load_model
    from bertstudio.core.patching.setup import Noise
    from bertstudio.core.patching.trace import trace
    from bertstudio.ui.widgets.patching_view import NOISE

    tab = _pinned_and_edited(qtbot, window, checkpoint_factory)
    tab.pin_bar.trace_button.click()
    panel = tab.trace_panel
    qtbot.waitUntil(lambda: panel.result is not None and not panel.runner.busy, timeout=60_000)
    panel.corruption.setCurrentIndex(panel.corruption.findData(NOISE))
    panel.noise_positions.setText("x")
    panel.trace_button.click()
    assert "token positions" in panel.notes.text() and not panel.runner.busy
    panel.noise_positions.setText("2, 3")
    panel.noise_seed.setValue(7)
    with qtbot.waitSignal(panel.runner.result, timeout=60_000):
        panel.trace_button.click()
    qtbot.waitUntil(lambda: not panel.runner.busy, timeout=10_000)
    expected = trace(load_model(panel.request), "classification", panel.texts[0], None, noise=Noise((2, 3), 7))
    assert panel.result.corrupted_score == pytest.approx(expected.corrupted_score, abs=1e-6)
    assert np.allclose(np.array(panel.result.states, dtype=float), np.array(expected.states, dtype=float), atol=1e-6)
    assert "noise on tokens 2, 3" in panel.title.text() and not panel.python_button.isEnabled()
    panel.close()


def test_trace_why_traces_the_target_asked_for(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    """A target other than the clean prediction, as `explain --target` takes it; a wrong one is a note."""
    tab = _pinned_and_edited(qtbot, window, checkpoint_factory)
    tab.pin_bar.trace_button.click()
    panel = tab.trace_panel
    qtbot.waitUntil(lambda: panel.result is not None and not panel.runner.busy, timeout=60_000)
    predicted = panel.result.target
    other = next(label for label in ("negative", "positive") if label != predicted)
    panel.target.setText(other)
    with qtbot.waitSignal(panel.runner.result, timeout=60_000):
        panel.trace_button.click()
    qtbot.waitUntil(lambda: not panel.runner.busy, timeout=10_000)
    assert panel.result.target == other
    panel.target.setText("no-such-label")
    with qtbot.waitSignal(panel.runner.finished, timeout=60_000):
        panel.trace_button.click()
    assert "no-such-label" in panel.notes.text() and "Traceback" not in panel.notes.text()
    panel.close()
