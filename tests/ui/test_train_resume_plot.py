"""After Resume, the loss plot shows the steps before the checkpoint too (issue 12): they come from
the checkpoint's trainer_state.json `log_history`, read through a bounded, validating reader."""

from __future__ import annotations

import json
from pathlib import Path

from bertstudio.core.training import log_history
from bertstudio.core.training.log_history import LogHistory, newest_checkpoint, parse_history, read_history
from bertstudio.ui.tabs.train_tab import TrainTab
from tests.ui.conftest import TRAIN_AND_ITS_TARGETS, only_tabs, set_up_toy_classification

window_tabs = only_tabs(*TRAIN_AND_ITS_TARGETS)  # these tests drive the Train tab only


def test_reader_keeps_valid_points_and_skips_wrong_types(tmp_path: Path) -> None:
    state = {"global_step": 4, "log_history": [
        {"step": 2, "loss": 0.9, "learning_rate": 1e-5, "epoch": 0.5},
        {"step": 1, "loss": 1.2, "learning_rate": 2e-5},
        {"step": 3, "loss": "high", "learning_rate": 1e-5},  # wrong type: skipped
        {"step": True, "loss": 0.5},  # a bool is no step
        {"step": -1, "loss": 0.5},
        {"step": 4, "loss": float("nan")},  # not finite
        {"step": 4, "loss": 0.7, "learning_rate": "soon"},  # the point stays, its rate does not
        {"step": 3, "eval_loss": 0.8, "eval_accuracy": 0.75, "eval_runtime": 1.5, "eval_note": "x"},
        "not an entry", None, [1, 2],
        {"train_runtime": 12.0, "step": 4},  # the end-of-run summary: neither loss nor eval
    ]}
    history = parse_history(state)
    assert history.steps == ((1, 1.2, 2e-5), (2, 0.9, 1e-5), (4, 0.7, None))
    assert history.evals == ((3, {"loss": 0.8, "accuracy": 0.75}),)
    for bad in (None, [], {"log_history": "x"}, {"log_history": {"step": 1}}, {}):
        assert parse_history(bad) == LogHistory() and not parse_history(bad)
    folder = tmp_path / "checkpoint-4"
    folder.mkdir()
    (folder / "trainer_state.json").write_text(json.dumps(state), encoding="utf-8")
    assert read_history(folder) == history
    (folder / "trainer_state.json").write_text("{not json", encoding="utf-8")
    assert read_history(folder) == LogHistory()
    (folder / "trainer_state.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert read_history(folder) == LogHistory()  # too deep for json: nothing, no RecursionError
    assert read_history(tmp_path / "missing") == LogHistory()


def test_reader_is_bounded(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    folder = tmp_path / "checkpoint-9"
    folder.mkdir()
    entries = [{"step": i, "loss": 1.0 / i} for i in range(1, 101)]
    (folder / "trainer_state.json").write_text(json.dumps({"log_history": entries}), encoding="utf-8")
    monkeypatch.setattr(log_history, "MAX_ENTRIES", 10)
    assert len(read_history(folder).steps) == 10
    monkeypatch.setattr(log_history, "MAX_STATE_BYTES", 100)  # larger than allowed: not read at all
    assert read_history(folder) == LogHistory()
    fifo = tmp_path / "checkpoint-10"
    fifo.mkdir()
    (tmp_path / "checkpoint-x").mkdir()  # not numbered: never chosen
    assert newest_checkpoint(tmp_path) == fifo and newest_checkpoint(tmp_path / "none") is None


def test_plots_draw_the_history_before_the_live_steps(qtbot, window) -> None:  # noqa: ANN001
    plots = window.task_tabs["pretraining"].plots
    plots.add_history([(1, 2.0, 1e-5), (2, 1.5, 2e-5)], [(2, {"loss": 1.4, "accuracy": 0.5})])
    plots.add_step(3, 1.2, 2e-5)
    plots.flush()
    assert list(plots.raw_loss.item.xData) == [1, 2, 3] and list(plots.live_lr.item.xData) == [1, 2, 3]
    assert list(plots.eval_loss.item.xData) == [2] and "accuracy" in plots.metrics


def test_resume_draws_the_steps_before_the_checkpoint(qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    tab = window.task_tabs["pretraining"]
    assert isinstance(tab, TrainTab)
    set_up_toy_classification(tab, checkpoint_factory("bert", "Model"), tmp_path, eval_share=0.0, max_steps=12)

    def stop_at_step_4(event) -> None:  # noqa: ANN001
        payload = event.payload
        if getattr(payload, "kind", "") == "step" and payload.step >= 4 and not tab._stop_event.is_set():
            tab.stop()

    tab.runner.progress.connect(stop_at_step_4)
    with qtbot.waitSignal(tab.run_ended, timeout=120_000):
        tab.start()
    tab.runner.progress.disconnect(stop_at_step_4)
    stopped_at = tab.result.step
    assert tab.result.stopped and 4 <= stopped_at < 12
    before = list(tab.plots.raw_loss.item.xData)
    assert before[0] == 1 and before[-1] == stopped_at

    with qtbot.waitSignal(tab.run_ended, timeout=120_000):
        tab.resume_button.click()
    assert tab.result is not None, tab.message.text()
    assert tab.result.step == 12 and not tab.result.stopped
    assert not tab.resume.isChecked() and not tab.config().resume  # a resume is this run's only
    tab.plots.flush()
    steps = [int(x) for x in tab.plots.raw_loss.item.xData]
    # the live curve of the resumed run starts after the checkpoint; the steps before it are drawn too
    assert steps == list(range(1, 13)), steps
    assert len(tab.plots.live_lr.item.xData) == 12
