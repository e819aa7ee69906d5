"""Start-up: the window is shown first; torch and transformers load afterwards in a worker."""

from __future__ import annotations

import os
import sys
import time

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
    window.show()
    code = app.exec()
    shutdown()
    return code


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    raise SystemExit(run_app())
