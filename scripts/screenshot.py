"""The README's images: every tab of the real window with real models, one PNG each.

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/screenshot.py [docs] [--only fill-mask,nsp] [--dark]

Models: the real test models (~/.cache/bertstudio-test-models, `scripts/get-test-models.sh`)
and the heads the test suite trains with BERT Studio (~/.cache/bertstudio-test-fixtures).
A shot whose model is missing is skipped with a line on stderr. The window is grabbed
(`QWidget.grab`), so no X server is needed; throw-away settings keep the user's own.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEventLoop, QSettings, QTimer
from PySide6.QtWidgets import QApplication

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MODELS = Path(os.environ.get("BERTSTUDIO_TEST_MODELS", Path.home() / ".cache" / "bertstudio-test-models"))
FIXTURES = Path(os.environ.get("BERTSTUDIO_TEST_FIXTURES", Path.home() / ".cache" / "bertstudio-test-fixtures"))
SIZE = (1280, 860)


def fixture(prefix: str) -> Path | None:
    """A trained head from the test fixtures cache (folder name: prefix-<recipe hash>)."""
    for folder in sorted(FIXTURES.glob(f"{prefix}-*")):
        if (folder / "config.json").is_file() and (folder / "model.safetensors").is_file():
            return folder
    return None


def wait(signal: Any, timeout_ms: int = 120_000) -> list[Any]:
    """Run the event loop until `signal` fires (or the time is up); its arguments."""
    loop, got = QEventLoop(), []

    def fired(*args: Any) -> None:
        got.extend(args)
        loop.quit()

    signal.connect(fired)
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()
    signal.disconnect(fired)
    return got


def settle(ms: int = 500) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


@dataclass
class Shot:
    name: str  # the PNG under docs/
    tab: str  # task key of the tab
    model: Path | None
    prepare: Callable[[Any], None]  # fills the inputs (and options) of the tab
    run: bool = True
    after: Callable[[Any], None] | None = None  # after the run: open a page, choose a view


def shots() -> list[Shot]:
    from bertstudio.core.tasks.attention import AttentionInput
    from bertstudio.core.tasks.classification import ClassificationInput
    from bertstudio.core.tasks.fill_mask import FillMaskInput
    from bertstudio.core.tasks.multiple_choice import ChoiceInput
    from bertstudio.core.tasks.ner import NerInput
    from bertstudio.core.tasks.nsp import NspInput
    from bertstudio.core.tasks.qa import QAInput
    from bertstudio.core.tasks.similarity import SimilarityInput

    def inputs(value: Any) -> Callable[[Any], None]:
        return lambda tab: tab.set_inputs(value)

    def heads_off(value: Any, heads: str) -> Callable[[Any], None]:
        def prepare(tab: Any) -> None:
            tab.set_inputs(value)
            tab.heads_off.setText(heads)
        return prepare

    def explain(tab: Any) -> None:
        """The classification shot's run, handed over as its "Explain…" button does."""
        source = tab.window().task_tabs["classification"]
        ran = getattr(source, "_ran", None)
        if ran is not None and source.result is not None:
            tab.explain("classification", ran[0], ran[1], source.result)

    def neuron_view(tab: Any) -> None:
        """Layer 1 head 8 of MiniLM attends to the next token: query 'fox', its key 'jumps' hovered."""
        tab.open_head(1, 8)
        tab.views.setCurrentWidget(tab.neuron_page)
        tab.neuron_page.set_query(4)
        tab.neuron_page.plots.highlight(5)  # as hovering the sixth key does
        tab.neuron_page.plots.hovered.emit(5)

    def corpus_search(tab: Any) -> None:
        """The Corpus page: the demo corpus indexed at layer 4, the neighbours of 'bank' (river side)."""
        from bertstudio.ui.widgets.attention_corpus import CorpusPage

        page = next(tab.views.widget(i) for i in range(tab.views.count())
                    if isinstance(tab.views.widget(i), CorpusPage))
        tab.views.setCurrentWidget(page)
        page.use_demo()
        page.layer.setValue(4)
        page.k.setValue(20)
        page.refresh()
        page.token.setCurrentIndex([t for _, t in page.query_tokens].index("bank"))
        page.index_button.click()
        wait(page.query_runner.result, 600_000)

    def value_weighted(tab: Any) -> None:
        tab.weighting.setCurrentText("value-weighted norms")
        tab.views.setCurrentWidget(tab.grid_page)

    def train(tab: Any) -> None:
        tab.use_demo_data()

    def evaluate(tab: Any) -> None:
        from bertstudio.resources import resource_path

        head = fixture("minilm-reviews") or fixture("minilm-sentiment")  # the test suite trains either
        if head is None:
            print("skip the evaluation: no trained sentiment head in the fixtures cache", file=sys.stderr)
            return
        tab.open_evaluation(str(head), str(resource_path("datasets", "reviews_eval.csv")), "classification")

    mlm = MODELS / "rxnmapper-albert-smiles-mlm"
    minilm = MODELS / "all-minilm-l6-v2"
    context = ("BERT was introduced in 2018 by researchers at Google. It is pre-trained on English "
               "Wikipedia and the BooksCorpus with two objectives: masked language modelling and "
               "next sentence prediction.")
    return [
        Shot("screenshot.png", "fill-mask", mlm,
             inputs(FillMaskInput("C C ( = [MASK] ) O . c 1 c c c c [MASK] 1 Br", 5))),
        Shot("fill-mask-heads-off.png", "fill-mask", mlm,
             heads_off(FillMaskInput("C C ( = [MASK] ) O", 5), "0:0, 0:1, 0:2, 0:3, 1:0, 1:1")),
        Shot("nsp.png", "nsp", fixture("minilm-nsp"), inputs(NspInput(
            "The museum opened a new wing for modern art.",
            ("Its first exhibition shows paintings from the 1960s.", "The recipe needs two eggs and a cup of flour.",
             "Tickets for the opening sold out within an hour.")))),
        Shot("ner.png", "ner", fixture("minilm-ner"), inputs(NerInput(
            "Angela Merkel met Emmanuel Macron in Paris before flying back to Berlin with Olaf Scholz."))),
        Shot("qa.png", "qa", fixture("qa-minilm"), inputs(QAInput("When was BERT introduced?", context))),
        Shot("attention.png", "attention", minilm, inputs(AttentionInput(
            "The cat sat on the mat because it was tired."))),
        Shot("neuron-view.png", "attention", minilm, inputs(AttentionInput(
            "The quick brown fox jumps over the lazy dog near the river bank.")), after=neuron_view),
        Shot("corpus-search.png", "attention", minilm, inputs(AttentionInput(
            "We walked along the bank of the river.")), after=corpus_search),
        Shot("value-weighted.png", "attention", minilm, inputs(AttentionInput(
            "The cat sat on the mat because it was tired.")), after=value_weighted),
        Shot("classification.png", "classification", MODELS / "categorium-bert-tiny-topics-en", inputs(
            ClassificationInput("The central bank raised interest rates to fight inflation."))),
        Shot("similarity.png", "similarity", minilm, inputs(SimilarityInput(
            "A man is playing a guitar on stage.",
            ("Someone performs music for an audience.", "A musician plays an instrument.",
             "The stock market fell sharply today.", "A child is eating an apple.")))),
        Shot("choice.png", "multiple-choice", minilm, inputs(ChoiceInput(
            "She opened the umbrella because", ("it started to rain.", "the soup was cold.", "the bus was late.")))),
        # docs/explain.png and explain_heads.png are the Explain tab's own (its tests' script).
        Shot("explain-classification.png", "explain", None, explain, run=False),
        Shot("train.png", "pretraining", None, train, run=False),
        Shot("evaluate.png", "evaluate", None, evaluate, run=False),
    ]


