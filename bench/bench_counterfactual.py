"""Counterfactual search (core/whatif): time per search per method, and how fast Cancel lands.

Model: the trained MiniLM sentiment head of tests/fixtures/trained_sentiment.py, its five held-out
sentences, 2 edits at most, 8 proposals per word, beam 4, 5 results. Each method's median search
time is set against a plain batched loop (the tokenizer and the model in batches of 32, nothing
else) scoring as many edited sentences as the search scored: the ratio is what proposing, the beam,
the progress and cancel checks and the verification through the task cost beyond the forwards.
mlm's proposer: the MiniLM masked LM that tests/core/test_training.py trains (60 steps, cached) when
it is on this machine, else a random MiniLM-vocabulary MLM (timing only: its words are noise).
Cancel: a search on a 60-word text stopped from a timer thread 0.3 s in; the time until it returned.

`python bench_counterfactual.py --demo [N] [METHOD...]`: the figures, not timings: per method, how many of the
first N (default 60: all) rows of resources/datasets/reviews_eval.csv flip within 2 edits, and the
first result found for each (the edits, the new label).
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from common import MODELS, Row

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

FIXTURES = Path.home() / ".cache" / "bertstudio-test-fixtures"


def _mlm(tokenizer_folder: Path) -> str:
    for folder in sorted(FIXTURES.glob("minilm-pretrain-*")):  # the recipe hash changes with the recipe
        if (folder / "model.safetensors").is_file():
            return str(folder)
    import tempfile

    import torch
    import transformers

    folder = Path(tempfile.mkdtemp(prefix="bench-mlm-"))
    tokenizer = transformers.AutoTokenizer.from_pretrained(tokenizer_folder)
    config = transformers.BertConfig(vocab_size=len(tokenizer), hidden_size=384, num_hidden_layers=6,
                                     num_attention_heads=12, intermediate_size=1536)
    torch.manual_seed(0)
    transformers.BertForMaskedLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def rows() -> list[Row]:
    import torch

    from bertstudio.core.errors import TaskCancelled
    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.tasks.spec import spec_for_command
    from bertstudio.core.whatif.search import find, options
    from tests.fixtures.trained_sentiment import HELD_OUT, trained_sentiment

    folder = trained_sentiment(MODELS / "all-minilm-l6-v2")
    spec = spec_for_command("classify")
    loaded = load_model(LoadRequest(str(folder), spec.key))
    mlm = _mlm(folder)
    sentences = [text for text, _, _ in HELD_OUT]

    def plain(texts: list[str]) -> None:
        with torch.inference_mode():
            for start in range(0, len(texts), 32):
                encoded = loaded.tokenizer(texts[start:start + 32], padding=True, truncation=True, return_tensors="pt")
                loaded.model(**encoded).logits.softmax(-1)

    out = []
    for method in ("hotflip", "ablation", "mlm"):
        chosen = options(method, 2, 5, 8, 4, mlm if method == "mlm" else None)
        find(loaded, spec, spec.explain.inputs_of((sentences[0],)), chosen, TaskControl())  # warm (MLM load)
        ours, raw, flipped, scored = [], [], 0, 0
        for text in sentences:
            start = time.perf_counter()
            result = find(loaded, spec, spec.explain.inputs_of((text,)), chosen, TaskControl())
            ours.append(time.perf_counter() - start)
            flipped += bool(result.counterfactuals)
            scored += result.evaluated
            start = time.perf_counter()
            plain([text] * result.evaluated)
            raw.append(time.perf_counter() - start)
        out.append(Row(f"counterfactual {method}, MiniLM, <=2 edits (per search)", statistics.median(ours),
                       statistics.median(raw), f"{flipped}/5 flipped, {scored // 5} inputs scored per search"))

    control = TaskControl()
    asked: list[float] = []
    timer = threading.Timer(0.3, lambda: (asked.append(time.perf_counter()), control.request_stop()))
    timer.start()
    try:
        find(loaded, spec, spec.explain.inputs_of((" ".join(sentences * 3),)), options("hotflip", 5, 50, 20, 16),
             control)
    except TaskCancelled:
        pass
    landed = time.perf_counter()
    timer.join()
    out.append(Row("counterfactual Cancel: request -> returned", landed - asked[0], None,
                   "hotflip, 5 edits, 60-word text; must be < 1 s"))
    return out


def edits_of(found: Any) -> str:
    return ", ".join(f"{e.word.text} → {e.new}" if e.new else f"−{e.word.text}" for e in found.edits)


def demo(count: int, methods: tuple[str, ...] = ("mlm", "hotflip", "ablation")) -> None:
    """Per method: flips within 2 edits over the demo evaluation rows, and each first result."""
    import csv
    from collections import Counter

    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.tasks.spec import spec_for_command
    from bertstudio.core.whatif.search import find, options
    from bertstudio.resources import resource_path
    from tests.fixtures.trained_sentiment import trained_sentiment

    folder = trained_sentiment(MODELS / "all-minilm-l6-v2")
    spec = spec_for_command("classify")
    loaded = load_model(LoadRequest(str(folder), spec.key))
    mlm = _mlm(folder)
    print(f"masked LM proposing words for mlm: {mlm}")
    with open(resource_path("datasets", "reviews_eval.csv"), encoding="utf-8") as handle:
        rows_ = list(csv.DictReader(handle))[:count]
    for method in methods:
        chosen = options(method, 2, 5, 8, 4, mlm if method == "mlm" else None)
        flipped, sizes, words = 0, Counter(), Counter()
        start = time.perf_counter()
        for row in rows_:
            result = find(loaded, spec, spec.explain.inputs_of((row["text"],)), chosen, TaskControl())
            if result.counterfactuals:
                found = result.counterfactuals[0]
                flipped += 1
                sizes[len(found.edits)] += 1
                words[edits_of(found)] += 1
                print(f"  {method:8} {row['text']!r}: {result.original.label} -> {found.prediction.label} "
                      f"({found.prediction.score:.2f}) by {edits_of(found)}")
            else:
                print(f"  {method:8} {row['text']!r}: {result.original.label}, none within 2 edits")
        took = time.perf_counter() - start
        print(f"{method}: {flipped}/{len(rows_)} flipped within 2 edits (by edits: {dict(sorted(sizes.items()))}); "
              f"most common: {words.most_common(5)}; {took:.0f} s in all")


if __name__ == "__main__":
    if "--demo" in sys.argv:
        tail = sys.argv[sys.argv.index("--demo") + 1:]  # [N] [methods...]
        demo(int(tail[0]) if tail else 60, tuple(tail[1:]) or ("mlm", "hotflip", "ablation"))
        raise SystemExit(0)
    for row in rows():
        ratio = f"{row.ratio:.2f}x" if row.ratio else ""
        print(f"{row.name:<60} {row.ours:8.3f} s  {ratio:>7}  {row.note}")
