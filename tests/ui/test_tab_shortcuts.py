"""Every tab has a keyboard route (issue 19.18: with 11 tabs, Alt+1..9 no longer reached the last ones)."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence

from bertstudio.ui import menus

KEYS = ("Alt+1", "Alt+2", "Alt+3", "Alt+4", "Alt+5", "Alt+6", "Alt+7", "Alt+8", "Alt+9", "Alt+0", "Alt+-", "Alt+=",
        "Alt+[", "Alt+]")


def _press(qtbot, window, key: str) -> None:  # noqa: ANN001
    """Press a key chord as the user would, on the focused widget of the active window."""
    sequence = QKeySequence(key)[0]
    target = window.focusWidget() or window
    qtbot.keyClick(target, sequence.key(), sequence.keyboardModifiers())


def test_every_tab_has_its_own_key(qtbot, window) -> None:  # noqa: ANN001
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5_000)
    count = window.tabs.count()
    assert count >= 10, [window.tabs.tabText(i) for i in range(count)]  # Alt+1..9 once stopped at 9
    assert count <= len(KEYS)
    for index in reversed(range(count)):
        _press(qtbot, window, KEYS[index])
        assert window.tabs.currentIndex() == index, (KEYS[index], window.tabs.tabText(index))
    for title in ("Train", "Explain", "Evaluate"):
        index = next(i for i in range(count) if window.tabs.tabText(i) == title)
        window.tabs.setCurrentIndex(0)
        _press(qtbot, window, KEYS[index])
        assert window.tabs.tabText(window.tabs.currentIndex()) == title


def test_go_to_tab_menu_and_the_shortcut_list_name_every_tab(window) -> None:  # noqa: ANN001
    rows = menus.shortcut_rows(window)
    listed = {what: keys for keys, what in rows}
    for index in range(window.tabs.count()):
        title = window.tabs.tabText(index)
        found = [k for what, k in listed.items() if what.startswith("Go to tab →") and what.endswith(title)]
        assert len(found) == 1, (title, rows)
        [keys] = found
        assert QKeySequence(keys) == QKeySequence(menus.TAB_KEYS[index]), (title, keys)
    menu = window.menus.tab_menu
    assert [a.text().split(maxsplit=1)[1] for a in menu.actions()] == \
        [window.tabs.tabText(i) for i in range(window.tabs.count())]
    menu.actions()[-1].trigger()
    assert window.tabs.currentIndex() == window.tabs.count() - 1
    assert not any("Alt+1 … Alt+9" in keys for keys, _ in rows)


def test_a_tab_past_the_keys_is_still_in_the_menu(qtbot, window) -> None:  # noqa: ANN001
    from PySide6.QtWidgets import QLabel

    extra = [QLabel(f"extra {n}") for n in range(len(menus.TAB_KEYS) + 2 - window.tabs.count())]
    for label in extra:
        window.tabs.addTab(label, label.text())
    menus.refresh_tab_menu(window)
    actions = window.menus.tab_menu.actions()
    assert len(actions) == window.tabs.count()
    actions[-1].trigger()
    assert window.tabs.currentWidget() is extra[-1]
    menus.refresh_tab_menu(window)  # refreshing again neither loses nor duplicates entries
    assert len(window.menus.tab_menu.actions()) == window.tabs.count()
    for label in extra:
        window.tabs.removeTab(window.tabs.indexOf(label))
