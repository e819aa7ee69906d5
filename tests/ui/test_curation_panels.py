"""Issue 41 in the Train tab: Find LR sweeps in a worker and "Use this LR" sets the form; cross-validation
lists cleanlab's suspected rows beside their text, a click relabels or drops one, and the corrected
copy (beside the file, never over it) is cross-validated on the same folds (before/after); the
labelling table takes the pool rows the model is least sure of, appends them to a copy and retrains."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bertstudio.ui.tabs.train_tab import TrainTab
from tests.ui.conftest import TRAIN_AND_ITS_TARGETS, only_tabs, set_up_toy_classification, tab_of

window_tabs = only_tabs(*TRAIN_AND_ITS_TARGETS)


def _tab(window, checkpoint_factory, tmp_path: Path, max_steps: int = 3) -> TrainTab:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    set_up_toy_classification(tab, checkpoint_factory("bert", "Model"), tmp_path, eval_share=0.0, max_steps=max_steps)
    return tab


def test_find_lr_plots_the_sweep_and_uses_its_suggestion(qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    tab = _tab(window, checkpoint_factory, tmp_path)
    panel = tab.find_lr_panel
    assert panel.body.isHidden()
    panel.steps.setValue(24)  # a shorter sweep: the same code, fewer steps
    with qtbot.waitSignal(panel.sweep_ended, timeout=240_000):
        tab.find_lr_button.click()
        assert not panel.body.isHidden() and not tab.start_button.isEnabled()  # one job at a time
    result = panel.result
    assert result is not None and result.suggested is not None, result
    xs, ys = panel.curve.getData()
    assert len(result.learning_rates) <= 24 and len(xs) == len(result.learning_rates)
    assert list(ys) == pytest.approx(list(result.smoothed))
    assert panel.marker.isVisible() and panel.use_button.isEnabled()
    panel.use_button.click()
    assert tab.learning_rate.value() == pytest.approx(result.suggested, rel=1e-3, abs=1e-7)
    assert tab.start_button.isEnabled() and not Path(tab.output_dir.text()).exists()  # nothing saved


def test_label_issues_fixed_in_a_corrected_copy_on_the_same_folds(qtbot, window, checkpoint_factory,  # noqa: ANN001
                                                                  tmp_path: Path) -> None:
    tab = _tab(window, checkpoint_factory, tmp_path)
    panel = tab.curation_panel
    panel.toggle.setChecked(True)
    panel.folds.setValue(2)
    source = Path(tab.train_file.text())
    original = source.read_bytes()
    with qtbot.waitSignal(panel.cv_ended, timeout=180_000):
        panel.run_button.click()
    first = panel.result
    assert first is not None and first.issues, "an untrained toy model doubts some rows"
    assert panel.table.rowCount() == len(first.issues)
    issue = first.issues[0]
    assert panel.table.item(0, 1).text() == first.texts[issue.row] and panel.table.item(0, 2).text() == issue.given
    panel.table.cellWidget(0, 6).click()  # relabel as suggested
    assert panel.table.item(0, 5).text() == f"→ {issue.suggested}" and panel.write_button.isEnabled()
    dropped = first.issues[1].row if len(first.issues) > 1 else None
    if dropped is not None:
        panel.table.cellWidget(1, 7).click()
    with qtbot.waitSignal(panel.cv_ended, timeout=180_000):
        panel.write_button.click()
    corrected = source.with_name("toy-corrected.csv")
    assert corrected.is_file() and source.read_bytes() == original
    second = panel.result
    assert second is not None and panel.before is first and panel.summary.text().startswith("Before:")
    kept = [fold for row, fold in enumerate(first.cv.assignments) if row != dropped]
    assert list(second.cv.assignments) == kept  # the same folds, less the dropped row
    lines = corrected.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 65 - (dropped is not None)
    summary = json.loads(Path(second.cv.output_dir, "cv.json").read_text(encoding="utf-8"))
    assert summary["assignments"] == kept


def test_labelling_table_appends_chosen_rows_to_a_copy_and_retrains(qtbot, window, checkpoint_factory,  # noqa: ANN001
                                                                    tmp_path: Path) -> None:
    from PySide6.QtWidgets import QComboBox

    tab = _tab(window, checkpoint_factory, tmp_path)
    panel = tab.label_panel
    pool = tmp_path / "pool.csv"
    pool.write_text("text\n" + "\n".join(f"the {n} is {a}" for n in ("cat", "car") for a in ("good", "slow")) + "\n",
                    encoding="utf-8")
    panel.pool.setText(str(pool))
    panel.count.setValue(3)
    panel.model_source = lambda: str(checkpoint_factory("bert", "SequenceClassification"))
    with qtbot.waitSignal(panel.runner.finished, timeout=60_000):
        panel.choose_button.click()
    assert panel.table.rowCount() == 3 and not panel.body.isHidden()
    combo = panel.table.cellWidget(0, 3)
    assert isinstance(combo, QComboBox) and [combo.itemText(i) for i in range(combo.count())] == [
        "(not labelled)", "negative", "positive"]
    combo.setCurrentText("positive")
    text = panel.table.item(0, 0).text()
    with qtbot.waitSignal(tab.run_ended, timeout=120_000):
        panel.append_button.click()
    copy = tmp_path / "toy-labelled.csv"
    assert copy.read_text(encoding="utf-8").splitlines()[-1] == f"{text},positive"
    assert tab.train_file.text() == str(copy) and panel.table.rowCount() == 2
    assert tab.result is not None and Path(tab.result.output_dir, "model.safetensors").is_file()
