"""Explain several evaluated rows together: which tokens matter to the model across a selection.

Each row is explained alone by the Explain core (`explain.attribution.explain`, the task's own
Explain adapter turning the row into its texts, the target the row's predicted class), then the
absolute attributions are pooled per token, a token being its lower-cased text (specials left
out): mean |attribution| over its occurrences, how often it occurs and in how many rows. With
`share=True` each row's |attributions| are first divided by their sum (specials left out), so a
row near the decision boundary, whose gradients are large, weighs no more than the others. The
selection is bounded (core/limits.MAX_EXPLAIN_ROWS); Cancel is checked between and inside rows.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bertstudio.core import notes as _notes
from bertstudio.core.errors import InputError
from bertstudio.core.limits import MAX_EXPLAIN_ROWS, check_count
from bertstudio.core.models import LoadedModel
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl

DEFAULT_METHOD = "grad-x-input"  # one backward pass per row: fast enough for hundreds of rows


@dataclass(frozen=True)
class TokenWeight:
    token: str  # lower-cased token text
    mean_abs: float  # mean |attribution| over its occurrences
    count: int  # occurrences in the selection
    rows: int  # rows it occurs in

    def to_json(self) -> dict[str, Any]:
        return {"token": self.token, "mean_abs": self.mean_abs, "count": self.count, "rows": self.rows}


@dataclass(frozen=True)
class RowsExplanation:
    task: str
    method: str
    rows: tuple[int, ...]  # the evaluated rows explained (0-based data rows)
    tokens: tuple[TokenWeight, ...]  # highest mean |attribution| first
    notes: tuple[Note, ...] = ()
    seconds: float = 0.0
    share: bool = False  # each row's |attributions| divided by their sum first

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "method": self.method, "share": self.share, "rows": list(self.rows),
                "tokens": [t.to_json() for t in self.tokens], "notes": [n.to_json() for n in self.notes]}


def row_texts(task: str, example: Any) -> tuple[str, ...]:
    """An evaluated row as the texts its task's Explain adapter explains (the row's task input first)."""
    from bertstudio.core.tasks.spec import all_specs

    spec = all_specs().get(task)
    if spec is None or spec.explain is None or spec.evaluate is None:
        title = spec.title if spec is not None else task
        raise InputError(f"{title} rows cannot be explained here.",
                         hint="Explaining rows works for tasks that have both Evaluate and Explain.")
    return tuple(spec.explain.texts_of(spec.evaluate.inputs_of(example)))


def pool(explanations: Sequence[Any], share: bool = False) -> tuple[TokenWeight, ...]:
    """Mean |attribution| per lower-cased token over every explanation, specials left out (`share`:
    each explanation's values as shares of its own total |attribution|)."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    rows: dict[str, int] = {}
    for explanation in explanations:
        seen: set[str] = set()
        kept = [(t, abs(float(v))) for t, v, special in zip(explanation.tokens, explanation.attributions,
                                                              explanation.special, strict=True) if not special]
        total = sum(v for _, v in kept) if share else 1.0
        for token, value in kept:
            key = token.lower()
            sums[key] = sums.get(key, 0.0) + (value / total if total > 0 else 0.0)
            counts[key] = counts.get(key, 0) + 1
            seen.add(key)
        for key in seen:
            rows[key] = rows.get(key, 0) + 1
    found = [TokenWeight(key, sums[key] / counts[key], counts[key], rows[key]) for key in sums]
    return tuple(sorted(found, key=lambda t: (-t.mean_abs, t.token)))


def explain_rows(loaded: LoadedModel, task: str, examples: Sequence[Any], rows: Sequence[int],
                 method: str = DEFAULT_METHOD, steps: int = 50, control: TaskControl | None = None,
                 share: bool = False) -> RowsExplanation:
    """Explain `rows` of `examples` (an evaluated file's rows) one by one and pool their tokens."""
    from bertstudio.core.explain.attribution import METHODS, explain

    control = control or TaskControl()
    chosen = tuple(dict.fromkeys(int(r) for r in rows))
    check_count(len(chosen), "The rows to explain", 1, MAX_EXPLAIN_ROWS)
    if method not in METHODS:
        raise InputError(f"Unknown attribution method {method!r}.", hint=f"Choose one of {', '.join(METHODS)}.")
    if any(not 0 <= r < len(examples) for r in chosen):
        raise InputError("A selected row is not in the evaluated file.", hint="Run the evaluation again.")
    started = time.perf_counter()
    texts = [row_texts(task, examples[r]) for r in chosen]
    explanations, found = [], []
    for done, (row, parts) in enumerate(zip(chosen, texts, strict=True)):
        control.check()
        control.report(f"Explaining row {row} ({done + 1} of {len(chosen)})", done / len(chosen))
        explanation = explain(loaded, task, parts, method, None, steps, control=control)
        explanations.append(explanation)
        found += list(explanation.notes)
    control.report(f"Explained {len(chosen)} rows", 1.0)
    return RowsExplanation(task, method, chosen, pool(explanations, share), _notes.unique(found),
                           time.perf_counter() - started, share)
