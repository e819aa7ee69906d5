"""The Tests tab's results: one row per test (type, cases, failures, failure rate, an example; with a
second model its rate and the difference), and the failing cases of the selected test, each of
which opens in its task's tab (double-click). Only the GUI thread touches these; they show frozen
core results (core.suites.runner)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import QLabel, QLineEdit, QSplitter, QVBoxLayout, QWidget

from bertstudio.ui.widgets.eval_tables import RecordsView

TEST_HEADERS = ("test", "type", "cases", "failures", "failure rate", "example")
COMPARED_HEADERS = ("test", "type", "cases", "failures A", "rate A", "rate B", "B - A", "fixed", "broken", "example")
CASE_HEADERS = ("#", "input", "predicted", "changed input", "predicted (changed)", "expected / change")


def _example(outcome: Any) -> str:
    if outcome is None:
        return ""
    found = outcome.to_json()
    if "changed" in found:
        return f"{found['changed']} → {found['predicted_changed']} (was {found['predicted']})"
    return f"{found['input']} → {found['predicted']} (expected {found.get('expected', '')})"


def case_record(outcome: Any) -> tuple[Any, ...]:
    """One failing case as a row of the cases table."""
    from bertstudio.core.suites.tasks import shown

    case = outcome.case
    detail = case.expect if case.expect is not None else (
        f"{outcome.change:+.4f}" if outcome.change is not None else "")
    return (outcome.index + 1, shown(case.original), outcome.predicted,
            shown(case.perturbed) if case.perturbed is not None else "", outcome.predicted_after or "", str(detail))


class SuiteResults(QWidget):
    """Tests above, the selected test's failing cases below (a splitter: both usable at 900x600)."""

    opened = Signal(object)  # a core.suites.suite.TestCase (its original input) to open in the task's tab

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.result: Any = None  # core.suites.jobs.CheckResult
        self.measured: dict[str, frozenset[int]] | None = None  # test -> case indices shown (the held-apart half)
        self.tests = RecordsView(TEST_HEADERS, stretch=len(TEST_HEADERS) - 1)
        self.tests.setMinimumHeight(90)
        self.cases = RecordsView(CASE_HEADERS, stretch=1)
        self.cases.setMinimumHeight(80)
        self.cases.setToolTip("Double-click a case to open its input in the task's tab (Explain, What if are there)")
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("filter the failing cases…")
        self.filter.textChanged.connect(self.cases.set_filter)
        self.caption = QLabel("Run a suite to see its failure rates.")
        self.caption.setWordWrap(True)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.caption)
        lower_layout.addWidget(self.filter)
        lower_layout.addWidget(self.cases, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.tests)
        splitter.addWidget(lower)
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter, 1)
        self.tests.selectionModel().currentRowChanged.connect(self._test_chosen)
        self.cases.opened.connect(self.opened.emit)  # a failing case's own inputs, double-clicked

    def clear(self) -> None:
        self.result = None
        self.tests.set_records([])
        self.cases.set_records([])
        self.caption.setText("Run a suite to see its failure rates.")

    def show_result(self, result: Any, measured: dict[str, frozenset[int]] | None = None) -> None:
        """A CheckResult; with `measured`, every test judged on those cases only (a fix's held-apart half)."""
        self.result, self.measured = result, measured
        a = self._tests(result.a)
        records: list[tuple[Any, ...]]
        if result.b is None:
            records = [(t.name, t.type, t.cases, t.failures, t.failure_rate, _example(next(iter(t.failing), None)))
                       for t in a]
            self.tests.set_records(records, [t.name for t in a], TEST_HEADERS)
        else:
            b = self._tests(result.b)
            records = []
            for x, y in zip(a, b, strict=True):
                fixed = sum(not p.passed and q.passed for p, q in zip(x.outcomes, y.outcomes, strict=True))
                broken = sum(p.passed and not q.passed for p, q in zip(x.outcomes, y.outcomes, strict=True))
                records.append((x.name, x.type, x.cases, x.failures, x.failure_rate, y.failure_rate,
                                y.failure_rate - x.failure_rate, fixed, broken,
                                _example(next(iter(x.failing), None))))
            self.tests.set_records(records, [t.name for t in a], COMPARED_HEADERS)
        if records:
            self.tests.selectRow(0)
            self._show_cases(a[0].name)

    def _tests(self, suite_result: Any) -> list[Any]:
        if self.measured is None:
            return list(suite_result.tests)
        return [t.only(self.measured.get(t.name, frozenset())) for t in suite_result.tests]

    def _test_chosen(self, current: QModelIndex, _previous: QModelIndex) -> None:
        name = self.tests.payload_at(current.row()) if current.isValid() else None
        if name is not None:
            self._show_cases(name)

    def _show_cases(self, name: str) -> None:
        """The failing cases of test `name` (model A's; with B, those either model fails)."""
        if self.result is None:
            return
        test = next(t for t in self._tests(self.result.a) if t.name == name)
        failing = list(test.failing)
        which = "failing"
        if self.result.b is not None:
            other = next(t for t in self._tests(self.result.b) if t.name == name)
            failing = [x for x, y in zip(test.outcomes, other.outcomes, strict=True) if not x.passed or not y.passed]
            which = "failing on A or B (A's predictions shown)"
        self.cases.set_records([case_record(o) for o in failing], [o.case for o in failing])
        self.caption.setText(f"{name}: {len(failing)} case(s) {which} of {test.cases}"
                             + (" held apart from training" if self.measured is not None else "")
                             + ". Double-click one to open it in its task's tab.")


def status_text(result: Any) -> str:
    """The Log's line for a run: each model's own count (issue 40: a comparison repeated A's count)."""
    def count(run: Any) -> str:
        return f"{run.failures} of {run.cases} cases failed ({run.failures / max(1, run.cases):.1%})"

    if result.b is None:
        return f"Tests: {count(result.a)}"
    a, b = Path(result.a.model).name, Path(result.b.model).name
    return f"Tests: A ({a}) {count(result.a)}; B ({b}) {count(result.b)}"
