"""After a fix (issue 31): the report of the model before and after holds the suite judged on the
held-apart halves (equal to each model's own run, halved), the held-out file's figures (equal to
Evaluate's own job), and how many cases trained the fix and how many measure it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bertstudio.core.evaluate.evaluation import EvalRequest, evaluate_job
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from bertstudio.core.suites.after import fix_report_job
from bertstudio.core.suites.fix import measured, split_cases
from bertstudio.core.suites.runner import run_suite
from bertstudio.core.suites.suite import parse_suite
from tests.core.test_suites import TINY_SUITE


def test_the_report_equals_both_runs_on_the_held_apart_halves(checkpoint_factory, tmp_path: Path) -> None:
    a = str(checkpoint_factory("bert", "SequenceClassification"))
    b = str(checkpoint_factory("distilbert", "SequenceClassification"))
    held_out = tmp_path / "held_out.csv"
    held_out.write_text("text,label\nthe cat sat,positive\na dog ran,negative\ngood music,positive\n", "utf-8")
    suite = parse_suite(TINY_SUITE)
    report = fix_report_job(LoadRequest(a, "classification"), suite, b, str(held_out), 0, TaskControl())

    before = measured(run_suite(load_model(LoadRequest(a, "classification")), suite, TaskControl()))
    after = measured(run_suite(load_model(LoadRequest(b, "classification")), suite, TaskControl()))
    found = report.to_json()
    assert [(t["name"], t["failure_rate_a"], t["failure_rate_b"]) for t in found["tests"]] == [
        (x.name, x.failure_rate, y.failure_rate) for x, y in zip(before, after, strict=True)]
    for d, x, y in zip(report.measured_differences, before, after, strict=True):
        assert d.fixed == sum(not p.passed and q.passed for p, q in zip(x.outcomes, y.outcomes, strict=True))
        assert d.broken == sum(p.passed and not q.passed for p, q in zip(x.outcomes, y.outcomes, strict=True))
    assert [(s["train_cases"], s["measure_cases"]) for s in found["splits"]] == [
        tuple(len(half) for half in split_cases(t)) for t in suite.tests]
    assert sum(s["train_cases"] + s["measure_cases"] for s in found["splits"]) == suite.cases

    evaluated = evaluate_job(LoadRequest(a, "classification"), EvalRequest(str(held_out)), TaskControl(), b)
    assert found["held_out"]["metric"] == "accuracy"
    assert (found["held_out"]["before"], found["held_out"]["after"]) == pytest.approx(
        (evaluated.a.metrics["accuracy"], evaluated.b.metrics["accuracy"]))
    assert report.accuracy() == pytest.approx((evaluated.a.metrics["accuracy"], evaluated.b.metrics["accuracy"]))


def test_without_a_held_out_file_the_suite_alone(checkpoint_factory) -> None:  # noqa: ANN001
    a = str(checkpoint_factory("bert", "SequenceClassification"))
    report = fix_report_job(LoadRequest(a, "classification"), parse_suite(TINY_SUITE), a, None, 0, TaskControl())
    assert report.accuracy() is None and "held_out" not in report.to_json()
    assert all(d.fixed == d.broken == 0 for d in report.measured_differences)  # the same model: nothing moves
