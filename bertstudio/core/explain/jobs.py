"""The Explain tab's jobs: module-level functions a TaskRunner runs in a worker (issue 18: job
functions live in core, not in ui/tabs). Each loads the model (the shared cache makes a loaded one
free) and returns (kind, value), the kind telling the tab how to show the value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bertstudio.core.models import LoadRequest
from bertstudio.core.progress import TaskControl

if TYPE_CHECKING:
    from bertstudio.core.explain.pinned import PinnedPair


def explain_job(request: LoadRequest, task: str, texts: tuple[str, ...], method: str, target: str | None,
                steps: int, converge: bool, control: TaskControl, samples: int | None = None,
                seed: int | None = None, baseline: str = "pad", faithfulness: bool = False,
                lens: str = "") -> tuple[str, Any]:
    """Attributions, and where the task's adapter asks (fill-mask) the per-layer predictions of the same text
    (`lens`: a tuned-lens folder read beside the logit lens)."""
    from bertstudio.core.explain.attribution import explain
    from bertstudio.core.explain.methods import DEFAULT_SAMPLES, DEFAULT_SEED
    from bertstudio.core.models import load_model
    from bertstudio.core.quantize import refuse_for_gradients
    from bertstudio.core.tasks.spec import ExplainAdapter, adapter_for

    refuse_for_gradients(request, "Explain")
    loaded = load_model(request, control)
    explanation = explain(loaded, task, texts, method, target, steps, converge, control,
                          samples=DEFAULT_SAMPLES if samples is None else samples,
                          seed=DEFAULT_SEED if seed is None else seed, baseline=baseline, faithfulness=faithfulness)
    read_layers = adapter_for(task, ExplainAdapter).per_layer
    layers = None
    if read_layers is not None:
        from bertstudio.core.features.tuned_lens import load as load_lens

        layers = read_layers(loaded, texts[0], lens=load_lens(lens)) if lens else read_layers(loaded, texts[0])
    return "explain", (explanation, layers)


def all_methods_job(request: LoadRequest, task: str, texts: tuple[str, ...], target: str | None, steps: int,
                    samples: int, seed: int, faithfulness: bool, control: TaskControl) -> tuple[str, Any]:
    """Every method on the same input, with their rank agreement (explain.compare)."""
    from bertstudio.core.explain.compare import all_methods
    from bertstudio.core.models import load_model
    from bertstudio.core.quantize import refuse_for_gradients

    refuse_for_gradients(request, "Explain")
    loaded = load_model(request, control)
    return "all", all_methods(loaded, task, texts, target, steps, samples, seed, faithfulness, control)


def importance_job(request: LoadRequest, task: str, texts: tuple[str, ...], data: str, normalise: bool,
                   control: TaskControl) -> tuple[str, Any]:
    from bertstudio.core.explain.importance import Example, head_importance, read_examples
    from bertstudio.core.models import load_model
    from bertstudio.core.quantize import refuse_for_gradients

    refuse_for_gradients(request, "Head importance")
    examples = read_examples(data, task) if data else [Example(texts)]
    return "importance", head_importance(load_model(request, control), task, examples, normalise, control)


def prune_job(request: LoadRequest, task: str, inputs: Any, heads: tuple[tuple[int, int], ...],
              control: TaskControl) -> tuple[str, Any]:
    """The task's own result intact and with `heads` switched off (one job, side by side)."""
    from bertstudio.core.jobs import run_spec
    from bertstudio.core.tasks.spec import spec_for

    return "prune", run_spec(spec_for(task), request, inputs, control, compare_ablated=heads)


def pinned_pair_job(request: LoadRequest, task: str, pinned: tuple[str, ...], edit: tuple[str, ...], method: str,
                    control: TaskControl) -> PinnedPair:
    """A task tab's pinned input and its edit explained side by side (explain.pinned)."""
    from bertstudio.core.explain.pinned import explain_pinned
    from bertstudio.core.models import load_model
    from bertstudio.core.quantize import refuse_for_gradients

    refuse_for_gradients(request, "Explain")
    return explain_pinned(load_model(request, control), task, pinned, edit, method, control=control)
