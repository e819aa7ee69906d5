"""Workspaces: save, open in a new window, the same model sources and inputs; the last one comes back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from bertstudio.core import workspace_file
from bertstudio.core.errors import InputError
from bertstudio.ui import menus, workspace
from bertstudio.ui.settings import AppSettings
from tests.ui.conftest import load_model_in, with_tabs


def _new_window(qtbot, folder: Path):  # noqa: ANN001, ANN202
    from bertstudio.ui.main_window import MainWindow

    folder.mkdir(parents=True, exist_ok=True)
    settings = AppSettings(QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat))
    win = MainWindow(settings, confirm_close=False)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=60_000):
        win.show()
    return win


def test_round_trip_into_a_new_window(qtbot, window, checkpoint_factory, tmp_path: Path) -> None:
    folder = str(checkpoint_factory("bert"))
    tab = window.task_tabs["fill-mask"]
    load_model_in(qtbot, tab, folder)
    tab.text.setPlainText("the cat [MASK] on the mat .")
    tab.top_k.setValue(7)
    nsp = window.task_tabs["nsp"]
    nsp.model_bar.source.setEditText("/models/some-nsp-model")  # typed, never loaded
    train = window.task_tabs["pretraining"]  # the Train tab
    train.task.setCurrentIndex(train.task.findData("text-classification"))  # another form than the default
    path = tmp_path / "mine.bertstudio.json"
    menus.save_workspace(window, str(path))
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["tabs"]["fill-mask"]["loaded"] == folder
    assert not list(tmp_path.glob(".*.tmp"))  # the atomic write left no temporary file

    other = _new_window(qtbot, tmp_path / "other")
    try:
        other_tab = other.task_tabs["fill-mask"]
        other.tabs.setCurrentWidget(other.task_tabs["nsp"])
        with qtbot.waitSignals([other.workspace.restored, other_tab.model_bar.loaded], timeout=60_000):
            menus.open_workspace(other, str(path))  # fill-mask was current: its model loads, in the background
        assert other_tab.model_info is not None and other_tab.model_info.request.source == folder
        assert other_tab.text.toPlainText() == "the cat [MASK] on the mat ."
        assert other_tab.top_k.value() == 7
        assert other.task_tabs["nsp"].model_bar.source_text() == "/models/some-nsp-model"
        assert other.task_tabs["nsp"].model_info is None  # not loaded: it was not loaded when saved
        assert other.tabs.currentWidget() is other_tab
        assert workspace_file.validate(saved, other.workspace._examples()).problems == ()  # ours pass whole
        for key, tab_state in saved["tabs"].items():  # every tab's inputs, as saved
            assert workspace.tab_state(other.task_tabs[key])["view"] == tab_state["view"], key
    finally:
        other.close()


def test_last_workspace_comes_back_at_start(qtbot, checkpoint_factory, tmp_path: Path) -> None:
    folder = str(checkpoint_factory("bert"))
    first = _new_window(qtbot, tmp_path / "app")
    tab = first.task_tabs["fill-mask"]
    load_model_in(qtbot, tab, folder)
    tab.text.setPlainText("a [MASK] day .")
    first.resize(first.width(), 700)  # default height is 780
    size = (first.width(), first.height())
    first.close()
    assert workspace.last_workspace_path(first.settings._store).is_file()

    second = _new_window(qtbot, tmp_path / "app")  # same settings folder: the same last workspace
    try:
        restored = second.task_tabs["fill-mask"]
        if second.workspace.restoring:  # one tab per event-loop turn
            qtbot.waitSignal(second.workspace.restored, timeout=10_000).wait()
        assert restored.text.toPlainText() == "a [MASK] day ."
        if restored.model_info is None:  # the shown tab's model loads in the background
            qtbot.waitSignal(restored.model_bar.loaded, timeout=60_000).wait()
        assert restored.model_info.request.source == folder
        # restoreGeometry fits the window to the screen: offscreen's 800 px screen clamps the width
        # to the window's minimum, so the height (default 780) is what proves the restore.
        assert second.height() == size[1] == 700
    finally:
        second.close()


def test_unreadable_workspaces_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON"):
        workspace.read(bad)
    bad.write_text(json.dumps({"tabs": {}}), encoding="utf-8")
    with pytest.raises(InputError, match="not a BERT Studio workspace"):
        workspace.read(bad)
    with pytest.raises(InputError, match="does not exist"):
        workspace.read(tmp_path / "missing.json")


def test_a_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    workspace.write(path, {"format": workspace.FORMAT, "tabs": {}})
    with pytest.raises(TypeError):
        workspace.write(path, {"format": workspace.FORMAT, "tabs": {"x": object()}})
    assert json.loads(path.read_text(encoding="utf-8"))["tabs"] == {}
    assert [p.name for p in tmp_path.iterdir()] == ["w.json"]


# -- a broken workspace never breaks the window (issue 17.2) ---------------------------------------
BROKEN = {
    "format": workspace.FORMAT,
    "version": "x",
    "window": "evil",
    "current": "fill-mask",
    "tabs": {
        "fill-mask": {"model": 5, "view": {"text": "kept [MASK] text", "top_k": "abc"}},
        "nsp": {"compare": 12, "view": {"sentence_a": "kept sentence", "rank": "yes"}},
        "qa": {"view": {"options": {"top_k": 10**30}}},
        "classification": ["a list where an object belongs"],
        "no-such-tab": {},
    },
}


def _wait_restored(qtbot, win) -> None:  # noqa: ANN001
    if win.workspace.restoring:
        qtbot.waitSignal(win.workspace.restored, timeout=20_000).wait()


def test_a_broken_last_workspace_restores_the_rest_and_saving_goes_on(qtbot, tmp_path: Path) -> None:
    folder = tmp_path / "app"
    folder.mkdir()
    (folder / workspace.LAST_NAME).write_text(json.dumps(BROKEN), encoding="utf-8")
    win = _new_window(qtbot, folder)
    _wait_restored(qtbot, win)
    assert not win.workspace.restoring
    fill = win.task_tabs["fill-mask"]
    assert fill.text.toPlainText() == "kept [MASK] text"  # what was right came back
    assert fill.top_k.value() == 5
    assert win.task_tabs["nsp"].sentence_a.toPlainText() == "kept sentence"
    note = win.workspace_note  # one message, every wrong field named (the first 8 in its line)
    assert "9 wrong fields" in note.text()
    for name in ("version", "window", "top_k", "model", "compare", "rank", "classification", "no-such-tab"):
        assert name in note.detailedText(), name
    assert "left out" in win.statusBar().currentMessage()

    fill.text.setPlainText("edited after the broken restore [MASK] .")
    win.close()
    saved = json.loads((folder / workspace.LAST_NAME).read_text(encoding="utf-8"))
    assert saved["version"] == workspace.VERSION
    assert saved["tabs"]["fill-mask"]["view"]["text"] == "edited after the broken restore [MASK] ."


@with_tabs("nsp_tab")
def test_a_tab_that_fails_to_restore_ends_the_restore_and_open_still_works(
        qtbot, window, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nsp = window.task_tabs["nsp"]

    def broken(_state: dict) -> None:
        raise RuntimeError("a bug in a tab's restore")

    monkeypatch.setattr(nsp, "restore", broken)
    data = workspace.capture(window)
    with qtbot.waitSignals([window.workspace.restored, window.workspace.problems], timeout=20_000):
        window.workspace.apply(data)
    assert not window.workspace.restoring
    monkeypatch.undo()

    window.task_tabs["fill-mask"].text.setPlainText("from the second file [MASK] .")
    path = tmp_path / "good.json"
    menus.save_workspace(window, str(path))
    window.task_tabs["fill-mask"].text.setPlainText("")
    with qtbot.waitSignal(window.workspace.restored, timeout=20_000):
        menus.open_workspace(window, str(path))
    assert window.task_tabs["fill-mask"].text.toPlainText() == "from the second file [MASK] ."


def test_an_unreadable_last_workspace_is_named_and_replaced_on_close(qtbot, tmp_path: Path) -> None:
    folder = tmp_path / "app"
    folder.mkdir()
    last = folder / workspace.LAST_NAME
    last.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    win = _new_window(qtbot, folder)
    assert "nested more than" in win.log.view.toPlainText()
    win.task_tabs["fill-mask"].text.setPlainText("after a deep file [MASK] .")
    win.close()
    assert json.loads(last.read_text(encoding="utf-8"))["tabs"]["fill-mask"]["view"]["text"] == \
        "after a deep file [MASK] ."


# -- an explicit model wins over a pending restore (19.5); the current tab first (19.11) -----------
def _workspace_with(window, current: str, loaded: dict[str, str]) -> dict:  # noqa: ANN001
    data = workspace.capture(window)
    data["current"] = current
    for key, source in loaded.items():
        data["tabs"][key]["loaded"] = source
    return data


@with_tabs("nsp_tab")
def test_open_in_beats_the_workspace_model_of_a_tab_not_shown_yet(qtbot, window, checkpoint_factory) -> None:
    restored_model, trained_model = str(checkpoint_factory("bert")), str(checkpoint_factory("roberta"))
    with qtbot.waitSignal(window.workspace.restored, timeout=20_000):
        window.workspace.apply(_workspace_with(window, "nsp", {"fill-mask": restored_model}))
    tab = window.task_tabs["fill-mask"]
    assert window.workspace.pending == {"fill-mask": restored_model}
    loads: list[str] = []
    tab.model_bar.loaded.connect(lambda info: loads.append(info.request.source))
    with qtbot.waitSignal(tab.model_bar.loaded, timeout=60_000):
        tab.open_model(trained_model)  # what the Train tab's "Open in…" does
        window.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: not tab.model_bar.busy, timeout=60_000)
    assert loads == [trained_model]
    assert tab.model_info.request.source == trained_model
    assert "fill-mask" not in window.workspace.pending


@with_tabs("nsp_tab")
def test_the_current_tab_loads_first_and_the_others_say_what_will_load(
        qtbot, window, checkpoint_factory) -> None:
    fill_model, nsp_model = str(checkpoint_factory("bert")), "/models/nsp-model-to-load-later"
    fill = window.task_tabs["fill-mask"]
    started_while_restoring: list[bool] = []
    fill.model_bar.busy_changed.connect(
        lambda busy: started_while_restoring.append(window.workspace.restoring) if busy else None)
    with qtbot.waitSignals([window.workspace.restored, fill.model_bar.loaded], timeout=60_000):
        window.workspace.apply(_workspace_with(window, "fill-mask", {"fill-mask": fill_model, "nsp": nsp_model}))
    assert started_while_restoring[:1] == [True]  # its load began before the other tabs were back
    assert window.task_tabs["nsp"].model_bar.info_label.text() == f"Loading {nsp_model}…"


def test_splitter_sizes_from_a_hand_edited_settings_file_are_bounded(tmp_path: Path) -> None:
    ini = tmp_path / "settings.ini"
    ini.write_text("[splitter]\nfill-mask=\"300,100000000000000000000000\"\nnsp=abc\nqa=\"200,400\"\n",
                   encoding="utf-8")
    settings = AppSettings(QSettings(str(ini), QSettings.Format.IniFormat))
    assert settings.splitter_sizes("fill-mask") == []  # would overflow a C int in QSplitter.setSizes
    assert settings.splitter_sizes("nsp") == []
    assert settings.splitter_sizes("qa") == [200, 400]


def test_a_tab_not_opened_in_this_run_is_saved_as_it_came_back(qtbot, window) -> None:  # noqa: ANN001
    """Issue 29 #8: a tab's model (and the layer/head its model bounds) was saved only if the tab had
    been opened in that run: after two restarts Attention had no model and layer/head 0/0."""
    model = "/models/attention-model-to-load-later"
    data = _workspace_with(window, "fill-mask", {"attention": model})
    data["tabs"]["attention"]["view"]["text"] = "The cat sat."
    data["tabs"]["attention"]["view"]["view"].update(layer=1, head=7)
    for _restart in range(2):  # restored, saved, restored again, saved again
        with qtbot.waitSignal(window.workspace.restored, timeout=20_000):
            window.workspace.apply(data)
        data = workspace.capture(window)
    saved = data["tabs"]["attention"]
    assert saved["loaded"] == model and saved["view"]["text"] == "The cat sat."
    assert (saved["view"]["view"]["layer"], saved["view"]["view"]["head"]) == (1, 7)
