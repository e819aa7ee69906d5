"""The Train tab's search panel: defaults follow the form, a 2-trial search fills the table and the
plot and saves the best model; Stop keeps the finished trial; a bad space is one message, no run."""

from __future__ import annotations

import json
from pathlib import Path

from bertstudio.ui.tabs.train_tab import TrainTab
from tests.ui.conftest import TRAIN_AND_ITS_TARGETS, only_tabs, set_up_toy_classification, tab_of

window_tabs = only_tabs(*TRAIN_AND_ITS_TARGETS)
SPACE = {"learning_rate": {"low": 1e-4, "high": 3e-3, "log": True}, "batch_size": {"choices": [4, 8]}}


def _panel(window, checkpoint_factory, tmp_path: Path):  # noqa: ANN001, ANN202
    tab = tab_of(window, TrainTab)
    set_up_toy_classification(tab, checkpoint_factory("bert", "Model"), tmp_path, eval_share=0.25, max_steps=3)
    panel = tab.search_panel
    panel.toggle.setChecked(True)
    return tab, panel


def test_defaults_search_table_plot_and_importance(qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    tab, panel = _panel(window, checkpoint_factory, tmp_path)
    assert not panel.body.isHidden()
    panel.fill_defaults()
    defaults = json.loads(panel.space.toPlainText())
    assert "learning_rate" in defaults and "epochs" not in defaults  # max steps fix the length
    panel.space.setPlainText(json.dumps(SPACE))
    panel.trials.setValue(2)
    panel.metric_choice.setCurrentText("accuracy")
    with qtbot.waitSignal(panel.search_ended, timeout=120_000):
        panel.start()
        assert not tab.start_button.isEnabled()  # one run at a time
    assert panel.table.rowCount() == 2 and panel.table.item(0, 1).text() in {"finished", "pruned"}
    assert panel.table.horizontalHeaderItem(3).text() == "learning_rate"
    result = panel.result
    assert result is not None and result.best is not None and result.metric == "accuracy"
    xs, _ys = panel.points.getData()
    assert len(xs) == sum(t.state == "finished" for t in result.trials)
    assert Path(result.output_dir, "model.safetensors").is_file() and tab.start_button.isEnabled()
    if len(set(t.value for t in result.trials if t.state == "finished")) > 1:
        assert panel.importance.text().startswith("Importance")


def test_stop_keeps_the_finished_trial(qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    tab, panel = _panel(window, checkpoint_factory, tmp_path)
    tab.max_steps.setValue(40)
    panel.space.setPlainText(json.dumps({"learning_rate": {"low": 1e-4, "high": 1e-3}}))
    panel.trials.setValue(5)
    original = panel.on_progress

    def stop_in_second_trial(event) -> None:  # noqa: ANN001
        original(event)
        trial = getattr(event.payload, "trial", None)
        if trial == 1 and panel.stop_button.isEnabled():
            panel.stop()

    panel.runner.progress.disconnect(panel.on_progress)
    panel.runner.progress.connect(stop_in_second_trial)
    with qtbot.waitSignal(panel.search_ended, timeout=180_000):
        panel.start()
    assert panel.result is not None and panel.result.stopped
    assert [t.state for t in panel.result.trials] == ["finished", "stopped"]
    assert panel.table.rowCount() == 2 and panel.progress.text() == "stopped"


def test_bad_space_is_one_message(qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    _tab, panel = _panel(window, checkpoint_factory, tmp_path)
    said: list[str] = []
    panel.show_message = lambda text, error=False: said.append(text)
    panel.space.setPlainText('{"dropout": {"low": 0, "high": 1}}')
    with qtbot.waitSignal(panel.search_ended, timeout=30_000):
        panel.start()
    assert len(said) == 1 and "cannot be searched" in said[0]
    assert panel.result is None and not (tmp_path / "model").exists()
