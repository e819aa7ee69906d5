"""Explain: occlusion over 128 tokens vs the same batched forward over occluded copies written plainly.

Ours is `explain(..., "occlusion")`: tokenization, the target (one forward), the occluded copies
(each non-special token replaced by [PAD]) in batches of the IG budget (64 rows of 128 tokens),
progress and Cancel checks between batches. The plain loop tokenizes, runs the input once for the
predicted label and F(x), builds the same copies and runs them in the same batches. Models: MiniLM-L6
with a fresh two-label classification head (the timing does not depend on its training) and a
BERT-base-sized random checkpoint with a classification head (common.bert_base, the builder the
other benches share). CPU. BENCH_SIZES=small runs MiniLM only; BENCH_REPEATS sets the repeats.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from common import MODELS, Row, bert_base, sizes

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SENTENCE = "Honestly, the long train ride was a delight from start to finish and I would do it again. "
TOKENS = 128
ROWS_PER_BATCH = 64  # attribution.ATTENTION_BUDGET // 128**2: what ours uses at 128 tokens


def _plain(model: object, tokenizer: object, text: str) -> object:
    import torch

    encoding = tokenizer(text, return_tensors="pt")
    with torch.inference_mode():
        logits = model(**encoding).logits[0]
        label = int(logits.argmax())
        full = logits.softmax(-1)[label]
        ids = encoding["input_ids"]
        n = ids.shape[1] - 2  # [CLS] and [SEP] stay
        copies = ids.repeat(n, 1)
        index = torch.arange(n)
        copies[index, index + 1] = tokenizer.pad_token_id
        others = {k: v for k, v in encoding.items() if k != "input_ids"}
        scores = []
        for start in range(0, n, ROWS_PER_BATCH):
            chunk = copies[start:start + ROWS_PER_BATCH]
            extra = {k: v.expand(chunk.shape[0], -1) for k, v in others.items()}
            scores.append(model(input_ids=chunk, **extra).logits.softmax(-1)[:, label])
        return full - torch.cat(scores)


def alternate(ours: Callable[[], object], raw: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Medians of the two timed alternately (common.interleaved with one warm-up: a call takes seconds
    on a CPU, so its three would cost minutes on bert-base)."""
    ours(), raw()
    a, b = [], []
    for _ in range(repeats):
        start = time.perf_counter(); ours(); a.append(time.perf_counter() - start)  # noqa: E702
        start = time.perf_counter(); raw(); b.append(time.perf_counter() - start)  # noqa: E702
    return statistics.median(a), statistics.median(b)


def _row(name: str, source: Path, note: str, repeats: int) -> Row:
    from bertstudio.core.explain.attribution import explain
    from bertstudio.core.models import LoadRequest, load_model

    loaded = load_model(LoadRequest(str(source), "classification"))
    tokenizer = loaded.tokenizer
    ids = tokenizer(SENTENCE * 12, add_special_tokens=False)["input_ids"][:TOKENS - 2]
    text = tokenizer.decode(ids)
    assert len(tokenizer(text)["input_ids"]) == TOKENS
    ours_result = explain(loaded, "classification", (text,), "occlusion")
    plain_result = _plain(loaded.model, tokenizer, text)
    assert max(abs(a - float(b)) for a, b in zip(ours_result.attributions[1:-1], plain_result, strict=True)) < 1e-5

    mine, theirs = alternate(lambda: explain(loaded, "classification", (text,), "occlusion"),
                             lambda: _plain(loaded.model, tokenizer, text), repeats)
    return Row(f"explain: occlusion {TOKENS} tokens vs plain batched loop ({name})", mine, theirs, note)


def rows() -> list[Row]:
    import torch

    from tests.fixtures.trained_sentiment import LABELS

    repeats = int(os.environ.get("BENCH_REPEATS", "5"))
    out = []
    with torch.inference_mode(False):
        if "small" in sizes():
            out.append(_row("MiniLM-L6", MODELS / "all-minilm-l6-v2", "fresh 2-label head, CPU", repeats))
        if "base" in sizes():
            out.append(_row("BERT-base size", bert_base("SequenceClassification", LABELS),
                            "random 110M, CPU", repeats))
    return out


if __name__ == "__main__":
    for row in rows():
        print(f"{row.name}: ours {row.ours * 1000:.1f} ms, plain {row.raw * 1000:.1f} ms, ratio {row.ratio:.3f}")
