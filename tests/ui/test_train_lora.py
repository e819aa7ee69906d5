"""The Train form's LoRA group: the count before Start equals the wrapped model's, a LoRA run from
the tab writes an adapter folder, and Merge… writes a plain model in a worker."""

from __future__ import annotations

from pathlib import Path

import transformers

from bertstudio.core.training import lora
from bertstudio.ui.tabs.train_tab import TrainTab
from tests.ui.conftest import TRAIN_AND_ITS_TARGETS, only_tabs, set_up_toy_classification, tab_of

window_tabs = only_tabs(*TRAIN_AND_ITS_TARGETS)


def test_count_before_start_run_and_merge(qtbot, window, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    tab = tab_of(window, TrainTab)
    base = checkpoint_factory("bert", "Model")
    set_up_toy_classification(tab, base, tmp_path, eval_share=0.0, max_steps=3)
    assert tab.lora_box.count_label.text() == "Rank 0: a full fine-tune (every weight trains)."
    with qtbot.waitSignal(tab.lora_box.counted, timeout=30_000) as shown:
        tab.lora_rank.setValue(4)
        tab.lora_box.preset.setCurrentIndex(tab.lora_box.preset.findData(lora.ALL_LINEAR))
    qtbot.waitUntil(lambda: not tab.lora_box.count_runner.busy, timeout=30_000)
    settings = lora.LoraSettings(4, targets=lora.ALL_LINEAR)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(base, num_labels=2)
    expected = lora.count(lora.wrap(model, settings, str(base))).describe()
    assert tab.lora_box.count_label.text() == expected and "parameters train" in shown.args[0]
    assert tab.config().lora_rank == 4 and tab.config().lora_targets == lora.ALL_LINEAR

    with qtbot.waitSignal(tab.run_ended, timeout=120_000):
        tab.start()
    adapter = tmp_path / "model"
    assert (adapter / "adapter_config.json").is_file() and not (adapter / "config.json").exists()
    with qtbot.waitSignal(tab.lora_box.merged, timeout=60_000) as merged:
        tab.lora_box.merge(str(adapter), str(tmp_path / "merged"))
    qtbot.waitUntil(lambda: not tab.lora_box.merge_runner.busy, timeout=30_000)
    assert Path(merged.args[0], "model.safetensors").is_file()
