"""Timing helpers shared by the benchmarks."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
MODELS = Path(os.environ.get("BERTSTUDIO_TEST_MODELS", Path.home() / ".cache" / "bertstudio-test-models"))
# BENCH_CLOCK=cpu: process CPU time with one torch thread instead of wall time with two. On a loaded
# machine (other jobs on the same cores) wall-clock medians swing by tens of percent; the CPU time of
# one thread does not wait for the others, so the ratio of ours to raw stays readable.
CPU_CLOCK = os.environ.get("BENCH_CLOCK", "wall") == "cpu"
if CPU_CLOCK:
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = "1"
clock = time.process_time if CPU_CLOCK else time.perf_counter


def threads() -> int:
    """torch's thread count for the benches: 1 when timing CPU time, else 2 (this machine's cores)."""
    return 1 if CPU_CLOCK else 2


def synced_seconds(func: Callable[[], object], device: str) -> float:
    """Wall seconds of `func()`; on CUDA the device's queue is waited for before and after (its work,
    not the launches)."""
    import torch

    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.synchronize()
    started = time.perf_counter()
    func()
    if cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - started


@dataclass(frozen=True)
class Row:
    name: str
    ours: float  # seconds
    raw: float | None = None  # seconds, raw transformers on the same input
    note: str = ""

    @property
    def ratio(self) -> float | None:
        return self.ours / self.raw if self.raw else None


def median_time(func: Callable[[], object], repeats: int = 20, warmup: int = 3) -> float:
    for _ in range(warmup):
        func()
    times = []
    for _ in range(repeats):
        start = clock()
        func()
        times.append(clock() - start)
    return statistics.median(times)


def interleaved(ours: Callable[[], object], raw: Callable[[], object], repeats: int = 30) -> tuple[float, float]:
    """Median times of two callables measured alternately, so drift hits both alike."""
    import torch

    torch.set_num_threads(threads())
    for _ in range(3):
        ours(), raw()
    a, b = [], []
    for i in range(repeats):  # which goes first alternates too: a run's second call finds warm caches
        for first in ((ours, a), (raw, b)) if i % 2 == 0 else ((raw, b), (ours, a)):
            start = clock()
            first[0]()
            first[1].append(clock() - start)
    return statistics.median(a), statistics.median(b)


# -- a BERT-base-sized checkpoint (110M parameters), built once and cached ----------------------------
BENCH_CACHE = Path(os.environ.get("BERTSTUDIO_BENCH_CACHE", Path.home() / ".cache" / "bertstudio-bench"))


def bert_base(head: str = "Model", labels: tuple[str, ...] = ()) -> Path:
    """A random BERT-base-sized checkpoint (12 layers x 12 heads, hidden 768, MiniLM's 30,522-word
    uncased vocabulary: 110M parameters, the size of bert-base-uncased) with a transformers head
    ("MaskedLM", "NextSentencePrediction", "TokenClassification", "QuestionAnswering",
    "SequenceClassification", "Model"). Real tokenization, no download; the numbers are random, the
    timings are those of a real bert-base. Built on first use into ~/.cache/bertstudio-bench."""
    import hashlib
    import shutil

    name = f"bert-base-{head}" + (f"-{hashlib.sha256('|'.join(labels).encode()).hexdigest()[:8]}" if labels else "")
    folder = BENCH_CACHE / name
    if (folder / ".complete").is_file():
        return folder
    import torch
    import transformers

    source = MODELS / "all-minilm-l6-v2"
    partial = BENCH_CACHE / f"{name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    tokenizer = transformers.AutoTokenizer.from_pretrained(source)
    tokenizer.model_max_length = 512
    tokenizer.save_pretrained(partial)
    extra: dict[str, object] = {}
    if labels:
        extra = {"id2label": dict(enumerate(labels)), "label2id": {label: i for i, label in enumerate(labels)}}
    elif head == "TokenClassification":
        ner = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-MISC", "I-MISC")
        extra = {"id2label": dict(enumerate(ner)), "label2id": {label: i for i, label in enumerate(ner)}}
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=len(tokenizer), **extra)  # bert-base's defaults
    model_class = getattr(transformers, "BertModel" if head == "Model" else f"BertFor{head}")
    model_class(config).eval().save_pretrained(partial)
    (partial / ".complete").write_text("", encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return folder


def sizes() -> list[str]:
    """Which model sizes to time: BENCH_SIZES="small,base" (default both; "small" alone is quick)."""
    return [s for s in os.environ.get("BENCH_SIZES", "small,base").split(",") if s]


def topic_labels() -> tuple[str, ...]:
    """The categorium topic classifier's labels (the classification and evaluate benches' files use them)."""
    import json

    config = json.loads((MODELS / "categorium-bert-tiny-topics-en" / "config.json").read_text(encoding="utf-8"))
    return tuple(config["id2label"][str(i)] for i in range(len(config["id2label"])))
