"""int8: dynamic int8 quantization (core/quantize.py, torch's quantize_dynamic on every nn.Linear)
against float32, in the same run: classification over a batch, on MiniLM and on a BERT-base-sized
checkpoint; `ours` is the int8 model, `raw` the float32 one, so a ratio below 1 is a speed-up.

Agreement needs a trained head: it is measured with the MiniLM sentiment head of
tests/fixtures/trained_sentiment.py over the 300 demo reviews (resources/datasets/reviews_*.csv).
The BERT-base-sized checkpoint (bench/common.bert_base: 110M parameters, MiniLM's vocabulary) has a
random head, so its agreement is printed for completeness but says nothing; its timings are a
real bert-base's. `python bench/bench_int8.py` prints the rows alone.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from common import MODELS, Row, bert_base, interleaved, sizes

ROOT = Path(__file__).resolve().parents[1]
DEMO = [ROOT / "resources" / "datasets" / name for name in ("reviews_train.csv", "reviews_eval.csv")]


def _sentences() -> list[str]:
    rows: list[str] = []
    for path in DEMO:
        with path.open(encoding="utf-8") as handle:
            rows += [row["text"] for row in csv.DictReader(handle)]
    return rows


def _pair(folder: Path) -> tuple[object, object, object]:
    """(tokenizer, float32 model, int8 model) loaded through the app's own loader."""
    from bertstudio.core.models import LoadRequest, load_uncached
    from bertstudio.core.tasks.spec import all_specs

    task = next(spec.key for spec in all_specs().values() if spec.model_class == "AutoModelForSequenceClassification")
    float32 = load_uncached(LoadRequest(str(folder), task))
    int8 = load_uncached(LoadRequest(str(folder), task, quantize="int8"))
    return float32.tokenizer, float32, int8


def _agreement(tokenizer: object, a: object, b: object, texts: list[str], batch: int = 32) -> tuple[float, float]:
    """(top-1 agreement, largest probability difference) of two models over `texts`."""
    import torch

    same, total, worst = 0, 0, 0.0
    with torch.inference_mode():
        for start in range(0, len(texts), batch):
            encoded = tokenizer(texts[start:start + batch], padding=True, return_tensors="pt")  # type: ignore[operator]
            pa, pb = (m.model(**encoded).logits.softmax(-1) for m in (a, b))  # type: ignore[attr-defined]
            same += int((pa.argmax(-1) == pb.argmax(-1)).sum())
            total += len(pa)
            worst = max(worst, float((pa - pb).abs().max()))
    return same / total, worst


def _timed(name: str, tokenizer: object, a: object, b: object, texts: list[str], note: str) -> Row:
    import torch

    encoded = tokenizer(texts, padding=True, truncation=True, max_length=128, return_tensors="pt")  # type: ignore[operator]

    def run(model: object) -> object:
        with torch.inference_mode():
            return model.model(**encoded).logits  # type: ignore[attr-defined]

    int8, float32 = interleaved(lambda: run(b), lambda: run(a), repeats=10)
    return Row(name, int8, float32, note)


def rows() -> list[Row]:
    sys.path.insert(0, str(ROOT))
    from tests.fixtures.trained_sentiment import trained_sentiment

    texts = _sentences()
    batch = texts[:32]
    long = [" ".join(texts[i:i + 10]) for i in range(0, 80, 10)]  # 8 rows of about 110 tokens
    found: list[Row] = []
    models = []
    if "small" in sizes():
        models.append(("MiniLM sentiment", trained_sentiment(MODELS / "all-minilm-l6-v2"), True))
    if "base" in sizes():
        models.append(("BERT-base-sized", bert_base("SequenceClassification", ("negative", "positive")), False))
    for name, folder, trained in models:
        tokenizer, float32, int8 = _pair(folder)
        agree, worst = _agreement(tokenizer, float32, int8, texts)
        size = f"{float32.info.size_mb:.0f} MB -> {int8.info.size_mb:.0f} MB"  # type: ignore[attr-defined]
        quality = (f"top-1 agreement {agree:.2%} over {len(texts)} demo reviews, max prob diff {worst:.3f}" if trained
                   else f"random head: agreement {agree:.2%} not meaningful")
        found.append(_timed(f"int8 vs float32, {name}, 32 reviews", tokenizer, float32, int8, batch,
                            f"{size}; {quality}"))
        found.append(_timed(f"int8 vs float32, {name}, 8 x 110 tokens", tokenizer, float32, int8, long, size))
    return found


if __name__ == "__main__":
    for row in rows():
        print(f"{row.name:<48} int8 {row.ours * 1000:8.1f} ms  float32 {row.raw * 1000:8.1f} ms  "  # type: ignore[operator]
              f"speed-up x{row.raw / row.ours:.2f}  {row.note}")  # type: ignore[operator]
