"""Evaluate: rows/s of `core.evaluate` over a labelled CSV vs the plain transformers pipeline.

Same model (the categorium topic classifier: real and tiny, so any overhead of ours shows), same
file of 512 rows, batch 32, timed alternately. Ours reads the file (with its line checks),
predicts through the batch engine (core/engine.py) and computes every metric, slice and
row record; raw reads the CSV and runs the pipeline. Ratio = ours / raw (1.00 = no overhead).
"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

from common import MODELS, Row, bert_base, interleaved, sizes, topic_labels

TEXTS = [
    ("how to cook a delicious chicken curry recipe with rice", "food"),
    ("a new species of frog was discovered in the amazon rainforest", "animals"),
    ("buy cheap shoes online with free shipping and easy returns", "shopping"),
    ("the lawyer filed a lawsuit against the company in federal court", "law"),
    ("book a hotel and cheap flights for your summer holiday", "travel"),
    ("the new sedan has a powerful engine and a quiet cabin", "autos"),
    ("stocks fell sharply after the central bank raised interest rates again this week", "finance"),
    ("the museum opened an exhibition of paintings from the nineteenth century", "entertainment"),
]
ROWS = 512
BATCH = 32


def rows() -> list[Row]:
    out = _rows("", MODELS / "categorium-bert-tiny-topics-en", ROWS, 7) if "small" in sizes() else []
    if "base" in sizes():
        out += _rows("bert-base-sized ", bert_base("SequenceClassification", topic_labels()), 128, 3)
    return out


def _rows(size: str, folder: Path, count: int, repeats: int) -> list[Row]:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    from bertstudio.core.evaluate.evaluation import evaluate
    from bertstudio.core.evaluate.predict import EvalOptions
    from bertstudio.core.evaluate.readers import read_dataset
    from bertstudio.core.models import LoadRequest, load_model

    data = Path(tempfile.mkdtemp()) / "topics.csv"
    with data.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label", "source"])
        for i in range(count):
            text, label = TEXTS[i % len(TEXTS)]
            writer.writerow([f"{text} ({i})", label, "ab"[i % 2]])
    loaded = load_model(LoadRequest(str(folder), "classification"))
    raw = pipeline("text-classification", model=AutoModelForSequenceClassification.from_pretrained(folder).eval(),
                   tokenizer=AutoTokenizer.from_pretrained(folder))

    def ours() -> float:
        return evaluate(loaded, read_dataset("classification", data), options=EvalOptions(batch_size=BATCH)
                        ).metrics["accuracy"]

    def plain() -> float:
        with data.open(newline="", encoding="utf-8") as handle:
            table = list(csv.DictReader(handle))
        predicted = raw([r["text"] for r in table], batch_size=BATCH)
        return sum(p["label"] == r["label"] for p, r in zip(predicted, table, strict=True)) / len(table)

    assert abs(ours() - plain()) < 1e-9, "both paths must predict the same labels"
    mine, theirs = interleaved(ours, plain, repeats)
    return [Row(f"{size}evaluate classification, {count} rows", mine, theirs,
                f"{count / mine:.0f} rows/s ours vs {count / theirs:.0f} rows/s plain pipeline (batch {BATCH})")]
