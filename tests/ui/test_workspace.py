"""Workspaces: save, open in a new window, the same model sources and inputs; the last one comes back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from bertstudio.core.errors import InputError
from bertstudio.ui import menus, workspace
from bertstudio.ui.settings import AppSettings
from tests.ui.conftest import load_model_in


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
    with pytest.raises(InputError, match="could not be read"):
        workspace.read(bad)
    bad.write_text(json.dumps({"tabs": {}}), encoding="utf-8")
    with pytest.raises(InputError, match="not a BERT Studio workspace"):
        workspace.read(bad)
    with pytest.raises(InputError, match="no workspace file"):
        workspace.read(tmp_path / "missing.json")


def test_a_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    workspace.write(path, {"format": workspace.FORMAT, "tabs": {}})
    with pytest.raises(TypeError):
        workspace.write(path, {"format": workspace.FORMAT, "tabs": {"x": object()}})
    assert json.loads(path.read_text(encoding="utf-8"))["tabs"] == {}
    assert [p.name for p in tmp_path.iterdir()] == ["w.json"]
