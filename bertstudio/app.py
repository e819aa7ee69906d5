"""Start-up: the window is shown first; torch and transformers load afterwards in a worker."""

from __future__ import annotations

import os
import sys
import time
from typing import NoReturn

START = time.perf_counter()


def run_app(models_dir: str | None = None, exit_when_shown: bool = False) -> int:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from bertstudio.ui.main_window import MainWindow
    from bertstudio.ui.settings import AppSettings
    from bertstudio.workers.runner import configure_pool, shutdown

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("BERT Studio")
    app.setOrganizationName("BERT Studio")
    configure_pool()
    from bertstudio.core.catalog import models_dir_from_env

    folder = models_dir_from_env(models_dir)
    settings = AppSettings(models_dir_override=str(folder) if folder else None)
    window = MainWindow(settings, confirm_close=not exit_when_shown)
    if exit_when_shown:  # for bench/: time from process start to window shown
        window.shown.connect(lambda: print(f"window shown after {time.perf_counter() - START:.3f} s", flush=True))
        window.shown.connect(lambda: QTimer.singleShot(0, window.close))
    install_excepthook(window)
    window.show()
    code = app.exec()
    if not shutdown(3_000):  # the window waited already; this is the backstop for a stuck C call
        print("bertstudio: a task did not stop within 3 s; exiting without it", file=sys.stderr, flush=True)
    exit_now(code, settings)


def exit_now(code: int, settings: object = None) -> NoReturn:
    """End the process as soon as the work has ended and everything is written: settings synced,
    streams and logs flushed. Interpreter teardown with torch loaded takes seconds (4-5 s on a busy
    machine) and a pool thread stuck in native code would keep the process alive, so skip it."""
    import logging

    store = getattr(settings, "store", None)
    if store is not None:
        store.sync()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def install_excepthook(window: object) -> None:
    """A bug in a slot: one line on stderr, the traceback in a crash log, the error in the log panel
    (PySide would print a traceback and carry on)."""
    from bertstudio.cli import write_crash_log

    def hook(kind: type[BaseException], error: BaseException, tb: object) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, error, tb)  # type: ignore[arg-type]
            return
        path = write_crash_log(error, sys.argv)
        summary = " ".join(f"{kind.__name__}: {error}".split())[:200]
        print(f"internal error: {summary} (details in {path}; please report it)", file=sys.stderr, flush=True)
        report = getattr(window, "report_error", None)
        if report is not None:
            try:
                report(error, "internal error")
            except RuntimeError:  # the window is already gone
                pass

    sys.excepthook = hook


if __name__ == "__main__":
    raise SystemExit(run_app())
