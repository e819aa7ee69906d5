"""The job a TaskRunner runs for "Trace why" (job functions live in core, as explain/jobs.py's do)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bertstudio.core.models import LoadRequest
from bertstudio.core.progress import TaskControl

if TYPE_CHECKING:
    from bertstudio.core.patching.result import PatchResult
    from bertstudio.core.patching.setup import Noise


def trace_job(request: LoadRequest, task: str, clean: tuple[str, ...], corrupted: tuple[str, ...] | None,
              method: str, control: TaskControl, target: str | None = None, noise: Noise | None = None) -> PatchResult:
    """A task tab's pinned input (clean) and its edit (corrupted), or noise on some of the pinned
    input's tokens instead of an edit, traced for the clean prediction."""
    from bertstudio.core.models import load_model
    from bertstudio.core.patching.trace import trace
    from bertstudio.core.quantize import refuse_for_gradients

    if method == "attribution":
        refuse_for_gradients(request, "Attribution patching")
    return trace(load_model(request, control), task, clean, corrupted, target, noise=noise, method=method,
                 control=control)
