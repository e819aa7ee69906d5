"""The Runs page: a run trained in the Train tab appears when it ends; any selected runs' curves
overlay on shared axes; two runs' settings diff; "Open in…" and Evaluate hand the model on; Delete
asks first and removes only what BERT Studio made."""

from __future__ import annotations

from pathlib import Path

import pytest

from bertstudio.core.runs import index
from bertstudio.core.runs.curves import Curves
from bertstudio.core.training.saving import write_marker
from bertstudio.ui.tabs.runs_tab import RunsTab
from bertstudio.ui.tabs.train_tab import TrainTab
from tests.ui.conftest import only_tabs, set_up_toy_classification, tab_of

window_tabs = only_tabs("train_tab", "runs_tab", "classification_tab")


@pytest.fixture(autouse=True)
def runs_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "runs-index"
    monkeypatch.setenv(index.RUNS_DIR_ENV, str(folder))
    return folder


def record(run_id: str, output: Path, lr: float, accuracy: float, **fields: object) -> index.RunRecord:
    curves = Curves(((1, 0.7), (2, 0.6), (3, 0.5)), ((1, lr), (2, lr / 2), (3, 0.0)),
                    {"accuracy": ((3, accuracy),), "loss": ((3, 0.55),)})
    values: dict = dict(id=run_id, task="text-classification", status="finished", started="2026-11-26T10:00:00",
                        duration_seconds=12.0, device="cpu", output_dir=str(output), model="tiny",
                        data="sha256 ab of the training file, 3 rows trained on",
                        config={"learning_rate": lr, "seed": 1, "train_file": "/data/train.csv"},
                        metrics={"eval_accuracy": accuracy}, curves=curves, open_in=("classification",),
                        step=3, max_steps=3)
    values.update(fields)
    return index.RunRecord(**values)


def show_page(qtbot, window) -> RunsTab:  # noqa: ANN001
    tab = tab_of(window, RunsTab)
    with qtbot.waitSignal(tab.runner.result, timeout=10_000):
        window.tabs.setCurrentWidget(tab)
    return tab


