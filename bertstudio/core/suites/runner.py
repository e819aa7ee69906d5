"""Run a suite on a model: every distinct input scored once, then each test judges its cases.

MFT: a case fails when the prediction is not `expect`. INV: when the original's and the changed
input's predictions differ. DIR: when P(label) moves against `direction` by more than `tolerance`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.suites.suite import Suite, SuiteTest, TestCase
from bertstudio.core.suites.tasks import Case, adapter, meets, same, shown
from bertstudio.core.tasks.spec import SuiteAdapter

SHOWN_EXAMPLES = 3


@dataclass(frozen=True)
class CaseOutcome:
    """One case judged: what went in, what came out, and whether the test holds."""

    index: int  # the case's place in its test
    case: TestCase
    predicted: str  # the original's prediction as a person reads it
    value: Any  # ... and as the task's value (a label, tags, an answer, a choice)
    passed: bool
    predicted_after: str | None = None  # INV/DIR: the changed input's prediction
    value_after: Any = None
    change: float | None = None  # DIR: P(label) of the changed input minus the original's

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"input": shown(self.case.original), "predicted": self.predicted}
        if self.case.perturbed is not None:
            out["changed"] = shown(self.case.perturbed)
            out["predicted_changed"] = self.predicted_after
        if self.case.expect is not None:
            out["expected"] = self.case.expect
        if self.change is not None:
            out["change"] = round(self.change, 6)
        return out


@dataclass(frozen=True)
class TestResult:
    test: SuiteTest
    outcomes: tuple[CaseOutcome, ...]
    __test__ = False  # pytest: not a test class

    @property
    def name(self) -> str:
        return self.test.name

    @property
    def type(self) -> str:
        return self.test.type

    @property
    def cases(self) -> int:
        return len(self.outcomes)

    @property
    def failing(self) -> tuple[CaseOutcome, ...]:
        return tuple(o for o in self.outcomes if not o.passed)

    @property
    def failures(self) -> int:
        return sum(not o.passed for o in self.outcomes)

    @property
    def failure_rate(self) -> float:
        return self.failures / self.cases if self.cases else 0.0

    def only(self, indices: Iterable[int]) -> TestResult:
        """The same test judged on some of its cases (the held-apart half of a fix)."""
        keep = set(indices)
        return replace(self, outcomes=tuple(o for o in self.outcomes if o.index in keep))

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "type": self.type, "capability": self.test.capability, "cases": self.cases,
                "failures": self.failures, "failure_rate": self.failure_rate,
                "examples": [o.to_json() for o in self.failing[:SHOWN_EXAMPLES]]}


@dataclass(frozen=True)
class SuiteResult:
    suite: Suite
    model: str
    tests: tuple[TestResult, ...]
    notes: tuple[str, ...] = field(default=())
    head_warning: str = ""  # the model's head was never trained for the task (also the first note)

    @property
    def cases(self) -> int:
        return sum(t.cases for t in self.tests)

    @property
    def failures(self) -> int:
        return sum(t.failures for t in self.tests)

    def test(self, name: str) -> TestResult:
        return next(t for t in self.tests if t.name == name)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"suite": self.suite.name, "task": self.suite.task, "model": self.model,
                               "tests": [t.to_json() for t in self.tests], "notes": list(self.notes),
                               "warnings": [self.head_warning] if self.head_warning else []}
        if self.suite.masks:
            out["masks"] = {name: list(words) for name, words in self.suite.masks.items()}
        return out


@dataclass(frozen=True)
class TestDifference:
    """One test on two models: the failure rates, and the cases one fails and the other passes."""

    name: str
    type: str
    a: TestResult
    b: TestResult
    __test__ = False

    @property
    def difference(self) -> float:
        return self.b.failure_rate - self.a.failure_rate

    @property
    def fixed(self) -> int:  # failing on A, passing on B
        return sum(not x.passed and y.passed for x, y in zip(self.a.outcomes, self.b.outcomes, strict=True))

    @property
    def broken(self) -> int:  # passing on A, failing on B
        return sum(x.passed and not y.passed for x, y in zip(self.a.outcomes, self.b.outcomes, strict=True))

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "type": self.type, "failure_rate_a": self.a.failure_rate,
                "failure_rate_b": self.b.failure_rate, "difference": self.difference,
                "fixed": self.fixed, "broken": self.broken}


def differences(a: SuiteResult, b: SuiteResult) -> tuple[TestDifference, ...]:
    """Per test, model B against model A (the same suite, so the same cases in the same order)."""
    return tuple(TestDifference(x.name, x.type, x, y) for x, y in zip(a.tests, b.tests, strict=True))


def known_labels(loaded: LoadedModel, task: SuiteAdapter) -> tuple[str, ...]:
    """The labels a labelled task's model can predict (MFT `expect`, DIR `label` are checked against them)."""
    if task.labels is not None:
        return tuple(task.labels(loaded))
    return tuple(loaded.info.id2label[i] for i in sorted(loaded.info.id2label))


