"""The window's menus and shortcuts: workspace, export, Copy as Python, theme, tab navigation, help.

Kept out of main_window.py so the window stays about layout and start-up. Nothing here imports
pyqtgraph or torch at import time (the window must open fast).
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtGui import QAction, QActionGroup, QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import QDialog, QFileDialog, QLabel, QMenu, QTextBrowser, QVBoxLayout

from bertstudio.core.errors import BertStudioError, InputError
from bertstudio.ui import theme, workspace
from bertstudio.ui.window_api import Menus, StudioWindow
from bertstudio.workers.runner import TaskRunner

WORKSPACE_FILTER = "BERT Studio workspace (*.bertstudio.json *.json)"
# The template's shortcuts (every tab has them), for the help list; a tab's own shortcuts
# say what they do in their whatsThis.
KNOWN = {"Ctrl+Return": "Run the current tab", "Ctrl+Enter": "Run the current tab",
         "Esc": "Cancel the running job"}
# Straight to tab 1, 2, ...: the number row, 1 to 9, 0, then - and = (eleven tabs outgrew Alt+1..9).
# Any further tab is in View → Go to tab (with a mnemonic) and behind Ctrl+PgUp / Ctrl+PgDown.
TAB_KEYS = tuple(f"Alt+{key}" for key in "1234567890-=[]")  # the number row, then the next keys along


def _action(window: StudioWindow, menu: QMenu, text: str, slot: Any, *keys: Any, tip: str = "") -> QAction:
    action = QAction(text, window)
    if keys:
        action.setShortcuts([QKeySequence(key) for key in keys])
    if tip:
        action.setStatusTip(tip)
    action.triggered.connect(slot)
    menu.addAction(action)
    return action


def install(window: StudioWindow) -> Menus:
    """Build File, Edit, View and Help on `window` (called once, before the first paint)."""
    bar = window.menuBar()
    file = bar.addMenu("&File")
    _action(window, file, "Open workspace…", lambda: open_workspace(window), QKeySequence.StandardKey.Open,
            tip="Put back every tab's model, inputs and options and the window layout")
    _action(window, file, "Save workspace…", lambda: save_workspace(window), QKeySequence.StandardKey.Save)
    file.addSeparator()
    _action(window, file, "Export result…", lambda: export_result(window), "Ctrl+E",
            tip="The current tab's result as PNG or SVG, or as JSON")
    _action(window, file, "Export model to ONNX…", lambda: export_model(window),
            tip="The current tab's model with its task head as ONNX, checked against PyTorch with onnxruntime")
    file.addSeparator()
    _action(window, file, "Set models folder…", window.choose_models_dir)
    _action(window, file, "Quit", window.close, "Ctrl+Q")

    edit = bar.addMenu("&Edit")
    copy_action = _action(window, edit, "Copy as Python", lambda: copy_as_python(window), "Ctrl+Shift+C",
                          tip="A transformers script that reproduces the current tab's numbers")
    copy_action.setEnabled(False)  # until a tab whose spec writes a script is current
    window.tabs.currentChanged.connect(lambda _index: update_copy_action(window))
    window.ready.connect(lambda: update_copy_action(window))

    view = bar.addMenu("&View")
    view.addAction(window.log.toggleViewAction())
    view.addSeparator()
    themes = view.addMenu("Theme")
    group = QActionGroup(window)
    for mode in theme.MODES:
        action = QAction({"system": "Follow the system"}.get(mode, mode.capitalize()), window, checkable=True)
        action.setChecked(theme.manager().mode == mode)
        action.triggered.connect(lambda _on=False, m=mode: theme.manager().set_mode(m))
        group.addAction(action)
        themes.addAction(action)
    theme_actions = {mode: action for mode, action in zip(theme.MODES, group.actions(), strict=True)}
    view.addSeparator()
    _action(window, view, "Next tab", lambda: step_tab(window, 1), "Ctrl+Tab", "Ctrl+PgDown")
    _action(window, view, "Previous tab", lambda: step_tab(window, -1), "Ctrl+Shift+Tab", "Ctrl+PgUp")
    tab_menu = view.addMenu("&Go to tab")
    tab_actions = []
    for index, key in enumerate(TAB_KEYS):
        action = QAction(f"Tab {index + 1}", window)
        action.setShortcut(QKeySequence(key))
        action.triggered.connect(lambda _on=False, i=index: go_to_tab(window, i))
        window.addAction(action)  # live before the menu is first opened and while the tabs arrive
        tab_menu.addAction(action)  # never an empty menu; titled by refresh_tab_menu
        tab_actions.append(action)
    tab_menu.aboutToShow.connect(lambda: refresh_tab_menu(window))
    window.ready.connect(lambda: refresh_tab_menu(window))  # every tab exists by then

    export_runner = TaskRunner(window)
    export_runner.result.connect(lambda written: window.show_status(f"Exported to {written}"))
    export_runner.error.connect(lambda error: window.report_error(error, "export"))

    help_menu = bar.addMenu("&Help")
    _action(window, help_menu, "Keyboard shortcuts", lambda: show_shortcuts(window), "F1")
    return Menus(theme_actions, export_runner, tab_menu, tab_actions, copy_action)


def step_tab(window: StudioWindow, step: int) -> None:
    count = window.tabs.count()
    if count:
        window.tabs.setCurrentIndex((window.tabs.currentIndex() + step) % count)


def go_to_tab(window: StudioWindow, index: int) -> None:
    if 0 <= index < window.tabs.count():
        window.tabs.setCurrentIndex(index)


def refresh_tab_menu(window: StudioWindow) -> None:
    """View → Go to tab lists every tab as it is now (tabs arrive after the first paint)."""
    menu, actions = window.menus.tab_menu, window.menus.tab_actions
    if menu is None:
        return
    menu.clear()  # the keyed actions belong to the window and survive; the extra ones go
    for index in range(window.tabs.count()):
        title = window.tabs.tabText(index).replace("&", "&&")
        if index < len(actions):
            action = actions[index]
        else:
            action = QAction(menu)
            action.triggered.connect(lambda _on=False, i=index: go_to_tab(window, i))
        mnemonics = "1234567890abcdefghijklmnopqrstuvwxyz"
        action.setText(f"&{mnemonics[index]}  {title}" if index < len(mnemonics) else title)
        menu.addAction(action)


# -- workspace -------------------------------------------------------------------------------------
def save_workspace(window: StudioWindow, path: str | None = None) -> None:
    if path is None:
        path, _ = QFileDialog.getSaveFileName(window, "Save workspace", window.settings.save_path(
            "workspace.bertstudio.json"), WORKSPACE_FILTER)
        window.settings.remember_save(path)
    if path:
        try:
            workspace.write(path, workspace.capture(window))
        except OSError as error:
            window.report_error(InputError(f"Could not save the workspace: {error}"), "workspace")
            return
        window.show_status(f"Workspace saved to {path}")


def open_workspace(window: StudioWindow, path: str | None = None) -> None:
    if path is None:
        path, _ = QFileDialog.getOpenFileName(window, "Open workspace", "", WORKSPACE_FILTER)
    if path:
        try:
            window.workspace.apply(workspace.read(path))
        except BertStudioError as error:
            window.report_error(error, "workspace")
            return
        window.show_status(f"Workspace opened from {path}")


# -- export and Copy as Python ---------------------------------------------------------------------
def export_model(window: StudioWindow) -> object:
    """The Export to ONNX dialog (one per window, kept between uses) on the current tab's model and task."""
    from bertstudio.ui.widgets.export_dialog import ExportDialog

    dialog = window.findChild(ExportDialog)
    if dialog is None:
        dialog = ExportDialog(parent=window)
    source, task = export_source(window)
    if source and not dialog.runner.busy:
        dialog.source.setText(source)
        index = dialog.task.findData(task)
        if index >= 0:
            dialog.task.setCurrentIndex(index)
    dialog.show()
    dialog.raise_()
    return dialog


