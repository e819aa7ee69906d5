"""`evaluate --runtime onnx` (issue 39.6): an exported model through the batch engine on ONNX Runtime,
float32 and int8 (`export --int8`: onnxruntime's dynamic quantization of the exported file), against the same
evaluate on PyTorch and transformers' pipeline(batch_size=32), in one run on the same CSV of
review-like rows (bench_engine's mix, 4-480 words). Target: ONNX Runtime >= 2.5x the pipeline on CPU,
equal top-1 labels and <= 1e-3 probability difference (float32) against PyTorch.

Each path is timed twice after a warm-up, the faster counted (a shared machine's bursts hit one run,
rarely both). Models: MiniLM with a seeded two-label head (saved once, so PyTorch and the export
share it) and a BERT-base-sized classifier; the exports are cached in ~/.cache/bertstudio-bench.

    BENCH_SIZES=small BENCH_ONNX_ROWS=96 python bench/run.py onnx_runtime
"""

from __future__ import annotations

import csv
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench_engine import BATCH, _write, review_texts
from common import BENCH_CACHE, MODELS, Row, bert_base, clock, sizes, threads, topic_labels


def minilm_classifier() -> Path:
    """all-minilm-l6-v2 with a seeded two-label head, saved (PyTorch and its export read the same head)."""
    folder = BENCH_CACHE / "minilm-classifier"
    if (folder / "model.safetensors").is_file():
        return folder
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(0)
    labels = {0: "negative", 1: "positive"}
    model = AutoModelForSequenceClassification.from_pretrained(
        MODELS / "all-minilm-l6-v2", num_labels=2, id2label=labels, label2id={v: k for k, v in labels.items()})
    AutoTokenizer.from_pretrained(MODELS / "all-minilm-l6-v2").save_pretrained(folder)
    model.save_pretrained(folder)
    return folder


def exports(folder: Path) -> tuple[Path, Path]:
    """folder/model.onnx (our export, validated against PyTorch) and folder/model-int8.onnx beside it."""
    from bertstudio.core.export.onnx import export_onnx

    fp32, int8 = folder / "model.onnx", folder / "model-int8.onnx"
    if not fp32.is_file():
        export_onnx(str(folder), "classification", fp32, speed=False)
    if not int8.is_file():
        from bertstudio.core.export.onnx_int8 import quantize_onnx

        quantize_onnx(fp32)  # what `bertstudio export --int8` writes
    return fp32, int8


def _best_of_two(func: Callable[[], Any]) -> tuple[float, Any]:
    times, value = [], None
    for _ in range(2):
        start = clock()
        value = func()
        times.append(clock() - start)
    return min(times), value


def onnx_rates(folder: Path, count: int, labels: Sequence[str]) -> dict[str, Any]:
    """Seconds of evaluate on ONNX Runtime (float32, int8), on PyTorch and the pipeline; agreement."""
    import numpy as np
    import torch
    from transformers import pipeline

    from bertstudio.core.evaluate.evaluation import evaluate
    from bertstudio.core.evaluate.predict import EvalOptions
    from bertstudio.core.evaluate.readers import read_dataset
    from bertstudio.core.models import LoadRequest, load_model

    torch.set_num_threads(threads())  # before the sessions open: they take torch's thread count
    fp32, int8 = exports(folder)
    data = _write(review_texts(count), labels)
    warm = _write(review_texts(8, seed=1), labels)
    models = {"onnx": load_model(LoadRequest(str(fp32), "classification", runtime="onnx")),
              "onnx int8": load_model(LoadRequest(str(int8), "classification", runtime="onnx")),
              "torch": load_model(LoadRequest(str(folder), "classification"))}
    torch_model = models["torch"]
    pipe = pipeline("text-classification", model=torch_model.model, tokenizer=torch_model.tokenizer)
    limit = torch_model.info.max_length

    def ours(loaded: Any, path: Path) -> Any:
        return evaluate(loaded, read_dataset("classification", path), options=EvalOptions(batch_size=BATCH))

    def plain(path: Path) -> Any:
        with path.open(newline="", encoding="utf-8") as handle:
            texts = [row["text"] for row in csv.DictReader(handle)]
        return pipe(texts, batch_size=BATCH, truncation=True, max_length=limit)

    found: dict[str, Any] = {}
    for name, loaded in models.items():
        ours(loaded, warm)
        found[name], found[f"{name} result"] = _best_of_two(lambda loaded=loaded: ours(loaded, data))
    plain(warm)
    found["pipeline"], _ = _best_of_two(lambda: plain(data))
    reference = found["torch result"]
    for name in ("onnx", "onnx int8"):
        result = found[f"{name} result"]
        found[f"{name} same top-1"] = float(np.mean([a.prediction == b.prediction
                                                     for a, b in zip(reference.rows, result.rows, strict=True)]))
        found[f"{name} probability gap"] = float(np.abs(reference.probabilities - result.probabilities).max())
    return found


def _rows(name: str, folder: Path, count: int, labels: Sequence[str]) -> list[Row]:
    found = onnx_rates(folder, count, labels)
    pipe = found["pipeline"]
    out = []
    for runtime in ("onnx", "onnx int8", "torch"):
        seconds = found[runtime]
        agreement = (f"; top-1 equal on {found[f'{runtime} same top-1']:.1%}, largest P gap "
                     f"{found[f'{runtime} probability gap']:.1e} vs PyTorch") if runtime != "torch" else ""
        out.append(Row(f"evaluate --runtime {runtime} {name}, {count} review rows", seconds, pipe,
                       f"{count / seconds:.1f} rows/s, {pipe / seconds:.2f}x the pipeline(32) "
                       f"({count / pipe:.1f} rows/s), {found['torch'] / seconds:.2f}x PyTorch{agreement}"))
    return out


def rows() -> list[Row]:
    count = int(os.environ.get("BENCH_ONNX_ROWS", "96"))
    out: list[Row] = []
    if "small" in sizes():
        out += _rows("MiniLM", minilm_classifier(), count, ("negative", "positive"))
    if "base" in sizes():
        out += _rows("bert-base-sized", bert_base("SequenceClassification", topic_labels()), count, topic_labels())
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    for row in rows():
        print(f"{row.name}: {row.ours:.2f} s; {row.note}")
