"""Walk a real window through every tab, in both themes, and check what a person would see.

    xvfb-run -a -s "-screen 0 1280x800x24" .venv/bin/python scripts/walkthrough.py [OUT] [--only qa,ner]

(`apt-get install -y xvfb libxcb-icccm4 libxcb-keysyms1 libxcb-xinerama0`; QT_QPA_PLATFORM=offscreen
works too, with a 1280x800 screen assumed.) The real test models and the heads the test suite
trains (`scripts/screenshot.py`'s shots; a missing head is trained first, tests/fixtures/trained_*)
are loaded and run in every tab, on throw-away settings, light then dark. After each step:

- the window is never wider (or taller) than the screen, nor outside it;
- no visible widget lies outside the window, no button, check box or combo box is clipped by its
  parent or narrower than its text (inside a scroll area, scrolling is allowed);
- every plot has the theme's background; in the dark theme no text box, table or list is white;
- every shown result agrees with the state object it was computed from (ui/tabs/tab_state.py):
  its model is the one loaded and its task the tab's, or the view says Out of date;
- at 900x600 every tab is checked and photographed too; the workspace survives two restarts
  (every tab's model, task, inputs and heads off read back from a new window's widgets), and each
  new window closes only once its jobs have ended;
- Train -> Evaluate after a restart (scripts/walk_chains.py): a small model trained for real, its
  Evaluate… clicked; Evaluate's model field, loaded model, result origin and metrics and Train's
  result all name the trained folder and its task;
- the window items (scripts/walk_window.py) at 1280x800 and 900x600: Trace why inside the screen,
  the wheel passing over a picked combo and a plot, a refused Start beside Start and in the Log
  with nothing re-laid out; and a restart on a 900x600 screen after a 1280x800 session;
- no dialog popped up (an internal-error dialog, a message box: recorded and closed), no
  "internal error" in the log, and no crash log was written.

Screenshots go to OUT (default /tmp/walkthrough), one PNG per tab and theme. Exit status 1 with
every problem listed, 0 when there was none.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
SCREEN = (1280, 800)  # what we promise to fit; the real screen's size wins when there is one
MIN_PLOT_HEIGHT = 48  # px: below this a plot shows its axis and little else


def ensure_heads(models: Path) -> None:
    """Train the heads the shots use when the fixtures cache lacks them (about 10 s each)."""
    import screenshot

    encoder = models / "all-minilm-l6-v2"
    if not encoder.is_dir():
        return
    from tests.fixtures.trained_nsp_ner import trained_ner, trained_nsp
    from tests.fixtures.trained_qa import trained_qa_folder
    from tests.fixtures.trained_sentiment import trained_sentiment

    for prefix, make in (("minilm-ner", trained_ner), ("minilm-nsp", trained_nsp), ("qa-minilm", trained_qa_folder),
                         ("minilm-sentiment", trained_sentiment)):
        if screenshot.fixture(prefix) is None:
            print(f"training the {prefix} head for the walkthrough…", file=sys.stderr, flush=True)
            make(encoder)


class Inspector:
    """Collects problems; closes any dialog that pops up (a modal one would stall the walk)."""

    def __init__(self, window: Any, crash_dir: Path) -> None:
        from PySide6.QtCore import QTimer

        self.window = window
        self.crash_dir = crash_dir
        self.problems: list[str] = []
        self.where = "start"
        self._timer = QTimer()
        self._timer.setInterval(200)
        self._timer.timeout.connect(self.close_dialogs)
        self._timer.start()

    def problem(self, text: str) -> None:
        line = f"{self.where}: {text}"
        if line not in self.problems:
            self.problems.append(line)
            print(f"PROBLEM {line}", file=sys.stderr, flush=True)

    def close_dialogs(self) -> None:
        from PySide6.QtWidgets import QApplication, QDialog, QMessageBox

        for widget in QApplication.topLevelWidgets():
            if widget is self.window or not widget.isVisible() or not isinstance(widget, QDialog):
                continue
            text = widget.text() if isinstance(widget, QMessageBox) else ""
            self.problem(f"a dialog popped up: {widget.windowTitle()!r} {' '.join(text.split())[:160]!r}")
            widget.reject()

    def screen(self) -> tuple[int, int]:
        from PySide6.QtGui import QGuiApplication

        screen = QGuiApplication.primaryScreen()
        if screen is None or os.environ.get("QT_QPA_PLATFORM") == "offscreen":
            return SCREEN
        size = screen.geometry().size()
        return min(size.width(), SCREEN[0]), min(size.height(), SCREEN[1])

    def check(self) -> None:
        """Everything a person would notice in the window as it is now."""
        from PySide6.QtCore import QPoint, QRect
        from PySide6.QtWidgets import QAbstractButton, QAbstractScrollArea, QComboBox, QTabBar, QWidget

        self.close_dialogs()
        window = self.window
        width, height = self.screen()
        frame = window.frameGeometry()
        if frame.width() > width or window.minimumSizeHint().width() > width:
            self.problem(f"the window is {frame.width()} px wide (asks for at least "
                         f"{window.minimumSizeHint().width()}), the screen {width}")
        if frame.height() > height:
            self.problem(f"the window is {frame.height()} px high, the screen {height}")
        if os.environ.get("QT_QPA_PLATFORM") != "offscreen" and (frame.left() < 0 or frame.right() >= width):
            self.problem(f"the window reaches outside the screen ({frame.left()}..{frame.right()})")
        inside = window.rect()
        for widget in window.findChildren(QWidget):
            if not widget.isVisible() or widget.isWindow() or widget.width() <= 0 or widget.height() <= 0:
                continue
            if _in_scroll_area(widget, QAbstractScrollArea):
                continue
            rect = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
            if not inside.contains(rect):
                if isinstance(widget, (QAbstractButton, QComboBox)) or widget.children() == []:
                    self.problem(f"{_name(widget)} lies outside the window ({_rect(rect)} of {_rect(inside)})")
                continue
            if isinstance(widget, (QAbstractButton, QComboBox)) and not isinstance(widget.parent(), QTabBar):
                shown = widget.visibleRegion().boundingRect()
                if shown.width() < widget.width() - 1 or shown.height() < widget.height() - 1:
                    self.problem(f"{_name(widget)} is clipped: {shown.width()}x{shown.height()} of "
                                 f"{widget.width()}x{widget.height()} px in sight")
                elif widget.width() < widget.minimumSizeHint().width() - 1:
                    self.problem(f"{_name(widget)} is narrower than its text ({widget.width()} of "
                                 f"{widget.minimumSizeHint().width()} px)")
        self.check_plots()
        self.check_dark_boxes()
        for line in origin_problems(window):
            self.problem(line)
        log = window.log.view.toPlainText()
        if "internal error" in log.lower():
            line = next(x for x in log.splitlines() if "internal error" in x.lower())
            self.problem(f"the log reports a bug: {line[:200]}")
        crashes = sorted(self.crash_dir.rglob("*")) if self.crash_dir.exists() else []
        if any(path.is_file() for path in crashes):
            self.problem(f"a crash log was written: {', '.join(str(p) for p in crashes if p.is_file())}")


    def check_plots(self) -> None:
        """Every plot in sight has the theme's background (no white plot in the dark theme) and room
        to be read (a splitter or a small window once left a result's plot a few pixels high)."""
        if "pyqtgraph" not in sys.modules:
            return
        import pyqtgraph as pg

        from bertstudio.ui import plot_style, theme

        wanted = theme.colors().background
        for view in self.window.findChildren(pg.GraphicsView):
            if view.isVisible() and plot_style.background_of(view) != wanted:
                self.problem(f"{type(view).__name__} has a {plot_style.background_of(view)} background, the "
                             f"{theme.colors().name} theme's is {wanted}")
            if view.isVisible() and 0 < view.height() < MIN_PLOT_HEIGHT:
                self.problem(f"{_name(view)} is squeezed to {view.height()} px high (a plot needs "
                             f"{MIN_PLOT_HEIGHT} to be read)")

    def check_dark_boxes(self) -> None:
        """In the dark theme, no text box, table or list is painted white (a style sheet once kept
        an editor's light base after a theme switch)."""
        from PySide6.QtWidgets import QAbstractScrollArea

        from bertstudio.ui import theme

        if theme.manager().scheme() != "dark":
            return
        for area in self.window.findChildren(QAbstractScrollArea):
            viewport = area.viewport()
            if not area.isVisible() or viewport.width() < 20 or viewport.height() < 20:
                continue
            image = viewport.grab().toImage()
            corner = image.pixelColor(image.width() - 3, image.height() - 3)
            if corner.lightness() > 230:
                self.problem(f"{_name(area)} is painted {corner.name()} in the dark theme")

    def visit_pages(self, tab: Any, out: Path, stem: str) -> None:
        """The pages of the tab widgets inside a tab (Evaluate's Confusion, Explain's heads...): each
        one checked and photographed, then the first page again."""
        import screenshot
        from PySide6.QtWidgets import QTabWidget

        where = self.where
        for inner in tab.findChildren(QTabWidget):
            if not inner.isVisible():
                continue
            start = inner.currentIndex()
            for index in range(inner.count()):
                if index == start or not inner.isTabEnabled(index):
                    continue
                inner.setCurrentIndex(index)
                screenshot.settle(150)
                page = inner.tabText(index).replace("&", "").replace(" ", "-").lower()
                self.where = f"{where} > {inner.tabText(index).replace('&', '')}"
                self.check()
                self.window.grab().save(str(out / f"{stem}-{page}.png"))
            inner.setCurrentIndex(start)
        self.where = where


def origin_problems(window: Any) -> list[str]:
    """Each tab whose shown result disagrees with its state object (model, task, input) while the view
    does not say Out of date: a number on screen that belongs to another model, task or input."""
    found = []
    for key, tab in window.task_tabs.items():
        read = getattr(tab, "read_state", None)
        if read is None:
            continue
        state = read()
        shown = state.result
        if shown is None or shown.model is None:
            continue
        banner = getattr(tab, "stale_banner", None)
        marked = banner is not None and not banner.isHidden()
        task = _task_now(tab, state)
        if shown.model.task != task and not marked:
            found.append(f"{key}: the result was computed for task {shown.model.task!r}, the tab is {task!r}")
        reason = state.stale_reason()
        if state.has_model_bar and shown.model.source != state.loaded and not marked:
            found.append(f"{key}: shows a result of {shown.model.source} under {state.loaded or 'no model'} "
                         "with no Out-of-date mark")
        elif reason and not marked:
            found.append(f"{key}: the result's {reason} differs from the tab's, with no Out-of-date mark")
    return found


def _task_now(tab: Any, state: Any) -> str:
    """The task the tab would compute for now: what its state's `now` names (Train's form, Explain's
    task), else its model bar's, else the tab's own key."""
    now = state.now
    if now is not None and now.model is not None and now.model.task:
        return str(now.model.task)
    bar = getattr(tab, "model_bar", None)
    return str(bar.task) if bar is not None else str(getattr(tab, "TASK", ""))


def small_window(window: Any, inspector: Inspector, out: Path, mode: str, size: tuple[int, int] = (900, 600)) -> None:
    """Every tab at 900x600 (issue 29 #4, #18): scroll or reflow, never hide the main action."""
    import screenshot

    before = window.size()
    window.resize(*size)
    for index in range(window.tabs.count()):
        tab = window.tabs.widget(index)
        key = getattr(tab, "TASK", "") or str(index)
        inspector.where = f"{mode}/{size[0]}x{size[1]}/{key}"
        window.tabs.setCurrentIndex(index)
        screenshot.settle(200)
        inspector.check()
        window.grab().save(str(out / f"{mode}-{size[0]}x{size[1]}-{key}.png"))
    window.resize(before)


def restart_twice(window: Any, inspector: Inspector, scratch: Path, out: Path, train: bool = True) -> None:
    """Save the workspace, put it back in a new window, save again, and again (issue 29 #8): every
    tab's state object, read back from the new window's widgets, equals the first window's. In the
    second new window a small model is trained and evaluated (walk_chains.train_then_evaluate); each
    window closes only once its jobs (warm-up, scan, restored loads) have ended."""
    import screenshot
    import walk_chains
    from PySide6.QtCore import QSettings

    from bertstudio.ui import workspace
    from bertstudio.ui.main_window import MainWindow
    from bertstudio.ui.settings import AppSettings

    def bound(tab: Any) -> dict[str, Any]:
        data = dict(tab.read_state().to_json())
        data.pop("splitter", None)
        return data

    before = {key: bound(tab) for key, tab in window.task_tabs.items()}
    data = workspace.capture(window)
    for restart in (1, 2):
        inspector.where = f"restart {restart}"
        store = QSettings(str(scratch / f"restart{restart}.ini"), QSettings.Format.IniFormat)
        other = MainWindow(AppSettings(store, models_dir_override=str(screenshot.MODELS)), confirm_close=False)
        other.show()
        screenshot.wait(other.ready)
        other.workspace.apply(data)
        screenshot.wait(other.workspace.restored)
        if not walk_chains.wait_idle():
            inspector.problem("the restored window's jobs had not ended after 3 minutes")
        for key, tab in other.task_tabs.items():
            now = bound(tab)
            for name in sorted(set(now) | set(before.get(key, {}))):
                if now.get(name) != before.get(key, {}).get(name):
                    inspector.problem(f"{key}: {name} came back as {str(now.get(name))[:80]!r}, "
                                      f"was {str(before.get(key, {}).get(name))[:80]!r}")
        data = workspace.capture(other)
        if restart == 2 and train:
            inspector.where, inspector.window = "restart 2/train -> evaluate", other
            try:
                walk_chains.train_then_evaluate(other, inspector, out, scratch, screenshot.MODELS / "all-minilm-l6-v2")
            finally:
                inspector.window = window
            walk_chains.wait_idle()
        other.close()
        screenshot.settle(200)


def _in_scroll_area(widget: Any, scroll_area: type) -> bool:
    """Whether `widget` lies in a scroll area that scrolls now (its content may be clipped there).
    A tab's page sits in a scroll area that only scrolls in a small window: while it shows no scroll
    bar, what is clipped inside it is clipped for real."""
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, scroll_area) and (parent.horizontalScrollBar().isVisible()
                                                or parent.verticalScrollBar().isVisible()
                                                or getattr(parent, "widget", lambda: None)() is None):
            return True
        parent = parent.parentWidget()
    return False


