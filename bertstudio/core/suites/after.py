"""After a fix: the suite and the user's held-out evaluation on the model before and the model after.

"Fine-tune on failures" trains on each test's seeded "train" half (its failures, and the passing
cases replayed beside them); the suite is judged again on the "measure" half only, which training
never saw, and the held-out file is evaluated on both models, so a fix that breaks something else
shows there. The comparison itself is the suites' and Evaluate's own (`differences`, `compare`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bertstudio.core.models import LoadRequest
from bertstudio.core.progress import TaskControl
from bertstudio.core.suites.fix import MEASURE, TRAIN, measured, split_cases
from bertstudio.core.suites.jobs import CheckResult, check_job
from bertstudio.core.suites.runner import SuiteResult, TestDifference, differences
from bertstudio.core.suites.suite import Suite


@dataclass(frozen=True)
class SplitCount:
    """How many of a test's cases trained the fix, and how many measure it."""

    name: str
    train: int
    measure: int


@dataclass(frozen=True)
class FixReport:
    """Before (A) and after (B): the suite on its held-apart halves, and the held-out file."""

    check: CheckResult
    seed: int
    held_out: Any = None  # evaluate.evaluation.EvalComparison, when a held-out file was given

    @property
    def before(self) -> SuiteResult:
        return self.check.a

    @property
    def after(self) -> SuiteResult:
        assert self.check.b is not None
        return self.check.b

    @property
    def splits(self) -> tuple[SplitCount, ...]:
        out = []
        for test in self.before.suite.tests:
            train, measure = split_cases(test, self.seed)
            out.append(SplitCount(test.name, len(train), len(measure)))
        return tuple(out)

    @property
    def measured_differences(self) -> tuple[TestDifference, ...]:
        """Per test, after against before on the cases training never saw."""
        a = SuiteResult(self.before.suite, self.before.model, measured(self.before, self.seed))
        b = SuiteResult(self.after.suite, self.after.model, measured(self.after, self.seed))
        return differences(a, b)

    def accuracy(self) -> tuple[float, float] | None:
        """The held-out file's headline metric, before and after (None without a file)."""
        if self.held_out is None:
            return None
        key = headline(self.held_out.a.metrics)
        return float(self.held_out.a.metrics[key]), float(self.held_out.b.metrics[key])

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "before": self.before.model, "after": self.after.model, "seed": self.seed,
            "trained_on": TRAIN, "measured_on": MEASURE,
            "splits": [{"name": s.name, "train_cases": s.train, "measure_cases": s.measure} for s in self.splits],
            "tests": [d.to_json() for d in self.measured_differences]}
        if self.held_out is not None:
            key = headline(self.held_out.a.metrics)
            out["held_out"] = {"data": self.held_out.a.data, "metric": key, "before": self.held_out.a.metrics[key],
                               "after": self.held_out.b.metrics[key]}
        return out


def headline(metrics: dict[str, float]) -> str:
    """The metric a person compares first: accuracy where there is one, else the first."""
    for key in ("accuracy", "exact_match", "f1", "micro_f1"):
        if key in metrics:
            return key
    return next(iter(metrics))


def fix_report_job(request: LoadRequest, suite: Suite, after: str, held_out: str | None, seed: int,
                   control: TaskControl) -> FixReport:
    """The suite on the model before and the fine-tuned one, then the held-out file on both."""
    from bertstudio.core.evaluate.evaluation import EvalRequest, evaluate_job

    check = check_job(request, suite, control, after)
    comparison = None
    if held_out:
        comparison = evaluate_job(request, EvalRequest(held_out), control, after)
    return FixReport(check, seed, comparison)
