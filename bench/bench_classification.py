"""Classification: single-text latency and batch throughput of bertstudio vs the raw pipeline.

Same model (the categorium topic classifier, real and tiny, so any overhead of ours shows),
same input, timed alternately; the ratio is ours / raw (1.00 = no overhead).
"""

from __future__ import annotations

from pathlib import Path

from common import MODELS, Row, bert_base, interleaved, sizes, topic_labels

TEXT = "This pasta recipe with tomato sauce, garlic and basil is ready in twenty minutes."
ROWS = [
    "how to cook a delicious chicken curry recipe with rice",
    "a new species of frog was discovered in the amazon rainforest",
    "buy cheap shoes online with free shipping and easy returns",
    "the lawyer filed a lawsuit against the company in federal court",
    "book a hotel and cheap flights for your summer holiday",
    "the new sedan has a powerful engine and a quiet cabin",
    "stocks fell sharply after the central bank raised interest rates again this week",
    "the museum opened an exhibition of paintings from the nineteenth century",
] * 16  # 128 rows

PIPELINE_BATCH = 16  # the pipeline's rows per call (ours: the engine's token budget)


def rows() -> list[Row]:
    out = _rows("", MODELS / "categorium-bert-tiny-topics-en", 200, 15) if "small" in sizes() else []
    if "base" in sizes():
        out += _rows("bert-base-sized ", bert_base("SequenceClassification", topic_labels()), 30, 5)
    return out


def _rows(size: str, folder: Path, single_repeats: int, batch_repeats: int) -> list[Row]:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.tasks.classification import classify, classify_batch

    loaded = load_model(LoadRequest(str(folder), "classification"))
    raw = pipeline(
        "text-classification",
        model=AutoModelForSequenceClassification.from_pretrained(folder).eval(),
        tokenizer=AutoTokenizer.from_pretrained(folder),
    )
    single_ours, single_raw = interleaved(lambda: classify(loaded, TEXT), lambda: raw(TEXT, top_k=None), single_repeats)
    batch_ours, batch_raw = interleaved(
        lambda: classify_batch(loaded, ROWS),
        lambda: raw(ROWS, top_k=None, batch_size=PIPELINE_BATCH),
        batch_repeats,
    )
    n = len(ROWS)
    return [
        Row(f"{size}classification latency, 1 text", single_ours, single_raw, "CPU"),
        Row(f"{size}classification batch, {n} rows", batch_ours, batch_raw,
            f"{n / batch_ours:.0f} rows/s ours vs {n / batch_raw:.0f} rows/s raw (batch {PIPELINE_BATCH})"),
    ]
