"""What compression costs: for two models evaluated on the same labelled file (teacher and distilled
student, float32 and int8, before and after fine-tuning), beside Evaluate's accuracy of each,
prediction agreement and McNemar's test: linear CKA per layer pair (cka.py), salience agreement on
a sample (salience.py), parameters, size and speed (size_speed.py).

`compression_job(request, comparison, compare_source, control)` takes Evaluate's comparison and
loads both models through the model cache (already there after Evaluate). Its JSON keys are the
ones `evaluate --compare --json` adds: "linear_cka", "salience_agreement", "size", "speed".
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from bertstudio.core import notes as _notes
from bertstudio.core.compression.cka import MAX_CKA_ROWS, MIN_CKA_ROWS, best_matches, cka_matrix, layer_means
from bertstudio.core.compression.salience import SalienceAgreement, salience_agreement
from bertstudio.core.compression.size_speed import ModelSize, ModelSpeed, model_size, ratio
from bertstudio.core.errors import InputError
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl


@dataclass(frozen=True)
class CompressionReport:
    model_a: str
    model_b: str
    cka: np.ndarray  # (layers_A + 1) x (layers_B + 1)
    cka_rows: int
    salience: SalienceAgreement | None  # None: the task has no Explain, or the models cannot be explained
    size_a: ModelSize
    size_b: ModelSize
    speed_a: ModelSpeed
    speed_b: ModelSpeed
    agreement: float  # top-1 agreement, from Evaluate's comparison
    mcnemar_p: float
    notes: tuple[Note, ...] = ()
    seconds: float = 0.0

    @property
    def best_matches(self) -> list[int]:
        """Per hidden state of B, A's most similar hidden state."""
        return best_matches(self.cka)

    def to_json(self) -> dict[str, Any]:
        """The keys `evaluate --compare --json` adds beside the comparison."""
        return {
            "linear_cka": self.cka.tolist(),
            "linear_cka_rows": self.cka_rows,
            "linear_cka_best_a_for_b": self.best_matches,
            "salience_agreement": self.salience.to_json() if self.salience is not None else None,
            "size": {"a": self.size_a.to_json(), "b": self.size_b.to_json(),
                     "parameters_b_over_a": ratio(self.size_a.parameters, self.size_b.parameters),
                     "memory_b_over_a": ratio(self.size_a.memory_mb, self.size_b.memory_mb)},
            "speed": {"a": self.speed_a.to_json(), "b": self.speed_b.to_json(),
                      "rows_per_second_b_over_a": ratio(self.speed_a.rows_per_second, self.speed_b.rows_per_second),
                      "forward_b_over_a": ratio(self.speed_a.forward_rows_per_second,
                                                self.speed_b.forward_rows_per_second)},
        }


def row_inputs(task: str, examples: Any) -> tuple[list[str], list[str | None]]:
    """Each row as (text, pair): the task's Explain texts of the row (question and context, two
    sentences...), its shown text where the task has no Explain adapter."""
    from bertstudio.core.evaluate.explain_rows import row_texts

    texts: list[str] = []
    pairs: list[str | None] = []
    for example in examples:
        try:
            parts = row_texts(task, example)
        except InputError:
            parts = (example.text,)
        texts.append(parts[0])
        pairs.append(parts[1] if len(parts) > 1 else None)
    return texts, pairs


def compression_report(a: Any, b: Any, comparison: Any, control: TaskControl | None = None,
                       salience_rows: int | None = None) -> CompressionReport:
    """The report for two loaded models and Evaluate's comparison of them (`EvalComparison`)."""
    control = control or TaskControl()
    started = time.perf_counter()
    dataset = comparison.a.dataset
    if dataset is None:
        raise InputError("The comparison kept no rows to compare the models' layers on.", hint="Run it again.")
    examples = dataset.examples[:MAX_CKA_ROWS]
    found: list[Note] = []
    if len(dataset.examples) > MAX_CKA_ROWS:
        found.append(_notes.info(f"Linear CKA and speed of the forward passes: the first {MAX_CKA_ROWS:,} of "
                                 f"{len(dataset.examples):,} rows."))
    texts, pairs = row_inputs(dataset.task, examples)
    pairs_or_none = pairs if any(p is not None for p in pairs) else None
    control.report("Reading the layers of A…", None)
    means_a = layer_means(a, texts, pairs_or_none, control)
    control.report("Reading the layers of B…", None)
    means_b = layer_means(b, texts, pairs_or_none, control)
    control.report("Linear CKA…", None)
    matrix = cka_matrix(means_a.vectors, means_b.vectors, control)
    if len(examples) < MIN_CKA_ROWS:
        found.append(_notes.info(f"Linear CKA is undefined on {len(examples)} row(s): it needs at least "
                                 f"{MIN_CKA_ROWS} (with fewer, any two layers look alike); shown as empty."))
    elif np.isnan(matrix).any():
        found.append(_notes.info("Linear CKA is undefined where a layer is the same for every row; shown as empty."))
    salience = None
    try:
        salience = salience_agreement(a, b, dataset.task, dataset.examples, control,
                                      **({"size": salience_rows} if salience_rows else {}))
        if salience.skipped:
            found.append(_notes.info(f"Salience agreement: {salience.skipped} sampled row(s) left out (the two "
                                     "tokenizers split them differently, or fewer than two tokens)."))
    except InputError as error:
        found.append(_notes.info(f"No salience agreement: {error.message}"))
    speeds = [ModelSpeed(one.n, one.seconds, means.rows, means.seconds)
              for one, means in ((comparison.a, means_a), (comparison.b, means_b))]
    return CompressionReport(
        comparison.a.model, comparison.b.model, matrix, len(examples), salience, model_size(a.info),
        model_size(b.info), speeds[0], speeds[1], comparison.agreement, comparison.mcnemar.p_exact,
        _notes.unique(found), time.perf_counter() - started)


def compression_job(request: Any, comparison: Any, compare_source: str, control: TaskControl) -> CompressionReport:
    """Load A and B (the model cache has them after Evaluate) and measure what separates them."""
    from bertstudio.core.models import load_model
    from bertstudio.core.quantize import compare_request

    a = load_model(request, control)
    from bertstudio.core.errors import model_b_errors

    with model_b_errors(compare_source):
        b = load_model(compare_request(request, compare_source), control)
    return compression_report(a, b, comparison, control)
