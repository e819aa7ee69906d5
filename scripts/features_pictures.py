"""The README's pictures of issue 42 (SAE features, concept erasure, tuned lens), from the real window.

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/features_pictures.py --minilm-sae DIR --chem-sae DIR \
        --lens DIR --concept FILE [docs]

The folders come from the commands in the README's "Inside the encoder" section (`features train`,
`features lens`); the concept file is the sentiment fixture's training file with its label column
named `concept`. Each picture is the window grabbed offscreen, stored as an 8-bit palette PNG so it
stays small (< 150 kB).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QScrollArea

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
from screenshot import FIXTURES, MODELS, settle, wait  # noqa: E402 - scripts/ is on the path only now

SIZE = (1180, 820)


WAIT_MS = 300_000  # an SAE or a lens trains inside some waits: longer than screenshot.py's default


def save(window: Any, path: Path) -> None:
    settle(600)
    image = window.grab().toImage().convertToFormat(QImage.Format.Format_Indexed8,
                                                    Qt.ImageConversionFlag.ThresholdDither)
    image.save(str(path))
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} kB)")


def features_shot(window: Any, folder: str, text: str, feature: int, path: Path, scale: float | None = None) -> None:
    from bertstudio.ui.tabs.features_tab import FeaturesTab

    tab = window.task_tabs[FeaturesTab.TASK]
    window.tabs.setCurrentWidget(tab)
    tab.sae_path.setText(folder)
    tab.open_sae()
    wait(tab.open_runner.finished, WAIT_MS)
    if tab.model_bar.busy:
        wait(tab.model_bar.loaded, WAIT_MS)
    tab.text.setPlainText(text)
    tab.run()
    wait(tab.runner.result, WAIT_MS)
    tab.show_feature(feature)
    wait(tab.card_runner.result, WAIT_MS)
    if scale is not None:
        tab.card.scale.setValue(scale)
        tab.intervene(feature, scale)
        wait(tab.runner.result, WAIT_MS)
        settle(600)
        scroll = next(s for s in tab.findChildren(QScrollArea) if s.widget() is tab.page)
        scroll.verticalScrollBar().setValue(scroll.verticalScrollBar().maximum())  # down to A and B
    save(window, path)


def erase_shot(window: Any, concept: str, path: Path) -> None:
    from bertstudio.ui.tabs.evaluate_tab import EvaluateTab

    tab = window.task_tabs[EvaluateTab.TASK]
    window.tabs.setCurrentWidget(tab)
    model = next(FIXTURES.glob("minilm-sentiment-*"))
    tab.task_combo.setCurrentIndex(tab.task_combo.findData("classification"))
    tab.model_bar.load(str(model))
    wait(tab.model_bar.loaded, WAIT_MS)
    tab.data_file.setText(str(ROOT / "tests" / "data" / "sentiment" / "template_reviews_eval.csv"))
    tab.pages.setCurrentWidget(tab.erase_page)
    tab.erase_page.layer.setValue(6)
    tab.erase_page.concept.setText(concept)
    tab.erase_page.positions.setCurrentIndex(tab.erase_page.positions.findData("first"))
    tab.erase(6, concept, "first")
    wait(tab.erase_runner.result, WAIT_MS)
    save(window, path)


def lens_shot(window: Any, lens: str, path: Path) -> None:
    from bertstudio.ui.tabs.explain_tab import ExplainTab

    tab = window.task_tabs[ExplainTab.TASK]
    window.tabs.setCurrentWidget(tab)
    tab.set_task("fill-mask")
    tab.model_bar.load(str(MODELS / "rxnmapper-albert-smiles-mlm"))
    wait(tab.model_bar.loaded, WAIT_MS)
    tab.input.setPlainText("c 1 c c c c [MASK] 1 Br")
    tab.steps.setValue(8)
    tab.layers.lens.setText(lens)
    tab.run()
    wait(tab.runner.result, WAIT_MS)
    tab.pages.setCurrentWidget(tab.layers)
    save(window, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(ROOT / "docs"))
    parser.add_argument("--minilm-sae", required=True)
    parser.add_argument("--chem-sae", required=True)
    parser.add_argument("--lens", required=True)
    parser.add_argument("--concept", required=True)
    parser.add_argument("--minilm-feature", type=int, default=487)
    parser.add_argument("--chem-feature", type=int, default=1)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    app = QApplication(sys.argv[:1])
    from bertstudio.ui import theme
    from bertstudio.ui.main_window import MainWindow
    from bertstudio.ui.settings import AppSettings
    from bertstudio.workers.runner import configure_pool, shutdown

    configure_pool()
    store = QSettings(str(Path(tempfile.mkdtemp(prefix="bertstudio-shots-")) / "settings.ini"),
                      QSettings.Format.IniFormat)
    store.setValue(theme.SETTINGS_KEY, "light")
    window = MainWindow(AppSettings(store, models_dir_override=str(MODELS)), confirm_close=False)
    window.resize(*SIZE)
    window.show()
    wait(window.ready, WAIT_MS)
    window.log.hide()  # the pictures show the tabs; the log is one click away
    settle(1500)
    out = Path(args.out)
    features_shot(window, args.minilm_sae, "We walked along the bank of the river.", args.minilm_feature,
                  out / "features-minilm.png")
    features_shot(window, args.chem_sae, "C S ( = O ) ( = [MASK] ) N", args.chem_feature,
                  out / "features-chemistry.png", scale=0.0)
    erase_shot(window, args.concept, out / "erase-sentiment.png")
    lens_shot(window, args.lens, out / "tuned-lens-chemistry.png")
    window.close()
    shutdown()
    app.processEvents()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
