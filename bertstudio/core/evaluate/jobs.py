"""The Evaluate tab's worker jobs, as plain functions of (inputs, control): evaluate a file, project
its rows, explain a selection of them, list a row's nearest rows. Each loads its model through
the shared cache (`models.load_model`), so the UI only starts them (issue 18: no job in ui/tabs/)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl

NEIGHBOUR_LAYER = -1  # the last layer's mean-pooled vectors, unless the projector has others


def evaluation_job(request: LoadRequest, evaluation: Any, compare_source: str | None, control: TaskControl) -> Any:
    from bertstudio.core.evaluate.evaluation import evaluate_job

    return evaluate_job(request, evaluation, control, compare_source)


def projection_job(request: LoadRequest, dataset: Any, layer: int, pooling: str, method: str,
                   control: TaskControl) -> Any:
    from bertstudio.core.evaluate.projector import projection

    return projection(load_model(request, control), dataset, layer, pooling, method, control)


def rows_explanation_job(request: LoadRequest, evaluation: Any, rows: tuple[int, ...], method: str,
                         share: bool, control: TaskControl) -> Any:
    from bertstudio.core.evaluate.explain_rows import explain_rows

    if evaluation.dataset is None:
        raise ValueError("the evaluation kept no rows to explain")
    return explain_rows(load_model(request, control), evaluation.task, evaluation.dataset.examples, rows, method,
                        control=control, share=share)


@dataclass(frozen=True)
class NearestRows:
    """A row's nearest rows, and the vectors they were found with (kept for the next row)."""

    row: int
    neighbours: tuple[Any, ...]
    layer: int
    vectors: Any = field(repr=False, compare=False)
    reused: bool = False  # the projector's vectors (mean pooling) were reused

    def to_json(self) -> dict[str, Any]:
        return {"row": self.row, "layer": self.layer, "neighbours": [n.to_json() for n in self.neighbours]}


def nearest_rows_job(request: LoadRequest, dataset: Any, row: int, k: int, vectors: Any, layer: int,
                     control: TaskControl) -> NearestRows:
    """`row`'s k nearest rows by cosine of mean-pooled embeddings; `vectors` None: embed the file first."""
    from bertstudio.core.evaluate.neighbours import nearest
    from bertstudio.core.evaluate.projector import embed

    reused = vectors is not None
    if vectors is None:
        vectors = embed(load_model(request, control), dataset, layer, "mean", control=control)
    control.report("Searching…", None)
    return NearestRows(row, nearest(vectors, row, k), layer, vectors, reused)


def curves_job(evaluation: Any, label: str, micro: bool, control: TaskControl) -> Any:
    """One class's PR and ROC curves and threshold table (scikit-learn's curves take ~0.1 s at 100,000 rows)."""
    from bertstudio.core.evaluate.curves import class_view

    control.report(f"Curves of {label}…", None)
    return class_view(evaluation.probabilities, evaluation.classes, evaluation.golds, label, micro)
