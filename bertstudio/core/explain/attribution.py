"""Token attributions, via captum: gradient L2 norm, gradient x input, Integrated Gradients, and the
perturbation methods occlusion, LIME and Kernel SHAP (perturbation.py); faithfulness.py measures them.

The gradient methods differentiate F = P(target) (see targets.py) with respect to the output of the
word-embedding layer (`model.get_input_embeddings()`), the layer captum's
`LayerIntegratedGradients` integrates over. IG's baseline is the same sequence with every
non-special token replaced by the pad token (special tokens kept), so position and segment
embeddings are the same on the whole path and only the words change. RoBERTa derives position
ids from the ids themselves (pads get the padding position); we pass the input's own position
ids so the baseline differs from the input in its words only. The zero baseline instead sets the
word embedding of every non-special token to zero (captum's IntegratedGradients over the
embeddings, fed to the model as `inputs_embeds`).

The public entry is `explain(loaded, task, texts, method, target, steps, converge, control, *,
samples, seed, baseline, faithfulness)` -> Explanation; the Evaluate tab and the CLI call it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from bertstudio.core import engine, notes
from bertstudio.core.errors import InputError
from bertstudio.core.explain.faithfulness import Faithfulness
from bertstudio.core.explain.forward import Path, path_of, steps_per_batch
from bertstudio.core.explain.methods import (
    BASELINES,
    DEFAULT_SAMPLES,
    DEFAULT_SEED,
    GRAD_X_INPUT,
    INTEGRATED_GRADIENTS,
    METHODS,
    OCCLUSION,
    PERTURBATION,
    check_samples,
    check_seed,
)
from bertstudio.core.explain.share import Share
from bertstudio.core.explain.targets import Prepared, prepare
from bertstudio.core.limits import MAX_IG_STEPS, check_count
from bertstudio.core.models import LoadedModel
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl

__all__ = ["METHODS", "Explanation", "explain"]
MAX_DOUBLINGS = 3  # converge: steps, 2x, 4x, 8x at most
TOLERANCE = 0.01  # converged when |delta| <= 1 % of |F(input) - F(baseline)|


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
    baseline: str | None = None  # Integrated Gradients: "pad" or "zero"
    samples: int | None = None  # LIME / Kernel SHAP: perturbed inputs drawn
    seed: int | None = None  # LIME / Kernel SHAP: the seed of torch's generator
    faithfulness: Faithfulness | None = None  # ERASER comprehensiveness / sufficiency, when asked for

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "tokens": list(self.tokens), "attributions": list(self.attributions), "target": self.target,
            "method": self.method, "score": self.score,
        }
        if self.method == INTEGRATED_GRADIENTS:
            data.update(baseline_score=self.baseline_score, delta=self.delta, steps=self.steps,
                        baseline=self.baseline)
        if self.samples is not None:
            data.update(samples=self.samples, seed=self.seed)
        if self.sequences > 1:
            data["rows"] = list(self.rows)
        if self.faithfulness is not None:
            data["faithfulness"] = self.faithfulness.to_json()
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


def _per_token(method: str, attributions: Any) -> list[float]:
    flat = attributions.reshape(-1, attributions.shape[-1]).float()
    values = flat.norm(dim=-1) if method == "gradient" else flat.sum(dim=-1)
    return [float(v) for v in values.detach().cpu()]


def _scores(path: Path) -> tuple[float, float]:
    """F(input), F(baseline): one forward of both."""
    import torch

    with torch.no_grad():
        both = path.forward(torch.cat([path.inputs, path.start]), *(torch.cat([e, e]) for e in path.extra))
    return float(both[0]), float(both[1])


def integrated_gradients(loaded: LoadedModel, prepared: Prepared, path: Path, steps: int, control: TaskControl,
                         zero: bool = False, ends: list[float] | None = None) -> Any:
    """captum's LayerIntegratedGradients (Gauss-Legendre) over the word embeddings from the [PAD]
    baseline, or its IntegratedGradients over them from the `zero` baseline; control.check() and
    progress between the internal batches (each batch is one call of the forward). captum's
    first two layer calls run the input and the baseline whole: `ends` receives F(input), F(baseline)."""
    from captum.attr import IntegratedGradients, LayerIntegratedGradients

    rows = prepared.sequences  # captum's internal batch counts rows of the flattened input
    per_batch = steps_per_batch(prepared, steps)
    total = (0 if zero else 2) + math.ceil(steps / per_batch)
    done = [0]

    def checked(*args: Any) -> Any:
        control.check()
        control.report(f"Integrated Gradients, {steps} steps: pass {done[0] + 1} of {total}", done[0] / total)
        done[0] += 1
        output = path.forward(*args)
        if ends is not None and not zero and done[0] <= 2:
            ends.append(float(output.detach()[0]))
        return output

    embeddings = loaded.model.get_input_embeddings()
    method = IntegratedGradients(checked) if zero else LayerIntegratedGradients(checked, embeddings)
    return method.attribute(path.inputs, baselines=path.start, additional_forward_args=path.extra, n_steps=steps,
                            internal_batch_size=per_batch * rows)


def gradients(loaded: LoadedModel, path: Path, times_input: bool) -> Any:
    """dF/d(word embeddings), or its product with the embeddings (captum's LayerGradientXActivation)."""
    from captum.attr import LayerGradientXActivation

    method = LayerGradientXActivation(path.forward, loaded.model.get_input_embeddings(), multiply_by_inputs=times_input)
    return method.attribute(path.inputs, additional_forward_args=path.extra)


def check_method(method: str, baseline: str = "pad") -> None:
    if method not in METHODS:
        raise InputError(f"Unknown attribution method {method!r}.", hint=f"Choose one of {', '.join(METHODS)}.")
    if baseline not in BASELINES:
        raise InputError(f"Unknown baseline {baseline!r}.", hint=f"Choose one of {', '.join(BASELINES)}.")
    if baseline != "pad" and method != INTEGRATED_GRADIENTS:
        raise InputError(f"The {baseline} baseline is Integrated Gradients' (--baseline); {method} replaces "
                         "absent tokens by the pad token.", hint="Leave out --baseline, or use integrated-gradients.")


def explain(
    loaded: LoadedModel,
    task: str,
    texts: tuple[str, ...],
    method: str = INTEGRATED_GRADIENTS,
    target: str | None = None,
    steps: int = 50,
    converge: bool = False,
    control: TaskControl | None = None,
    *,
    samples: int = DEFAULT_SAMPLES,
    seed: int = DEFAULT_SEED,
    baseline: str = "pad",
    faithfulness: bool = False,
) -> Explanation:
    """Attributions of F = P(target) to every token of the input (see module docstring); with
    `faithfulness`, ERASER's comprehensiveness and sufficiency of them (faithfulness.py). The input,
    F and the baseline are built first (`prepare`, `path_of`), then the one method runs on them."""
    control = control or TaskControl()
    check_method(method, baseline)
    steps = check_steps(steps)
    samples, seed = check_samples(samples), check_seed(seed)
    outer = control
    if faithfulness:  # the method takes the first 80% of the bar, its faithfulness the rest
        control = Share(outer, 0.0, 0.8)
    with engine.exclusive(loaded, grad=True):
        prepared = prepare(loaded, task, tuple(texts), target)
        path = path_of(loaded, prepared, method, baseline)
        if method in PERTURBATION:
            raw, score, extra = _perturbed(loaded, prepared, path, method, samples, seed, control)
        elif method != INTEGRATED_GRADIENTS:
            raw, score, extra = gradients(loaded, path, times_input=method == GRAD_X_INPUT), _scores(path)[0], {}
        else:
            raw, score, extra = _integrated(loaded, prepared, path, steps, converge, baseline, control)
        result = replace(_result(prepared, method, raw, score), **extra)
        if faithfulness:
            from bertstudio.core.explain.faithfulness import measure

            found, remarks = measure(loaded, prepared, result.attributions, Share(outer, 0.8, 1.0))
            result = replace(result, faithfulness=found, notes=notes.unique((*result.notes, *remarks)))
        outer.report(f"{method} done", 1.0)
        return result


def _perturbed(loaded: LoadedModel, prepared: Prepared, path: Path, method: str, samples: int, seed: int,
               control: TaskControl) -> tuple[list[float], float, dict[str, Any]]:
    """Per-position attributions, F(input) and what the result adds (the samples and seed drawn)."""
    from bertstudio.core.explain.perturbation import occlusion, sampled

    if method == OCCLUSION:
        raw, score = occlusion(loaded, prepared, path, control)
        return raw.tolist(), score, {}
    raw, score = sampled(loaded, prepared, path, method, samples, seed, control)
    return raw.tolist(), score, {"samples": samples, "seed": seed}


def _integrated(loaded: LoadedModel, prepared: Prepared, path: Path, steps: int, converge: bool, baseline: str,
                control: TaskControl) -> tuple[Any, float, dict[str, Any]]:
    """Integrated Gradients at `steps`, or doubling them until the completeness gap is within 1%: the
    attributions, F(input) and what the result adds (F(baseline), the gap, the steps, notes)."""
    found: list[Note] = []
    for count in converge_steps(steps) if converge else [steps]:
        ends: list[float] = []
        raw = integrated_gradients(loaded, prepared, path, count, control, baseline == "zero", ends)
        score, base = ends if len(ends) == 2 else _scores(path)
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
    return raw, score, {"baseline_score": base, "delta": delta, "steps": count, "notes": tuple(found),
                        "baseline": baseline}


def _result(prepared: Prepared, method: str, raw: Any, score: float) -> Explanation:
    values = raw if isinstance(raw, list) else _per_token(method, raw)  # a list: one value per flat position
    keep = prepared.keep
    return Explanation(
        task=prepared.task, method=method, tokens=tuple(prepared.tokens[i] for i in keep),
        attributions=tuple(values[i] for i in keep), special=tuple(prepared.special[i] for i in keep),
        rows=tuple(prepared.rows[i] for i in keep), target=prepared.target, target_label=prepared.target_label,
        score=score, targets=prepared.targets, sequences=prepared.sequences,
    )
