"""The worker side of a task tab's work: plain functions a TaskRunner runs (they never touch a widget).

`task_job` is Run (model A, and B or A with heads off); `pinned_job` is Run while an input is
pinned and its result is not known (after a model change or a restored workspace): both inputs
in one job; `counterfactual_job` is "What would flip this?".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bertstudio.core.heads import HeadSet
from bertstudio.core.models import LoadRequest
from bertstudio.core.progress import TaskControl

if TYPE_CHECKING:
    from bertstudio.core.jobs import Outcome
    from bertstudio.core.tasks.spec import TaskSpec
    from bertstudio.core.whatif.search import CounterfactualResult, Options


def task_job(
    spec: TaskSpec, request: LoadRequest, inputs: Any, compare_source: str | None, ablated: HeadSet,
    control: TaskControl,
) -> Outcome[Any]:
    """Run: model A (and B, or A with heads off) through the task's spec."""
    from bertstudio.core.jobs import run_spec

    return run_spec(spec, request, inputs, control, compare_source, compare_ablated=ablated)


def pinned_job(spec: TaskSpec, request: LoadRequest, pinned: Any, inputs: Any, control: TaskControl) -> Outcome[Any]:
    """The pinned input's result (`result`) and the edited input's (`second`), on one model."""
    from bertstudio.core.jobs import Outcome, run_spec

    first = run_spec(spec, request, pinned, control)
    control.check()
    edited = run_spec(spec, request, inputs, control)
    return Outcome(first.result, edited.result, "edited input", None, edited.notes)


def counterfactual_job(spec: TaskSpec, request: LoadRequest, inputs: Any, options: Options,
                       control: TaskControl) -> CounterfactualResult:
    """The counterfactual search on the tab's model (core/whatif)."""
    from bertstudio.core.models import load_model
    from bertstudio.core.whatif.search import find

    loaded = load_model(request, control)
    control.check()
    return find(loaded, spec, inputs, options, control)