def export_source(window: StudioWindow) -> tuple[str, str]:
    """(model, task) the export dialog opens with (issue 40: it opened with no model on a tab without a
    model bar, and as Fill-mask for Evaluate's classifier): the current tab's loaded model and the
    task it was loaded for, else the model its bar names, else Train's shown run, else the model
    loaded in any other tab; ("", "") when there is none."""
    current = window.tabs.currentWidget()
    tabs = [current, *(tab for tab in window.task_tabs.values() if tab is not current)]
    for tab in tabs:
        bar = getattr(tab, "model_bar", None)
        info = bar.info if bar is not None else None
        if info is not None:
            return info.request.source, info.request.task
        if tab is current and bar is not None and bar.source_text():
            return bar.source_text(), bar.task
        run = getattr(tab, "result_origin", lambda: None)() if hasattr(tab, "open_result_in") else None
        if run is not None and run.model is not None:
            return run.inputs.output_dir, run.model.task
    return "", ""


def export_result(window: StudioWindow, path: str | None = None) -> None:
    from bertstudio.ui import export

    tab = window.tabs.currentWidget()
    if path is None:
        name = f"{getattr(tab, 'TASK', 'result')}.png"
        path, _ = QFileDialog.getSaveFileName(window, "Export result", window.settings.save_path(name), export.FILTER)
        window.settings.remember_save(path)
    if not path:
        return
    target = export.target(path)
    try:
        if target.suffix.lower() == ".png":  # grab here, encode in a worker: no stall on a big view
            export.require_result(tab)
            window.menus.export_runner.start(export.save_image, export.grab(export.result_view(tab)), target)
            return
        written = export.export_tab(tab, target)
    except (BertStudioError, OSError) as error:
        window.report_error(error if isinstance(error, BertStudioError) else InputError(str(error)), "export")
        return
    window.show_status(f"Exported to {written}")


