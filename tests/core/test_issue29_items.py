"""Issue 29 items that had no test of their own in core: one number for the same QA model and data."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bertstudio.core.progress import TaskControl
from bertstudio.core.training.engine import train
from tests.core.test_training_tasks import task_config


def test_qa_scores_are_the_same_number_in_train_and_evaluate(tmp_path: Path, checkpoint_factory) -> None:  # noqa: ANN001
    """Issue 29 #15: Train said F1 0.1172 (0-1) where Evaluate said 12.02 (0-100) for the same model and
    file, and the values differed. Train's final validation and Evaluate on the saved model and the same
    file give one number on one 0-1 scale."""
    from bertstudio.core.evaluate.evaluation import EvalRequest, evaluate_job
    from bertstudio.core.models import LoadRequest

    config = replace(task_config("qa", tmp_path, checkpoint_factory("bert", "Model")), max_steps=12)
    result = train(config, TaskControl())
    evaluation = evaluate_job(LoadRequest(result.output_dir, "qa"), EvalRequest(config.eval_file), TaskControl(), None)
    for key in ("exact_match", "f1"):
        assert 0.0 <= evaluation.metrics[key] <= 1.0
        assert result.metrics[f"eval_{key}"] == pytest.approx(evaluation.metrics[key], abs=1e-6), key


def test_a_stop_ends_the_qa_validation_read_at_its_next_batch(checkpoint_factory) -> None:  # noqa: ANN001
    """Train's QA figures are read by Evaluate's predictor: each of its batches is one of the Trainer's
    evaluation steps, so a Stop raises there (EvaluationStopped) instead of after every question."""
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    from bertstudio.core.tasks.qa.train import ReadAsEvaluate
    from bertstudio.core.tasks.qa.train_read import QAExample
    from bertstudio.core.training.callback import EvaluationStopped

    folder = checkpoint_factory("bert", "QuestionAnswering")
    model, tokenizer = AutoModelForQuestionAnswering.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    context = "the answer is a red car ."
    rows = [QAExample(i + 1, f"what is it {i}", context, ("red car",), context.index("red car")) for i in range(200)]
    steps: list[int] = []

    def each_batch() -> None:
        steps.append(len(steps))
        if len(steps) == 2:  # the user pressed Stop during the read
            raise EvaluationStopped

    read = ReadAsEvaluate(rows)
    read.bind(model, tokenizer, each_batch)
    with pytest.raises(EvaluationStopped):
        read(None)
    assert len(steps) == 2
