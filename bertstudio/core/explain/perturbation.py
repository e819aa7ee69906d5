"""Perturbation explainers: occlusion, LIME and Kernel SHAP over token presence.

They need no gradient, only F = P(target) of changed inputs. A token is "absent" when it is the
pad token, as in Integrated Gradients' baseline (`forward.baseline_ids`): the position,
segment and attention mask stay, only the word changes (RoBERTa keeps the input's own position
ids, see `forward.forward_of`). Structural special tokens ([CLS], [SEP], the mask explained;
`targets.structural_ids`) are never changed and get 0; [UNK] is a word like any other.

- Occlusion of token i = F(x) - F(x with token i absent), a batch of occluded copies per forward.
- LIME and Kernel SHAP are captum's `Lime` and `KernelShap`; their interpretable features are the
  non-special tokens (captum sees only those, `Presence.forward` puts them back in the sequence).
  LIME weighs a sample as the `lime` package's text explainer does (cosine distance of the
  presence vector to all-present, kernel width 0.25) and fits its ridge regression (alpha 1);
  Kernel SHAP is captum's own. Sampling draws from torch's generator only, seeded in a fork of it
  so the caller's random state is left as it was.

Every forward runs through `engine.run` (the perturbed copies as id rows), which checks Cancel and
reports progress; batches follow the IG budget (captum's calls: one batch each).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from bertstudio.core import engine
from bertstudio.core.explain.forward import Path, steps_per_batch
from bertstudio.core.explain.targets import Prepared
from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl

KERNEL_WIDTH = 0.25  # lime's LimeTextExplainer: cosine distance x 100 with width 25


def candidates(prepared: Prepared) -> list[int]:
    """Flat positions a perturbation may change: the tokens a person sees that are not special."""
    return [i for i in prepared.keep if not prepared.special[i]]


class Presence:
    """F of the input with some non-special tokens replaced by the pad token, batched.

    `forward(present)` takes a (batch, n) tensor of token ids for the n candidate positions (the
    original id where the token is present, the pad id where it is absent) and returns (batch,) F,
    `per_batch` rows to a pass (captum's calls: one pass each)."""

    def __init__(self, loaded: LoadedModel, prepared: Prepared, path: Path, control: TaskControl, what: str,
                 total: int) -> None:
        self.loaded, self.path, self.ids = loaded, path, prepared.inputs["input_ids"]
        self.positions = candidates(prepared)
        self.present = self.ids.reshape(-1)[self.positions].unsqueeze(0)  # (1, n)
        self.absent = path.start.reshape(-1)[self.positions].unsqueeze(0)
        self.control, self.what, self.total, self.calls = control, what, max(1, total), 0

    def _forward(self, batch: engine.Batch) -> Any:
        self.control.report(f"{self.what}: pass {self.calls + 1} of {self.total}", min(1.0, self.calls / self.total))
        self.calls += 1
        count = len(batch.rows)
        extra = tuple(e.expand(count, *e.shape[1:]).contiguous() for e in self.path.extra)  # the model views them
        return self.path.forward(batch.inputs["input_ids"].reshape(count, *self.ids.shape[1:]), *extra)

    def forward(self, present: Any, per_batch: int | None = None) -> Any:
        import torch

        full = self.ids.reshape(1, -1).repeat(present.shape[0], 1)
        full[:, self.positions] = present.to(full.dtype)
        rows = per_batch or present.shape[0]
        found = engine.run(self.loaded, engine.rows(full.tolist()), self._forward, self.control, weights=None,
                           budget=rows * full.shape[1], max_rows=rows, progress=False)
        return torch.as_tensor(np.asarray(found), device=present.device)


def occlusion(loaded: LoadedModel, prepared: Prepared, path: Path, control: TaskControl) -> tuple[Any, float]:
    """Per flat position: F(x) - F(x with that token absent); 0 for special tokens. And F(x)."""
    import torch

    n = len(candidates(prepared))
    per_batch = steps_per_batch(prepared, n + 1)
    presence = Presence(loaded, prepared, path, control, f"Occlusion of {n} tokens", math.ceil((n + 1) / per_batch))
    copies = presence.present.repeat(n + 1, 1)  # row 0 the input, row j+1 token j absent
    index = torch.arange(n, device=copies.device)
    copies[index + 1, index] = presence.absent[0, index]
    scores = presence.forward(copies, per_batch)
    score = scores[0]
    values = torch.zeros(prepared.inputs["input_ids"].numel(), dtype=scores.dtype, device=scores.device)
    values[presence.positions] = score - scores[1:]
    return values, float(score)


def lime_kernel(_original: Any, _perturbed: Any, sample: Any, **_kwargs: Any) -> float:
    """lime's text kernel on the presence vector: exp(-d^2 / (2 w^2)), d = cosine distance to all-present."""
    present = float(sample.sum())
    total = sample.numel()
    distance = 1.0 - (math.sqrt(present / total) if present else 0.0)
    return math.exp(-distance * distance / (2 * KERNEL_WIDTH * KERNEL_WIDTH))


def lime_explainer(forward: Callable[..., Any]) -> Any:
    """captum's Lime with lime's text kernel and ridge regression (see the module docstring)."""
    from captum._utils.models.linear_model import SkLearnRidge
    from captum.attr import Lime

    return Lime(forward, interpretable_model=SkLearnRidge(alpha=1.0), similarity_func=lime_kernel)


def sampled(loaded: LoadedModel, prepared: Prepared, path: Path, method: str, samples: int, seed: int,
            control: TaskControl) -> tuple[Any, float]:
    """LIME or Kernel SHAP (captum) over token presence: per flat position its coefficient, and F(x)."""
    import torch
    from captum.attr import KernelShap

    per_batch = steps_per_batch(prepared, samples)
    title = "LIME" if method == "lime" else "Kernel SHAP"
    presence = Presence(loaded, prepared, path, control, f"{title}, {samples} samples",
                        1 + math.ceil(samples / per_batch))
    positions = presence.positions
    score = float(presence.forward(presence.present)[0])
    values = torch.zeros(prepared.inputs["input_ids"].numel(), dtype=torch.float64)
    if not positions:  # nothing but special tokens ("[MASK]" alone): nothing to perturb
        return values, score
    if len(positions) == 1:  # one player: both give F(x) - F(absent), and captum's SHAP sampler needs two
        values[positions] = score - float(presence.forward(presence.absent)[0])
        return values, score
    explainer = lime_explainer(presence.forward) if method == "lime" else KernelShap(presence.forward)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        coefficients = explainer.attribute(presence.present, baselines=presence.absent, n_samples=samples,
                                           perturbations_per_eval=per_batch)
    values[positions] = coefficients[0].double().cpu()
    return values, score