def check_labels(loaded: LoadedModel, suite: Suite) -> None:
    """Every label the suite names is one the model has, before anything runs."""
    task = adapter(suite.task)
    if not task.labelled:
        return
    known = known_labels(loaded, task)
    for test in suite.tests:
        named = [("label", test.label)] if test.label is not None else []
        bad = next((c.expect for c in test.cases if c.expect is not None and c.expect not in known), None)
        if bad is not None:
            named.append(("expect", bad))
        for field_name, label in named:
            if label not in known:
                raise InputError(f"Test '{test.name}', field '{field_name}': the model has no label '{label}'.",
                                 hint=f"Its labels: {', '.join(known)}. Use one of them, or choose the matching model.")


def run_suite(loaded: LoadedModel, suite: Suite, control: TaskControl, batch_size: int | None = None) -> SuiteResult:
    """Score every distinct input of the suite once (one batch path), then judge each test."""
    from bertstudio.core.suites.scoring import predictions

    task = adapter(suite.task)
    check_labels(loaded, suite)
    index: dict[Case, int] = {}
    for test in suite.tests:
        for case in test.cases:
            index.setdefault(case.original, len(index))
            if case.perturbed is not None:
                index.setdefault(case.perturbed, len(index))
    control.report(f"Scoring {len(index):,} inputs of {suite.cases:,} cases", 0.0)
    found, notes = predictions(loaded, suite.task, list(index), control, batch_size)
    results = tuple(_judge(task, test, found, index) for test in suite.tests)
    from bertstudio.core.quantize import variant_source

    request = loaded.info.request
    head = loaded.info.head_report.warning(suite.task)  # scored all the same, but said: a head not trained for it
    return SuiteResult(suite, variant_source(request.source, request.quantize), results,
                       (head,) * bool(head) + tuple(notes), head)


def _judge(task: SuiteAdapter, test: SuiteTest, found: Sequence[Any], index: dict[Case, int]) -> TestResult:
    outcomes = []
    for n, case in enumerate(test.cases):
        before = found[index[case.original]]
        if case.perturbed is None:
            passed = meets(task, before.value, before.shown, case.expect)
            outcomes.append(CaseOutcome(n, case, before.shown, before.value, passed))
            continue
        after = found[index[case.perturbed]]
        change = None
        if test.type == "DIR":
            change = _probability(after, test) - _probability(before, test)
            passed = change >= -test.tolerance if test.direction == "up" else change <= test.tolerance
        else:
            passed = same(task, before.value, after.value)
        outcomes.append(CaseOutcome(n, case, before.shown, before.value, passed, after.shown, after.value, change))
    return TestResult(test, tuple(outcomes))


def _probability(prediction: Any, test: SuiteTest) -> float:
    classes = tuple(prediction.classes)
    if prediction.probabilities is None or test.label not in classes:
        raise InputError(f"Test '{test.name}', field 'label': this model gives no probability for '{test.label}'.",
                         hint="DIR tests need a classifier with class probabilities (not a regression head).")
    value = float(prediction.probabilities[classes.index(test.label)])
    return value if math.isfinite(value) else 0.0
