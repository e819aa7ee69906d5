"""A suite run as one job (the CLI and the Tests tab): read the suite (its errors come before any
model loads), load the model, run; then the compared model on the same cases."""

from __future__ import annotations

from dataclasses import dataclass

from bertstudio.core.errors import model_b_errors
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from bertstudio.core.suites.runner import SuiteResult, TestDifference, differences, run_suite
from bertstudio.core.suites.suite import Suite, read_suite


@dataclass(frozen=True)
class CheckResult:
    a: SuiteResult
    b: SuiteResult | None = None

    @property
    def differences(self) -> tuple[TestDifference, ...]:
        return differences(self.a, self.b) if self.b is not None else ()

    def to_json(self) -> dict[str, object]:
        out = self.a.to_json()
        if self.b is not None:
            out["compare"] = {**self.b.to_json(), "differences": [d.to_json() for d in self.differences]}
        return out


def load_request(source: str, suite: Suite, device: str = "cpu", dtype: str = "float32",
                 quantize: str | None = None) -> LoadRequest:
    from bertstudio.core.tasks.spec import spec_for

    spec = spec_for(suite.task)
    return LoadRequest(source, spec.key, device, dtype, spec.attn_implementation, quantize)


def check_job(request: LoadRequest, suite: Suite | str, control: TaskControl,
              compare_source: str | None = None) -> CheckResult:
    """Model A on the suite, then model B (if any; "SRC [int8]" is SRC quantized) on the same cases."""
    from bertstudio.core.quantize import compare_request

    suite = read_suite(suite) if isinstance(suite, str) else suite
    control.report(f"Loading {request.source}…")
    a = run_suite(load_model(request, control), suite, control)
    if not compare_source:
        return CheckResult(a)
    control.report(f"Loading {compare_source}…")
    with model_b_errors(compare_source):
        b = run_suite(load_model(compare_request(request, compare_source), control), suite, control)
    return CheckResult(a, b)


def suite_job(request: LoadRequest, suite: Suite | str, compare_source: str | None,
              control: TaskControl) -> CheckResult:
    """check_job in the worker's argument order (the control last)."""
    return check_job(request, suite, control, compare_source)
