"""Evaluate for the masked LM: plain text, one row per line; seeded tokens masked one at a time
(pseudo-likelihood, Salazar et al. 2020), batched across texts; top-k hits and pseudo-perplexity."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.datafiles import read_lines
from bertstudio.core.errors import InputError
from bertstudio.core.evaluate.metrics import Scores
from bertstudio.core.evaluate.predict import EvalOptions, Prediction
from bertstudio.core.evaluate.readers import Dataset, EvalColumns, Example, finish_dataset
from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.fill_mask import FillMaskInput


@dataclass(frozen=True)
class MaskedStats:
    """One text's masked tokens: how many, how many the model ranked first / in its top 5, and the
    sum of -log P(gold token) (each token masked alone, so the sum gives pseudo-perplexity)."""

    masked: int
    top1: int
    top5: int
    nll: float
    gold: tuple[str, ...] = ()
    predicted: tuple[str, ...] = ()



def read_file(path: Path, _columns: EvalColumns | None = None, control: TaskControl | None = None) -> Dataset:
    """inputs = one text per non-blank line, gold = None (the masked tokens are the gold)."""
    from bertstudio.core.training.data import RowIssue

    examples = [Example(n, line, line, None) for n, line in read_lines(path, "data file", control=control)]
    bad = [RowIssue(x.line, "control characters in the line (is this a binary file?)")
           for x in examples if any(ord(c) < 32 and c != "\t" for c in x.text)]
    return finish_dataset(path, examples, bad, (), ())



def masked_positions(special: Sequence[int], row: int, options: EvalOptions) -> list[int]:
    """The seeded choice of tokens to mask in row `row`: the same for every model and every run."""
    candidates = [i for i, s in enumerate(special) if not s]
    if not candidates:
        return []
    count = max(1, round(options.mask_share * len(candidates)))
    return sorted(random.Random(options.seed * 1_000_003 + row).sample(candidates, count))



def predict(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl,
            options: EvalOptions, first_row: int = 0) -> tuple[list[Prediction], list[Any]]:
    """Each chosen token masked alone (pseudo-likelihood, Salazar et al. 2020): every text tokenized
    once, one row per masked token, all rows through the batch engine (sorted, a token budget, at most
    `options.batch_size` rows per forward); per row the gold token, the top guess, whether the gold is
    in the top 5 and -log P(gold)."""
    import numpy as np
    import torch

    from bertstudio.core import engine

    tokenizer, model = loaded.tokenizer, loaded.model
    mask = tokenizer.mask_token_id
    if mask is None:
        raise InputError(f"{loaded.info.architecture}'s tokenizer has no mask token, so it cannot fill masks.")
    texts = engine.encode_all(loaded, [str(x.inputs) for x in examples], control=control, special_tokens=True)
    jobs = [(n, p) for n, special in enumerate(texts.extras["special_tokens_mask"])
            for p in masked_positions(special, first_row + n, options)]
    masked = engine.Encoded(
        input_ids=[texts.input_ids[n][:p] + [mask] + texts.input_ids[n][p + 1:] for n, p in jobs],
        token_type_ids=[texts.token_type_ids[n] for n, _ in jobs] if texts.token_type_ids is not None else None,
        cut=(), max_length=texts.max_length)
    where = np.array([p for _, p in jobs], dtype=np.int64)
    golds = np.array([texts.input_ids[n][p] for n, p in jobs], dtype=np.int64)

    def forward(batch: engine.Batch) -> Any:
        device = batch.inputs["input_ids"].device
        rows = torch.arange(len(batch.rows), device=device)
        gold = torch.as_tensor(golds[batch.rows], device=device)
        logits = model(**batch.inputs).logits[rows, torch.as_tensor(where[batch.rows], device=device)]
        log_probs = torch.log_softmax(logits.float(), dim=-1)
        top5 = log_probs.topk(5, dim=-1).indices
        return top5[:, 0], (top5 == gold[:, None]).any(-1), -log_probs[rows, gold]

    def split(batch: engine.Batch, values: Any) -> list[tuple[int, bool, float]]:
        return list(zip(*(v.tolist() for v in values), strict=True))

    scored = engine.run(loaded, masked, forward, control, max_rows=options.batch_size, unit="masked tokens",
                        rows_of=split) if jobs else []
    found: list[list[tuple[int, int, int, float]]] = [[] for _ in examples]  # (gold id, top1 id, in top5, nll)
    for (n, _), gold, (top1, in_top5, nll) in zip(jobs, golds.tolist(), scored, strict=True):
        found[n].append((gold, int(top1), int(in_top5), float(nll)))
    out = []
    for tokens in found:
        gold_words = tuple(tokenizer.convert_ids_to_tokens([g for g, _, _, _ in tokens]))
        top_words = tuple(tokenizer.convert_ids_to_tokens([t for _, t, _, _ in tokens]))
        stats = MaskedStats(len(tokens), sum(g == t for g, t, _, _ in tokens), sum(f for _, _, f, _ in tokens),
                            sum(x for _, _, _, x in tokens), gold_words, top_words)
        out.append(Prediction(stats, " ".join(top_words), stats.top1 / stats.masked if stats.masked else 0.0))
    return out, []


def scores(stats: Sequence[MaskedStats]) -> dict[str, float]:
    total = sum(s.masked for s in stats)
    if not total:
        return {"top1_accuracy": 0.0, "top5_accuracy": 0.0, "pseudo_perplexity": float("nan"), "masked_tokens": 0.0}
    return {
        "top1_accuracy": sum(s.top1 for s in stats) / total,
        "top5_accuracy": sum(s.top5 for s in stats) / total,
        "pseudo_perplexity": math.exp(sum(s.nll for s in stats) / total),
        "masked_tokens": float(total),
    }



def metrics(golds: Sequence[Any], predictions: Sequence[Any], labels: Sequence[str] = ()) -> Scores:
    return scores(predictions), {}, None


def inputs_of(example: Example) -> FillMaskInput:
    return FillMaskInput(str(example.inputs))


def pair_of(example: Example) -> tuple[str, str | None]:
    return str(example.inputs), None


def correct(gold: Any, prediction: Any) -> bool:
    """Every masked token of the row is the model's first guess."""
    return bool(prediction.masked > 0 and prediction.top1 == prediction.masked)


def shown_gold(example: Example, prediction: Any) -> str:
    return " ".join(prediction.value.gold)
