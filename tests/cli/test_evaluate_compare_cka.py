"""`evaluate --compare SRC2`: what compression costs beside McNemar's test (issue 33's CLI contract):
--json adds "linear_cka" ((layers_A + 1) x (layers_B + 1)), "salience_agreement", "size", "speed";
the text output a short table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.conftest import run_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "evaluate" / "sentiment_heldout.csv"


def test_json_adds_linear_cka_salience_size_and_speed(capfd, checkpoint_factory) -> None:  # noqa: ANN001
    teacher = checkpoint_factory("bert", "SequenceClassification")
    student = checkpoint_factory("distilbert", "SequenceClassification")
    done = run_cli(capfd, "evaluate", "--model", str(teacher), "--task", "classify", "--data", str(DATA),
                   "--limit", "6", "--compare", str(student), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    matrix = np.asarray(data["linear_cka"])
    assert matrix.shape == (3, 3) and ((matrix >= 0) & (matrix <= 1 + 1e-9)).all()
    assert data["salience_agreement"]["method"] == "grad-x-input"
    assert {"a", "b"} <= set(data["size"]) and data["size"]["b"]["parameters"] > 0
    assert data["speed"]["a"]["rows"] == 6 and data["compare"]["mcnemar_p"] is not None


def test_text_output_has_the_cka_table_and_no_report_without_compare(capfd, checkpoint_factory) -> None:  # noqa: ANN001
    model = checkpoint_factory("bert", "SequenceClassification")
    done = run_cli(capfd, "evaluate", "--model", str(model), "--task", "classify", "--data", str(DATA),
                   "--limit", "4", "--compare", str(model))
    assert done.returncode == 0, done.stderr
    assert "linear CKA on 4 rows" in done.stdout and "parameters" in done.stdout
    assert "  0  1.00" in done.stdout  # the embeddings against themselves
    assert "salience agreement (grad-x-input, Spearman, 4 rows): mean 1.000" in done.stdout
    alone = run_cli(capfd, "evaluate", "--model", str(model), "--task", "classify", "--data", str(DATA),
                    "--limit", "4", "--json")
    assert alone.returncode == 0 and "linear_cka" not in json.loads(alone.stdout)