def test_a_run_trained_in_the_train_tab_appears_when_it_ends_and_opens(
        qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    runs = show_page(qtbot, window)
    assert runs.table.rowCount() == 0
    train = tab_of(window, TrainTab)
    set_up_toy_classification(train, checkpoint_factory("bert", "Model"), tmp_path, eval_share=0.25, max_steps=2)
    window.tabs.setCurrentWidget(train)
    with qtbot.waitSignal(train.run_ended, timeout=120_000):
        train.start()
    window.tabs.setCurrentWidget(runs)  # the record was written as the run ended: the page reads it
    qtbot.waitUntil(lambda: runs.table.rowCount() == 1, timeout=10_000)
    assert runs.table.item(0, 1).text() == "finished" and runs.table.item(0, 8).text() == train.result.output_dir
    runs.table.selectRow(0)
    assert [len(item.xData) for _plot, item in runs.curves.items][:2] == [2, 2]  # loss and learning rate
    assert runs.open_button.isEnabled() and runs.evaluate_button.isEnabled()
    calls: list[tuple] = []
    window.open_evaluation = lambda *args: calls.append(args)
    runs.evaluate_selected()
    assert calls == [(train.result.output_dir, train.train_file.text(), "classification")]
    classification = window.task_tabs["classification"]
    (action,) = runs.open_menu.actions()
    with qtbot.waitSignal(classification.model_bar.loaded, timeout=60_000):
        action.trigger()
    assert window.tabs.currentWidget() is classification


def test_selected_runs_overlay_on_shared_axes_and_two_runs_diff(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    for run in (record("20261126-100000-0000000a", tmp_path / "a", 1e-3, 0.75),
                record("20261126-110000-0000000b", tmp_path / "b", 5e-4, 0.5, started="2026-11-26T11:00:00",
                       data="sha256 cd of the training file, 3 rows trained on")):
        index.write_record(run)
    runs = show_page(qtbot, window)
    assert runs.table.rowCount() == 2 and runs.table.item(0, 0).text() == "2026-11-26 11:00:00"
    runs.table.selectAll()
    plots = {id(plot): plot for plot, _item in runs.curves.items}
    assert len(plots) == 3 and len(runs.curves.items) == 6  # each run on each of the three shared plots
    assert runs.curves.metric_choice.currentText() == "accuracy"
    metric_view = runs.curves.metric_plot.getPlotItem().getViewBox()
    assert metric_view.viewRange()[1][0] < 0.0 and metric_view.viewRange()[1][1] > 1.0  # the fixed score axis
    shown = {(runs.diff_table.item(r, 0).text(), runs.diff_table.item(r, 1).text(), runs.diff_table.item(r, 2).text())
             for r in range(runs.diff_table.rowCount())}
    assert shown == {("learning_rate", "0.001", "0.0005"),
                     ("data fingerprint", "sha256 ab of the training file, 3 rows trained on",
                      "sha256 cd of the training file, 3 rows trained on")}
    assert not runs.open_button.isEnabled()  # two selected: open one at a time
    runs.select_runs(["20261126-100000-0000000a"])
    assert len(runs.curves.items) == 3 and runs.diff_table.isHidden()


def test_delete_asks_first_and_removes_only_what_bert_studio_made(
        qtbot, window, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    write_marker(ours, "model", "text-classification")
    theirs.mkdir()
    (theirs / "keep.txt").write_text("mine", encoding="utf-8")
    index.write_record(record("20261126-100000-0000000a", ours, 1e-3, 0.7))
    index.write_record(record("20261126-110000-0000000b", theirs, 1e-3, 0.7))
    runs = show_page(qtbot, window)
    asked: list[str] = []
    monkeypatch.setattr(runs, "confirm", lambda _title, text: asked.append(text) or False)
    runs.table.selectAll()
    runs.delete_selected()
    assert ours.is_dir() and len(index.list_runs()) == 2  # Cancel: nothing happened
    assert str(ours) in asked[0] and f"{theirs} (not made by BERT Studio)" in asked[0]
    monkeypatch.setattr(runs, "confirm", lambda _title, _text: True)
    with qtbot.waitSignal(runs.runner.result, timeout=10_000):  # the list is read again afterwards
        runs.delete_selected()
    assert not ours.exists() and (theirs / "keep.txt").is_file() and index.list_runs() == []
    assert runs.table.rowCount() == 0 and "Kept" in runs.message.text()


def test_a_stopped_run_resumed_later_says_so_and_legends_say_lora_or_full(qtbot, window, tmp_path: Path) -> None:  # noqa: ANN001
    """Issue 40: Runs kept a stopped entry pointing at the folder its resume now holds, and the curves'
    legends did not tell a LoRA run from a full fine-tune."""
    stopped = record("20261126-100000-0000000a", tmp_path / "a", 1e-3, 0.6, status="stopped")
    resumed = record("20261126-110000-0000000b", tmp_path / "a", 1e-3, 0.75, started="2026-11-26T11:00:00",
                     config={"learning_rate": 1e-3, "lora_rank": 8})
    other = record("20261126-120000-0000000c", tmp_path / "c", 1e-3, 0.7, started="2026-11-26T12:00:00",
                   status="stopped")
    for run in (stopped, resumed, other):
        index.write_record(run)
    runs = show_page(qtbot, window)
    status = {runs.table.item(row, 0).text(): runs.table.item(row, 1).text() for row in range(3)}
    assert status == {"2026-11-26 10:00:00": "stopped, resumed later", "2026-11-26 11:00:00": "finished",
                      "2026-11-26 12:00:00": "stopped"}
    runs.table.selectAll()
    title = runs.curves.loss_plot.getPlotItem().titleLabel.text
    assert "(000b, LoRA r=8)" in title and "(000a, full)" in title