def script_spec(tab: Any) -> Any:
    """The task spec behind `tab` when it can write a script (Copy as Python), else None."""
    spec = getattr(tab, "spec", None)
    return spec if getattr(spec, "script", None) is not None else None


def update_copy_action(window: StudioWindow) -> None:
    """Copy as Python is offered only where the current tab's spec has a script."""
    action = getattr(getattr(window, "menus", None), "copy_action", None)
    if action is not None:
        action.setEnabled(script_spec(window.tabs.currentWidget()) is not None)


def copy_as_python(window: StudioWindow) -> str:
    """Put a script for the current tab on the clipboard; returns it ("" if the tab has none)."""
    from bertstudio.core.snippets import python_snippet
    from bertstudio.ui.tabs.base import TaskTab

    tab = window.tabs.currentWidget()
    title = getattr(tab, "TITLE", "this")
    spec = script_spec(tab)
    if spec is None or not isinstance(tab, TaskTab):  # a direct call can get here (not the disabled action)
        window.report_error(InputError(f"There is no Python snippet for the {title} tab."))
        return ""
    try:
        source, inputs = tab.last_run()
        script = python_snippet(spec, source, inputs)  # a workspace's "abc" top k: a message
    except BertStudioError as error:
        window.report_error(error, "Copy as Python")
        return ""
    QGuiApplication.clipboard().setText(script)
    window.show_status(f"Copied a {len(script.splitlines())}-line Python script for {title} to the clipboard")
    return script


# -- help ------------------------------------------------------------------------------------------
def shortcut_rows(window: StudioWindow) -> list[tuple[str, str]]:
    """(keys, what) for every menu action and tab shortcut, menus first."""
    rows: list[tuple[str, str]] = []
    refresh_tab_menu(window)  # every tab's key, under its title
    tab_actions = window.menus.tab_actions if getattr(window, "menus", None) is not None else []
    for menu in window.menuBar().findChildren(QMenu):
        for action in menu.actions():
            keys = ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts())
            if keys:
                text = action.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
                if action in tab_actions:  # the tab's title, not its menu mnemonic ("Alt+- → a Evaluate")
                    text = window.tabs.tabText(tab_actions.index(action)).replace("&&", "&")
                rows.append((keys, f"{menu.title().replace('&', '')} → {' '.join(text.split())}"))
    seen: set[tuple[str, str]] = set()
    for tab in window.task_tabs.values():
        for shortcut in tab.findChildren(QShortcut):
            key = shortcut.key().toString()
            what = shortcut.whatsThis() or KNOWN.get(key, "")
            if what and (key, what) not in seen:
                seen.add((key, what))
                scope = "" if key in KNOWN else f" ({tab.TITLE})"
                rows.append((shortcut.key().toString(QKeySequence.SequenceFormat.NativeText), what + scope))
    return rows


def show_shortcuts(window: StudioWindow) -> QDialog:
    dialog = QDialog(window)
    dialog.setWindowTitle("Keyboard shortcuts")
    text = QTextBrowser()
    body = "".join(f"<tr><td><b>{html.escape(keys)}</b></td><td>&nbsp;&nbsp;{html.escape(what)}</td></tr>"
                   for keys, what in shortcut_rows(window))
    text.setHtml(f"<table cellpadding='3'>{body}</table>")
    layout = QVBoxLayout(dialog)
    layout.addWidget(QLabel("Shortcuts in BERT Studio (the tab shortcuts work anywhere in their tab):"))
    layout.addWidget(text)
    dialog.resize(520, 440)
    dialog.show()
    return dialog
