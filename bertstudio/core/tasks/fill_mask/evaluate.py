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
from bertstudio.core.evaluate.predict import EvalOptions, Prediction, chunks, progress
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
    """Each chosen token masked alone (pseudo-likelihood, Salazar et al. 2020), batched across texts."""
    import torch

    tokenizer, model = loaded.tokenizer, loaded.model
    if tokenizer.mask_token_id is None:
        raise InputError(f"{loaded.info.architecture}'s tokenizer has no mask token, so it cannot fill masks.")
    jobs: list[tuple[int, int, list[int]]] = []  # (example, position, ids)
    for start, part in chunks(examples, control, "Tokenized"):
        encoded = tokenizer([x.inputs for x in part], truncation=True, max_length=loaded.info.max_length,
                            return_special_tokens_mask=True)
        for n, (ids, special) in enumerate(zip(encoded["input_ids"], encoded["special_tokens_mask"], strict=True),
                                           start=start):
            jobs += [(n, p, ids) for p in masked_positions(special, first_row + n, options)]
    found: list[list[tuple[int, int, int, float]]] = [[] for _ in examples]  # (gold id, top1 id, in top5, nll)
    pad = tokenizer.pad_token_id or 0
    with loaded.lock, torch.inference_mode():
        for start in range(0, len(jobs), options.batch_size):
            chunk = jobs[start:start + options.batch_size]
            width = max(len(ids) for _, _, ids in chunk)
            ids = torch.full((len(chunk), width), pad, dtype=torch.long)
            attention = torch.zeros((len(chunk), width), dtype=torch.long)
            for k, (_, position, row) in enumerate(chunk):
                ids[k, :len(row)] = torch.tensor(row)
                attention[k, :len(row)] = 1
                ids[k, position] = tokenizer.mask_token_id
            logits = model(input_ids=ids.to(model.device), attention_mask=attention.to(model.device)).logits
            rows = torch.arange(len(chunk))
            positions = torch.tensor([p for _, p, _ in chunk])
            log_probs = torch.log_softmax(logits[rows, positions].float(), dim=-1).cpu()
            gold = torch.tensor([row[p] for _, p, row in chunk])
            top5 = log_probs.topk(5, dim=-1).indices
            nll = -log_probs[rows, gold]
            for k, (n, _, _) in enumerate(chunk):
                found[n].append((int(gold[k]), int(top5[k, 0]), int(gold[k] in top5[k]), float(nll[k])))
            progress(control, min(len(examples), chunk[-1][0] + 1), len(examples), "Scored")
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
