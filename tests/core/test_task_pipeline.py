"""The pipeline contract (TaskSpec.pipeline): a task's run, Explain's F, Evaluate's predictor and
counterfactual scoring all read the model's logits with the task's one `read`, on the rows its
one `encode` tokenizes. Each path is checked against read(forward(encode(rows))) on the engine."""

from __future__ import annotations

import pytest

from bertstudio.core import engine
from bertstudio.core.evaluate.predict import EvalOptions
from bertstudio.core.evaluate.readers import Example
from bertstudio.core.explain.targets import outputs_of
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.spec import all_specs

CASES = {  # task key -> (checkpoint head, rows of texts)
    "classification": ("SequenceClassification", [("a good film",), ("the plot", "was thin and slow")]),
    "nsp": ("NextSentencePrediction", [("It rained.", "The street was wet."), ("I sat down.", "Paris is big.")]),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request, checkpoint_factory):  # noqa: ANN001, ANN201 - pytest fixture
    key = request.param
    head, rows = CASES[key]
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", head)), key))
    spec = all_specs()[key]
    assert spec.pipeline is not None
    scores = spec.pipeline.read(loaded, engine.run_logits(loaded, spec.pipeline.encode(loaded, rows, None)))
    return spec, loaded, rows, scores


def test_run_reads_with_the_pipeline(case) -> None:  # noqa: ANN001
    spec, loaded, rows, scores = case
    for row, expected in zip(rows, scores, strict=True):
        result = spec.run(loaded, spec.explain.inputs_of(row), TaskControl())
        shown = {s.label: s.score for s in result.first.scores} if hasattr(result, "first") else \
            {0: result.is_next, 1: result.not_next}
        assert sorted(shown.values()) == pytest.approx(sorted(float(v) for v in expected), abs=1e-5)


def test_explain_and_counterfactual_read_with_the_pipeline(case) -> None:  # noqa: ANN001
    spec, loaded, rows, scores = case
    for row, expected in zip(rows, scores, strict=True):
        prepared = spec.explain.prepare(loaded, row, None)
        outputs = outputs_of(loaded, prepared.inputs)
        label = 0 if spec.key == "nsp" else int(expected.argmax())  # NSP explains IsNext by default
        assert float(prepared.probability(outputs)[0]) == pytest.approx(float(expected[label]), abs=1e-5)
        flip = spec.counterfactual.probabilities(loaded, prepared.inputs, outputs)[0]
        assert [float(v) for v in flip] == pytest.approx([float(v) for v in expected], abs=1e-5)


def test_evaluate_predicts_with_the_pipeline(case) -> None:  # noqa: ANN001
    spec, loaded, rows, scores = case
    examples = [Example(n + 1, " ".join(row), (row[0], row[1] if len(row) > 1 else None), "") for n, row in
                enumerate(rows)]
    predictions, _ = spec.evaluate.predict(loaded, examples, TaskControl(), EvalOptions())
    assert [p.score for p in predictions] == pytest.approx([float(max(s)) for s in scores], abs=1e-6)
