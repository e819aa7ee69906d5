"""Every attribution method on one input, side by side, with how far their rankings agree.

The set is the six methods with Integrated Gradients twice (the [PAD] and the zero baseline), so
a person sees whether the baseline changes the story. Agreement is Spearman's rank correlation
(scipy.stats.spearmanr; scipy comes with scikit-learn) over the non-special tokens; a method whose
values are all equal there has no ranking, and its agreement is None. Progress runs over the whole
set; Cancel is checked inside every method.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bertstudio.core import notes
from bertstudio.core.explain.attribution import Explanation, explain
from bertstudio.core.explain.methods import (
    BASELINES,
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    INTEGRATED_GRADIENTS,
    METHODS,
    label,
)
from bertstudio.core.explain.share import Share
from bertstudio.core.models import LoadedModel
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl

# (method, baseline): what "All methods" runs, in this order: every method, Integrated Gradients with
# each baseline (the only method whose baseline is a choice), so a new method joins the set by itself
ALL = tuple((method, baseline) for method in METHODS
            for baseline in (BASELINES if method == INTEGRATED_GRADIENTS else ("pad",)))


@dataclass(frozen=True)
class MethodSet:
    explanations: tuple[Explanation, ...]
    names: tuple[str, ...]  # per explanation, as a person reads it ("Integrated Gradients (zero baseline)")
    agreement: tuple[tuple[float | None, ...], ...]  # Spearman between every two (None: no ranking)
    notes: tuple[Note, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"methods": [dict(e.to_json(), name=n) for e, n in zip(self.explanations, self.names, strict=True)],
                "spearman": [list(row) for row in self.agreement], "notes": [n.to_json() for n in self.notes]}


def spearman(first: Explanation, second: Explanation) -> float | None:
    """Rank correlation of two explanations of the same input over its non-special tokens."""
    from scipy.stats import spearmanr

    a = [v for v, s in zip(first.attributions, first.special, strict=True) if not s]
    b = [v for v, s in zip(second.attributions, second.special, strict=True) if not s]
    if len(a) < 2 or len(set(a)) < 2 or len(set(b)) < 2:
        return None
    return float(spearmanr(a, b).statistic)


def agreement(explanations: tuple[Explanation, ...]) -> tuple[tuple[float | None, ...], ...]:
    """The symmetric matrix of `spearman`, computed once per pair."""
    n = len(explanations)
    matrix: list[list[float | None]] = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):
            matrix[i][j] = matrix[j][i] = spearman(explanations[i], explanations[j])
    return tuple(tuple(row) for row in matrix)


def all_methods(loaded: LoadedModel, task: str, texts: tuple[str, ...], target: str | None = None, steps: int = 50,
                samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED, faithfulness: bool = True,
                control: TaskControl | None = None) -> MethodSet:
    """Each method of ALL on the same input and target, and their pairwise Spearman agreement."""
    control = control or TaskControl()
    names = tuple(label(method, baseline) for method, baseline in ALL)
    results = []
    for index, (method, baseline) in enumerate(ALL):
        part = Share(control, index / len(ALL), (index + 1) / len(ALL), f"{names[index]} ({index + 1} of {len(ALL)}): ")
        results.append(explain(loaded, task, texts, method, target, steps, control=part, samples=samples, seed=seed,
                               baseline=baseline, faithfulness=faithfulness))
    done = tuple(results)
    common = set.intersection(*({n.text for n in r.notes} for r in done))  # said by every method: once, as is
    found = [n if n.text in common else n.prefixed(f"{name}: ") for r, name in zip(done, names, strict=True)
             for n in r.notes]
    control.report("All methods done", 1.0)
    return MethodSet(done, names, agreement(done), notes.unique(found))
