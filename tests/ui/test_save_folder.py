"""Save dialogs open in the user's documents, then in the folder last saved to (never the folder the
app happened to start in, often the repository)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import QFileDialog

from tests.ui.conftest import only_tabs

window_tabs = only_tabs()


def test_export_result_opens_in_documents_then_the_last_folder(window, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    from bertstudio.ui import menus

    offered: list[str] = []
    chosen = tmp_path / "exports" / "result.json"
    chosen.parent.mkdir()

    def dialog(parent, title, start, filters):  # noqa: ANN001, ANN202
        offered.append(start)
        return "", ""  # the person cancels: nothing is written

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(dialog))
    menus.export_result(window)
    documents = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    expected = Path(documents) if documents and Path(documents).is_dir() else Path.home()
    assert Path(offered[0]) == expected / "fill-mask.png"

    window.settings.remember_save(str(chosen))
    menus.save_workspace(window)
    assert Path(offered[1]) == chosen.parent / "workspace.bertstudio.json"

