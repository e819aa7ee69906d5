"""The model bar under faults: a stalled Hub is cancelled at once, user errors are messages in the
bar (the offline hint included), and the log shows one line with the details one click away."""

from __future__ import annotations

from tests.faults.blackhole import blackhole_server, point_hub_at
from tests.faults.custom_code import custom_code_models_dir
from tests.ui.conftest import only_tabs

window_tabs = only_tabs()  # the model bar of the first tab (Fill-mask) is the one these tests drive


def test_cancel_a_load_stalled_on_the_hub(qtbot, window, monkeypatch, tmp_path) -> None:  # noqa: ANN001
    from huggingface_hub import constants

    bar = window.task_tabs["fill-mask"].model_bar
    # the Hub's silence outlasts the test: only Cancel can end the load (no time is measured)
    monkeypatch.setenv("BERTSTUDIO_HUB_TIMEOUT", "600")
    for name in ("HF_HUB_ETAG_TIMEOUT", "HF_HUB_DOWNLOAD_TIMEOUT"):  # set from it by core.hub; put back after
        monkeypatch.setattr(constants, name, getattr(constants, name))
    with blackhole_server() as url:
        point_hub_at(url, monkeypatch, str(tmp_path / "hub-cache"))
        with qtbot.waitSignal(bar._runner.progress, timeout=10_000,
                              check_params_cb=lambda event: "Asking the Hugging Face Hub" in event.message):
            bar.load("nobody/never-answers")
        qtbot.wait(300)  # inside the stall
        assert bar.busy and bar.cancel_button.isEnabled()
        with qtbot.waitSignal(bar._runner.cancelled, timeout=60_000):
            bar.cancel_button.click()
            assert bar.info_label.text() == "Cancelling…" and not bar.cancel_button.isEnabled()
        assert not bar.busy and bar.load_button.isEnabled() and not bar.cancel_button.isVisible()


def test_offline_hint_shown_in_the_bar_not_only_the_log(qtbot, window, monkeypatch,  # noqa: ANN001
                                                        checkpoint_factory) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", "/nonexistent-bertstudio-hub-cache")
    bar = window.task_tabs["fill-mask"].model_bar
    with qtbot.waitSignal(bar.failed, timeout=10_000):
        bar.load("some-org/not-cached-model")
    assert bar.error_label.isVisibleTo(bar)
    shown = bar.error_label.text()
    assert "some-org/not-cached-model" in shown and "not on this machine" in shown and "local model folder" in shown
    log = window.log.text()
    assert "some-org/not-cached-model" in log and "Traceback" not in log
    assert window.log.details_button.isEnabled() and "Traceback" in window.log.last_details
    with qtbot.waitSignal(bar.loaded, timeout=60_000):
        bar.load(str(checkpoint_factory("bert")))
    assert not bar.error_label.isVisibleTo(bar)


def test_models_list_says_why_custom_code_has_no_tasks(qtbot, window, checkpoint_factory, tmp_path) -> None:  # noqa: ANN001
    root = custom_code_models_dir(tmp_path / "models", checkpoint_factory("bert"))
    bar = window.task_tabs["fill-mask"].model_bar
    with qtbot.waitSignal(window.models_index.changed, timeout=60_000,  # judged (first listed from config.json)
                          check_params_cb=lambda models: all(m.judged for m in models)):
        window.settings.set_models_dir(str(root))
    items = {bar.source.itemText(i).split(" ")[0]: bar.source.itemText(i) for i in range(bar.source.count())}
    assert "needs custom code" not in items["bert"]
    for name in ("alien", "remote"):
        assert "needs custom code" in items[name] and "never runs" in items[name], items


def test_a_folder_without_tokenizer_says_so_in_the_bar(qtbot, window, checkpoint_factory, tmp_path) -> None:  # noqa: ANN001
    """Issue 17.7: such a folder once loaded with an empty tokenizer, every word [UNK], no word said."""
    import shutil

    folder = tmp_path / "no-tokenizer"
    folder.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(checkpoint_factory("bert") / name, folder / name)
    bar = window.task_tabs["fill-mask"].model_bar
    with qtbot.waitSignal(bar.failed, timeout=30_000):
        bar.load(str(folder))
    shown = bar.error_label.text()
    assert bar.error_label.isVisibleTo(bar) and "no tokenizer files" in shown and "vocab.txt" in shown
    assert bar.info is None


def test_a_models_folder_past_the_bound_is_listed_in_part_and_says_so(qtbot, window, monkeypatch,  # noqa: ANN001
                                                                      tmp_path) -> None:
    from bertstudio.core import catalog

    monkeypatch.setattr(catalog, "MAX_MODEL_FOLDERS", 2)
    for index in range(4):
        (tmp_path / f"m{index}").mkdir()
        (tmp_path / f"m{index}" / "config.json").write_text('{"model_type": "alien-net"}')
    with qtbot.waitSignals([window.models_index.changed, window.models_index.failed], timeout=30_000):
        window.settings.set_models_dir(str(tmp_path))
    assert [m.name for m in window.models_index.models] == ["m0", "m1"]
    assert "Only the first 2 model folders" in window.log.text()
