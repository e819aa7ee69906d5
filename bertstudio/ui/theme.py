"""Light and dark: follow the system (QStyleHints.colorScheme) unless View → Theme forces one.

Kept free of pyqtgraph so the window can set its theme before the first paint; plots read
`palette()` through `bertstudio.ui.plot_style` and restyle when `manager().changed` fires.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QSettings, Qt, Signal, Slot
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QWidget

MODES = ("system", "light", "dark")
SETTINGS_KEY = "view/theme"


@dataclass(frozen=True)
class Colors:
    """What plots draw with; bar colours chosen to read on both backgrounds."""

    name: str
    background: str
    foreground: str  # axes, tick labels, value labels
    muted: str  # grid, secondary text
    series_a: str  # model A, start probabilities
    series_b: str  # model B, end probabilities
    inside_text: str  # a value label drawn on top of a long bar
    highlight: tuple[int, int, int, int]  # shaded regions (RGBA)
    # text colours for notes and marks, readable on the window's background (issue 8)
    info: str = "#3c4a5c"
    warning: str = "#7a5800"
    error: str = "#a40000"
    warning_background: str = "#fff4ce"
    error_background: str = "#fde7e9"
    mark: str = "#1a56b0"  # a predicted word in the filled sentence
    mark_background: str = "#e3ecfa"
    answer_background: str = "#ffd54f"  # the QA answer (dark text on it in both themes)
    window_background: str = "#eef3fb"  # the QA window the answer came from
    b_background: str = "#fbd9c4"  # model B's answer
    secondary: str = "#555555"  # secondary text on the window (a count, a hint): quieter, still readable


LIGHT = Colors("light", "#ffffff", "#222222", "#8a8a8a", "#3f6fc4", "#d0703f", "#ffffff", (255, 213, 79, 90))
DARK = Colors("dark", "#1f2227", "#e3e3e3", "#8f959e", "#6f9ce8", "#f0935e", "#111111", (255, 213, 79, 70),
              info="#b8c2cf", warning="#e3b341", error="#ff7b72", warning_background="#3a3000",
              error_background="#4a1f22", mark="#9cc0ff", mark_background="#253650",
              answer_background="#ffd54f", window_background="#2c3a4f", b_background="#fbd9c4",
              secondary="#aab1bb")


def ink_on(background: str) -> str:
    """Black or white, whichever reads on `background` (text on a highlight, in either theme)."""
    colour = QColor(background)
    luminance = 0.2126 * colour.redF() + 0.7152 * colour.greenF() + 0.0722 * colour.blueF()
    return "#111111" if luminance > 0.45 else "#ffffff"


def _dark_palette() -> QPalette:
    """Fusion-style dark palette, used when the platform does not switch the palette itself."""
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#2b2e33", QPalette.ColorRole.WindowText: "#e3e3e3",
        QPalette.ColorRole.Base: "#1f2227", QPalette.ColorRole.AlternateBase: "#2b2e33",
        QPalette.ColorRole.ToolTipBase: "#2b2e33", QPalette.ColorRole.ToolTipText: "#e3e3e3",
        QPalette.ColorRole.Text: "#e3e3e3", QPalette.ColorRole.Button: "#34383e",
        QPalette.ColorRole.ButtonText: "#e3e3e3", QPalette.ColorRole.BrightText: "#ff6b6b",
        QPalette.ColorRole.Link: "#6f9ce8", QPalette.ColorRole.Highlight: "#3f6fc4",
        QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.PlaceholderText: "#8f959e",
    }
    for role, colour in roles.items():
        palette.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6b7078"))
    # A disabled field sinks into the window and a disabled button flattens: with grey text alone the
    # read-only form during a run looked as editable as before Start.
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Base, QColor("#2b2e33"))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Button, QColor("#2e3136"))
    return palette


class ThemeManager(QObject):
    """One per application: the chosen mode, the resolved scheme, and a signal when it changes."""

    changed = Signal(str)  # "light" or "dark"

    def __init__(self) -> None:
        super().__init__()
        self.mode = "system"
        self._applied = ""
        self._light_palette: QPalette | None = None
        self._store: QSettings | None = None
        app = QGuiApplication.instance()
        if app is not None:
            QGuiApplication.styleHints().colorSchemeChanged.connect(lambda _scheme: self._system_changed())

    def system_scheme(self) -> str:
        hints = QGuiApplication.styleHints()
        return "dark" if hints.colorScheme() == Qt.ColorScheme.Dark else "light"

    def scheme(self) -> str:
        """The scheme in use: the forced one, or the system's."""
        return self.mode if self.mode in ("light", "dark") else self.system_scheme()

    def colors(self) -> Colors:
        return DARK if self.scheme() == "dark" else LIGHT

    def restore(self, store: QSettings) -> None:
        """Apply the mode remembered in `store` (and remember later choices there)."""
        self._store = store
        mode = str(store.value(SETTINGS_KEY, "system") or "system")
        self.set_mode(mode if mode in MODES else "system", remember=False)

    def set_mode(self, mode: str, remember: bool = True) -> None:
        if mode not in MODES:
            raise ValueError(f"theme must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        if remember and self._store is not None:
            self._store.setValue(SETTINGS_KEY, mode)
        hints = QGuiApplication.styleHints()
        if hasattr(hints, "setColorScheme"):  # Qt >= 6.8: native styles follow a forced scheme
            if mode == "system":
                hints.unsetColorScheme()  # back to what the platform says
            else:
                hints.setColorScheme(Qt.ColorScheme.Dark if mode == "dark" else Qt.ColorScheme.Light)
        self._apply()

    def _system_changed(self) -> None:
        if self.mode == "system":
            self._apply()

    def _apply(self) -> None:
        app = QGuiApplication.instance()
        if app is None:
            return
        scheme = self.scheme()
        if self._light_palette is None:
            start = QGuiApplication.palette()
            self._light_palette = _light_fallback() if _is_dark(start) else start
        # Qt draws a dark palette itself where the platform supports it; elsewhere
        # (xcb without a portal, offscreen) we set one, so forcing always shows.
        palette = _dark_palette() if scheme == "dark" else self._light_palette
        if _is_dark(QGuiApplication.palette()) != (scheme == "dark"):
            QGuiApplication.setPalette(palette)
        if scheme != self._applied:
            self._applied = scheme
            self.changed.emit(scheme)


def _light_fallback() -> QPalette:
    """A light palette when the platform started dark and a light one is forced."""
    from PySide6.QtWidgets import QStyleFactory

    style = QStyleFactory.create("Fusion")
    palette = QPalette(QColor("#efefef"), QColor("#f6f6f6"))
    if style is not None and not _is_dark(style.standardPalette()):
        palette = style.standardPalette()
    return palette


def _is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


_MANAGER: ThemeManager | None = None


def manager() -> ThemeManager:
    """The application's theme manager (created on first use, after QApplication exists)."""
    global _MANAGER
    if _MANAGER is None:
        _MANAGER = ThemeManager()
    return _MANAGER


def colors() -> Colors:
    return manager().colors()


class _Follower(QObject):
    """Re-applies a widget's style sheet on every theme change; a child of the widget, so the
    connection ends with it (a lambda would outlive a deleted label)."""

    def __init__(self, widget: QWidget, style: Callable[[Colors], str]) -> None:
        super().__init__(widget)
        self._widget = widget
        self._style = style
        manager().changed.connect(self.apply)
        self.apply()

    @Slot()
    def apply(self, _scheme: str = "") -> None:
        self._widget.setStyleSheet(self._style(colors()))


def follow(widget: QWidget, style: Callable[[Colors], str]) -> None:
    """Give `widget` the style sheet `style(colors)` now and after each theme change, so no colour
    is fixed for one background (a grey `#555` note was unreadable on dark)."""
    _Follower(widget, style)
