"""Screenshot of the real window (run under xvfb-run): fill-mask on the real chemistry ALBERT.

    xvfb-run -a -s "-screen 0 1280x860x24" .venv/bin/python scripts/screenshot.py docs/screenshot.png
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from bertstudio.ui.main_window import MainWindow
from bertstudio.workers.runner import configure_pool, shutdown

MODELS = Path(os.environ.get("BERTSTUDIO_TEST_MODELS", Path.home() / ".cache" / "bertstudio-test-models"))


def main(out: str, models_dir: str = str(MODELS)) -> int:
    app = QApplication(sys.argv[:1])
    configure_pool()
    window = MainWindow(confirm_close=False)
    window.settings.set_models_dir(models_dir)
    tab = window.task_tabs["fill-mask"]

    def snap() -> None:
        QTimer.singleShot(600, lambda: (window.screen().grabWindow(0).save(out), window.close()))

    def loaded(_info: object) -> None:
        tab.runner.result.connect(lambda _r: snap())
        tab.text.setPlainText("C C ( = [MASK] ) O . c 1 c c c c [MASK] 1 Br")
        tab.run()

    tab.model_bar.loaded.connect(loaded)
    window.ready.connect(lambda: tab.model_bar.load(str(MODELS / "rxnmapper-albert-smiles-mlm")))
    window.resize(1260, 840)
    window.move(0, 0)
    window.show()
    code = app.exec()
    shutdown()
    return code


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:]))
