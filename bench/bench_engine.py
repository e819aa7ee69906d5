"""The batch engine (core/engine.py, issue 28): evaluate rows/s on a review-like length mix against
transformers' pipeline(batch_size=32) and a plain 25-line length-sorted loop, in the same run on
the same model object; corpus indexing and counterfactual scoring before (the commit before the
engine, read from git) and after.

The mix: BENCH_ENGINE_ROWS rows (default 96) of varied English sentences, 4-480 words, median ~45
(log-normal lengths, seeded), like product reviews. Models: a BERT-base-sized classifier (random
weights, 12 layers, hidden 768, 27 topic labels) and MiniLM (all-minilm-l6-v2 with a seeded random
two-label head). `ours` is `core.evaluate.evaluate` end to end from a CSV file (read, check,
predict, every metric); the pipeline reads the same CSV and truncates as we do. Each is timed
once after a short warm-up (BENCH_CLOCK=cpu: one thread's CPU time, steadier on a shared machine).

    BENCH_SIZES=small,base BENCH_ENGINE_ROWS=48 python bench/run.py engine
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from common import MODELS, Row, bert_base, clock, sizes, threads, topic_labels

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "8fc5b76"  # the last commit before core/engine.py: its corpus/index.py is the "before" row
BATCH = 32
SUBJECTS = ("the battery", "this blender", "the hotel room", "our waiter", "the plot", "the delivery", "my order",
            "the screen", "the customer service", "this jacket", "the sound quality", "the app", "the instructions")
VERBS = ("was", "felt", "seemed", "turned out to be", "is honestly", "became", "looked")
ADJECTIVES = ("great", "awful", "fine", "disappointing", "excellent", "cheap", "sturdy", "slow", "noisy", "lovely",
              "confusing", "perfect", "broken", "comfortable", "overpriced")
TAILS = ("after two weeks of daily use", "compared with the one I had before", "for the price", "at first",
         "and I would buy it again", "but the box was damaged", "so I sent it back", "which surprised me",
         "even though the reviews said otherwise", "in every way that matters")


def review_texts(count: int, seed: int = 0) -> list[str]:
    """`count` review-like texts, 4-480 words, median ~45 words (log-normal), varied sentences; seeded."""
    import numpy as np

    rng = np.random.default_rng(seed)
    lengths = np.clip(np.round(rng.lognormal(np.log(45), 0.95, size=count)), 4, 480).astype(int)
    texts = []
    for words in lengths:
        out: list[str] = []
        while len(out) < words:
            sentence = (f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(ADJECTIVES)} "
                        f"{rng.choice(TAILS)}.").split()
            out += sentence
        text = " ".join(out[:words])
        texts.append(text[0].upper() + text[1:])
    return texts


def sorted_loop(model: Any, tokenizer: Any, texts: Sequence[str], max_length: int, batch: int = BATCH) -> Any:
    """The plain length-sorted loop the issue sets as the floor: logits in input order."""
    import torch

    lengths = [len(ids) for ids in tokenizer(list(texts), truncation=True, max_length=max_length)["input_ids"]]
    order = sorted(range(len(texts)), key=lambda i: lengths[i])
    out = torch.empty(len(texts), model.config.num_labels)
    with torch.inference_mode():
        for start in range(0, len(order), batch):
            rows = order[start:start + batch]
            encoded = tokenizer([texts[i] for i in rows], padding=True, truncation=True, max_length=max_length,
                                return_tensors="pt").to(model.device)
            out[rows] = model(**encoded).logits.float().cpu()
    return out


def _write(texts: Sequence[str], labels: Sequence[str]) -> Path:
    path = Path(tempfile.mkdtemp(prefix="bench-engine-")) / "reviews.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        writer.writerows((t, labels[i % len(labels)]) for i, t in enumerate(texts))
    return path


def _timed(func: Callable[[], Any]) -> tuple[float, Any]:
    start = clock()
    value = func()
    return clock() - start, value


def evaluate_rates(folder: Path, count: int, device: str = "cpu", dtype: str = "float32",
                   labels: Sequence[str] | None = None, warm_all: bool = False) -> dict[str, float]:
    """Seconds of ours (evaluate from the CSV, the CLI's default options), the pipeline (batch 32) and
    the sorted loop (batch 32) on one model object, and the largest difference of the top-1 score between
    ours and the pipeline. `warm_all` (a GPU): each first runs the whole set once, so none is timed on the
    shapes the one before it warmed."""
    import torch
    from transformers import pipeline

    from bertstudio.core.evaluate.evaluation import evaluate
    from bertstudio.core.evaluate.predict import EvalOptions
    from bertstudio.core.evaluate.readers import read_dataset
    from bertstudio.core.models import LoadRequest, load_model

    if device == "cpu":
        torch.set_num_threads(threads())
    torch.manual_seed(0)  # MiniLM's head is made at load: the same one every run
    loaded = load_model(LoadRequest(str(folder), "classification", device, dtype))
    names = list(labels or [str(i) for i in range(loaded.model.config.num_labels)])
    texts = review_texts(count)
    data = _write(texts, names)
    limit = loaded.info.max_length
    pipe = pipeline("text-classification", model=loaded.model, tokenizer=loaded.tokenizer, device=loaded.model.device)

    def ours() -> Any:
        return evaluate(loaded, read_dataset("classification", data), options=EvalOptions())

    def plain() -> Any:
        with data.open(newline="", encoding="utf-8") as handle:
            table = list(csv.DictReader(handle))
        return pipe([r["text"] for r in table], batch_size=BATCH, truncation=True, max_length=limit)

    def loop() -> Any:
        with data.open(newline="", encoding="utf-8") as handle:
            table = list(csv.DictReader(handle))
        return sorted_loop(loaded.model, loaded.tokenizer, [r["text"] for r in table], limit)

    warm = review_texts(8, seed=1)
    evaluate(loaded, read_dataset("classification", _write(warm, names)), options=EvalOptions())
    pipe(warm, batch_size=BATCH, truncation=True, max_length=limit)
    sorted_loop(loaded.model, loaded.tokenizer, warm, limit)
    if warm_all:
        ours(), plain(), loop()
    seconds_ours, evaluation = _timed(ours)
    seconds_pipe, predicted = _timed(plain)
    seconds_loop, _ = _timed(loop)
    gap = max(abs(float(p["score"]) - float(evaluation.probabilities[i].max())) for i, p in enumerate(predicted))
    return {"ours": seconds_ours, "pipeline": seconds_pipe, "loop": seconds_loop, "score_gap": gap}


def _evaluate_rows(name: str, folder: Path, count: int, labels: Sequence[str] | None) -> list[Row]:
    found = evaluate_rates(folder, count, labels=labels)
    ours, pipe, loop = found["ours"], found["pipeline"], found["loop"]
    return [Row(f"engine evaluate {name}, {count} review rows", ours, pipe,
                f"{count / ours:.2f} rows/s ours, {count / pipe:.2f} pipeline(32), {count / loop:.2f} sorted loop; "
                f"ours {pipe / ours:.2f}x the pipeline; top-1 score gap {found['score_gap']:.1e}"),
            Row(f"sorted 25-line loop {name}, {count} review rows", loop, pipe, "vs the pipeline (floor, not goal)")]


def _old_module(path: str, name: str) -> types.ModuleType:
    """A module as it was at BEFORE (read with git show), for the before row."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{BEFORE}:{path}"], check=True, capture_output=True,
                            text=True).stdout
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses look their module up
    exec(compile(source, f"{BEFORE}:{path}", "exec"), module.__dict__)  # noqa: S102 - our own file at a commit
    return module


