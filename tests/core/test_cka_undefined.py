"""Issue 40, undefined statistics: linear CKA on fewer than 4 rows (1 row gave 0.0, 3 rows ~0.99) is
undefined: NaN in the matrix, null in JSON, a note in the report, no best matches."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bertstudio.core.compression.cka import MIN_CKA_ROWS, best_matches, cka_matrix, linear_cka
from bertstudio.core.evaluate.evaluation import EvalRequest, evaluate_job
from bertstudio.core.json_values import dumps
from bertstudio.core.models import LoadRequest
from bertstudio.core.progress import TaskControl
from tests.core.test_cka_report import DATA


@pytest.mark.parametrize("rows", [1, 2, 3])
def test_cka_on_fewer_than_four_rows_is_undefined(rows: int) -> None:
    rng = np.random.default_rng(rows)
    x, y = rng.normal(size=(rows, 8)), rng.normal(size=(rows, 5))
    assert np.isnan(linear_cka(x, y))
    matrix = cka_matrix(rng.normal(size=(rows, 3, 8)), rng.normal(size=(rows, 2, 8)))
    assert matrix.shape == (3, 2) and np.isnan(matrix).all() and best_matches(matrix) == []
    assert not np.isnan(linear_cka(rng.normal(size=(MIN_CKA_ROWS, 8)), rng.normal(size=(MIN_CKA_ROWS, 5))))


def test_the_report_on_three_rows_says_undefined(checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.compression.report import compression_job

    model = checkpoint_factory("bert", "SequenceClassification")
    request = LoadRequest(str(model), "classification")
    comparison = evaluate_job(request, EvalRequest(str(DATA), limit=3), TaskControl(), str(model))
    report = compression_job(request, comparison, str(model), TaskControl())
    data = json.loads(dumps(report.to_json()), parse_constant=lambda name: pytest.fail(f"{name} in the JSON"))
    assert all(value is None for row in data["linear_cka"] for value in row)
    assert data["linear_cka_best_a_for_b"] == []
    assert any("undefined on 3 row(s)" in note.text for note in report.notes)
