"""The device picker offers "CPU (ONNX Runtime)" where the chosen folder holds an exported model (issue
39.6): chosen, the tab's run goes through onnxruntime and gives the PyTorch model's scores; a folder
without an export, or a task ONNX Runtime does not run, does not offer it."""

from __future__ import annotations

import shutil

from bertstudio.core.export.onnx import export_onnx
from bertstudio.ui.model_bar import ONNX_CHOICE
from bertstudio.ui.tabs.classification_tab import ClassificationTab
from tests.ui.conftest import only_tabs, run_tab, tab_of

window_tabs = only_tabs("classification_tab")


def offered(bar) -> bool:  # noqa: ANN001
    return bar.device.findText(ONNX_CHOICE) >= 0


def test_onnx_runtime_offered_for_an_exported_folder_and_run(qtbot, window, checkpoint_factory, tmp_path) -> None:  # noqa: ANN001
    plain = checkpoint_factory("bert", "SequenceClassification")
    folder = tmp_path / "model"
    shutil.copytree(plain, folder)
    export_onnx(str(folder), "classification", folder / "model.onnx", speed=False)
    tab = tab_of(window, ClassificationTab)
    bar = tab.model_bar
    bar.source.setEditText(str(plain))
    assert not offered(bar)
    bar.source.setEditText(str(folder))
    assert offered(bar)
    bar.device.setCurrentText(ONNX_CHOICE)
    assert [bar.dtype.itemText(i) for i in range(bar.dtype.count())] == ["float32"]  # no int8 of a fixed file
    request = bar.request()
    assert (request.runtime, request.device, request.quantize) == ("onnx", "cpu", None)
    with qtbot.waitSignal(bar.loaded, timeout=60_000):
        bar.load()
    assert "ONNX Runtime" in bar.info_label.text()
    tab.text.setPlainText("the cat sat on the mat")
    run_tab(qtbot, tab)
    onnx_scores = dict(zip(tab.bars.bars_a.labels, tab.bars.bars_a.values, strict=True))
    bar.source.setEditText(str(plain))  # no export here: the choice goes, back to the CPU on PyTorch
    assert not offered(bar) and bar.device.currentText() == "cpu"
    with qtbot.waitSignal(bar.loaded, timeout=60_000):
        bar.load()
    run_tab(qtbot, tab)
    torch_scores = dict(zip(tab.bars.bars_a.labels, tab.bars.bars_a.values, strict=True))
    assert max(abs(onnx_scores[k] - torch_scores[k]) for k in torch_scores) <= 1e-3
    bar.source.setEditText(str(folder))
    bar.task = "fill-mask"  # Evaluate changes its bar's task: ONNX Runtime does not run this one
    assert not offered(bar)
    bar.task = "classification"
