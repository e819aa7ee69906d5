"""What compression costs (issue 33): the report on Evaluate's comparison of two tiny models, salience
agreement (a model with itself agrees fully; an int8 variant is explained by occlusion), size and speed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bertstudio.core.compression.report import compression_job
from bertstudio.core.compression.salience import sample_rows, spearman
from bertstudio.core.evaluate.evaluation import EvalRequest, evaluate_job
from bertstudio.core.models import LoadRequest
from bertstudio.core.progress import TaskControl

DATA = Path(__file__).resolve().parents[1] / "data" / "evaluate" / "sentiment_heldout.csv"


def _report(a: Path, compare: str):  # noqa: ANN202
    request = LoadRequest(str(a), "classification")
    comparison = evaluate_job(request, EvalRequest(str(DATA), limit=8), TaskControl(), compare)
    return comparison, compression_job(request, comparison, compare, TaskControl())


def test_report_of_a_student_beside_its_teacher(checkpoint_factory) -> None:  # noqa: ANN001
    teacher = checkpoint_factory("bert", "SequenceClassification")
    student = checkpoint_factory("distilbert", "SequenceClassification")
    comparison, report = _report(teacher, str(student))
    data = report.to_json()
    assert np.asarray(data["linear_cka"]).shape == (3, 3) and data["linear_cka_rows"] == 8
    assert report.agreement == comparison.agreement and report.mcnemar_p == comparison.mcnemar.p_exact
    salience = data["salience_agreement"]
    assert salience["method"] == "grad-x-input" and len(salience["rows"]) + salience["skipped_rows"] == 8
    assert all(-1.0 <= r["spearman"] <= 1.0 for r in salience["rows"])
    assert data["size"]["a"]["parameters"] == sum(p.numel() for p in _model(teacher).parameters())
    assert data["size"]["a"]["disk_mb"] == pytest.approx((teacher / "model.safetensors").stat().st_size / 2**20)
    assert data["speed"]["a"]["rows"] == data["speed"]["b"]["forward_rows"] == 8
    assert data["speed"]["b"]["forward_rows_per_second"] > 0


def test_a_model_beside_itself_and_its_int8_variant(checkpoint_factory) -> None:  # noqa: ANN001
    model = checkpoint_factory("bert", "SequenceClassification")
    _, same = _report(model, str(model))
    np.testing.assert_allclose(np.diag(same.cka), 1.0, atol=1e-9)
    assert same.salience is not None and same.salience.mean == pytest.approx(1.0)
    _, int8 = _report(model, f"{model} [int8]")
    assert int8.salience is not None and int8.salience.method == "occlusion"
    assert int8.size_b.disk_mb is None and int8.size_b.memory_mb < int8.size_a.memory_mb
    assert int8.size_b.parameters == int8.size_a.parameters


def test_spearman_and_sample_rows() -> None:
    assert spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 1, 1], [1, 2, 3]) is None and spearman([1], [1]) is None
    assert sample_rows(5) == [0, 1, 2, 3, 4]
    rows = sample_rows(1000, 16)
    assert len(rows) == 16 and rows[0] == 0 and rows[-1] == 999


def _model(folder: Path):  # noqa: ANN202
    import transformers

    return transformers.AutoModelForSequenceClassification.from_pretrained(folder)
