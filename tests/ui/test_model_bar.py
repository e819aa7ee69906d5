"""The model bar: local models listed with their tasks, settings remembered, OOM offers the CPU."""

from __future__ import annotations

from bertstudio.core.errors import OutOfMemory
from bertstudio.ui.settings import AppSettings
from tests.ui.conftest import only_tabs

window_tabs = only_tabs()  # the model bar of the first tab (Fill-mask) is the one these tests drive


def test_models_folder_lists_models_task_first(qtbot, window, real_models) -> None:
    bar = window.task_tabs["fill-mask"].model_bar
    with qtbot.waitSignal(window.models_index.changed, timeout=60_000,
                          check_params_cb=lambda models: all(m.judged for m in models)):
        window.settings.set_models_dir(str(real_models["all-minilm-l6-v2"].parent))
    items = [bar.source.itemText(i) for i in range(bar.source.count())]
    assert items[0].startswith("rxnmapper-albert-smiles-mlm")  # the one with a real MLM head first
    assert any("all-minilm-l6-v2" in i and "no trained fill-mask head" in i for i in items)
    bar.source.setCurrentIndex(0)
    assert bar.source_text() == str(real_models["rxnmapper-albert-smiles-mlm"])


def test_settings_remember_folder_and_source(qtbot, window, settings, checkpoint_factory, tmp_path) -> None:
    tab = window.task_tabs["fill-mask"]
    folder = str(checkpoint_factory("albert"))
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.model_bar.load(folder)
    settings.set_models_dir(str(tmp_path))
    again = AppSettings(settings._store)
    assert again.last_source("fill-mask") == folder
    assert again.models_dir == str(tmp_path)


def test_out_of_memory_offers_retry_on_cpu(qtbot, window, monkeypatch) -> None:
    import bertstudio.ui.model_bar as model_bar

    def out_of_memory(request, control):  # noqa: ANN001, ANN202
        raise OutOfMemory("cuda:0 ran out of memory loading x.", hint="Retry on the CPU.")

    monkeypatch.setattr(model_bar, "load_job", out_of_memory)
    bar = window.task_tabs["fill-mask"].model_bar
    with qtbot.waitSignal(bar.failed, timeout=10_000):
        bar.load("anything")
    assert bar.retry_cpu_button.isVisibleTo(bar)
    assert "ran out of memory" in window.log.text()


def test_enter_in_the_model_field_then_load_loads_that_path(qtbot, window, checkpoint_factory) -> None:  # noqa: ANN001
    """Enter once made the combo box keep the typed path as an item with no data: Load then
    asked for 'None', and that path never loaded again in that tab."""
    from PySide6.QtCore import Qt

    bar = window.task_tabs["fill-mask"].model_bar
    folder = str(checkpoint_factory("bert"))
    bar.source.lineEdit().clear()
    qtbot.keyClicks(bar.source.lineEdit(), folder)
    with qtbot.waitSignal(bar._runner.finished, timeout=60_000):  # loaded or failed
        qtbot.keyClick(bar.source.lineEdit(), Qt.Key.Key_Return)
    assert not bar.error_label.isVisibleTo(bar), bar.error_label.text()
    assert bar.info is not None and bar.info.request.source == folder
    for _ in range(2):  # Load after Enter, and again: the same path every time
        bar.info = None
        with qtbot.waitSignal(bar._runner.finished, timeout=60_000):
            bar.load_button.click()
        assert not bar.error_label.isVisibleTo(bar), bar.error_label.text()
        assert bar.info is not None and bar.info.request.source == folder
        assert bar.source_text() == folder
    assert all(bar.source.itemData(i) is not None for i in range(bar.source.count()))



def test_models_folder_lists_at_once_then_says_what_each_supports(qtbot, window, real_models) -> None:  # noqa: ANN001
    """Issue 29 #23: the folders list from config.json before their weights are judged."""
    index, bar = window.models_index, window.task_tabs["fill-mask"].model_bar
    seen: list[list] = []
    index.changed.connect(lambda models: seen.append(list(models)))
    with qtbot.waitSignal(index.changed, timeout=120_000, check_params_cb=lambda models: all(
            m.judged for m in models)):
        window.settings.set_models_dir(str(real_models["all-minilm-l6-v2"].parent))
    assert seen[0] and not any(model.judged for model in seen[0])  # listed first, judged after
    assert {m.name for m in seen[0]} == {m.name for m in seen[-1]}
    texts = [bar.source.itemText(i) for i in range(bar.source.count())]
    assert not any("checking" in text for text in texts) and texts[0].startswith("rxnmapper-albert-smiles-mlm")
    index.models = []
    at_start: list[list] = []
    index.changed.connect(lambda models: at_start.append(list(models)))
    index.list_now()  # at start: listed from config.json, then judged without waiting for transformers
    qtbot.waitUntil(lambda: bool(at_start) and all(m.judged for m in at_start[-1]), timeout=30_000)
    assert at_start[0] and not any(model.judged for model in at_start[0])  # listed first, judged after
    assert not any("checking" in bar.source.itemText(i) for i in range(bar.source.count()))
    bar.set_local_models(at_start[0])
    assert any("checking its heads" in bar.source.itemText(i) for i in range(bar.source.count()))
