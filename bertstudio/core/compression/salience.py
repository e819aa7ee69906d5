"""Salience agreement: do the two models lean on the same tokens? On a sample of rows, each row is
explained by both models with the same method and target (A's prediction, where B knows that
target), and the two attributions are rank-correlated (Spearman) over the row's non-special tokens;
the report gives the mean and every row's value.

The method is gradient x input (one backward pass per row) unless either model is an int8 variant,
whose layers pass no gradient back: then occlusion (forward passes only) for both. Rows the two
tokenizers split differently are left out and counted: their tokens do not pair one to one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bertstudio.core.errors import InputError
from bertstudio.core.progress import TaskControl

if TYPE_CHECKING:
    from bertstudio.core.models import LoadedModel

SAMPLE_ROWS = 16  # rows explained by each model: a mean over 16 rank correlations is stable enough to read
GRADIENT_METHOD = "grad-x-input"
FORWARD_METHOD = "occlusion"


@dataclass(frozen=True)
class RowAgreement:
    row: int  # 0-based data row
    spearman: float
    tokens: int

    def to_json(self) -> dict[str, Any]:
        return {"row": self.row, "spearman": self.spearman, "tokens": self.tokens}


@dataclass(frozen=True)
class SalienceAgreement:
    method: str
    rows: tuple[RowAgreement, ...]
    skipped: int = 0  # sampled rows the two tokenizers split differently (or with fewer than 2 tokens)

    @property
    def mean(self) -> float | None:
        return float(np.mean([r.spearman for r in self.rows])) if self.rows else None

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "mean_spearman": self.mean, "rows": [r.to_json() for r in self.rows],
                "skipped_rows": self.skipped}


def sample_rows(count: int, size: int = SAMPLE_ROWS) -> list[int]:
    """`size` rows spread evenly over the file (all of them when fewer): the same rows on every run."""
    if count <= size:
        return list(range(count))
    return sorted({int(i) for i in np.linspace(0, count - 1, size).round()})


def method_for(a: LoadedModel, b: LoadedModel) -> str:
    """Gradient x input, or occlusion where either model is an int8 variant (no gradients through it)."""
    quantized = any(m.info.request.quantize for m in (a, b))
    return FORWARD_METHOD if quantized else GRADIENT_METHOD


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (scipy); None where it is undefined (a constant attribution)."""
    from scipy.stats import spearmanr

    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    value = float(spearmanr(x, y).statistic)
    return None if math.isnan(value) else value


def _kept(explanation: Any) -> tuple[list[str], list[float]]:
    pairs = [(t, float(v)) for t, v, special in zip(explanation.tokens, explanation.attributions,
                                                    explanation.special, strict=True) if not special]
    return [t for t, _ in pairs], [v for _, v in pairs]


def _explain_b(b: LoadedModel, task: str, texts: tuple[str, ...], method: str, target: Any,
               control: TaskControl) -> Any:
    """B's explanation of A's target; its own prediction where B has no such target (other labels)."""
    from bertstudio.core.explain.attribution import explain

    if isinstance(target, str | int):
        try:
            return explain(b, task, texts, method, str(target), control=control)
        except InputError:
            pass
    return explain(b, task, texts, method, None, control=control)


def salience_agreement(a: LoadedModel, b: LoadedModel, task: str, examples: Sequence[Any],
                       control: TaskControl | None = None, size: int = SAMPLE_ROWS) -> SalienceAgreement:
    """Rank correlation of A's and B's attributions on `size` rows of `examples`, one row at a time."""
    from bertstudio.core.evaluate.explain_rows import row_texts
    from bertstudio.core.explain.attribution import explain

    control = control or TaskControl()
    method = method_for(a, b)
    chosen = sample_rows(len(examples), size)
    found: list[RowAgreement] = []
    skipped = 0
    for done, row in enumerate(chosen):
        control.check()
        control.report(f"Salience: row {row} ({done + 1} of {len(chosen)})", done / max(1, len(chosen)))
        texts = row_texts(task, examples[row])
        first = explain(a, task, texts, method, None, control=control)
        second = _explain_b(b, task, texts, method, first.target, control)
        tokens_a, values_a = _kept(first)
        tokens_b, values_b = _kept(second)
        value = spearman(values_a, values_b) if tokens_a == tokens_b else None
        if value is None:
            skipped += 1
            continue
        found.append(RowAgreement(row, value, len(tokens_a)))
    return SalienceAgreement(method, tuple(found), skipped)