def take(window: Any, shot: Shot, out: Path) -> bool:
    tab = window.task_tabs.get(shot.tab)
    if tab is None:
        print(f"skip {shot.name}: no {shot.tab} tab", file=sys.stderr)
        return False
    window.tabs.setCurrentWidget(tab)
    if shot.model is not None:
        if not shot.model.is_dir():
            print(f"skip {shot.name}: {shot.model} is missing", file=sys.stderr)
            return False
        if tab.model_info is None or tab.model_info.request.source != str(shot.model):
            tab.model_bar.load(str(shot.model))
            wait(tab.model_bar.loaded)
    shot.prepare(tab)
    if shot.run:
        tab.run()
        wait(tab.runner.result)
    else:  # a prepare that loads a model and runs on load (Evaluate's open_evaluation): both awaited
        bar = getattr(tab, "model_bar", None)
        if bar is not None and bar.busy:
            wait(bar.loaded)
        runner = getattr(tab, "runner", None)
        if runner is not None and runner.busy:
            wait(runner.finished, 300_000)
    if shot.after is not None:
        shot.after(tab)
    settle(800)
    window.grab().save(str(out / shot.name))
    print(f"wrote {out / shot.name}")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(ROOT / "docs"))
    parser.add_argument("--only", default="", help="comma-separated PNG names or tab keys")
    parser.add_argument("--dark", action="store_true", help="the dark theme (names get a -dark suffix)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    app = QApplication(sys.argv[:1])
    from bertstudio.ui import theme
    from bertstudio.ui.main_window import MainWindow
    from bertstudio.ui.settings import AppSettings
    from bertstudio.workers.runner import configure_pool, shutdown

    configure_pool()
    scratch = tempfile.mkdtemp(prefix="bertstudio-shots-")
    store = QSettings(str(Path(scratch) / "settings.ini"), QSettings.Format.IniFormat)
    store.setValue(theme.SETTINGS_KEY, "dark" if args.dark else "light")
    window = MainWindow(AppSettings(store, models_dir_override=str(MODELS)), confirm_close=False)
    window.resize(*SIZE)
    window.show()
    wait(window.ready)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wanted = {part.strip() for part in args.only.split(",") if part.strip()}
    for shot in shots():
        if wanted and shot.name not in wanted and shot.tab not in wanted:
            continue
        if args.dark:
            shot.name = shot.name.replace(".png", "-dark.png")
        take(window, shot, out)
    window.close()
    shutdown()
    app.processEvents()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