def corpus_rows(count: int) -> list[Row]:
    """build_index before and after on MiniLM over the review mix (its 128 tokens), equal sentence vectors."""
    import numpy as np
    import torch

    from bertstudio.core.corpus import index
    from bertstudio.core.corpus.query import encoder_task
    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.progress import TaskControl

    torch.set_num_threads(threads())
    loaded = load_model(LoadRequest(str(MODELS / "all-minilm-l6-v2"), encoder_task()))
    lines = list(enumerate(review_texts(count, seed=2), start=1))
    old = _old_module("bertstudio/core/corpus/index.py", "bench_index_before")
    layer, length = loaded.model.config.num_hidden_layers, 128
    old.build_index(loaded, lines[:8], layer, length, TaskControl())
    before, a = _timed(lambda: old.build_index(loaded, lines, layer, length, TaskControl()))
    after, b = _timed(lambda: index.build_index(loaded, lines, layer, length, TaskControl()))
    gap = float(np.abs(a.sentences - b.sentences).max())
    same = a.tokens == b.tokens and np.array_equal(a.token_line, b.token_line)
    return [Row(f"engine corpus index MiniLM, {count} review lines", after, before,
                f"raw = HEAD~ {BEFORE}'s build_index; {count / after:.1f} vs {count / before:.1f} lines/s; "
                f"sentence gap {gap:.1e}; same tokens {same}")]


def counterfactual_rows(edits: int) -> list[Row]:
    """Scoring `edits` edited reviews in chunks of 16 (as the search does): BEFORE's generators.score vs
    whatif.tasks.score (the engine), on the BERT-base-sized classifier."""
    import numpy as np
    import torch

    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.tasks.spec import spec_for
    from bertstudio.core.whatif import generators
    from bertstudio.core.whatif.tasks import score

    torch.set_num_threads(threads())
    folder = bert_base("SequenceClassification", topic_labels())
    loaded = load_model(LoadRequest(str(folder), "classification"))
    adapter = spec_for("classification").counterfactual
    assert adapter is not None
    words = review_texts(40, seed=3)[7].split()  # one review; each edit drops a word or two
    batch = [(" ".join(w for j, w in enumerate(words) if j not in {i % len(words), (i * 7) % len(words)}),)
             for i in range(edits)]

    def run(scorer: Callable[[list[tuple[str, ...]]], tuple[list[int], list[float]]]) -> list[float]:
        out: list[float] = []
        for start in range(0, len(batch), generators.BATCH):
            out += scorer(batch[start:start + generators.BATCH])[1]
        return out

    control = TaskControl()
    old = _old_module("bertstudio/core/whatif/generators.py", "bench_generators_before")
    run(lambda rows: score(loaded, adapter, rows, 0, control))
    before, a = _timed(lambda: run(lambda rows: old.score(loaded, adapter, rows, 0)))
    after, b = _timed(lambda: run(lambda rows: score(loaded, adapter, rows, 0, control)))
    gap = float(np.abs(np.asarray(a) - np.asarray(b)).max())
    return [Row(f"engine counterfactual scoring bert-base-sized, {edits} edits of a {len(words)}-word review",
                after, before, f"raw = HEAD~ {BEFORE}'s generators.score; P gap {gap:.1e}")]


def rows() -> list[Row]:
    count = int(os.environ.get("BENCH_ENGINE_ROWS", "96"))
    out: list[Row] = []
    if "small" in sizes():
        out += _evaluate_rows("MiniLM", MODELS / "all-minilm-l6-v2", count, None)
        out += corpus_rows(count * 2)
    if "base" in sizes():
        out += _evaluate_rows("bert-base-sized", bert_base("SequenceClassification", topic_labels()), count,
                              topic_labels())
        out += counterfactual_rows(64)
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    for row in rows():
        print(f"{row.name}: ours {row.ours:.2f} s, raw {row.raw or 0:.2f} s, {row.note}")
