"""Token attributions: gradient L2 norm, gradient x input and Integrated Gradients, via captum.

Every method differentiates F = P(target) (see targets.py) with respect to the output of the
word-embedding layer (`model.get_input_embeddings()`), the layer captum's
`LayerIntegratedGradients` integrates over. IG's baseline is the same sequence with every
non-special token replaced by the pad token (special tokens kept), so position and segment
embeddings are the same on the whole path and only the words change. RoBERTa derives position
ids from the ids themselves (pads get the padding position); we pass the input's own position
ids so the baseline differs from the input in its words only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bertstudio.core import notes
from bertstudio.core.errors import InputError
from bertstudio.core.explain.targets import Prepared, prepare
from bertstudio.core.limits import MAX_IG_STEPS, check_count
from bertstudio.core.models import LoadedModel
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl

METHODS = ("gradient", "grad-x-input", "integrated-gradients")
MAX_DOUBLINGS = 3  # converge: steps, 2x, 4x, 8x at most
TOLERANCE = 0.01  # converged when |delta| <= 1 % of |F(input) - F(baseline)|
ATTENTION_BUDGET = 2**20  # rows x tokens^2 per IG batch: 64 steps of 128 tokens, 4 of 512
TOKEN_BUDGET = 8192  # tokens per IG batch: short inputs still check for Cancel every few hundred steps


@dataclass(frozen=True)
class Explanation:
    """One attribution per token the model read (padding left out)."""

    task: str
    method: str
    tokens: tuple[str, ...]
    attributions: tuple[float, ...]
    special: tuple[bool, ...]  # per token: a special token ([CLS], [SEP], [MASK]...)
    rows: tuple[int, ...]  # per token: the sequence it belongs to (multiple choice: the choice)
    target: Any
    target_label: str
    score: float  # F(input)
    baseline_score: float | None = None  # F(baseline), Integrated Gradients only
    delta: float | None = None  # sum(attributions) - (F(input) - F(baseline))
    steps: int | None = None
    targets: tuple[tuple[str, str], ...] = ()  # other targets a person may choose (value, label)
    notes: tuple[Note, ...] = ()
    sequences: int = 1  # how many sequences the tokens come from (multiple choice: one per choice)

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "tokens": list(self.tokens), "attributions": list(self.attributions), "target": self.target,
            "method": self.method, "score": self.score,
        }
        if self.method == "integrated-gradients":
            data.update(baseline_score=self.baseline_score, delta=self.delta, steps=self.steps)
        if self.sequences > 1:
            data["rows"] = list(self.rows)
        data["notes"] = [n.to_json() for n in self.notes]
        return data


def check_steps(steps: object) -> int:
    """Integrated Gradients steps within [1, MAX_IG_STEPS]: captum computes its quadrature nodes
    (numpy's leggauss, far worse than linear) before the first forward pass, where neither Cancel
    nor Ctrl+C can stop it; at the bound that takes under a second."""
    return check_count(steps, "Integrated Gradients steps (--steps)", 1, MAX_IG_STEPS)


def converge_steps(steps: int) -> list[int]:
    """The step counts 'converge' tries: doubling at most MAX_DOUBLINGS times, never past the bound."""
    return [steps * 2**k for k in range(MAX_DOUBLINGS + 1) if steps * 2**k <= MAX_IG_STEPS]


def baseline_ids(loaded: LoadedModel, prepared: Prepared) -> Any:
    """The input with every non-special token replaced by the pad token."""
    import torch

    pad = loaded.tokenizer.pad_token_id
    if pad is None:
        raise InputError("This tokenizer has no pad token, so the Integrated Gradients baseline cannot be built.",
                         hint="Use the gradient or gradient x input method.")
    ids = prepared.inputs["input_ids"]
    special = torch.tensor(prepared.special, device=ids.device).reshape(ids.shape)
    return torch.where(special, ids, torch.full_like(ids, pad))


def forward_of(loaded: LoadedModel, prepared: Prepared) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """F(input_ids, *extra) -> (batch,) probabilities, and the extra inputs (mask, segments, positions)."""
    inputs = dict(prepared.inputs)
    ids = inputs.pop("input_ids")
    embeddings = getattr(getattr(loaded.model, loaded.model.base_model_prefix, None), "embeddings", None)
    padding_idx = getattr(embeddings, "padding_idx", None)
    if padding_idx is not None:  # RoBERTa: positions from the input's ids, not the baseline's pads
        real = ids.ne(padding_idx).long()
        inputs["position_ids"] = real.cumsum(-1) * real + padding_idx
    names = tuple(inputs)

    def forward(input_ids: Any, *extra: Any) -> Any:
        return prepared.probability(loaded.model(input_ids=input_ids, **dict(zip(names, extra, strict=True))))

    return forward, tuple(inputs[n] for n in names)


def steps_per_batch(prepared: Prepared, steps: int) -> int:
    ids = prepared.inputs["input_ids"]
    rows, width = max(1, ids.numel() // ids.shape[-1]), ids.shape[-1]
    return max(1, min(steps, ATTENTION_BUDGET // (rows * width * width), TOKEN_BUDGET // (rows * width)))


def _per_token(method: str, attributions: Any) -> list[float]:
    flat = attributions.reshape(-1, attributions.shape[-1]).float()
    values = flat.norm(dim=-1) if method == "gradient" else flat.sum(dim=-1)
    return [float(v) for v in values.detach().cpu()]


def _scores(forward: Callable[..., Any], ids: Any, baseline: Any, extra: tuple[Any, ...]) -> tuple[float, float]:
    import torch

    with torch.no_grad():
        both = forward(torch.cat([ids, baseline]), *(torch.cat([e, e]) for e in extra))
    return float(both[0]), float(both[1])


def integrated_gradients(
    loaded: LoadedModel, prepared: Prepared, steps: int, control: TaskControl, batch_steps: int | None = None,
    ends: list[float] | None = None,
) -> Any:
    """captum's LayerIntegratedGradients (Gauss-Legendre) over the word embeddings; control.check()
    and progress between the internal batches (each batch is one call of the forward). captum's
    first two calls run the input and the baseline whole: `ends` receives F(input), F(baseline)."""
    from captum.attr import LayerIntegratedGradients

    forward, extra = forward_of(loaded, prepared)
    ids = prepared.inputs["input_ids"]
    rows = prepared.sequences  # captum's internal batch counts rows of the flattened input
    per_batch = batch_steps or steps_per_batch(prepared, steps)
    total = 2 + math.ceil(steps / per_batch)
    done = [0]

    def checked(*args: Any) -> Any:
        control.check()
        control.report(f"Integrated Gradients, {steps} steps: pass {done[0] + 1} of {total}", done[0] / total)
        done[0] += 1
        output = forward(*args)
        if ends is not None and done[0] <= 2:
            ends.append(float(output.detach()[0]))
        return output

    ig = LayerIntegratedGradients(checked, loaded.model.get_input_embeddings())
    return ig.attribute(ids, baselines=baseline_ids(loaded, prepared), additional_forward_args=extra,
                        n_steps=steps, internal_batch_size=per_batch * rows)


def gradients(loaded: LoadedModel, prepared: Prepared, times_input: bool) -> Any:
    """dF/d(word embeddings), or its product with the embeddings (captum's LayerGradientXActivation)."""
    from captum.attr import LayerGradientXActivation

    forward, extra = forward_of(loaded, prepared)
    method = LayerGradientXActivation(forward, loaded.model.get_input_embeddings(), multiply_by_inputs=times_input)
    return method.attribute(prepared.inputs["input_ids"], additional_forward_args=extra)


def explain(
    loaded: LoadedModel,
    task: str,
    texts: tuple[str, ...],
    method: str = "integrated-gradients",
    target: str | None = None,
    steps: int = 50,
    converge: bool = False,
    control: TaskControl | None = None,
) -> Explanation:
    """Attributions of F = P(target) to every token of the input (see module docstring)."""
    import torch

    control = control or TaskControl()
    if method not in METHODS:
        raise InputError(f"Unknown attribution method {method!r}.", hint=f"Choose one of {', '.join(METHODS)}.")
    steps = check_steps(steps)
    found: list[Note] = []
    with loaded.lock, torch.inference_mode(False), torch.enable_grad():
        prepared = prepare(loaded, task, tuple(texts), target)
        forward, extra = forward_of(loaded, prepared)
        ids = prepared.inputs["input_ids"]
        if method != "integrated-gradients":
            raw = gradients(loaded, prepared, times_input=method == "grad-x-input")
            score, _ = _scores(forward, ids, ids, extra)
            return _result(prepared, method, raw, score, notes=())
        tried = converge_steps(steps) if converge else [steps]
        for count in tried:
            ends: list[float] = []
            raw = integrated_gradients(loaded, prepared, count, control, ends=ends)
            score, base = ends if len(ends) == 2 else _scores(forward, ids, baseline_ids(loaded, prepared), extra)
            gap = abs(score - base)
            delta = float(raw.sum()) - (score - base)
            if abs(delta) <= max(TOLERANCE * gap, 1e-6):
                break
        if converge and abs(delta) > max(TOLERANCE * gap, 1e-6):
            found.append(notes.warning(
                f"Integrated Gradients did not converge: |delta| = {abs(delta):.3g} after {count} steps is more "
                f"than 1% of |F(input) - F(baseline)| = {gap:.3g}.",
                "Attributions are approximate; the baseline path may cross a sharp region of the model."))
        elif not converge and abs(delta) > 0.05 * max(gap, 1e-12):
            found.append(notes.info(f"Completeness gap |delta| = {abs(delta):.3g} is over 5% of "
                                    f"|F(input) - F(baseline)| = {gap:.3g}; more steps (or 'converge') narrow it."))
        control.report("Integrated Gradients done", 1.0)
        return _result(prepared, method, raw, score, base, delta, count, tuple(found))


def _result(prepared: Prepared, method: str, raw: Any, score: float, base: float | None = None,
            delta: float | None = None, steps: int | None = None, notes: tuple[Note, ...] = ()) -> Explanation:
    values = _per_token(method, raw)
    keep = prepared.keep
    return Explanation(
        task=prepared.task, method=method, tokens=tuple(prepared.tokens[i] for i in keep),
        attributions=tuple(values[i] for i in keep), special=tuple(prepared.special[i] for i in keep),
        rows=tuple(prepared.rows[i] for i in keep), target=prepared.target, target_label=prepared.target_label,
        score=score, baseline_score=base, delta=delta, steps=steps, targets=prepared.targets, notes=notes,
        sequences=prepared.sequences,
    )