def _name(widget: Any) -> str:
    text = widget.text() if hasattr(widget, "text") and callable(widget.text) else ""
    if not text and hasattr(widget, "currentText"):
        text = widget.currentText()
    label = f" {text!r}" if text else f" ({widget.objectName()})" if widget.objectName() else ""
    return f"{type(widget).__name__}{label}"


def _rect(rect: Any) -> str:
    return f"{rect.x()},{rect.y()} {rect.width()}x{rect.height()}"


def walk(window: Any, inspector: Inspector, out: Path, mode: str, wanted: set[str]) -> None:
    """Every shot of scripts/screenshot.py (model, inputs, run), then every tab not yet seen."""
    import screenshot

    from bertstudio.ui import theme

    theme.manager().set_mode(mode, remember=False)
    seen = set()
    for shot in screenshot.shots():
        if wanted and shot.tab not in wanted and shot.name not in wanted:
            continue
        inspector.where = f"{mode}/{shot.name.removesuffix('.png')}"
        tab = window.task_tabs.get(shot.tab)
        if tab is None:
            inspector.problem(f"no {shot.tab} tab")
            continue
        window.tabs.setCurrentWidget(tab)
        screenshot.settle(200)
        inspector.check()  # before the run: the empty tab
        shot.name = f"{mode}-{shot.name}"
        if not screenshot.take(window, shot, out):
            continue
        seen.add(shot.tab)
        if getattr(getattr(tab, "runner", None), "busy", False):
            inspector.problem("the shot was taken while the tab's run was still going")
        inspector.check()
        inspector.visit_pages(tab, out, shot.name.removesuffix(".png"))
        errors = [note.text for note in getattr(getattr(tab, "notes", None), "notes", ()) if note.level == "error"]
        if errors:
            inspector.problem(f"the run ended in an error: {errors[0][:200]}")
    for index in range(window.tabs.count()):
        tab = window.tabs.widget(index)
        key = getattr(tab, "TASK", "")
        if key in seen or (wanted and key not in wanted):
            continue
        inspector.where = f"{mode}/{key or window.tabs.tabText(index)}"
        window.tabs.setCurrentIndex(index)
        screenshot.settle(300)
        inspector.check()
        window.grab().save(str(out / f"{mode}-{key or index}.png"))
        inspector.visit_pages(tab, out, f"{mode}-{key or index}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="/tmp/walkthrough", help="folder for the screenshots")
    parser.add_argument("--only", default="", help="comma-separated tab keys or shot names")
    parser.add_argument("--themes", default="light,dark")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    scratch = Path(tempfile.mkdtemp(prefix="bertstudio-walk-"))
    os.environ["XDG_STATE_HOME"] = str(scratch / "state")  # crash logs land here, not in the user's
    crash_dir = scratch / "state" / "bertstudio" / "crashes"
    import screenshot
    import walk_chains
    import walk_window
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    ensure_heads(screenshot.MODELS)
    app = QApplication(sys.argv[:1])
    from bertstudio.app import install_excepthook
    from bertstudio.ui.main_window import MainWindow
    from bertstudio.ui.settings import AppSettings
    from bertstudio.workers.runner import configure_pool, shutdown

    configure_pool()
    store = QSettings(str(scratch / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(AppSettings(store, models_dir_override=str(screenshot.MODELS)), confirm_close=False)
    install_excepthook(window)
    inspector = Inspector(window, crash_dir)
    window.show()
    screenshot.wait(window.ready)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wanted = {part.strip() for part in args.only.split(",") if part.strip()}
    for mode in [m.strip() for m in args.themes.split(",") if m.strip()]:
        walk(window, inspector, out, mode, wanted)
        if not wanted or "evaluate" in wanted:
            walk_chains.evaluate_chain(window, inspector, out, mode)
        small_window(window, inspector, out, mode)
        for size in ((1280, 800), (900, 600)):  # issue 40: dialogs, wheel, refusals in place
            walk_window.window_items(window, inspector, out, mode, size)
    walk_window.restart_on_smaller_screen(window, inspector, scratch, out)
    restart_twice(window, inspector, scratch, out, not wanted or bool(wanted & {"train", "evaluate"}))
    inspector.where = "end"
    inspector.check()
    walk_chains.wait_idle()
    window.close()
    shutdown()
    app.processEvents()
    print(f"screenshots in {out}")
    if inspector.problems:
        print(f"{len(inspector.problems)} problem(s):")
        for line in inspector.problems:
            print(f"  - {line}")
        return 1
    print("no problems found")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
