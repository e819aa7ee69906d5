"""int8 and distillation in the window: the model bar's "int8 (CPU)" choice, Compare with the int8
variant, Evaluate's compare with size and time per row, and the Train tab's teacher vs student."""

from __future__ import annotations

from pathlib import Path

from bertstudio.core.tasks.spec import all_specs
from bertstudio.core.training.distill_config import DistillConfig
from bertstudio.core.training.trainable import TRAINABLE
from bertstudio.ui.model_bar import INT8_CHOICE
from bertstudio.ui.tabs.train_tab import TrainTab
from tests.ui.conftest import TRAIN_AND_ITS_TARGETS, load_model_in, only_tabs, run_tab, tab_of

TASK = next(s.key for s in all_specs().values() if s.model_class == "AutoModelForSequenceClassification")
DISTIL = next(key for key, task in TRAINABLE.items() if getattr(task, "distils", False))
window_tabs = only_tabs(*TRAIN_AND_ITS_TARGETS)  # the Train tab and the classifier's tab (TASK) are used here


def test_model_bar_offers_int8_on_the_cpu_only(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    tab = window.task_tabs[TASK]
    bar = tab.model_bar
    bar.set_devices(["cpu", "cuda:0"], {"cpu": ["float32"], "cuda:0": ["float32", "float16"]})
    bar.device.setCurrentText("cuda:0")
    assert bar.dtype.findText(INT8_CHOICE) < 0
    bar.device.setCurrentText("cpu")
    bar.dtype.setCurrentText(INT8_CHOICE)
    request = bar.request("m")
    assert request.quantize == "int8" and request.dtype == "float32" and request.device == "cpu"
    load_model_in(qtbot, tab, checkpoint_factory("bert", "SequenceClassification"))
    assert "int8 dynamic" in bar.info_label.text() and " MB" in bar.info_label.text()
    assert tab.model_info.request.quantize == "int8"


def test_compare_with_the_int8_variant_notes_size_and_speed(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    tab = window.task_tabs[TASK]
    folder = str(checkpoint_factory("bert", "SequenceClassification"))
    load_model_in(qtbot, tab, folder)
    tab.compare_source.enabled.setChecked(True)
    tab.compare_source.combo.setEditText("")
    tab.compare_source.int8.setChecked(True)  # an empty source takes model A's
    tab.compare_source.combo.setEditText(folder)
    assert tab.compare_source.source() == f"{folder} [int8]"
    tab.text.setPlainText("the cat sat on the mat")
    run_tab(qtbot, tab, idle=True)
    assert tab.outcome.second is not None and tab.outcome.second_source == f"{folder} [int8]"
    assert any("B (int8)" in note.text and "MB" in note.text for note in tab.outcome.notes)
    tab.compare_source.set_source(folder)
    assert not tab.compare_source.int8.isChecked() and tab.stale_reason() == "model compared with"


def test_evaluate_compare_page_shows_size_time_and_agreement(checkpoint_factory, tmp_path: Path, qtbot) -> None:  # noqa: ANN001
    from bertstudio.core.evaluate.evaluation import EvalRequest, evaluate_job
    from bertstudio.core.models import LoadRequest
    from bertstudio.core.progress import TaskControl
    from bertstudio.ui.widgets.eval_results import ComparePage

    folder = str(checkpoint_factory("bert", "SequenceClassification"))
    data = tmp_path / "toy.csv"
    data.write_text("text,label\nthe cat is good,positive\nthe dog is bad,negative\n", encoding="utf-8")
    comparison = evaluate_job(LoadRequest(folder, TASK), EvalRequest(str(data)), TaskControl(), f"{folder} [int8]")
    page = ComparePage()
    qtbot.addWidget(page)
    page.show_comparison(comparison)
    model = page.metrics.source_model
    names = [model.index(row, 0).data() for row in range(model.rowCount())]
    assert "size (MB)" in names and "ms per row" in names
    assert "top-1 agreement" in page.summary.text() and "[int8]" in page.summary.text()


def test_train_tab_distillation_settings_and_plot(qtbot, window) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    assert tab.distill_box.isHidden() and tab.teacher_plot.isHidden() and not tab.plots.metric_plot.isHidden()
    tab.task.setCurrentIndex(tab.task.findData(DISTIL))
    assert not tab.distill_box.isHidden() and not tab.teacher_plot.isHidden() and tab.plots.metric_plot.isHidden()
    tab.teacher.setText("teacher-folder")
    tab.student_layers.setValue(2)
    config = tab.config()
    assert config.distill == DistillConfig("teacher-folder", 2, 2.0, 0.5) and config.model == "teacher-folder"
    tab.teacher_plot.add_eval(10, {"agreement": 0.8, "accuracy": 0.7, "teacher_accuracy": 0.9, "loss": 2.0})
    tab.teacher_plot.add_eval(20, {"agreement": 0.95, "accuracy": 0.85, "teacher_accuracy": 0.9})
    xs, ys = tab.teacher_plot.items["agreement"].getData()
    assert list(xs) == [10.0, 20.0] and list(ys) == [0.8, 0.95]
    tab.teacher_plot.clear_run()
    cleared = tab.teacher_plot.items["accuracy"].getData()[0]
    assert cleared is None or len(cleared) == 0
